"""Admission control: at most so many searches at once, a bounded queue, then "busy".

Without it, a burst of clients (200 HTTP sessions) started every search at once:
each source got hundreds of calls, most ran past their timeouts, breakers opened,
and answers came late or never. Now ``running`` searches run, up to ``queued``
more wait (each at most ``wait_s``) for a slot, and any other is refused at once
with :class:`Busy`, whose message says so: every request gets an answer in bounded
time or a clear error, none is lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from tributary.engine.errors import TributaryError

MAX_RUNNING = 8
MAX_QUEUED = 64
QUEUE_WAIT_S = 10.0


class Busy(TributaryError):
    """Too many searches at once: this one was not started; try again shortly."""


@dataclass(frozen=True, slots=True)
class AdmissionStats:
    running: int
    waiting: int
    refused: int  # ever, since the engine opened


class Admission:
    """A semaphore with a bounded, time-limited queue in front of it."""

    def __init__(self, running: int = MAX_RUNNING, queued: int = MAX_QUEUED,
                 wait_s: float = QUEUE_WAIT_S) -> None:
        if running < 1 or queued < 0 or wait_s < 0:
            raise ValueError(f"admission limits must be positive: running={running}, "
                             f"queued={queued}, wait_s={wait_s}")
        self.queued_limit = queued
        self.wait_s = wait_s
        self._slots = asyncio.Semaphore(running)
        self._running = 0
        self._waiting = 0
        self._refused = 0

    def stats(self) -> AdmissionStats:
        return AdmissionStats(self._running, self._waiting, self._refused)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold a slot for the body; :class:`Busy` if none is free in time."""
        if self._slots.locked():
            await self._queue()
        else:
            await self._slots.acquire()
        self._running += 1
        try:
            yield
        finally:
            self._running -= 1
            self._slots.release()

    async def _queue(self) -> None:
        if self._waiting >= self.queued_limit:
            self._refused += 1
            raise Busy(f"busy: {self._running} searches running and {self._waiting} waiting "
                       "(the most this server takes); try again shortly")
        self._waiting += 1
        try:
            async with asyncio.timeout(self.wait_s):
                await self._slots.acquire()
        except TimeoutError:
            self._refused += 1
            raise Busy(f"busy: no search slot came free within {self.wait_s:g}s; "
                       "try again shortly") from None
        finally:
            self._waiting -= 1
