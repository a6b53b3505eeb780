"""Legacy HTTP+SSE sources: the fake server served over SSE on loopback, supervised
like a streamable HTTP one (timeouts keep the session, a lost server is reconnected)."""

from __future__ import annotations

import pytest

from tests.sources.helpers import eventually, http_fake
from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SourceStatus
from tributary.engine.sources import ServerStatus, SourcePool
from tributary.engine.sources.client import Backoff

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]

QUICK = Backoff(initial_s=0.1, max_s=0.5)


async def test_sse_source_answers_pings_and_keeps_the_session_on_timeout() -> None:
    with http_fake("--mode", "delay", "--delay", "0", sse=True) as (url, _proc):
        config = ServerConfig(name="old", transport="sse", url=url, timeout=5.0,
                              headers={"X-Test": "1"})
        pool = SourcePool([config])
        try:
            outcome = await pool.call("old", "over sse", top_k=2)
            assert outcome.status is SourceStatus.OK, outcome.error
            assert [h.title for h in outcome.hits] == ["web hit 1", "web hit 2"]
            assert "over sse" in outcome.hits[0].content
            state = pool.state("old")
            assert state.status is ServerStatus.READY and state.transport == "sse"
            assert state.pid is None  # not ours to manage
            assert await pool.ping("old") is True
        finally:
            await pool.aclose()


async def test_slow_sse_call_times_out_and_the_session_stays() -> None:
    with http_fake("--mode", "delay", "--delay", "3", sse=True) as (url, _proc):
        config = ServerConfig(name="slow", transport="sse", url=url, timeout=0.5)
        pool = SourcePool([config])
        try:
            await pool.list_tools("slow", timeout=30)
            outcome = await pool.call("slow", "q", top_k=1)
            assert outcome.status is SourceStatus.TIMEOUT
            assert "session kept" in (outcome.error or "")
            assert pool.state("slow").status is ServerStatus.READY
            assert pool.state("slow").restarts == 0
            assert await pool.ping("slow") is True
        finally:
            await pool.aclose()


async def test_lost_sse_server_is_reconnected_when_it_comes_back() -> None:
    with http_fake(sse=True) as (url, proc):
        config = ServerConfig(name="old", transport="sse", url=url, timeout=5.0)
        pool = SourcePool([config], backoff=QUICK, start_timeout_s=5.0)
        try:
            assert (await pool.call("old", "q", top_k=1)).status is SourceStatus.OK
            proc.terminate()
            proc.wait(10)
            assert await eventually(lambda: pool.state("old").restarts >= 1, timeout=30)
            port = url.rsplit(":", 1)[1].split("/", 1)[0]
            with http_fake(sse=True, port=int(port)) as (again_url, _p):
                assert again_url == url
                assert await eventually(
                    lambda: pool.state("old").status is ServerStatus.READY, timeout=30)
                outcome = await pool.call("old", "back", top_k=1)
                assert outcome.status is SourceStatus.OK, outcome.error
        finally:
            await pool.aclose()


async def test_unreachable_sse_source_is_an_error_with_backoff() -> None:
    with http_fake(sse=True) as (url, proc):
        proc.terminate()
        proc.wait(10)
        pool = SourcePool([ServerConfig(name="gone", transport="sse", url=url, timeout=3.0)],
                          backoff=QUICK)
        try:
            outcome = await pool.call("gone", "q", top_k=1)
            assert outcome.status in (SourceStatus.ERROR, SourceStatus.TIMEOUT)
            assert await eventually(lambda: pool.state("gone").restarts >= 1, timeout=30)
            assert pool.state("gone").last_error
        finally:
            await pool.aclose()


async def test_a_hand_written_sse_url_needs_no_transport(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tributary.engine.config.load import load_config

    with http_fake("--mode", "delay", "--delay", "0", sse=True) as (url, _proc):
        path = tmp_path / "config.yaml"
        path.write_text(f"servers:\n  old:\n    url: {url}\n    timeout: 5\n", encoding="utf-8")
        config = load_config(path).servers["old"]
        assert config.transport == "sse"
        pool = SourcePool([config])
        try:
            outcome = await pool.call("old", "no transport given", top_k=2)
            assert outcome.status is SourceStatus.OK, outcome.error
        finally:
            await pool.aclose()
