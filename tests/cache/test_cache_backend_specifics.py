"""What only one backend does: LRU order, persistence and bounds on disk, Redis expiry."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sqlean

from tests.cache.cache_helpers import FakeClock
from tributary.engine.cache import make_cache
from tributary.engine.cache.base import CacheError, NullCache
from tributary.engine.cache.memory import MemoryCache
from tributary.engine.cache.redact import Scrubber
from tributary.engine.cache.sqlite import SqliteCache
from tributary.engine.config.schema import CacheConfig

pytestmark = pytest.mark.asyncio

SECRET = "xoxb-1234567890-secret"


# --- memory -------------------------------------------------------------------------


async def test_memory_evicts_least_recently_used() -> None:
    cache = MemoryCache(max_entries=3)
    for key in ("a", "b", "c"):
        await cache.set(key, key)
    assert await cache.get("a") == "a"  # "a" is now the most recent; "b" the oldest
    await cache.set("d", "d")
    assert await cache.get("b") is None
    assert [await cache.get(k) for k in ("a", "c", "d")] == ["a", "c", "d"]
    stats = await cache.stats()
    assert (stats.size, stats.evictions, stats.max_entries) == (3, 1, 3)


async def test_memory_drops_expired_before_evicting_live(clock: FakeClock) -> None:
    cache = MemoryCache(max_entries=2, ttl_s=10, clock=clock)
    await cache.set("old", 1)
    await cache.set("live", 2, ttl=100)
    clock.advance(50)
    await cache.set("new", 3)
    assert await cache.get("live") == 2
    assert await cache.get("new") == 3


async def test_memory_eviction_forgets_tags() -> None:
    cache = MemoryCache(max_entries=1)
    await cache.set("a", 1, tags=["t"])
    await cache.set("b", 2)
    assert await cache.invalidate_tag("t") == 0
    assert await cache.get("b") == 2


# --- SQLite -------------------------------------------------------------------------


async def test_sqlite_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    async with SqliteCache(path) as first:
        await first.set("k", {"v": [1, 2]}, tags=["repo:/r"])
    async with SqliteCache(path) as second:
        assert await second.get("k") == {"v": [1, 2]}
        assert await second.invalidate_tag("repo:/r") == 1
    conn = sqlean.connect(str(path))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT COUNT(*) FROM entry_tags").fetchone()[0] == 0  # cascaded
    conn.close()


async def test_sqlite_bounds_entries_oldest_first(tmp_path: Path, clock: FakeClock) -> None:
    async with SqliteCache(tmp_path / "c.sqlite", max_entries=5, clock=clock) as cache:
        for i in range(8):
            clock.advance(1)
            await cache.set(f"k{i}", i, tags=[f"t{i}"])
        stats = await cache.stats()
        assert (stats.size, stats.evictions) == (5, 3)
        assert [await cache.get(f"k{i}") for i in range(8)] == [None] * 3 + [3, 4, 5, 6, 7]


async def test_sqlite_keeps_the_file_under_its_size_limit(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "c.sqlite"
    limit = 200_000
    async with SqliteCache(path, max_entries=1000, max_bytes=limit, clock=clock) as cache:
        for i in range(150):  # 150 answers of ~20 KB: 15 times the limit
            clock.advance(1)
            await cache.set(f"k{i}", {"hits": [f"hit {i}:{j} " + "x" * 200 for j in range(100)]})
        stats = await cache.stats()
        assert stats.evictions > 100 and 0 < stats.size < 15
        assert await cache.get("k149") is not None and await cache.get("k0") is None
    conn = sqlean.connect(str(path))
    assert conn.execute("SELECT SUM(size) FROM entries").fetchone()[0] <= limit
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
    conn.close()
    assert path.stat().st_size < 3 * limit  # near the limit, not the 3 MB written
    async with SqliteCache(path, max_bytes=limit, clock=clock) as cache:
        await cache.clear()
    # The freed pages went back to the file system (incremental auto-vacuum).
    assert path.stat().st_size < limit / 4


async def test_sqlite_prunes_expired_rows(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "c.sqlite"
    async with SqliteCache(path, ttl_s=1, clock=clock) as cache:
        await cache.set("a", 1)  # the first write prunes
        for i in range(70):
            await cache.set(f"x{i}", i)
        clock.advance(5)
        for i in range(70):  # crosses the next pruning point
            await cache.set(f"y{i}", i)
    conn = sqlean.connect(str(path))
    keys = {row[0] for row in conn.execute("SELECT key FROM entries")}
    conn.close()
    assert "a" not in keys and not any(k.startswith("x") for k in keys)


async def test_sqlite_rebuilds_a_cache_of_another_schema(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    conn = sqlean.connect(str(path))
    conn.execute("CREATE TABLE entries (junk TEXT)")
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    async with SqliteCache(path) as cache:
        await cache.set("k", 1)
        assert await cache.get("k") == 1


async def test_sqlite_readers_in_another_process_while_writing(tmp_path: Path) -> None:
    """A second process reads the file while this one writes (WAL: no lock errors)."""
    path = tmp_path / "c.sqlite"
    async with SqliteCache(path, max_entries=10_000) as cache:
        await cache.set("seed", 0)
        reader = textwrap.dedent(
            f"""
            import asyncio
            from tributary.engine.cache.sqlite import SqliteCache

            async def main():
                async with SqliteCache({str(path)!r}, max_entries=10_000) as c:
                    seen = 0
                    for _ in range(200):
                        if await c.get("seed") == 0:
                            seen += 1
                    print(seen, (await c.stats()).errors)

            asyncio.run(main())
            """
        )
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", reader, stdout=subprocess.PIPE, cwd=Path.cwd()
        )
        for i in range(200):
            await cache.set(f"w{i}", i)
        out, _ = await proc.communicate()
        assert proc.returncode == 0
        assert out.split() == [b"200", b"0"]
        assert (await cache.stats()).errors == 0


async def test_sqlite_file_never_holds_a_secret(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    async with SqliteCache(path, scrubber=Scrubber([SECRET])) as cache:
        await cache.set("k", {"content": f"Authorization: Bearer {SECRET}"}, tags=[SECRET])
    data = b"".join(p.read_bytes() for p in tmp_path.glob("c.sqlite*"))
    assert SECRET.encode() not in data
    assert b"Authorization: Bearer ****" in data


# --- Redis --------------------------------------------------------------------------


async def test_redis_sets_a_real_expiry_and_tag_sets(redis_url: str) -> None:
    import redis.asyncio as aioredis

    from tributary.engine.cache.redis_backend import RedisCache

    raw = aioredis.Redis.from_url(redis_url)
    async with RedisCache(redis_url, namespace="spec:", ttl_s=30) as cache:
        await cache.set("k", {"content": SECRET * 2}, tags=["repo:/a"])
        ttl_ms = await raw.pttl("spec:e:k")
        assert 0 < ttl_ms <= 30_000
        assert await raw.smembers("spec:t:repo:/a") == {b"spec:e:k"}
        assert 0 < await raw.pttl("spec:t:repo:/a") <= 30_000
        assert await cache.ping()
        await cache.clear()
        assert await raw.keys("spec:*") == []
    await raw.aclose()


async def test_redis_stores_no_secret(redis_url: str) -> None:
    import redis.asyncio as aioredis

    from tributary.engine.cache.redis_backend import RedisCache

    raw = aioredis.Redis.from_url(redis_url)
    async with RedisCache(redis_url, namespace="sec:", scrubber=Scrubber([SECRET])) as cache:
        await cache.set("k", {"error": f"bad token {SECRET}"}, tags=[f"server:{SECRET}"])
        names = await raw.keys("sec:*")
        assert names
        for name in names:
            assert SECRET.encode() not in name
            kind = await raw.type(name)
            values = [await raw.get(name)] if kind == b"string" else list(await raw.smembers(name))
            assert all(isinstance(v, bytes) and SECRET.encode() not in v for v in values)
        await cache.clear()
    await raw.aclose()


async def test_redis_unreachable_is_a_counted_miss() -> None:
    from tributary.engine.cache.redis_backend import RedisCache

    async with RedisCache("redis://127.0.0.1:1/0", socket_timeout=0.5) as cache:
        await cache.set("k", 1)
        assert await cache.get("k") is None
        assert not await cache.ping()
        stats = await cache.stats()
        assert stats.errors == 3 and stats.size == -1 and stats.misses == 1


# --- the factory --------------------------------------------------------------------


async def test_make_cache_builds_each_local_backend(tmp_path: Path) -> None:
    memory = make_cache(CacheConfig(backend="memory", max_entries=7))
    assert isinstance(memory, MemoryCache) and memory.max_entries == 7
    sqlite = make_cache(CacheConfig(backend="sqlite", ttl_s=9), path=tmp_path / "f.sqlite")
    assert isinstance(sqlite, SqliteCache) and sqlite.ttl_s == 9
    await sqlite.set("k", 1)
    assert (tmp_path / "f.sqlite").exists()
    await sqlite.close()
    off = make_cache(CacheConfig(backend="off"))
    assert isinstance(off, NullCache)
    await off.set("k", 1)
    assert await off.get("k") is None


async def test_make_cache_redis_expands_variables_in_the_url(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = redis_url.rsplit(":", 1)[1].split("/")[0]
    monkeypatch.setenv("TRIB_TEST_REDIS_PORT", port)
    shared = make_cache(
        CacheConfig(backend="redis", redis_url="redis://127.0.0.1:${TRIB_TEST_REDIS_PORT}/0")
    )
    assert shared.backend == "redis"
    await shared.set("factory-probe", 1)
    assert await shared.get("factory-probe") == 1
    assert await shared.delete("factory-probe")
    await shared.close()


async def test_make_cache_redis_without_the_client_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "tributary.engine.cache.redis_backend", raising=False)
    monkeypatch.setitem(sys.modules, "redis", None)  # as where [redis] is not installed
    with pytest.raises(CacheError, match=r"\[redis\]"):
        make_cache(CacheConfig(backend="redis"))


async def test_sqlite_default_path_is_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path))
    cache = make_cache(CacheConfig())
    assert isinstance(cache, SqliteCache)
    assert cache.path == tmp_path / "data" / "cache.sqlite"
    await cache.close()
