"""The call right after a server crashed waits for the restart instead of reusing the dead session.

Regression (found by the soak, bench/reliability.py): the SDK fails the call in
flight as soon as the server's stdout ends, but the owner task had not yet
unwound, so for a moment the source still said ``ready`` and handed the next
caller the dead session — a second "server exited" error and a second breaker
failure for one crash.
"""

from __future__ import annotations

import pytest

from tests.sources.helpers import stdio_config
from tributary.engine.model import SourceStatus
from tributary.engine.sources import Backoff, ServerStatus, SourcePool

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]


async def test_next_call_after_a_crash_waits_for_the_restart() -> None:
    # Generous timeout: the restart (0.2 s backoff + a Python start-up) must fit in it.
    config = stdio_config("c", "--mode", "crash-call", "--crash-after", "1", timeout=30.0)
    pool = SourcePool([config], backoff=Backoff(initial_s=0.2))
    try:
        assert (await pool.call("c", "first", top_k=2)).status is SourceStatus.OK
        crashed = await pool.call("c", "second", top_k=2)
        assert crashed.status is SourceStatus.ERROR and "exited" in (crashed.error or "")

        state = pool.state("c")
        assert state.status is not ServerStatus.READY and state.pid is None
        assert await pool.ping("c") is None  # no health check on a dead session

        after = await pool.call("c", "third", top_k=2)
        assert after.status is SourceStatus.OK, after.error
        assert len(after.hits) == 2
        state = pool.state("c")
        assert state.status is ServerStatus.READY and state.restarts == 1
        assert state.breaker.consecutive_failures == 0
        assert state.breaker.opened == 0
    finally:
        await pool.aclose()
