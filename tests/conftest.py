"""Suite-wide fixtures: every test fails if it leaves a child process running."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest


def _children() -> dict[int, psutil.Process]:
    try:
        return {p.pid: p for p in psutil.Process().children(recursive=True)}
    except psutil.Error:
        return {}


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.fixture(autouse=True)
def no_leaked_processes() -> Iterator[None]:
    """Children present before the test (session fixtures, e.g. redis) are not counted."""
    before = set(_children())
    yield
    deadline = time.monotonic() + 5.0
    leaked: list[psutil.Process] = []
    while time.monotonic() < deadline:
        leaked = [p for pid, p in _children().items() if pid not in before and _alive(p)]
        if not leaked:
            return
        time.sleep(0.05)
    descriptions = []
    for proc in leaked:
        try:
            descriptions.append(f"{proc.pid} {' '.join(proc.cmdline())[:200]}")
        except psutil.Error:
            descriptions.append(str(proc.pid))
        proc.kill()
    pytest.fail("test leaked child processes:\n" + "\n".join(descriptions))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's real config, indexes, cache, history or
    keyring: secrets go to the keyring file backend inside the test's home."""
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path_factory.mktemp("tributary-home")))
    monkeypatch.setenv("TRIBUTARY_KEYRING", "file")
    # A one-shot command starts no background engine (a process that outlives the test);
    # tests/cli/test_background_engine.py turns it on.
    monkeypatch.setenv("TRIBUTARY_BACKGROUND_MINUTES", "0")
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.delenv("TRIBUTARY_CONFIG", raising=False)
    monkeypatch.delenv("TRIBUTARY_TOKEN", raising=False)


# -- the index backends: SQLite files, and a real PostgreSQL + pgvector (pgserver) ------


@dataclass(frozen=True)
class IndexTarget:
    """Where a test's indexes go: the keyword arguments the indexing API takes for it."""

    name: str
    kw: dict[str, Any]  # for tributary.engine.index.manager and tributary.engine.repos.manage
    tasks_kw: dict[str, Any]  # for tributary.engine.tasks.api

    @property
    def postgres(self) -> bool:
        return self.name == "postgres"


@pytest.fixture(scope="session")
def postgres_server(request: pytest.FixtureRequest) -> Iterator[Any]:
    """One PostgreSQL 16 + pgvector for the session, in a temporary folder (PyPI's
    pgserver, on a Unix socket); stopped and deleted at the end. (Not under pytest's
    temporary folder: run as root, pgserver runs the server as its own user, who may
    not enter that folder.)

    Stopping it and deleting its databases is left to the end of the run, not to this
    fixture's teardown: that runs inside the last test's teardown, under that test's
    timeout, and on a busy machine took longer than it."""
    pytest.importorskip("pgserver", reason="the postgres extra is not installed")
    from tests.postgres_server import running_server

    folder = Path(tempfile.mkdtemp(prefix="tributary-pg-"))
    request.config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    stack = contextlib.ExitStack()
    request.config.add_cleanup(stack.close)  # (cleanups run last-added first: stopped, then deleted)
    yield stack.enter_context(running_server(folder / "data"))


@pytest.fixture
def postgres_dsn(postgres_server: Any) -> str:
    """A fresh, empty database on the session's server."""
    from tests.postgres_server import fresh_database

    return fresh_database(postgres_server)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def at(request: pytest.FixtureRequest, tmp_path: Path) -> IndexTarget:
    """Each test that takes it runs on both backends."""
    if request.param == "sqlite":
        folder = tmp_path / "indexes"
        return IndexTarget("sqlite", {"index_dir": folder}, {"indexes_dir": folder})
    from tributary.engine.index.backend import IndexBackend

    backend = IndexBackend(request.getfixturevalue("postgres_dsn"))
    return IndexTarget("postgres", {"backend": backend}, {"backend": backend})
