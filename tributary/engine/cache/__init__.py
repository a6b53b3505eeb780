"""Caching of search answers: query level and source level, over three backends.

``make_cache(config.cache)`` gives the configured backend — ``sqlite`` (persistent,
the default), ``memory`` (LRU) or ``redis`` (shared between machines) — and
``open_response_cache(config)`` wraps it in the two cache levels the engine uses,
with the config's secret values scrubbed from everything stored.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from tributary.engine.cache.base import Cache, CacheError, CacheStats, Clock, NullCache
from tributary.engine.cache.layers import ResponseCache, invalidate_repository_tags, is_complete
from tributary.engine.cache.memory import MemoryCache
from tributary.engine.cache.redact import Scrubber, likely_secret_values, secret_values
from tributary.engine.cache.sqlite import SqliteCache
from tributary.engine.config.expand import expand_string
from tributary.engine.config.schema import CacheConfig, Config
from tributary.engine.paths import cache_path

__all__ = [
    "Cache",
    "CacheError",
    "CacheStats",
    "MemoryCache",
    "NullCache",
    "ResponseCache",
    "SqliteCache",
    "invalidate_repository",
    "invalidate_repository_blocking",
    "is_complete",
    "make_cache",
    "open_response_cache",
]



def make_cache(
    config: CacheConfig,
    *,
    path: Path | None = None,
    secrets: Iterable[str] = (),
    clock: Clock | None = None,
) -> Cache:
    """The backend ``config`` names. ``path`` overrides the SQLite file (default
    ``tributary.engine.paths.cache_path()``); ``secrets`` are values to mask in stored data."""
    scrubber = Scrubber(secrets)
    if config.backend == "memory":
        return MemoryCache(
            max_entries=config.max_entries, ttl_s=config.ttl_s, clock=clock, scrubber=scrubber
        )
    if config.backend == "sqlite":
        return SqliteCache(
            path or cache_path(),
            max_entries=config.max_entries,
            max_bytes=int(config.max_mb * 1024 * 1024),
            ttl_s=config.ttl_s,
            clock=clock,
            scrubber=scrubber,
        )
    if config.backend == "redis":
        # Imported here so the redis client loads only for those who use it.
        try:
            from tributary.engine.cache.redis_backend import RedisCache
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] != "redis":
                raise
            from tributary.engine.extras import install_hint

            raise CacheError(
                f"cache backend 'redis' needs the redis extra: {install_hint('redis')}"
            ) from exc

        return RedisCache(
            expand_variables(config.redis_url), ttl_s=config.ttl_s, clock=clock, scrubber=scrubber
        )
    if config.backend == "off":
        return NullCache(ttl_s=config.ttl_s, clock=clock, scrubber=scrubber)
    raise ValueError(f"unknown cache backend {config.backend!r}")


def open_response_cache(
    config: Config,
    *,
    path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    clock: Clock | None = None,
) -> ResponseCache:
    """The engine's two-level cache for ``config`` (unexpanded, as loaded from YAML).

    Masks the values of the variables the config references and of any environment
    variable named like a credential.
    """
    secrets = secret_values(config, environ) | likely_secret_values(environ)
    return ResponseCache(make_cache(config.cache, path=path, secrets=secrets, clock=clock), config)


async def invalidate_repository(
    config: Config, repo_path: str | Path, *, path: Path | None = None
) -> int:
    """An indexed repository changed: drop every cached answer that drew on it.

    For the processes that change an index without holding the engine's cache — the
    indexer, the watcher, ``tributary index update``. The SQLite and Redis caches are
    shared, so this reaches every Tributary process; a memory cache is private to its
    engine, which must be told directly (``ResponseCache.invalidate_repo``).
    """
    if config.cache.backend in ("memory", "off"):
        return 0
    cache = make_cache(config.cache, path=path)
    try:
        return await invalidate_repository_tags(cache, repo_path)
    finally:
        await cache.close()


def invalidate_repository_blocking(
    config: Config, repo_path: str | Path, *, path: Path | None = None
) -> int:
    """:func:`invalidate_repository` for a thread without an event loop (a watcher's
    ``on_update`` callback)."""
    return asyncio.run(invalidate_repository(config, repo_path, path=path))


def expand_variables(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``${VAR}`` / ``${VAR:-default}`` replaced from the environment (the Redis URL may
    carry a password that way)."""
    expanded, _unset = expand_string(text, os.environ if environ is None else environ)
    return expanded
