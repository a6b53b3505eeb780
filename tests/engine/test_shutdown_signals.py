"""tributary.engine.runtime.shutdown: a shutdown signal cancels the command, whose cleanup still runs."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest

from tributary.engine.runtime.shutdown import run_until_signalled

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_cancels_the_command_after_its_cleanup(signum: signal.Signals) -> None:
    cleaned: list[str] = []
    before = signal.getsignal(signal.SIGTERM)

    async def command() -> int:
        try:
            os.kill(os.getpid(), signum)
            await asyncio.sleep(30)
            return 0
        finally:
            await asyncio.sleep(0.01)  # cleanup may await: it runs to the end
            cleaned.append("sources stopped")

    assert run_until_signalled(command) == 128 + signum
    assert cleaned == ["sources stopped"]
    signal.signal(signal.SIGTERM, before)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def test_a_command_that_ends_leaves_the_handlers_as_they_were() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    async def command() -> int:
        return 7

    assert run_until_signalled(command) == 7
    assert {s: signal.getsignal(s) for s in before} == before
