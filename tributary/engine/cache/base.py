"""The cache interface every backend implements, with the parts they share.

A :class:`Cache` maps string keys (hashes; see ``tributary.engine.cache.keys``) to JSON values,
each with a time-to-live and a set of tags naming what it depends on (``repo:/path``,
``server:NAME``), so one call can drop everything a change made stale. Backends only
store text; encoding, secret scrubbing, hit/miss counting and error handling live
here, so every backend behaves the same.

A broken cache must never break a search: a backend failure on ``get``/``set`` is
logged and counted, and the search carries on as a miss. Invalidation failures do
raise (:class:`CacheError`), because silently keeping stale entries would be worse.
"""

from __future__ import annotations

import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Self

from tributary.engine.cache.codec import to_jsonable
from tributary.engine.cache.redact import Scrubber
from tributary.engine.errors import TributaryError

log = logging.getLogger(__name__)

Clock = Callable[[], float]  # wall-clock seconds; entries outlive a process (SQLite, Redis)


class CacheError(TributaryError, RuntimeError):
    """A cache backend failed an operation that must not fail silently."""


@dataclass(slots=True)
class CacheStats:
    """Counters since this cache object was opened, and the entries it holds now."""

    backend: str
    hits: int = 0
    misses: int = 0
    sets: int = 0
    evictions: int = 0
    invalidations: int = 0
    errors: int = 0
    size: int = 0
    max_entries: int | None = None

    @property
    def lookups(self) -> int:
        return self.hits + self.misses

    @property
    def rate(self) -> float:
        """Hit rate: hits / lookups (0 before the first lookup)."""
        return self.hits / self.lookups if self.lookups else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "hits": self.hits,
            "misses": self.misses,
            "lookups": self.lookups,
            "rate": self.rate,
            "sets": self.sets,
            "evictions": self.evictions,
            "invalidations": self.invalidations,
            "errors": self.errors,
            "size": self.size,
            "max_entries": self.max_entries,
        }


class Cache(ABC):
    """Async key → JSON value store with TTL and tag invalidation."""

    backend: ClassVar[str] = "abstract"
    # Exceptions of the storage layer that mean "the cache is unavailable".
    backend_errors: ClassVar[tuple[type[BaseException], ...]] = ()

    def __init__(
        self,
        *,
        ttl_s: float = 300.0,
        max_entries: int | None = None,
        clock: Clock | None = None,
        scrubber: Scrubber | None = None,
    ) -> None:
        if max_entries is not None and max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._clock: Clock = clock or time.time
        self._scrubber = scrubber or Scrubber()
        self._stats = CacheStats(backend=self.backend, max_entries=max_entries)

    # --- public API ---------------------------------------------------------------

    async def get(self, key: str) -> Any | None:
        """The value stored under ``key``, or ``None`` when absent or expired."""
        self._check_key(key)
        try:
            text = await self._get(key, self._clock())
        except self.backend_errors as exc:
            self._failed("get", exc)
            text = None
        if text is None:
            self._stats.misses += 1
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:  # damaged on disk or written by something else
            self._failed("decode", exc)
            self._stats.misses += 1
            await self._drop_quietly(key)
            return None
        self._stats.hits += 1
        return value

    async def set(
        self,
        key: str,
        value: Any,
        *,
        ttl: float | None = None,
        tags: Iterable[str] = (),
    ) -> None:
        """Store ``value`` (anything :func:`to_jsonable` takes) for ``ttl`` seconds."""
        self._check_key(key)
        lifetime = self.ttl_s if ttl is None else ttl
        if lifetime <= 0:
            return
        data = self._scrubber.data(to_jsonable(value))
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        clean_tags = sorted({self._scrubber.text(tag) for tag in tags})
        now = self._clock()
        try:
            evicted = await self._set(key, text, now, now + lifetime, clean_tags)
        except self.backend_errors as exc:
            self._failed("set", exc)
            return
        self._stats.sets += 1
        self._stats.evictions += evicted

    async def delete(self, key: str) -> bool:
        """Drop ``key``; True when it was there."""
        return await self._guard("delete", self._delete(key)) > 0

    async def invalidate(self, *, prefix: str | None = None, tag: str | None = None) -> int:
        """Drop entries whose key starts with ``prefix`` or that carry ``tag``; or all."""
        if prefix is None and tag is None:
            return await self.clear()
        dropped = 0
        if prefix is not None:
            dropped += await self.invalidate_prefix(prefix)
        if tag is not None:
            dropped += await self.invalidate_tag(tag)
        return dropped

    async def invalidate_prefix(self, prefix: str) -> int:
        count = await self._guard("invalidate", self._invalidate_prefix(prefix))
        self._stats.invalidations += count
        return count

    async def invalidate_tag(self, tag: str) -> int:
        count = await self._guard("invalidate", self._invalidate_tag(self._scrubber.text(tag)))
        self._stats.invalidations += count
        return count

    async def clear(self) -> int:
        count = await self._guard("clear", self._clear())
        self._stats.invalidations += count
        return count

    async def stats(self) -> CacheStats:
        """Counters plus the number of live entries (``errors`` counts a failed size)."""
        try:
            size = await self._size(self._clock())
        except self.backend_errors as exc:
            self._failed("size", exc)
            size = -1
        s = self._stats
        return CacheStats(
            backend=s.backend,
            hits=s.hits,
            misses=s.misses,
            sets=s.sets,
            evictions=s.evictions,
            invalidations=s.invalidations,
            errors=s.errors,
            size=size,
            max_entries=s.max_entries,
        )

    async def close(self) -> None:  # noqa: B027 - optional hook: most backends hold nothing
        """Release connections; the cache object is unusable afterwards."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # --- what a backend implements --------------------------------------------------

    @abstractmethod
    async def _get(self, key: str, now: float) -> str | None:
        """The stored text when present and ``expires > now``."""

    @abstractmethod
    async def _set(self, key: str, text: str, now: float, expires: float, tags: list[str]) -> int:
        """Store (replacing ``key`` and its old tags); return how many entries were evicted."""

    @abstractmethod
    async def _delete(self, key: str) -> int: ...

    @abstractmethod
    async def _invalidate_prefix(self, prefix: str) -> int: ...

    @abstractmethod
    async def _invalidate_tag(self, tag: str) -> int: ...

    @abstractmethod
    async def _clear(self) -> int: ...

    @abstractmethod
    async def _size(self, now: float) -> int: ...

    # --- helpers ----------------------------------------------------------------------

    def _check_key(self, key: str) -> None:
        if not key:
            raise ValueError("cache key must not be empty")
        if self._scrubber and self._scrubber.text(key) != key:
            # A caller built a key from expanded config: refuse rather than store a secret.
            raise ValueError("cache key contains a secret value; build keys with tributary.engine.cache.keys")

    async def _guard(self, operation: str, pending: Any) -> int:
        try:
            result: int = await pending
        except self.backend_errors as exc:
            self._failed(operation, exc)
            raise CacheError(f"{self.backend} cache {operation} failed: {exc}") from exc
        return result

    async def _drop_quietly(self, key: str) -> None:
        try:
            await self._delete(key)
        except self.backend_errors as exc:
            self._failed("delete", exc)

    def _failed(self, operation: str, exc: BaseException) -> None:
        self._stats.errors += 1
        log.warning("%s cache %s failed: %s", self.backend, operation, exc)


class NullCache(Cache):
    """The ``off`` backend: stores nothing, every lookup a miss."""

    backend = "off"

    async def _get(self, key: str, now: float) -> str | None:
        return None

    async def _set(self, key: str, text: str, now: float, expires: float, tags: list[str]) -> int:
        return 0

    async def _delete(self, key: str) -> int:
        return 0

    async def _invalidate_prefix(self, prefix: str) -> int:
        return 0

    async def _invalidate_tag(self, tag: str) -> int:
        return 0

    async def _clear(self) -> int:
        return 0

    async def _size(self, now: float) -> int:
        return 0
