"""The two cache levels the engine uses, over any :class:`~tributary.engine.cache.base.Cache`.

* Query level: a whole ``SearchResponse`` for a request under one config. Served
  only for complete answers — a response where a source timed out, failed or said its
  answer was degraded (keyword search while its model loads) is not stored, or one
  slow moment would be replayed for the whole TTL.
* Source level: one server's normalised hits for one tool call, so a new query
  option (strategy, budget, format) re-fuses without asking the servers again.

Each entry is tagged with what it depends on; :meth:`ResponseCache.invalidate_repo`
and :meth:`ResponseCache.apply_config` drop what a change made stale.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tributary.engine.cache.base import Cache, CacheStats
from tributary.engine.cache.codec import (
    CodecError,
    hits_from_list,
    hits_to_list,
    response_from_dict,
)
from tributary.engine.cache.keys import (
    INDEXES_TAG,
    config_fingerprint,
    query_key,
    repo_tag,
    response_tags,
    server_fingerprint,
    server_tag,
    source_key,
    source_tags,
)
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.model import Hit, SearchRequest, SearchResponse, SourceStatus

log = logging.getLogger(__name__)

# Statuses that mean "this source's part of the answer is complete".
_COMPLETE = frozenset({SourceStatus.OK, SourceStatus.CACHED, SourceStatus.SKIPPED})


class ResponseCache:
    """Query-level and source-level caching for one config."""

    def __init__(self, cache: Cache, config: Config) -> None:
        self.cache = cache
        self._config = config
        self._config_fp = config_fingerprint(config)

    @property
    def config(self) -> Config:
        return self._config

    # --- query level ------------------------------------------------------------------

    def key_for(self, request: SearchRequest) -> str:
        return query_key(request, self._config_fp)

    async def get_response(self, request: SearchRequest) -> SearchResponse | None:
        """The cached answer to ``request``, re-addressed to it; None on a miss.

        The returned response carries ``request`` itself (its new id), marks the
        sources that answered as ``cached`` and counts one cache hit in its metrics.
        """
        if not request.use_cache:
            return None
        key = self.key_for(request)
        data = await self.cache.get(key)
        if data is None:
            return None
        try:
            response = response_from_dict(data)
        except (CodecError, TypeError, ValueError) as exc:
            # Written by another version of the model: drop it and answer afresh.
            log.info("dropping undecodable cache entry: %s", exc)
            await self.cache.delete(key)
            return None
        response.request = request
        for report in response.sources:
            if report.status is SourceStatus.OK:
                report.status = SourceStatus.CACHED
                report.detail = "query cache"
        response.metrics.cache_hits = 1
        response.metrics.cache_lookups = 1
        return response

    async def put_response(self, request: SearchRequest, response: SearchResponse) -> bool:
        """Store a complete answer; True when stored."""
        if not request.use_cache or not is_complete(response):
            return False
        await self.cache.set(
            self.key_for(request), response, tags=response_tags(response, self._config)
        )
        return True

    # --- source level -----------------------------------------------------------------

    async def get_hits(
        self, server: ServerConfig, tool: str, arguments: Mapping[str, Any]
    ) -> list[Hit] | None:
        """``server``'s cached hits for this call (arguments as configured, unexpanded)."""
        key = source_key(server, tool, arguments)
        data = await self.cache.get(key)
        if data is None:
            return None
        try:
            return hits_from_list(data)
        except (CodecError, TypeError, ValueError) as exc:
            log.info("dropping undecodable cache entry: %s", exc)
            await self.cache.delete(key)
            return None

    async def put_hits(
        self,
        server: ServerConfig,
        tool: str,
        arguments: Mapping[str, Any],
        hits: list[Hit],
        *,
        ttl: float | None = None,
    ) -> None:
        await self.cache.set(
            source_key(server, tool, arguments),
            hits_to_list(hits),
            ttl=ttl,
            tags=source_tags(server, self._config),
        )

    # --- invalidation -----------------------------------------------------------------

    async def invalidate_repo(self, path: str | Path) -> int:
        """An indexed repository changed: drop every answer that drew on it."""
        return await invalidate_repository_tags(self.cache, path)

    async def invalidate_server(self, name: str) -> int:
        return await self.cache.invalidate_tag(server_tag(name))

    async def apply_config(self, config: Config) -> int:
        """Switch to ``config``; drop entries of servers whose answers it changes.

        Query-level keys include the config fingerprint, so older whole responses stop
        matching at once; this also frees their space and the source-level entries.
        """
        old = self._config.servers
        dropped = 0
        for name, server in old.items():
            new = config.servers.get(name)
            if new is None or server_fingerprint(new) != server_fingerprint(server):
                dropped += await self.invalidate_server(name)
        self._config = config
        self._config_fp = config_fingerprint(config)
        return dropped

    async def stats(self) -> CacheStats:
        return await self.cache.stats()

    async def close(self) -> None:
        await self.cache.close()


def is_complete(response: SearchResponse) -> bool:
    """Every asked source answered in full (no timeout, error, open circuit, pending
    call or answer its source called degraded)."""
    if response.error is not None:
        return False
    return all(report.status in _COMPLETE and not report.degraded for report in response.sources)


async def invalidate_repository_tags(cache: Cache, path: str | Path) -> int:
    """Drop what a change to the repository at ``path`` made stale: answers tagged with
    it, and every built-in server's answer (``INDEXES_TAG``); how many."""
    return await cache.invalidate_tag(repo_tag(path)) + await cache.invalidate_tag(INDEXES_TAG)
