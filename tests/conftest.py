"""Suite-wide fixtures: every test fails if it leaves a child process running."""

from __future__ import annotations

import time
from collections.abc import Iterator

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
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.delenv("TRIBUTARY_CONFIG", raising=False)
    monkeypatch.delenv("TRIBUTARY_TOKEN", raising=False)
