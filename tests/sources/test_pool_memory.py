"""SourcePool and fan-out through the in-memory seam (no subprocesses)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from mcp import types
from mcp.server.mcpserver import Context, MCPServer

from tests.sources.helpers import Recorder, eventually, health, memory_fake
from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SourceStatus
from tributary.engine.sources import Backoff, ServerStatus, SourcePool
from tributary.engine.sources.fanout import all_failed, fan_out, gather_all
from tributary.engine.sources.health import BreakerState
from tributary.engine.sources.memory import memory_connector

pytestmark = pytest.mark.asyncio


def pool_of(servers: dict[str, object], **configs: ServerConfig) -> SourcePool:
    """A pool whose servers come from ``servers`` (name → MCPServer or callable)."""

    def factory(config: ServerConfig):  # type: ignore[no-untyped-def]
        made = servers[config.name]
        return made() if callable(made) else made

    cfgs = [configs.get(n, ServerConfig(name=n, command="unused")) for n in servers]
    return SourcePool(cfgs, connector=memory_connector(factory),
                      backoff=Backoff(initial_s=0.05, max_s=0.2))


async def test_call_starts_lazily_and_normalises_hits() -> None:
    pool = pool_of({"a": lambda: memory_fake("a", "--hits", "4")})
    try:
        assert pool.state("a").status is ServerStatus.IDLE
        outcome = await pool.call("a", "retry logic", top_k=3)
        assert outcome.status is SourceStatus.OK, outcome.error
        assert [h.source_rank for h in outcome.hits] == [1, 2, 3]  # top_k reached the tool
        first = outcome.hits[0]
        assert first.path == "src/a/mod_1.py" and first.start_line == 11 and first.end_line == 19
        assert "retry logic" in first.content and first.source == "a" and first.tool == "search"
        state = pool.state("a")
        assert state.status is ServerStatus.READY
        assert state.tools == ["search"] and state.tool and "top_k" in state.tool
        again = await pool.call("a", "retry logic", top_k=3)
        assert [h.id for h in again.hits] == [h.id for h in outcome.hits]  # stable ids
        assert pool.state("a").restarts == 0  # kept alive between queries
        # The first call waited for the start, and says how much of its time that was.
        assert outcome.startup_ms is not None and 0 < outcome.startup_ms <= outcome.latency_ms
        assert again.startup_ms is None
    finally:
        await pool.aclose()


async def test_timeout_cancels_the_request_and_keeps_the_session() -> None:
    rec = Recorder(hang=True)
    pool = pool_of({"r": rec.server}, r=ServerConfig(name="r", command="x", timeout=0.3))
    try:
        outcome = await pool.call("r", "q", top_k=5)
        assert outcome.status is SourceStatus.TIMEOUT
        assert rec.calls == [{"query": "q", "limit": 5}]  # limit auto-mapped from top_k
        # The courtesy notifications/cancelled reaches the handler.
        assert await eventually(lambda: rec.cancelled == 1)
        assert await pool.ping("r") is True
        assert pool.state("r").status is ServerStatus.READY and pool.state("r").restarts == 0
    finally:
        await pool.aclose()


async def test_tool_error_is_that_sources_error() -> None:
    pool = pool_of({"e": lambda: memory_fake("e", "--mode", "error")})
    try:
        outcome = await pool.call("e", "q", top_k=5)
        assert outcome.status is SourceStatus.ERROR
        assert outcome.error and "backend unavailable" in outcome.error
    finally:
        await pool.aclose()


async def test_breaker_opens_skips_and_closes_after_a_good_trial() -> None:
    cfg = ServerConfig(name="f", command="x", health=health(threshold=3, open_s=0.3))
    pool = pool_of({"f": lambda: memory_fake("f", "--mode", "fail-then-ok", "--fail-times", "3")},
                   f=cfg)
    try:
        for _ in range(3):
            assert (await pool.call("f", "q", top_k=5)).status is SourceStatus.ERROR
        assert pool.state("f").breaker.state is BreakerState.OPEN
        skipped = await pool.call("f", "q", top_k=5)
        assert skipped.status is SourceStatus.CIRCUIT_OPEN and skipped.latency_ms == 0.0
        await asyncio.sleep(0.35)
        trial = await pool.call("f", "q", top_k=5)
        assert trial.status is SourceStatus.OK and trial.detail and "trial" in trial.detail
        assert pool.state("f").breaker.state is BreakerState.CLOSED
    finally:
        await pool.aclose()


async def test_failed_start_backs_off_and_is_reported() -> None:
    attempts = 0

    def broken():  # type: ignore[no-untyped-def]
        nonlocal attempts
        attempts += 1
        raise OSError("no such command: fakebin")

    pool = pool_of({"b": broken})
    try:
        outcome = await pool.call("b", "q", top_k=5)
        assert outcome.status is SourceStatus.ERROR
        assert "fakebin" in (outcome.error or "")
        assert await eventually(lambda: pool.state("b").restarts >= 3)
        state = pool.state("b")
        assert state.restarts >= 3 and attempts >= 3
        assert state.last_error and "fakebin" in state.last_error
        assert any("restart #" in line for line in pool.stderr_lines("b"))
    finally:
        await pool.aclose()
    assert pool.state("b").status is ServerStatus.STOPPED


async def test_no_search_tool_is_a_clear_error_naming_the_tools() -> None:
    server = MCPServer("odd")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    pool = pool_of({"o": server})
    try:
        outcome = await pool.call("o", "q", top_k=5)
        # add(a, b) ignores any question: the server is left out, saying why.
        assert outcome.status is SourceStatus.SKIPPED
        assert "add" in (outcome.error or "") and "takes no query" in (outcome.error or "")
        assert pool.state("o").tool_error
    finally:
        await pool.aclose()


async def test_a_search_tool_not_marked_read_only_leaves_the_server_out_from_its_first_call() -> None:
    """Known as soon as the server lists its tools: the first search leaves it out, as
    routing leaves it out of every later one, rather than calling that a failure."""
    server = MCPServer("unsafe")

    @server.tool()
    def search(query: str) -> str:
        return query

    pool = pool_of({"u": server})
    try:
        outcome = await pool.call("u", "q", top_k=5)
        assert outcome.status is SourceStatus.SKIPPED
        assert (outcome.error or "").startswith("no read-only search tool"), outcome.error
    finally:
        await pool.aclose()


async def test_configured_tool_and_fixed_arguments() -> None:
    seen: list[dict[str, object]] = []
    server = MCPServer("cfg")

    @server.tool()
    def lookup_things(term: str, scope: str, max_results: int = 3) -> list[str]:
        seen.append({"term": term, "scope": scope, "max_results": max_results})
        return [f"{scope}:{term}:{i}" for i in range(max_results)]

    cfg = ServerConfig(name="c", command="x", tool="lookup_things", query_argument="term",
                       arguments={"scope": "docs"})
    pool = pool_of({"c": server}, c=cfg)
    try:
        outcome = await pool.call("c", "widgets", top_k=2)
        assert outcome.status is SourceStatus.OK, outcome.error
        assert seen == [{"term": "widgets", "scope": "docs", "max_results": 2}]
        assert [h.content for h in outcome.hits] == ["docs:widgets:0", "docs:widgets:1"]
    finally:
        await pool.aclose()


async def test_probe_lists_tools_and_runs_a_query() -> None:
    pool = pool_of({"p": lambda: memory_fake("p", "--structured")})
    try:
        report = await pool.probe("p", "hello")
        assert report.ok and report.startup_ms is not None
        assert [t["name"] for t in report.tools] == ["search"]
        assert report.outcome and len(report.outcome.hits) == 5
        assert report.selection and report.selection.startswith("search(query")
    finally:
        await pool.aclose()


async def test_reconfigure_restarts_only_changed_servers() -> None:
    made: list[str] = []

    def factory_for(name: str):  # type: ignore[no-untyped-def]
        def make():  # type: ignore[no-untyped-def]
            made.append(name)
            return memory_fake(name)
        return make

    servers = {"a": factory_for("a"), "b": factory_for("b"), "c": factory_for("c")}
    pool = pool_of(servers)
    try:
        await pool.warm_up(["a", "b"])
        assert sorted(made) == ["a", "b"]
        await pool.reconfigure([
            ServerConfig(name="a", command="unused", weight=2.0),   # reweighed: kept running
            ServerConfig(name="b", command="unused", timeout=9.0),  # changed
            ServerConfig(name="c", command="unused"),               # added
        ])
        assert pool.names() == ["a", "b", "c"]
        assert pool.state("a").status is ServerStatus.READY and pool.config("a").weight == 2.0
        assert pool.state("b").status is ServerStatus.IDLE  # restarted lazily
        assert (await pool.call("b", "q", top_k=1)).status is SourceStatus.OK
        assert sorted(made) == ["a", "b", "b"]
        await pool.reconfigure([ServerConfig(name="c", command="unused")])
        assert pool.names() == ["c"]
        with pytest.raises(KeyError):
            pool.state("a")
    finally:
        await pool.aclose()


async def test_aclose_is_idempotent_and_later_calls_fail_cleanly() -> None:
    pool = pool_of({"a": lambda: memory_fake("a")})
    await pool.warm_up()
    await pool.aclose()
    await pool.aclose()
    outcome = await pool.call("a", "q", top_k=1)
    assert outcome.status is SourceStatus.ERROR


async def test_health_checks_ping_running_servers() -> None:
    cfg = ServerConfig(name="h", command="x", health=health(interval_s=0.05))
    pool = pool_of({"h": lambda: memory_fake("h"), "idle": lambda: memory_fake("idle")}, h=cfg)
    try:
        await pool.warm_up(["h"])
        pool.start_health()
        assert await eventually(lambda: pool.state("h").last_ping_ms is not None)
        assert pool.state("idle").status is ServerStatus.IDLE  # checks never spawn servers
        await pool.stop_health()
    finally:
        await pool.aclose()


async def test_fan_out_streams_in_arrival_order_with_partial_success() -> None:
    pool = pool_of({
        "slow": lambda: memory_fake("slow", "--delay", "0.8"),
        "fast": lambda: memory_fake("fast"),
        "broken": lambda: memory_fake("broken", "--mode", "error"),
    })
    try:
        await pool.warm_up()
        order = [r.name async for r in fan_out(pool, ["slow", "fast", "broken"], "q", top_k=2)]
        assert order.index("fast") < order.index("slow")
        results = await gather_all(pool, ["slow", "fast", "broken", "nope"], "q", top_k=2)
        assert [r.name for r in results] == ["slow", "fast", "broken", "nope"]
        by = {r.name: r for r in results}
        assert by["fast"].ok and len(by["fast"].hits) == 2 and by["fast"].report.hits == 2
        assert by["broken"].report.status is SourceStatus.ERROR
        assert by["nope"].report.error == "unknown server"
        assert all_failed(results) is None
        failed = await gather_all(pool, ["broken"], "q", top_k=2)
        message = all_failed(failed)
        assert message and "broken" in message
    finally:
        await pool.aclose()


async def test_closing_the_stream_cancels_in_flight_calls_not_sessions() -> None:
    rec = Recorder(hang=True)
    pool = pool_of({"fast": lambda: memory_fake("fast"), "r": rec.server},
                   r=ServerConfig(name="r", command="x", timeout=30.0))
    try:
        await pool.warm_up()
        async with contextlib.aclosing(fan_out(pool, ["fast", "r"], "q", top_k=2)) as stream:
            async for result in stream:
                assert result.name == "fast"
                break  # a newer query superseded this one
        assert await eventually(lambda: rec.cancelled == 1)
        assert pool.state("r").status is ServerStatus.READY
        assert pool.state("r").breaker.consecutive_failures == 0  # cancellation is no failure
    finally:
        await pool.aclose()


async def test_cancelling_the_consumer_task_cancels_calls() -> None:
    rec = Recorder(hang=True)
    pool = pool_of({"r": rec.server}, r=ServerConfig(name="r", command="x", timeout=30.0))
    try:
        await pool.warm_up()

        async def consume() -> None:
            async for _ in fan_out(pool, ["r"], "q", top_k=2):
                pass

        task = asyncio.create_task(consume())
        while not rec.calls:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await eventually(lambda: rec.cancelled == 1) and pool.state("r").status is ServerStatus.READY
    finally:
        await pool.aclose()


async def test_tool_list_changed_reselects_the_tool() -> None:
    server = MCPServer("late")

    def search(query: str) -> str:
        return f"found {query}"

    @server.tool()
    async def enable_search(ctx: Context) -> str:
        server.add_tool(search, name="search", annotations=types.ToolAnnotations(read_only_hint=True))
        await ctx.session.send_tool_list_changed()
        return "enabled"

    cfg = ServerConfig(name="late", command="x")
    pool = pool_of({"late": server}, late=cfg)
    try:
        first = await pool.call("late", "x", top_k=1)
        assert first.status is SourceStatus.SKIPPED and "enable_search" in (first.error or "")
        session = pool._client("late")._session
        assert session is not None
        await session.call_tool("enable_search", {})
        assert await eventually(lambda: pool.state("late").tool is not None)
        outcome = await pool.call("late", "things", top_k=1)
        assert outcome.status is SourceStatus.OK and outcome.hits[0].content == "found things"
        assert "search" in pool.state("late").tools
    finally:
        await pool.aclose()
