"""A full disk is named in one line: no traceback, and a search still answers (without
its query log). The full disk is a small tmpfs, which only root may mount."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_cli import fake, tributary, write_config
from tests.index.index_helpers import HashingEmbedder, make_repo
from tributary.engine.cli.main import main
from tributary.engine.index import manager


def _fill(folder: Path) -> None:
    """Take every free byte of the file system holding ``folder``."""
    for chunk in (65536, 512):  # then the last partial blocks
        handle = os.open(folder / f"filler-{uuid.uuid4().hex}", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(handle, b"\0" * chunk)
        except OSError:
            pass
        finally:
            os.close(handle)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB file system, unmounted afterwards."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_index_add_on_a_full_disk_says_so_in_one_line(
    small_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    for number in range(200):  # more text than the disk holds once indexed
        (repo / "src" / f"module_{number}.py").write_text(
            "".join(f"def function_{number}_{i}(value):\n    return value * {i}  # {'x' * 60}\n"
                    for i in range(40)), encoding="utf-8")
    monkeypatch.setenv("TRIBUTARY_HOME", str(small_disk / "home"))
    monkeypatch.setattr(manager, "load_code_embedder", lambda: HashingEmbedder())
    code = main(["index", "add", str(repo), "--no-history"])
    err = capsys.readouterr().err
    assert code == 1
    assert "error: the disk is full" in err and "Traceback" not in err


def test_search_on_a_full_disk_answers_without_its_query_log(small_disk: Path) -> None:
    home = small_disk / "home"
    write_config(home, "servers:\n" + fake("alpha", "--hits", "3"))
    _fill(small_disk)
    found = tributary("search", "retry logic", "--no-attach", home=home)
    assert found.returncode == 0, found.stderr
    assert "src/alpha/mod_1.py" in found.stdout
    assert "Traceback" not in found.stderr
    assert found.stderr.count("the query log is unavailable, searching without it") == 1


def test_config_import_on_a_full_disk_says_so_and_writes_nothing(small_disk: Path, tmp_path: Path) -> None:
    home = small_disk / "home"
    config = write_config(home, "servers:\n" + fake("alpha"))
    before = config.read_bytes()
    claude = tmp_path / "claude_desktop_config.json"
    claude.write_text('{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}',
                      encoding="utf-8")
    _fill(small_disk)
    result = tributary("--config", str(config), "config", "import", str(claude), home=home)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: the disk is full")
    assert config.read_bytes() == before
    assert not [p for p in home.iterdir() if p.name.endswith(".tmp")]
