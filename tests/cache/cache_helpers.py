"""Helpers shared by the cache tests (importable, unlike conftest)."""

from __future__ import annotations

from collections.abc import Callable

from tributary.engine.cache.base import Cache

CacheFactory = Callable[..., Cache]


class FakeClock:
    """Wall-clock stand-in the tests move by hand."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
