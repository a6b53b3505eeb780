"""Streamable HTTP sources: the fake server served over HTTP on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.sources.helpers import free_port, http_fake
from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SourceStatus
from tributary.engine.sources import ServerStatus, SourcePool

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]


@pytest.fixture
def http_server() -> Iterator[str]:
    with http_fake("--delay", "0") as (url, _proc):
        yield url


async def test_http_source_answers_and_survives_timeouts(http_server: str) -> None:
    config = ServerConfig(name="web", transport="http", url=http_server, timeout=5.0,
                          headers={"X-Test": "1"})
    pool = SourcePool([config])
    try:
        outcome = await pool.call("web", "over http", top_k=2)
        assert outcome.status is SourceStatus.OK, outcome.error
        assert [h.title for h in outcome.hits] == ["web hit 1", "web hit 2"]
        assert "over http" in outcome.hits[0].content
        assert pool.state("web").status is ServerStatus.READY
        assert pool.state("web").pid is None  # not ours to manage
        assert await pool.ping("web") is True
        outcomes = await asyncio.gather(*(pool.call("web", f"q{i}", top_k=1) for i in range(5)))
        assert all(o.status is SourceStatus.OK for o in outcomes)
    finally:
        await pool.aclose()


async def test_unreachable_http_source_is_an_error_with_backoff() -> None:
    config = ServerConfig(name="gone", transport="http", url=f"http://127.0.0.1:{free_port()}/mcp",
                          timeout=3.0)
    pool = SourcePool([config])
    try:
        outcome = await pool.call("gone", "q", top_k=2)
        assert outcome.status in (SourceStatus.ERROR, SourceStatus.TIMEOUT)
        state = pool.state("gone")
        assert state.last_error and state.restarts >= 1
    finally:
        await pool.aclose()
