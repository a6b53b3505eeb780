"""The command line never waits forever on a running engine it cannot see: a stopped
engine (SIGSTOP) or one killed with its socket left behind is searched around, with a
note, instead."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_attach import ROOT, _cli, _config, home  # noqa: F401 - home is a fixture
from tributary.engine import attach

pytestmark = pytest.mark.skipif(not attach.supported() or not hasattr(signal, "SIGSTOP"),
                                reason="no Unix sockets or signals")


@pytest.fixture
def serve(home: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:  # noqa: F811
    """A running ``tributary serve`` once it listens, and its config; stopped, continued
    and ended whatever the test did to it."""
    config = _config(home)
    process = subprocess.Popen(
        [sys.executable, "-m", "tributary", "--config", str(config), "serve"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
    )  # fmt: skip
    try:
        path = attach.socket_path()
        for _ in range(1200):  # (a bound on a start that failed, not a timing)
            if path.exists() or process.poll() is not None:
                break
            time.sleep(0.05)
        assert path.exists(), "serve never listened"
        yield process, config
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)
            process.kill()
        process.wait()
        assert process.stdin is not None
        process.stdin.close()


def _search(config: Path) -> subprocess.CompletedProcess[str]:
    return _cli("--config", str(config), "search", "retry logic")


def test_a_stopped_engine_is_searched_around_with_a_note(serve: tuple[subprocess.Popen[bytes], Path]) -> None:
    process, config = serve
    attached = _search(config)
    assert f"answered by the running engine (pid {process.pid})" in attached.stderr
    os.kill(process.pid, signal.SIGSTOP)
    alone = _search(config)
    assert alone.returncode == 0, alone.stderr
    assert "the running engine did not answer" in alone.stderr
    assert "answered by the running engine" not in alone.stderr
    assert "src/alpha/mod_1.py" in alone.stdout
    os.kill(process.pid, signal.SIGCONT)
    again = _search(config)
    assert f"answered by the running engine (pid {process.pid})" in again.stderr


def test_a_killed_engines_socket_is_removed_at_once(serve: tuple[subprocess.Popen[bytes], Path]) -> None:
    process, config = serve
    process.kill()
    process.wait()
    path = attach.socket_path()
    assert path.exists()  # left behind by kill -9
    alone = _search(config)
    assert alone.returncode == 0, alone.stderr
    assert "socket removed" in alone.stderr
    assert "did not answer" not in alone.stderr  # refused at connect: no wait at all
    assert "src/alpha/mod_1.py" in alone.stdout
    assert not path.exists()
