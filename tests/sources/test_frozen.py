"""A server that is alive but never answers again is replaced, not kept forever.

A stdio server's process group is terminated (killed if it must be) and reaped,
and a new process answers the next query; an HTTP or in-memory connection can
only be dropped and made again. A server that is merely slow, or whose tool
hangs while its session still answers pings, is left alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.sources.helpers import (
    Recorder,
    eventually,
    health,
    http_fake,
    memory_fake,
    stdio_config,
)
from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SourceStatus
from tributary.engine.sources import Backoff, ServerStatus, SourcePool
from tributary.engine.sources.connect import Connection, Connector
from tributary.engine.sources.health import BreakerState
from tributary.engine.sources.memory import memory_connector
from tributary.engine.sources.stderr import StderrLog

pytestmark = pytest.mark.asyncio

QUICK = Backoff(initial_s=0.05, max_s=0.2)
PATIENT = 30.0  # the timeout of calls that must succeed on a loaded machine


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def replaced(pool: SourcePool, name: str, old_pid: int | None = None) -> Callable[[], bool]:
    def check() -> bool:
        state = pool.state(name)
        return (state.status is ServerStatus.READY and state.restarts >= 1
                and (old_pid is None or state.pid != old_pid))
    return check


@pytest.mark.integration
async def test_stopped_stdio_server_is_killed_and_replaced() -> None:
    config = stdio_config("s", timeout=0.5, health=health(threshold=2))
    pool = SourcePool([config], backoff=QUICK)
    try:
        first = await pool.call("s", "before", top_k=2, timeout=PATIENT)
        assert first.status is SourceStatus.OK, first.error
        old = pool.state("s").pid
        assert old is not None
        os.killpg(old, signal.SIGSTOP)  # the whole group: alive, answering nothing

        for _ in range(2):
            assert (await pool.call("s", "frozen", top_k=2)).status is SourceStatus.TIMEOUT
        # The second timeout completes the run; a ping confirms the silence, then the kill.
        assert await eventually(replaced(pool, "s", old), timeout=30)
        assert not alive(old)  # killed and reaped, not a zombie

        state = pool.state("s")
        assert state.last_error and state.last_error.startswith("restarted: no answer for")
        assert state.restart_reason == state.last_error and state.restarted_at is not None
        assert state.latency_ms is None  # the timeouts described the old process
        # The breaker opened on the timeouts; the new process gets its trial at once.
        after = await pool.call("s", "after", top_k=2, timeout=PATIENT)
        assert after.status is SourceStatus.OK, after.error
        assert "after" in after.hits[0].content and len(after.hits) == 2
        assert pool.state("s").breaker.state is BreakerState.CLOSED

        log = "\n".join(pool.stderr_lines("s"))  # one story across both processes
        assert "restarting the server" in log and f"terminating process group {old}" in log
        assert f"process {old} ended" in log
        assert log.count("stderr line 1") == 2 and "restart #1" in log
    finally:
        await pool.aclose()
    assert not alive(old)


@pytest.mark.integration
async def test_a_silent_server_is_left_running_when_restarts_are_off() -> None:
    config = stdio_config("s", timeout=0.5, health=health(threshold=2, restart=False))
    pool = SourcePool([config], backoff=QUICK)
    try:
        assert (await pool.call("s", "before", top_k=2, timeout=PATIENT)).status is SourceStatus.OK
        old = pool.state("s").pid
        assert old is not None
        os.killpg(old, signal.SIGSTOP)
        for _ in range(2):  # a run long enough for a restart (and the breaker opens)
            assert (await pool.call("s", "frozen", top_k=2)).status is SourceStatus.TIMEOUT
        assert (await pool.ping("s", timeout=0.5)) is False  # silent, and a ping confirms it
        await asyncio.sleep(0.5)  # room for a replacement that must not come
        state = pool.state("s")
        assert state.pid == old and state.restarts == 0 and alive(old)
        os.killpg(old, signal.SIGCONT)
    finally:
        await pool.aclose()
    assert not alive(old)


@pytest.mark.integration
async def test_frozen_stdio_server_found_by_health_checks_is_replaced(tmp_path: Path) -> None:
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"f": {"mode": "freeze"}}))
    config = stdio_config("f", "--fault-file", str(faults), timeout=1.0,
                          health=health(threshold=2, interval_s=0.05))
    pool = SourcePool([config], backoff=QUICK)
    try:
        await pool.warm_up(timeout=PATIENT)
        old = pool.state("f").pid
        assert old is not None
        # The call blocks the whole process (not even ping is answered) and times out.
        assert (await pool.call("f", "q", top_k=2)).status is SourceStatus.TIMEOUT
        faults.write_text("{}")  # the next process behaves
        pool.start_health()  # only pings from here on: two of them time out
        assert await eventually(replaced(pool, "f", old), timeout=30)
        await pool.stop_health()
        assert not alive(old)
        outcome = await pool.call("f", "again", top_k=3, timeout=PATIENT)
        assert outcome.status is SourceStatus.OK and len(outcome.hits) == 3, outcome.error
    finally:
        await pool.aclose()


async def test_hung_tool_with_a_live_session_is_not_replaced() -> None:
    rec = Recorder(hang=True)
    config = ServerConfig(name="r", command="x", timeout=0.5, health=health(threshold=2))
    pool = SourcePool([config], connector=memory_connector(lambda _: rec.server), backoff=QUICK)
    try:
        for _ in range(2):
            assert (await pool.call("r", "q", top_k=1)).status is SourceStatus.TIMEOUT
        # Wait for the client's own confirming ping (a private detail, hence the reach in).
        client = pool._client("r")
        await asyncio.gather(*list(client._background))
        state = pool.state("r")
        assert state.status is ServerStatus.READY and state.restarts == 0
        assert state.restart_reason is None
    finally:
        await pool.aclose()


class Freezable:
    """A connector double: the first connection's messages stop arriving once ``frozen``."""

    def __init__(self, inner: Connector) -> None:
        self.inner = inner
        self.frozen = False
        self.connections = 0

    def connector(self) -> Connector:
        @asynccontextmanager
        async def connect(config: ServerConfig, log: StderrLog) -> Any:
            async with self.inner(config, log) as conn:
                self.connections += 1
                yield Connection(_Gate(conn.read, self, self.connections), conn.write, None)
        return connect


class _Gate:
    def __init__(self, inner: Any, owner: Freezable, number: int) -> None:
        self._inner = inner
        self._owner = owner
        self._first = number == 1

    async def receive(self) -> Any:
        while True:
            message = await self._inner.receive()
            if not (self._first and self._owner.frozen):
                return message

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_silent_connection_without_a_process_is_reconnected() -> None:
    gate = Freezable(memory_connector(lambda cfg: memory_fake(cfg.name)))
    config = ServerConfig(name="m", command="x", timeout=0.3, health=health(threshold=2))
    pool = SourcePool([config], connector=gate.connector(), backoff=QUICK)
    try:
        assert (await pool.call("m", "q", top_k=1, timeout=PATIENT)).status is SourceStatus.OK
        gate.frozen = True
        for _ in range(2):
            assert (await pool.call("m", "q", top_k=1)).status is SourceStatus.TIMEOUT
        assert await eventually(replaced(pool, "m"), timeout=30)
        assert gate.connections == 2
        state = pool.state("m")
        assert state.last_error and state.last_error.startswith("reconnected: no answer")
        assert (await pool.call("m", "q", top_k=1, timeout=PATIENT)).status is SourceStatus.OK
    finally:
        await pool.aclose()


@pytest.fixture
def stoppable_http_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    with http_fake() as server:
        yield server


@pytest.mark.integration
async def test_silent_http_server_is_reconnected_not_killed(
    stoppable_http_server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, proc = stoppable_http_server
    # One miss is enough here, so the test doesn't wait for more.
    config = ServerConfig(name="web", transport="http", url=url, timeout=0.5,
                          health=health(threshold=1))
    pool = SourcePool([config], backoff=QUICK, start_timeout_s=1.0)
    try:
        first = await pool.call("web", "q", top_k=1, timeout=PATIENT)
        assert first.status is SourceStatus.OK, first.error
        os.kill(proc.pid, signal.SIGSTOP)
        assert (await pool.call("web", "q", top_k=1)).status is SourceStatus.TIMEOUT
        assert await eventually(lambda: pool.state("web").restarts >= 1, timeout=30)
        assert (pool.state("web").restart_reason or "").startswith("reconnected: no answer")
        os.kill(proc.pid, signal.SIGCONT)
        assert await eventually(replaced(pool, "web"), timeout=30)
        assert proc.poll() is None  # not ours to kill
        again = await pool.call("web", "q", top_k=1, timeout=PATIENT)
        assert again.status is SourceStatus.OK, again.error
    finally:
        await pool.aclose()


@pytest.mark.integration
async def test_a_stopped_http_server_holds_no_request_past_its_timeout(
    stoppable_http_server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    """Once an HTTP server stops mid-request its transport is wedged, and the SDK's
    courtesy cancel of each given-up request waits (up to 5 s, shielded) for a write
    that cannot happen. That wait must not hold the search: every call ends at its
    timeout (plus the backstop), and closing leaves no task behind."""
    url, proc = stoppable_http_server
    config = ServerConfig(name="web", transport="http", url=url, timeout=0.5,
                          health=health(threshold=10, restart=False))
    pool = SourcePool([config], backoff=QUICK, start_timeout_s=1.0)
    try:
        assert (await pool.call("web", "q", top_k=1, timeout=PATIENT)).status is SourceStatus.OK
        os.kill(proc.pid, signal.SIGSTOP)
        for _ in range(3):
            outcome = await pool.call("web", "q", top_k=1)
            assert outcome.status is SourceStatus.TIMEOUT
            assert outcome.latency_ms < 3000  # the courtesy cancel's 5 s are not ours to wait
    finally:
        await pool.aclose()
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not others


@pytest.mark.integration
async def test_a_server_ignoring_sigterm_is_killed_after_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import anyio

    from tributary.engine.sources import stdio

    monkeypatch.setattr(stdio, "TERM_GRACE_S", 0.2)
    process = await anyio.open_process(
        ["sh", "-c", "trap '' TERM; echo ready; exec sleep 60"], start_new_session=True)
    try:
        assert process.stdout is not None
        assert b"ready" in await process.stdout.receive()  # the trap is set
        log = StderrLog()
        await stdio._terminate(process, log)
        assert process.returncode == -signal.SIGKILL
        assert any("killing process group" in line for line in log.lines())
    finally:
        stdio._kill_group(process.pid)
        await process.aclose()
