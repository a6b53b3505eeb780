"""How many local servers start at once, and which first.

Starting a stdio server is mostly CPU: an interpreter or Node loading its SDK. Started
all together on a two-core laptop, a dozen servers share the cores and each is ready
only about when the last one is, the built-in code search among them, so the first
answer waits for the slowest start. The gate lets as many starts run together as
there are cores, Tributary's own servers first, and lets the next one go when a start
ends (ready or failed) or has run for a grace period: a server that hangs while
starting delays the queue by the grace period, never by its whole start-up timeout.

    gate = StartGate()
    ticket = await gate.enter(priority=0)    # lower goes first; FIFO within a priority
    ...spawn, initialize, list tools...
    ticket.release()                         # idempotent; also done by the grace timer
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import os

GRACE_S = 3.0  # a start that has run this long no longer holds its slot


def cores() -> int:
    """The CPUs this process may run on (at least 2: one start never waits on another)."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        count = os.cpu_count() or 2
    return max(2, count)


class Ticket:
    """One admitted start; :meth:`release` gives its slot back (once)."""

    def __init__(self, gate: StartGate, grace_s: float) -> None:
        self._gate = gate
        self._released = False
        self._timer = asyncio.get_running_loop().call_later(grace_s, self.release)

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        self._timer.cancel()
        self._gate._slot_freed()


class StartGate:
    """At most ``slots`` starts running at once (see the module docstring)."""

    def __init__(self, slots: int | None = None, grace_s: float = GRACE_S) -> None:
        self.slots = slots if slots is not None else cores()
        self.grace_s = grace_s
        self._running = 0
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return sum(1 for *_, future in self._waiting if not future.done())

    @property
    def full(self) -> bool:
        """Whether a start asked for now has to wait its turn."""
        return self._running >= self.slots or self.waiting > 0

    async def enter(self, priority: int = 1) -> Ticket:
        """Wait for a slot (lower ``priority`` first, then first come); cancellable."""
        if not self.full:
            self._running += 1
            return Ticket(self, self.grace_s)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (priority, next(self._order), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._slot_freed()  # admitted in the same step as the cancellation
            raise
        return Ticket(self, self.grace_s)

    def _slot_freed(self) -> None:
        self._running -= 1
        while self._waiting and self._running < self.slots:
            *_, future = heapq.heappop(self._waiting)
            if not future.done():
                self._running += 1
                future.set_result(None)
