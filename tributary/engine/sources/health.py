"""Source health: a circuit breaker per server and periodic health checks.

:class:`CircuitBreaker` — after ``failure_threshold`` consecutive failures or
timeouts the breaker opens for ``open_s`` seconds; calls are then refused at no
cost (the caller reports ``circuit_open``). When the time is up the breaker is
half-open: exactly one trial call goes through and decides — success closes it,
failure opens it again for twice as long as the last time (up to 16 × ``open_s``),
so a server that stays broken costs a search its timeout every few minutes rather
than every half minute. A trial that is abandoned (a superseded query) gives the
trial slot back.

:class:`HealthMonitor` — a background task per server that, every
``health.interval_s``, pings a *running* server (a cheap ``ping``; never spawns
a server that is not started) and feeds the result to its breaker.

:class:`Silence` — how long a running server has sent nothing at all while
requests to it went unanswered. The client restarts a server that leaves
``failure_threshold`` requests in a row (calls or pings) unanswered and then
does not answer a ping either: alive but frozen (deadlocked, looping, stopped),
it would otherwise keep its process and an open breaker for good. Any message
from the server (a late answer, a log line) clears the run, so a slow server
that answers late, or a hung tool whose session still answers pings, is left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

from tributary.engine.config.schema import HealthConfig

Clock = Callable[[], float]


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass(frozen=True, slots=True)
class BreakerSnapshot:
    state: BreakerState
    consecutive_failures: int
    retry_in_s: float | None  # while open: seconds until the trial call is allowed
    opened: int  # how many times it has opened


class CircuitBreaker:
    MAX_DOUBLINGS = 4  # a failed trial doubles the open period, up to 16 × open_s

    def __init__(self, config: HealthConfig, clock: Clock = time.monotonic) -> None:
        self.config = config
        self._clock = clock
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._open_until = 0.0
        self._trial_out = False
        self._opened = 0
        self._reopened = 0  # failed trials since the last success
        self._calls_failed = False  # the run of failures holds a failed call, not only pings

    @property
    def state(self) -> BreakerState:
        if self._state is BreakerState.OPEN and self._clock() >= self._open_until:
            return BreakerState.HALF_OPEN if self._trial_out else BreakerState.OPEN
        return self._state

    def allow(self) -> bool:
        """May a call go out now? Claims the trial slot when the open period is over."""
        if self._state is BreakerState.CLOSED:
            return True
        if self._state is BreakerState.HALF_OPEN:
            return False  # the one trial is still out
        if self._clock() < self._open_until:
            return False
        self._state = BreakerState.HALF_OPEN
        self._trial_out = True
        return True

    def record_success(self) -> None:
        self._failures = 0
        self._reopened = 0
        self._calls_failed = False
        self._trial_out = False
        self._state = BreakerState.CLOSED

    def record_failure(self, *, call: bool = True) -> None:
        """A call (or, with ``call=False``, a health check) failed or timed out."""
        self._failures += 1
        self._calls_failed = self._calls_failed or call
        if self._state is BreakerState.HALF_OPEN:
            self._reopened += 1
        if self._state is BreakerState.HALF_OPEN or (
            self._state is BreakerState.CLOSED and self._failures >= self.config.failure_threshold
        ):
            self._open()

    def record_alive(self) -> None:
        """A health check was answered: it clears a run of failed health checks, but
        not failed calls (a server whose tool hangs still answers pings), and never
        closes an open breaker: only a call decides that."""
        if self._state is BreakerState.CLOSED and not self._calls_failed:
            self._failures = 0

    def release_trial(self) -> None:
        """The trial call was abandoned without a verdict: the next call may try."""
        if self._state is BreakerState.HALF_OPEN:
            self._state = BreakerState.OPEN
            self._open_until = self._clock()
            self._trial_out = False

    def trial_now(self) -> None:
        """Let the next call be the trial at once (the server behind it was just replaced)."""
        if self._state is BreakerState.OPEN:
            self._open_until = min(self._open_until, self._clock())

    def retry_in(self) -> float:
        return max(0.0, self._open_until - self._clock())

    def snapshot(self) -> BreakerSnapshot:
        state = self._state
        retry = self.retry_in() if state is BreakerState.OPEN else None
        return BreakerSnapshot(state, self._failures, retry, self._opened)

    def _open(self) -> None:
        self._state = BreakerState.OPEN
        doublings = min(self._reopened, self.MAX_DOUBLINGS)
        self._open_until = self._clock() + self.config.open_s * 2**doublings
        self._trial_out = False
        self._opened += 1


class Silence:
    """A run of requests a server left unanswered while it sent nothing at all."""

    __slots__ = ("_clock", "since", "unanswered")

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self.unanswered = 0
        self.since = clock()  # when the server was last heard from (or came up)

    def heard(self) -> None:
        """The server sent something: it is alive, whatever it answered."""
        self.unanswered = 0
        self.since = self._clock()

    def missed(self) -> int:
        """A request timed out; the length of the run so far."""
        self.unanswered += 1
        return self.unanswered

    def seconds(self) -> float:
        return max(0.0, self._clock() - self.since)


Ping = Callable[[], Awaitable[bool | None]]  # True ok, False failed, None: not running


class HealthMonitor:
    """Runs one periodic check per server; :meth:`stop` is idempotent."""

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def watch(self, name: str, interval_s: float, ping: Ping) -> None:
        self.unwatch(name)
        if interval_s > 0:
            self._tasks[name] = asyncio.create_task(
                self._loop(interval_s, ping), name=f"tributary-health-{name}"
            )

    def unwatch(self, name: str) -> None:
        task = self._tasks.pop(name, None)
        if task is not None:
            task.cancel()

    @property
    def watching(self) -> list[str]:
        return list(self._tasks)

    async def stop(self) -> None:
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @staticmethod
    async def _loop(interval_s: float, ping: Ping) -> None:
        while True:
            await asyncio.sleep(interval_s)
            await ping()
