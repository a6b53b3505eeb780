"""The app's qasync loop accepts "never" timeouts (anyio/mcp use them) instead of
raising OverflowError from QTimer's integer milliseconds."""

from __future__ import annotations

import asyncio
import math

import anyio
import pytest

from tributary.app.loop import MAX_DELAY_S


@pytest.mark.asyncio
async def test_infinite_and_huge_delays_are_accepted(qtbot: object) -> None:
    loop = asyncio.get_running_loop()
    fired: list[str] = []
    never = loop.call_later(math.inf, fired.append, "inf")
    far = loop.call_at(loop.time() + MAX_DELAY_S * 2, fired.append, "far")
    soon = loop.call_later(0.01, fired.append, "soon")
    await asyncio.sleep(0.05)
    never.cancel()
    far.cancel()
    assert fired == ["soon"] and not soon.cancelled()


@pytest.mark.asyncio
async def test_anyio_scopes_without_deadline_work(qtbot: object) -> None:
    with anyio.fail_after(math.inf):
        await asyncio.sleep(0.01)
    with anyio.move_on_after(0.02) as scope:
        await asyncio.sleep(1)
    assert scope.cancelled_caught
