"""The start gate: how many servers start at once, and which first."""

from __future__ import annotations

import asyncio
import sys

import pytest

from tests.sources.helpers import FAKE
from tributary.engine.config.schema import ServerConfig
from tributary.engine.sources import ServerStatus, SourcePool
from tributary.engine.sources.start_gate import StartGate, cores

pytestmark = pytest.mark.asyncio


async def test_no_more_than_its_slots_start_together() -> None:
    gate = StartGate(slots=2, grace_s=3600)
    first, second = await gate.enter(), await gate.enter()
    third = asyncio.create_task(gate.enter())
    await asyncio.sleep(0)
    assert not third.done() and gate.running == 2 and gate.waiting == 1
    first.release()
    ticket = await third
    assert gate.running == 2 and gate.waiting == 0
    first.release()  # a second release gives back nothing
    assert gate.running == 2
    second.release()
    ticket.release()
    assert gate.running == 0


async def test_lower_priority_numbers_go_first_then_first_come() -> None:
    gate = StartGate(slots=1, grace_s=3600)
    held = await gate.enter()
    order: list[str] = []

    async def start(name: str, priority: int) -> None:
        ticket = await gate.enter(priority)
        order.append(name)
        ticket.release()

    tasks = [asyncio.create_task(start(n, p)) for n, p in (("late", 1), ("later", 1), ("builtin", 0))]
    await asyncio.sleep(0)
    held.release()
    await asyncio.gather(*tasks)
    assert order == ["builtin", "late", "later"]


async def test_a_start_past_its_grace_lets_the_next_one_go() -> None:
    gate = StartGate(slots=1, grace_s=0.01)
    await gate.enter()  # never released: a server that hangs while starting
    ticket = await asyncio.wait_for(gate.enter(), 60)
    ticket.release()


async def test_a_cancelled_wait_leaves_no_slot_taken() -> None:
    gate = StartGate(slots=1, grace_s=3600)
    held = await gate.enter()
    waiting = asyncio.create_task(gate.enter())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    held.release()
    assert gate.running == 0 and gate.waiting == 0
    (await gate.enter()).release()


async def test_it_allows_at_least_two_starts() -> None:
    assert cores() >= 2 and StartGate().slots >= 2


async def test_the_pool_starts_builtin_servers_first() -> None:
    """With one start at a time, a built-in server listed last is ready before the
    others are even started."""
    def fake(name: str, builtin: str | None = None) -> ServerConfig:
        return ServerConfig(name=name, command=sys.executable, args=[str(FAKE), "--name", name],
                            builtin=builtin)

    pool = SourcePool([fake("a"), fake("b"), fake("files", builtin="files")],
                      gate=StartGate(slots=1, grace_s=3600))
    try:
        await pool.start()
        await pool.list_tools("files")
        assert pool.state("files").status is ServerStatus.READY
        assert {pool.state(n).status for n in ("a", "b")} == {ServerStatus.STARTING}
        await pool.warm_up()
        assert {s.status for s in pool.states()} == {ServerStatus.READY}
    finally:
        await pool.aclose()
