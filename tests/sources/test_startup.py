"""Start-up against query time (real subprocesses): a server still making its first start
is waited for up to its own start-up timeout and then answers with its query timeout; a
server that never answers ``initialize`` is reported once that wait is over, and its
breaker opens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import fake, tributary, write_config
from tests.sources.helpers import eventually, health, stdio_config
from tributary.engine.model import SourceStatus
from tributary.engine.sources import ServerStatus, SourcePool
from tributary.engine.sources.health import BreakerState

pytestmark = pytest.mark.integration


@pytest.mark.asyncio
async def test_waits_on_a_hanging_start_end_at_the_servers_start_up_timeout_and_open_the_breaker() -> None:
    config = stdio_config("mute", "--hang-init", timeout=0.5, startup_timeout=1.0,
                          health=health(threshold=2))
    pool = SourcePool([config])  # the pool's start-up limit stays at its default, 30 s
    try:
        states = await pool.warm_up(["mute"])
        assert states["mute"].status is ServerStatus.STARTING  # given up at 1 s, not 30 s

        for _ in range(2):
            outcome = await pool.call("mute", "q", top_k=3)
            assert outcome.status is SourceStatus.TIMEOUT
            assert "not ready" in (outcome.error or "")
        assert pool.state("mute").breaker.state is BreakerState.OPEN
        refused = await pool.call("mute", "q", top_k=3)
        assert refused.status is SourceStatus.CIRCUIT_OPEN
        assert pool.state("mute").status is ServerStatus.STARTING  # still its own to finish
    finally:
        await pool.aclose()


@pytest.mark.asyncio
async def test_the_handshake_is_given_up_after_the_start_up_limit_and_retried() -> None:
    config = stdio_config("mute", "--hang-init", timeout=0.5)
    pool = SourcePool([config], start_timeout_s=1.0)
    try:
        await pool.start(["mute"])
        assert await eventually(lambda: pool.state("mute").restarts >= 1, timeout=30)
        assert any("no answer to initialize within 1s" in line
                   for line in pool.stderr_lines("mute"))
    finally:
        await pool.aclose()


def test_a_one_shot_search_is_held_by_a_server_that_never_starts_only_its_start_up_timeout(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    text = ("servers:\n" + fake("good", "--hits", "2")
            + fake("mute", "--hang-init") + "    timeout: 1\n    startup_timeout: 2\n")
    config = write_config(home, text)
    # The pool's start-up limit is 30 s; this source's own start-up timeout is 2 s.
    result = tributary("--config", str(config), "search", "--json", "retry", home=home, timeout=25)
    data = json.loads(result.stdout)
    status = {s["name"]: s["status"] for s in data["sources"]}
    assert status == {"good": "ok", "mute": "timeout"}, result.stderr
    assert len(data["hits"]) == 2


@pytest.mark.asyncio
async def test_a_slow_first_start_is_waited_for_and_answered_normally() -> None:
    """A start slower than the query timeout (a busy machine) is not a failed query."""
    config = stdio_config("slow", "--start-delay", "2", "--hits", "2", timeout=0.5)
    pool = SourcePool([config])
    try:
        outcome = await pool.call("slow", "q", top_k=3)
        assert outcome.status is SourceStatus.OK, outcome.error
        assert len(outcome.hits) == 2
        assert pool.state("slow").breaker.consecutive_failures == 0
    finally:
        await pool.aclose()
