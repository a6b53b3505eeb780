"""Fault injection with real subprocess servers (tests/fakes/fake_server.py).

One pool holds a healthy source beside every kind of broken one; the healthy
sources' hits must come back, each fault must be reported as that source's
status, crashed servers restart with backoff, stderr is captured, and nothing
is left running after ``aclose``.
"""

from __future__ import annotations

import asyncio
import os

import psutil
import pytest

from tests.sources.helpers import stdio_config
from tributary.engine.model import SourceStatus
from tributary.engine.sources import Backoff, ServerStatus, SourcePool
from tributary.engine.sources.fanout import fan_out, gather_all

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]

TIMEOUT = 2.0  # for the sources that never answer
HEALTHY = 20.0  # generous: a loaded CI machine must not turn a slow answer into a failure


def descendants() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


async def wait_for(predicate, timeout: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return bool(predicate())


async def test_one_pool_every_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUTARY_TEST_SECRET", "do-not-leak")
    servers = [
        stdio_config("ok", timeout=HEALTHY, env={"CONFIGURED_TOKEN": "given"}),
        stdio_config("ok2", "--structured", "--delay", "0.1", timeout=HEALTHY),
        stdio_config("hang", "--mode", "hang", timeout=TIMEOUT),
        stdio_config("freeze", "--mode", "freeze", timeout=TIMEOUT),
        stdio_config("crash", "--mode", "crash-call", "--spawn-child", "--stderr-lines", "3",
                     timeout=TIMEOUT),
        stdio_config("garbage", "--mode", "garbage", timeout=HEALTHY),
        stdio_config("badrpc", "--mode", "invalid-jsonrpc", timeout=HEALTHY),
        stdio_config("nonutf8", "--mode", "non-utf8", timeout=HEALTHY),
        stdio_config("huge", "--mode", "huge", "--size-mb", "20", timeout=HEALTHY),
        stdio_config("iserror", "--mode", "error", timeout=HEALTHY),
        stdio_config("nostart", "--mode", "crash-start", timeout=TIMEOUT),
    ]
    names = [s.name for s in servers]
    pool = SourcePool(servers, backoff=Backoff(initial_s=0.2, max_s=1.0))
    before = descendants()
    try:
        states = await pool.warm_up(timeout=60)
        # Failed once and restarting (by now possibly starting again).
        assert states["nostart"].status in (ServerStatus.BACKOFF, ServerStatus.STARTING)
        assert states["nostart"].restarts >= 1
        assert all(states[n].status is ServerStatus.READY for n in names if n != "nostart")
        pids = {n: s.pid for n, s in states.items() if s.pid}
        spawned = descendants() - before
        assert set(pids.values()) <= spawned
        # The crash server's tree (under its reaper on Linux): the server and its child.
        grandchildren = {p.pid for p in psutil.Process(pids["crash"]).children(recursive=True)}
        assert grandchildren and grandchildren <= spawned

        # A server sees its configured variables and the allowlist, nothing else of ours.
        env = psutil.Process(pids["ok"]).environ()
        assert env.get("CONFIGURED_TOKEN") == "given" and env.get("PATH") == os.environ["PATH"]
        assert "TRIBUTARY_TEST_SECRET" not in env

        results = {}
        async for result in fan_out(pool, names, "parse config", top_k=3):
            results[result.name] = result
        status = {n: r.report.status for n, r in results.items()}

        # The healthy sources answer with their hits whatever the others do
        # (timing is bench/fanout.py's job; arrival order is checked in memory).
        assert results["ok"].ok and len(results["ok"].hits) == 3
        assert results["ok2"].ok and [h.source_rank for h in results["ok2"].hits] == [1, 2, 3]
        assert "parse config" in results["ok2"].hits[0].content
        assert results["garbage"].ok and len(results["garbage"].hits) == 3
        assert status["hang"] is SourceStatus.TIMEOUT
        assert status["freeze"] is SourceStatus.TIMEOUT
        assert status["crash"] is SourceStatus.ERROR
        assert "exited" in (results["crash"].report.error or "")
        assert status["badrpc"] is SourceStatus.ERROR
        assert "malformed" in (results["badrpc"].report.error or "")
        # One hit's bytes are broken: that hit is dropped, the answer's others stand.
        assert status["nonutf8"] is SourceStatus.OK and len(results["nonutf8"].hits) == 2
        assert "UTF-8" in (results["nonutf8"].report.detail or "")
        assert status["huge"] in (SourceStatus.ERROR, SourceStatus.TIMEOUT)
        assert status["iserror"] is SourceStatus.ERROR
        assert status["nostart"] in (SourceStatus.ERROR, SourceStatus.TIMEOUT)

        # The crashed server is restarted with backoff, its orphan is gone, its stderr kept.
        assert await wait_for(lambda: pool.state("crash").status is ServerStatus.READY, 30)
        crash = pool.state("crash")
        assert crash.restarts == 1 and crash.pid != pids["crash"]
        assert crash.last_error and "crashing mid-call" in crash.last_error
        assert not any(alive(p) for p in grandchildren)  # killed with the crashed server
        lines = pool.stderr_lines("crash")
        # Both runs' stderr, in order: 3 lines at each start.
        assert [ln for ln in lines if ln.startswith("fake crash: stderr line")] == [
            f"fake crash: stderr line {i} (mode crash-call)" for i in (1, 2, 3)] * 2
        assert any("exited with code 4" in ln for ln in lines), "\n".join(lines)
        assert any("invalid message" in ln for ln in pool.stderr_lines("garbage"))
        assert any("cannot start" in ln for ln in pool.stderr_lines("nostart"))
        assert pool.state("nostart").restarts >= 1

        # Hung sessions stay up (the requests were cancelled, not the servers).
        assert pool.state("hang").status is ServerStatus.READY
        assert await pool.ping("hang") is True
        again = await gather_all(pool, ["ok", "garbage", "badrpc"], "second", top_k=2)
        assert [r.report.status for r in again] == [
            SourceStatus.OK, SourceStatus.OK, SourceStatus.ERROR]
    finally:
        await pool.aclose()
    await pool.aclose()  # idempotent
    assert [p for p in descendants() - before if alive(p)] == []
    assert all(s.status is ServerStatus.STOPPED for s in pool.states())
