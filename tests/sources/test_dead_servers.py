"""Dead servers cost the queries nothing: each is tried again on its restart backoff,
never once per search, and no search waits on it.

A dead server is one that can never answer: no such program, a program that exits at
once, one that never speaks MCP, an HTTP address with nothing behind it. Restarts after
the first attempt are held at a gate the test never opens, so a search that waited on a
restart would wait its whole timeout and report ``timeout`` — whatever the machine's load;
the server that never answers is waited for by the first search only.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from tests.sources.helpers import free_port
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.engine import Engine
from tributary.engine.model import SearchRequest, SourceStatus
from tributary.engine.sources.connect import Connection, default_connector
from tributary.engine.sources.stderr import StderrLog

pytestmark = [pytest.mark.asyncio, pytest.mark.integration, pytest.mark.timeout(300)]


def dead_servers() -> dict[str, ServerConfig]:
    # A first start is waited for up to startup_timeout: generous where the server
    # fails by itself, short for the one that never answers (its wait is the point).
    slow_ok = {"timeout": 10.0, "startup_timeout": 120.0}
    return {
        "missing": ServerConfig(name="missing", command="tributary-no-such-command-xyz", **slow_ok),
        "exits": ServerConfig(name="exits", command=sys.executable,
                              args=["-c", "raise SystemExit(1)"], **slow_ok),
        "silent": ServerConfig(name="silent", command=sys.executable,
                               args=["-c", "import time; time.sleep(600)"],
                               timeout=2.0, startup_timeout=2.0),
        "nothing": ServerConfig(name="nothing", transport="http",
                                url=f"http://127.0.0.1:{free_port()}/mcp", **slow_ok),
    }


async def test_dead_servers_are_tried_on_their_backoff_not_once_per_search() -> None:
    attempts: Counter[str] = Counter()
    through: Counter[str] = Counter()
    gate = asyncio.Event()  # restarts wait here; never opened

    @asynccontextmanager
    async def gated(config: ServerConfig, log: StderrLog) -> AsyncIterator[Connection]:
        attempts[config.name] += 1
        if attempts[config.name] > 1:
            await gate.wait()
        through[config.name] += 1
        async with default_connector(config, log) as connection:
            yield connection

    async with Engine(Config(servers=dead_servers()), connector=gated) as engine:
        responses = [await engine.search(SearchRequest("anything")) for _ in range(5)]

    names = set(dead_servers())
    for number, response in enumerate(responses, 1):
        statuses = {r.name: r.status for r in response.sources}
        assert set(statuses) == names
        assert response.error is not None and response.error.startswith("all 4 sources failed")
        errors = {r.name: r.error or "" for r in response.sources}
        for name, status in statuses.items():
            if number == 1 and name == "silent":
                assert status is SourceStatus.TIMEOUT  # its first start was waited for
                continue
            if name == "silent" and status is SourceStatus.TIMEOUT:  # that start, not waited on again
                assert "earlier wait of its whole deadline" in errors[name]
                continue
            # Never waited on: a search that did would have met the gate and timed out.
            assert status in (SourceStatus.ERROR, SourceStatus.CIRCUIT_OPEN), (number, name, status)
    # Three failures in a row open each breaker: later searches do not even ask.
    assert {r.status for r in responses[-1].sources} == {SourceStatus.CIRCUIT_OPEN}
    assert through == {name: 1 for name in names}  # one real attempt each, for 5 searches
    assert all(attempts[name] <= 2 for name in names)  # at most one restart queued behind it
    assert attempts["missing"] == 1  # never retried: it cannot start as configured
