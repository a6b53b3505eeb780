"""One behavioural suite, run over every cache backend (memory, SQLite, real Redis)."""

from __future__ import annotations

import asyncio

import pytest

from tests.cache.cache_helpers import CacheFactory, FakeClock
from tributary.engine.cache.base import CacheError
from tributary.engine.cache.redact import MASK

pytestmark = pytest.mark.asyncio


async def test_round_trip_and_miss(make: CacheFactory) -> None:
    cache = make()
    value = {"query": "naïve 検索", "hits": [1, 2.5, None, True], "nested": {"a": []}}
    await cache.set("k1", value)
    assert await cache.get("k1") == value
    assert await cache.get("absent") is None


async def test_stats_count_hits_misses_and_size(make: CacheFactory) -> None:
    cache = make()
    await cache.set("a", 1)
    await cache.set("b", 2)
    assert await cache.get("a") == 1
    assert await cache.get("b") == 2
    assert await cache.get("c") is None
    stats = await cache.stats()
    assert (stats.hits, stats.misses, stats.lookups, stats.sets) == (2, 1, 3, 2)
    assert stats.rate == pytest.approx(2 / 3)
    assert stats.size == 2
    assert stats.errors == 0
    assert stats.as_dict()["rate"] == pytest.approx(2 / 3)


async def test_ttl_expiry_follows_the_clock(make: CacheFactory, clock: FakeClock) -> None:
    cache = make(ttl_s=10, clock=clock)
    await cache.set("short", "x")
    await cache.set("long", "y", ttl=100)
    clock.advance(9.9)
    assert await cache.get("short") == "x"
    clock.advance(0.2)
    assert await cache.get("short") is None
    assert await cache.get("long") == "y"
    clock.advance(100)
    assert await cache.get("long") is None


async def test_zero_ttl_stores_nothing(make: CacheFactory) -> None:
    cache = make()
    await cache.set("k", "v", ttl=0)
    assert await cache.get("k") is None
    assert (await cache.stats()).sets == 0


async def test_overwrite_replaces_value(make: CacheFactory) -> None:
    cache = make()
    await cache.set("k", "old", tags=["repo:/a"])
    await cache.set("k", "new", tags=["repo:/b"])
    assert await cache.get("k") == "new"
    assert await cache.invalidate_tag("repo:/b") == 1
    assert await cache.get("k") is None


async def test_delete(make: CacheFactory) -> None:
    cache = make()
    await cache.set("k", "v")
    assert await cache.delete("k") is True
    assert await cache.delete("k") is False
    assert await cache.get("k") is None


async def test_invalidate_by_tag_drops_only_tagged(make: CacheFactory) -> None:
    cache = make()
    await cache.set("q1", 1, tags=["repo:/src/a", "server:files"])
    await cache.set("q2", 2, tags=["server:files"])
    await cache.set("q3", 3, tags=["server:web"])
    assert await cache.invalidate_tag("repo:/src/a") == 1
    assert await cache.get("q1") is None
    assert await cache.get("q2") == 2
    assert await cache.invalidate(tag="server:files") == 1
    assert await cache.get("q2") is None
    assert await cache.get("q3") == 3
    assert await cache.invalidate_tag("server:nobody") == 0


async def test_invalidate_by_prefix_is_literal(make: CacheFactory) -> None:
    cache = make()
    await cache.set("q:1", 1)
    await cache.set("q:2", 2)
    await cache.set("s:1", 3)
    await cache.set("q*x", 4)  # glob/LIKE characters in keys must not act as wildcards
    assert await cache.invalidate_prefix("q*") == 1
    assert await cache.get("q:1") == 1
    assert await cache.invalidate(prefix="q:") == 2
    assert await cache.get("s:1") == 3


async def test_clear(make: CacheFactory) -> None:
    cache = make()
    for i in range(5):
        await cache.set(f"k{i}", i, tags=["t"])
    assert await cache.invalidate() == 5
    assert (await cache.stats()).size == 0
    assert await cache.invalidate_tag("t") == 0


async def test_concurrent_access_is_consistent(make: CacheFactory) -> None:
    cache = make(max_entries=1000)

    async def worker(n: int) -> None:
        for i in range(10):
            await cache.set(f"w{n}:{i}", {"n": n, "i": i}, tags=[f"worker:{n}"])
            assert await cache.get(f"w{n}:{i}") == {"n": n, "i": i}

    await asyncio.gather(*(worker(n) for n in range(8)))
    assert (await cache.stats()).size == 80
    assert await cache.invalidate_tag("worker:3") == 10
    results = await asyncio.gather(*(cache.get(f"w{n}:0") for n in range(8)))
    assert [r is None for r in results] == [n == 3 for n in range(8)]
    assert (await cache.stats()).errors == 0


async def test_two_handles_share_storage_except_memory(make: CacheFactory, backend: str) -> None:
    writer, reader = make(), make()
    await writer.set("shared", "value", tags=["repo:/x"])
    expected = None if backend == "memory" else "value"
    assert await reader.get("shared") == expected
    if backend != "memory":
        assert await reader.invalidate_tag("repo:/x") == 1
        assert await writer.get("shared") is None


async def test_secret_values_are_masked_in_stored_values(make: CacheFactory) -> None:
    secret = "sk-live-9f8e7d6c5b4a"
    cache = make(secrets=(secret,))
    await cache.set("k", {"error": f"401 for token {secret}", secret: [f"x{secret}y"]})
    stored = await cache.get("k")
    assert secret not in repr(stored)
    assert stored == {"error": f"401 for token {MASK}", MASK: [f"x{MASK}y"]}


async def test_a_key_holding_a_secret_is_refused(make: CacheFactory) -> None:
    secret = "ghp_abcdefghijklmnop"
    cache = make(secrets=(secret,))
    with pytest.raises(ValueError, match="secret"):
        await cache.set(f"q:{secret}", 1)
    with pytest.raises(ValueError, match="secret"):
        await cache.get(f"q:{secret}")
    with pytest.raises(ValueError):
        await cache.get("")


async def test_stats_size_ignores_expired_where_the_backend_can(
    make: CacheFactory, backend: str, clock: FakeClock
) -> None:
    cache = make(ttl_s=5, clock=clock)
    await cache.set("a", 1)
    clock.advance(10)
    await cache.set("b", 2)
    size = (await cache.stats()).size
    # Redis frees entries on its own (real) clock; the others count by the cache clock.
    assert size == (2 if backend == "redis" else 1)


async def test_storage_failures_degrade_lookups_and_raise_on_invalidation(
    make: CacheFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = make()
    if cache.backend == "memory":
        pytest.skip("the memory backend has no storage that can fail")
    broken = type(cache).backend_errors[0]

    async def fail(*args: object) -> int:
        raise broken("storage gone")

    for operation in ("_invalidate_tag", "_get", "_set"):
        monkeypatch.setattr(cache, operation, fail)
    with pytest.raises(CacheError):
        await cache.invalidate_tag("x")
    await cache.set("k", 1)  # a failed store is logged and skipped
    assert await cache.get("k") is None  # a failed lookup is a miss, never an exception
    stats = await cache.stats()
    assert (stats.errors, stats.misses, stats.sets) == (3, 1, 0)


async def test_a_damaged_value_is_a_miss_and_is_dropped(make: CacheFactory) -> None:
    cache = make()
    await cache.set("k", {"fine": True})
    await cache._set("k", "{not json", 0.0, 1e12, [])  # as if damaged in storage
    assert await cache.get("k") is None
    assert await cache.delete("k") is False  # already dropped
    stats = await cache.stats()
    assert (stats.errors, stats.misses, stats.hits) == (1, 1, 0)
