"""No source outlives Tributary: real ``tributary`` processes, real source subprocesses.

Every source (and everything it starts) carries a marker variable from its config, so
the tests count the live processes holding the marker through ``/proc``. One source is
*stubborn*: it ignores SIGTERM and stdin's end, and starts a grandchild that leaves the
process group with ``setsid()``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_cli import ROOT, write_config
from tests.fakes import FAKE_SERVER

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts processes in /proc"),
]

WAIT_S = 60.0  # generous: a loaded machine must not fail these; they end as soon as they can


def marked(mark: str) -> list[int]:
    """Live processes whose environment holds ``TRIBUTARY_TEST_MARK=mark``."""
    needle = f"TRIBUTARY_TEST_MARK={mark}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != b"Z":
            found.append(int(entry))
    return found


def wait_until(predicate, timeout: float = WAIT_S) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return bool(predicate())


def source(name: str, mark: str, *args: str) -> str:
    quoted = ", ".join(json.dumps(a) for a in [str(FAKE_SERVER), "--name", name, *args])
    return (f"  {name}:\n    command: {json.dumps(sys.executable)}\n    args: [{quoted}]\n"
            f"    timeout: 60\n    env:\n      TRIBUTARY_TEST_MARK: {mark}\n")


@pytest.fixture
def mark() -> Iterator[str]:
    value = uuid.uuid4().hex
    yield value
    for pid in marked(value):  # never leave a process behind, whatever the test found
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def config(home: Path, mark: str) -> Path:
    return write_config(home, "servers:\n"
                        + source("stubborn", mark, "--stubborn", "--setsid-child",
                                 "--mode", "delay", "--delay", "600")
                        + source("plain", mark, "--spawn-child"))


def start(home: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tributary", *args],
        env={**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}, cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )


def send(proc: subprocess.Popen[bytes], *messages: dict[str, object]) -> None:
    assert proc.stdin is not None
    for message in messages:
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
    proc.stdin.flush()


def serve_mid_query(home: Path, mark: str) -> subprocess.Popen[bytes]:
    """``tributary serve`` (stdio) with a search under way at every source."""
    proc = start(home, "--config", str(config(home, mark)), "serve")
    send(proc,
         {"id": 1, "method": "initialize", "params": {
             "protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "test", "version": "1"}}},
         {"method": "notifications/initialized"},
         {"id": 2, "method": "tools/call", "params": {"name": "search",
                                                     "arguments": {"query": "retry"}}})
    # Both sources and both grandchildren (under their reapers) are up.
    assert wait_until(lambda: len(marked(mark)) >= 6), marked(mark)
    return proc


def end(proc: subprocess.Popen[bytes]) -> int | None:
    try:
        return proc.wait(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None
    finally:
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def test_sigkill_of_serve_mid_query_leaves_no_source_process(tmp_path: Path, mark: str) -> None:
    proc = serve_mid_query(tmp_path / "home", mark)
    proc.kill()
    assert end(proc) == -signal.SIGKILL
    assert wait_until(lambda: not marked(mark)), marked(mark)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_stdio_serve_exits_it_and_stops_the_sources(
    tmp_path: Path, mark: str, signum: signal.Signals
) -> None:
    proc = serve_mid_query(tmp_path / "home", mark)
    proc.send_signal(signum)
    assert end(proc) == 128 + signum
    assert not marked(mark)  # stopped before serve exited, not by the reapers afterwards


def test_a_client_closing_stdin_leaves_nothing(tmp_path: Path, mark: str) -> None:
    proc = serve_mid_query(tmp_path / "home", mark)
    assert proc.stdin is not None
    proc.stdin.close()
    assert end(proc) == 0
    assert not marked(mark)


def test_sigterm_to_a_one_shot_search_stops_its_sources(tmp_path: Path, mark: str) -> None:
    home = tmp_path / "home"
    proc = start(home, "--config", str(config(home, mark)), "search", "retry")
    assert wait_until(lambda: len(marked(mark)) >= 6), marked(mark)
    proc.terminate()
    assert end(proc) == 128 + signal.SIGTERM
    assert not marked(mark)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_http_serve_stops_the_sources_first(
    tmp_path: Path, mark: str, signum: signal.Signals
) -> None:
    home = tmp_path / "home"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = start(home, "--config", str(config(home, mark)), "serve", "--http", str(port))
    # serve starts every source at once; both sources and both grandchildren are up.
    assert wait_until(lambda: len(marked(mark)) >= 6), marked(mark)
    proc.send_signal(signum)
    assert end(proc) is not None  # it exits (uvicorn re-raises SIGTERM once shut down)
    assert not marked(mark)
