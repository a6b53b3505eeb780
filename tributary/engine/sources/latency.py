"""How long each source usually takes, and the order a fan-out sends its requests in.

A fan-out waits for its slowest source, so the request that starts it should
leave first: sending in order of expected latency, slowest first, is the
longest-processing-time-first rule for makespan. It matters because a fan-out
is not free to dispatch — the client prepares requests one at a time and the
servers it wakes share the same few cores — so whichever request goes out
last starts its work several milliseconds late; that delay should fall on a
source that has time to spare, not on the one everyone waits for.

The estimate is an exponentially weighted moving average of the latencies of
answered or timed-out calls (a timeout counts as the timeout: the source is at
least that slow). Fast failures say nothing about how long an answer takes and
are left out, and so are calls that waited for the server to start.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

DEFAULT_ALPHA = 0.25  # weight of the newest sample: settles in a handful of queries


class LatencyEstimate:
    """An EWMA of one source's call latency in milliseconds; ``None`` before any sample."""

    __slots__ = ("_alpha", "_value", "samples")

    def __init__(self, alpha: float = DEFAULT_ALPHA) -> None:
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha must be in (0, 1], not {alpha}")
        self._alpha = alpha
        self._value: float | None = None
        self.samples = 0

    @property
    def ms(self) -> float | None:
        return self._value

    def add(self, latency_ms: float) -> None:
        latency_ms = max(0.0, latency_ms)
        prev = self._value
        self._value = latency_ms if prev is None else prev + self._alpha * (latency_ms - prev)
        self.samples += 1


def dispatch_order(names: Iterable[str], expected_ms: Callable[[str], float | None]) -> list[str]:
    """``names`` in the order to send their requests: slowest expected first.

    Sources with no history come first, in the given order: their latency is
    unknown (and a first call may include the server's start-up), so they are
    treated as the slowest. Ties keep the given order.
    """
    ordered = list(names)
    estimates = {name: expected_ms(name) for name in ordered}

    def key(name: str) -> float:
        ms = estimates[name]
        return float("-inf") if ms is None else -ms

    return sorted(ordered, key=key)
