"""Index names: ``owner/name`` from the git remote, else the path from home."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tributary.engine.index.naming import readable_name, remote_slug


@pytest.mark.parametrize(
    ("url", "slug"),
    [
        ("https://github.com/fastapi/fastapi.git", "fastapi/fastapi"),
        ("git@github.com:gin-gonic/gin.git", "gin-gonic/gin"),
        ("ssh://git@gitlab.example.com:2222/team/tool", "team/tool"),
        ("https://example.com/owner/repo/", "owner/repo"),
        ("not a url", None),
        ("/work/.mirror/fastapi+fastapi/repo", None),  # a local clone's folder names no owner
        ("file:///home/me/src/project", None),
        ("../project", None),
        ("~/src/project.git", None),
        ("C:\\Users\\me\\src\\project", None),
    ],
)
def test_remote_slug(url: str, slug: str | None) -> None:
    assert remote_slug(url) == slug


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_a_subfolder_of_a_clone_is_named_by_the_remote_and_its_path(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    (repo / "packages" / "zod" / "src").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "remote", "add", "origin", "https://github.com/colinhacks/zod.git")
    assert readable_name(repo) == "colinhacks/zod"
    assert readable_name(repo / "packages" / "zod" / "src") == "colinhacks/zod/packages/zod/src"


def test_without_a_remote_the_path_from_home_tells_folders_apart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "work" / "a" / "src").mkdir(parents=True)
    (home / "work" / "b" / "src").mkdir(parents=True)
    assert readable_name(home / "work" / "a" / "src", home=home) == "work/a/src"
    assert readable_name(home / "work" / "b" / "src", home=home) == "work/b/src"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert readable_name(outside, home=home) == outside.resolve().as_posix()
