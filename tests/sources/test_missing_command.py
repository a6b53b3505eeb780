"""A command that does not exist is reported as such and not retried until the config changes."""

from __future__ import annotations

import asyncio
import dataclasses
import sys

import pytest

from tests.sources.helpers import stdio_config
from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SourceStatus
from tributary.engine.sources import Backoff, ServerStatus, SourcePool

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]


async def test_missing_command_says_so_and_stops_retrying() -> None:
    missing = ServerConfig(name="m", command="tributary-no-such-command-xyz", args=["--serve"], timeout=5.0)
    pool = SourcePool([missing], backoff=Backoff(initial_s=0.01))
    try:
        first = await pool.call("m", "anything", top_k=2)
        assert first.status is SourceStatus.ERROR
        assert first.error == "command not found: tributary-no-such-command-xyz"
        await asyncio.sleep(0.2)  # many backoff periods: a retrying client would restart
        state = pool.state("m")
        assert state.status is ServerStatus.STOPPED
        assert state.restarts == 0
        assert state.last_error == "command not found: tributary-no-such-command-xyz"
        again = await pool.call("m", "anything", top_k=2)
        assert again.error == "command not found: tributary-no-such-command-xyz"
        assert pool.state("m").restarts == 0

        # Fixing the config gives it a fresh start.
        fixed = dataclasses.replace(stdio_config("m"), name="m")
        await pool.reconfigure([fixed])
        answered = await pool.call("m", "anything", top_k=2)
        assert answered.status is SourceStatus.OK, answered.error
    finally:
        await pool.aclose()


async def test_missing_working_directory_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = dataclasses.replace(stdio_config("w"), cwd=str(tmp_path / "gone"))
    pool = SourcePool([config], backoff=Backoff(initial_s=0.01))
    try:
        outcome = await pool.call("w", "anything", top_k=2)
        assert outcome.error == f"working directory not found: {tmp_path / 'gone'}"
    finally:
        await pool.aclose()


async def test_a_command_that_exits_silently_at_start_is_named_to_run_by_hand() -> None:
    """``npx -y pkg`` whose install failed exits 1 printing nothing: the reason said
    "server exited during the start-up" and no more."""
    silent = ServerConfig(name="s", command=sys.executable, args=["-c", "raise SystemExit(1)"], timeout=30.0)
    pool = SourcePool([silent], backoff=Backoff(initial_s=0.01))
    try:
        outcome = await pool.call("s", "anything", top_k=2, timeout=60)
    finally:
        await pool.aclose()
    assert outcome.status is SourceStatus.ERROR
    assert (outcome.error or "").endswith(
        f"server exited during the start-up and printed nothing; run "
        f"`{sys.executable} -c 'raise SystemExit(1)'` in a terminal to see why")
