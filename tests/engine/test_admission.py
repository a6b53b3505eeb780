"""Admission control: bounded running searches, a bounded queue, then a clear "busy"."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes import fake_server_object
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.engine import Engine
from tributary.engine.model import SearchRequest, SourceStatus
from tributary.engine.runtime.admission import Admission, Busy
from tributary.engine.sources.memory import memory_connector

pytestmark = pytest.mark.asyncio


async def test_past_the_running_and_queued_limits_a_search_is_refused_at_once() -> None:
    admission = Admission(running=2, queued=1, wait_s=60)
    release = asyncio.Event()
    order: list[str] = []

    async def search(name: str) -> None:
        async with admission.slot():
            order.append(name)
            await release.wait()

    first = [asyncio.create_task(search(n)) for n in ("a", "b", "queued")]
    await asyncio.sleep(0.05)
    assert order == ["a", "b"] and admission.stats().waiting == 1
    with pytest.raises(Busy, match="2 searches running and 1 waiting"):
        await search("refused")
    release.set()
    await asyncio.gather(*first)
    assert order == ["a", "b", "queued"] and admission.stats().refused == 1
    assert admission.stats().running == admission.stats().waiting == 0


async def test_a_queued_search_gives_up_after_the_wait() -> None:
    admission = Admission(running=1, queued=5, wait_s=0.05)
    held = asyncio.Event()

    async def holder() -> None:
        async with admission.slot():
            await held.wait()

    task = asyncio.create_task(holder())
    await asyncio.sleep(0.01)
    with pytest.raises(Busy, match=r"no search slot came free within 0\.05s"):
        async with admission.slot():
            pass
    held.set()
    await task


async def test_a_burst_of_200_searches_all_get_an_answer_or_busy() -> None:
    servers = {n: ServerConfig(name=n, command="unused", timeout=5.0) for n in ("a", "b")}
    connector = memory_connector(
        lambda cfg: fake_server_object(cfg.name, "--mode", "delay", "--delay", "0.05"))
    async with Engine(Config(servers=servers), connector=connector) as engine:
        engine.admission = Admission(running=4, queued=20, wait_s=30)

        async def one(i: int) -> str:
            try:
                response = await engine.search(SearchRequest(f"query {i}", top_k=5, use_cache=False))
            except Busy:
                return "busy"
            statuses = {r.status for r in response.sources}
            return "answered" if statuses == {SourceStatus.OK} else f"failed: {statuses}"

        outcomes = await asyncio.gather(*(one(i) for i in range(200)))
    assert set(outcomes) == {"answered", "busy"}
    assert outcomes.count("answered") >= 24  # every running and queued one
    assert engine.admission.stats().refused == outcomes.count("busy")
