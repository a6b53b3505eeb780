"""Redis cache: one cache shared by every machine of a team (the ``redis`` asyncio client).

Layout under a namespace (default ``tributary:cache:``):
``<ns>e:<key>`` holds ``"<expires>\\n<json>"`` with a Redis expiry (PX) equal to the
TTL, so Redis itself frees dead entries; ``<ns>t:<tag>`` is the set of entry keys
carrying that tag. Writing an entry with its tags, and dropping a tag's entries, run
as Lua scripts so each is atomic against other clients. The expiry stored in the
value is also checked against this process's clock on read, so an injected clock
behaves the same here as in the other backends.

Capacity is Redis's business (``maxmemory`` with an eviction policy); ``max_entries``
is not enforced here. Hit/miss counters are this client's own.
"""

from __future__ import annotations

from typing import Any, cast

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from tributary.engine.cache.base import Cache, Clock
from tributary.engine.cache.redact import Scrubber

DEFAULT_NAMESPACE = "tributary:cache:"
SCAN_BATCH = 500

# KEYS[1] entry, KEYS[2..] tag sets; ARGV[1] payload, ARGV[2] ttl in ms.
SET_SCRIPT = """
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
for i = 2, #KEYS do
  redis.call('SADD', KEYS[i], KEYS[1])
  if redis.call('PTTL', KEYS[i]) < ttl then
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
return 1
"""

# KEYS[1] tag set: delete every entry in it, then the set.
INVALIDATE_TAG_SCRIPT = """
local members = redis.call('SMEMBERS', KEYS[1])
local dropped = 0
for _, key in ipairs(members) do
  dropped = dropped + redis.call('DEL', key)
end
redis.call('DEL', KEYS[1])
return dropped
"""


class RedisCache(Cache):
    backend = "redis"
    backend_errors = (RedisError, OSError)

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        client: aioredis.Redis | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        ttl_s: float = 300.0,
        clock: Clock | None = None,
        scrubber: Scrubber | None = None,
        socket_timeout: float = 2.0,
    ) -> None:
        super().__init__(ttl_s=ttl_s, max_entries=None, clock=clock, scrubber=scrubber)
        self._client: aioredis.Redis = client or aioredis.Redis.from_url(
            url,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_timeout,
        )
        self._owns_client = client is None
        self._ns = namespace
        self._set_script = self._client.register_script(SET_SCRIPT)
        self._drop_tag_script = self._client.register_script(INVALIDATE_TAG_SCRIPT)

    async def _get(self, key: str, now: float) -> str | None:
        payload = await self._client.get(self._entry(key))
        if payload is None:
            return None
        expires, _, text = _text(payload).partition("\n")
        if float(expires) <= now:
            return None
        return text

    async def _set(self, key: str, text: str, now: float, expires: float, tags: list[str]) -> int:
        ttl_ms = max(1, round((expires - now) * 1000))
        keys = [self._entry(key), *(self._tag(tag) for tag in tags)]
        await self._set_script(keys=keys, args=[f"{expires!r}\n{text}", ttl_ms])
        return 0

    async def _delete(self, key: str) -> int:
        return int(await self._client.delete(self._entry(key)))

    async def _invalidate_prefix(self, prefix: str) -> int:
        return await self._delete_matching(self._entry(_glob_escape(prefix)) + "*")

    async def _invalidate_tag(self, tag: str) -> int:
        return int(await self._drop_tag_script(keys=[self._tag(tag)]))

    async def _clear(self) -> int:
        entries = await self._delete_matching(self._entry("*"))
        await self._delete_matching(self._tag("*"))
        return entries

    async def _size(self, now: float) -> int:
        count = 0
        async for _ in self._client.scan_iter(match=self._entry("*"), count=SCAN_BATCH):
            count += 1
        return count

    async def close(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def ping(self) -> bool:
        """True when the server answers (for ``servers``-style health displays)."""
        try:
            return bool(await self._client.ping())
        except self.backend_errors:
            return False

    def _entry(self, key: str) -> str:
        return f"{self._ns}e:{key}"

    def _tag(self, tag: str) -> str:
        return f"{self._ns}t:{tag}"

    async def _delete_matching(self, pattern: str) -> int:
        deleted = 0
        batch: list[Any] = []
        async for name in self._client.scan_iter(match=pattern, count=SCAN_BATCH):
            batch.append(name)
            if len(batch) >= SCAN_BATCH:
                deleted += int(await self._client.delete(*batch))
                batch = []
        if batch:
            deleted += int(await self._client.delete(*batch))
        return deleted


def _text(payload: Any) -> str:
    if isinstance(payload, bytes):
        return payload.decode("utf-8")
    return cast(str, payload)


def _glob_escape(text: str) -> str:
    """``text`` as a literal inside a Redis glob pattern."""
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)
