"""The query log, the cache and the indexes are the user's alone, whatever the umask."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_cli import ROOT, fake, write_config
from tests.index.index_helpers import HashingEmbedder, make_repo
from tributary.engine import paths
from tributary.engine.index.manager import index_repository
from tributary.engine.sqlite import connect


def _modes(root: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            found[path.relative_to(root).as_posix()] = stat.S_IMODE(path.lstat().st_mode)
    return found


def _assert_private(root: Path) -> None:
    loose = {name: oct(mode) for name, mode in _modes(root).items()
             if mode & 0o077 or ((root / name).is_dir() and mode != 0o700)}
    assert loose == {}


def _search(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``tributary search`` as a user with umask 022 runs it."""
    env = {**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tributary", "search", "retry logic", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
                          check=False, umask=0o022)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_search_writes_history_and_cache_private_under_a_permissive_umask(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, "servers:\n" + fake("alpha", "--hits", "3"))
    done = _search(home)
    assert done.returncode == 0, done.stderr
    data = home / "data"
    assert {"insights.sqlite", "cache.sqlite"} <= set(os.listdir(data))
    _assert_private(data)


def test_an_open_database_and_its_wal_and_shm_files_are_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_022: None
) -> None:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    conn = connect(paths.insights_path())
    try:
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES ('a query someone typed')")
        names = set(os.listdir(paths.data_dir()))
        assert {"insights.sqlite", "insights.sqlite-wal", "insights.sqlite-shm"} <= names
        _assert_private(paths.data_dir())
    finally:
        conn.close()


def test_an_index_is_private_under_a_permissive_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_022: None
) -> None:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    index_repository(make_repo(tmp_path / "repo"), embedder=HashingEmbedder(), index_dir=paths.indexes_dir())
    assert any(name.endswith(".sqlite") for name in os.listdir(paths.indexes_dir()))
    _assert_private(paths.data_dir())


def test_an_existing_home_with_loose_modes_is_repaired_on_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, "servers:\n" + fake("alpha", "--hits", "3"))
    assert _search(home).returncode == 0
    (home / "data" / "indexes").mkdir()
    (home / "data" / "indexes" / "old.files.sqlite").write_bytes(b"")
    for path in [home / "data", *(home / "data").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    done = _search(home)
    assert done.returncode == 0, done.stderr
    _assert_private(home / "data")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("useradd") is None,
                    reason="creating a second user (useradd) needs root")
def test_another_local_user_cannot_read_the_history(tmp_path: Path) -> None:
    user = f"trib{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", user], check=True)
    top = Path(tempfile.mkdtemp(prefix="tributary-home-", dir="/tmp"))
    try:
        top.chmod(0o755)  # a home other users may list, as many are
        home = top / "home"
        home.mkdir(mode=0o755)
        write_config(home, "servers:\n" + fake("alpha", "--hits", "3"))
        assert _search(home).returncode == 0
        for name in ("insights.sqlite", "cache.sqlite"):
            peek = subprocess.run(["head", "-c", "16", str(home / "data" / name)], capture_output=True,
                                  text=True, user=user, timeout=60, check=False, cwd="/")
            assert peek.returncode != 0 and "Permission denied" in peek.stderr
    finally:
        subprocess.run(["userdel", user], check=False)
        shutil.rmtree(top, ignore_errors=True)
