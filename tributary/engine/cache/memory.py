"""In-process cache: least-recently-used eviction over a bounded number of entries.

Lives and dies with the process; the fastest backend and the one for tests and for
a short-lived CLI run. All operations are synchronous dictionary work, so under one
asyncio loop no two of them interleave.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from tributary.engine.cache.base import Cache, Clock
from tributary.engine.cache.redact import Scrubber


@dataclass(slots=True)
class _Entry:
    text: str
    expires: float
    tags: list[str]


class MemoryCache(Cache):
    backend = "memory"

    def __init__(
        self,
        *,
        max_entries: int = 1000,
        ttl_s: float = 300.0,
        clock: Clock | None = None,
        scrubber: Scrubber | None = None,
    ) -> None:
        super().__init__(ttl_s=ttl_s, max_entries=max_entries, clock=clock, scrubber=scrubber)
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # oldest use first
        self._tags: dict[str, set[str]] = {}

    async def _get(self, key: str, now: float) -> str | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expires <= now:
            self._remove(key)
            return None
        self._entries.move_to_end(key)
        return entry.text

    async def _set(self, key: str, text: str, now: float, expires: float, tags: list[str]) -> int:
        self._remove(key)
        self._entries[key] = _Entry(text, expires, tags)
        for tag in tags:
            self._tags.setdefault(tag, set()).add(key)
        evicted = 0
        if len(self._entries) > self._capacity:
            evicted += self._drop_expired(now)
        while len(self._entries) > self._capacity:
            oldest = next(iter(self._entries))
            self._remove(oldest)
            evicted += 1
        return evicted

    async def _delete(self, key: str) -> int:
        return 1 if self._remove(key) else 0

    async def _invalidate_prefix(self, prefix: str) -> int:
        doomed = [key for key in self._entries if key.startswith(prefix)]
        for key in doomed:
            self._remove(key)
        return len(doomed)

    async def _invalidate_tag(self, tag: str) -> int:
        doomed = list(self._tags.get(tag, ()))
        for key in doomed:
            self._remove(key)
        return len(doomed)

    async def _clear(self) -> int:
        count = len(self._entries)
        self._entries.clear()
        self._tags.clear()
        return count

    async def _size(self, now: float) -> int:
        return sum(1 for entry in self._entries.values() if entry.expires > now)

    @property
    def _capacity(self) -> int:
        return self.max_entries or 1

    def _drop_expired(self, now: float) -> int:
        expired = [key for key, entry in self._entries.items() if entry.expires <= now]
        for key in expired:
            self._remove(key)
        return len(expired)

    def _remove(self, key: str) -> bool:
        entry = self._entries.pop(key, None)
        if entry is None:
            return False
        for tag in entry.tags:
            keys = self._tags.get(tag)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._tags[tag]
        return True
