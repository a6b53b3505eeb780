"""Cost of the cache and the query history, per operation (prints figures; not a test).

    .venv/bin/python bench/cache_and_history.py [--n 300]

For each cache backend (memory, SQLite, and Redis when ``redis-server`` is installed;
the script starts its own on loopback and stops it): a query-level hit end to end
(key, lookup, decode of a 30-hit response), a store, and a miss. Then the history:
``record(response)`` (runs on the engine's event loop) and ``summary()`` over 10,000
recorded searches, and ``all_reputations()`` (run once per search) over 1,000 events.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tributary.engine.cache import ResponseCache
from tributary.engine.cache.base import Cache
from tributary.engine.cache.memory import MemoryCache
from tributary.engine.cache.sqlite import SqliteCache
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.insights.reputation import ReputationStore
from tributary.engine.insights.store import QueryLog
from tributary.engine.model import (
    Hit,
    Metrics,
    SearchRequest,
    SearchResponse,
    SourceReport,
    SourceStatus,
)

SOURCES = [f"server{i}" for i in range(10)]


def sample_response(request: SearchRequest, n_hits: int = 30) -> SearchResponse:
    hits = [
        Hit(
            id=f"h{i}",
            source=SOURCES[i % 10],
            tool="search",
            title=f"def function_{i}(arg)",
            content=("    result = compute(arg)  # a line of realistic code\n" * 12),
            path=f"src/pkg/module_{i}.py",
            start_line=i * 10,
            end_line=i * 10 + 12,
            source_score=1.0 / (i + 1),
            source_rank=i // 10 + 1,
            tokens=150,
            metadata={"language": "python"},
        )
        for i in range(n_hits)
    ]
    return SearchResponse(
        request=request,
        hits=hits,
        sources=[SourceReport(s, SourceStatus.OK, 40.0, 3, 450) for s in SOURCES],
        metrics=Metrics(total_ms=120, stage_ms={"fanout": 100, "fuse": 1}, raw_hits=40,
                        unique_hits=30, tokens_total=4500, budget_utilisation=0.8),
    )  # fmt: skip


def ms_stats(samples: list[float]) -> str:
    samples.sort()
    p95 = samples[int(0.95 * (len(samples) - 1))]
    return f"p50 {statistics.median(samples):7.3f} ms   p95 {p95:7.3f} ms"


async def timed(n: int, op: Callable[[int], Awaitable[object]]) -> list[float]:
    out = []
    for i in range(n):
        start = time.perf_counter()
        await op(i)
        out.append((time.perf_counter() - start) * 1000)
    return out


async def bench_cache(name: str, cache: Cache, n: int) -> None:
    config = Config(servers={s: ServerConfig(name=s, command="x") for s in SOURCES})
    layer = ResponseCache(cache, config)
    requests = [SearchRequest(query=f"how does caching work {i}") for i in range(n)]

    async def put(i: int) -> None:
        await layer.put_response(requests[i], sample_response(requests[i]))

    async def hit(i: int) -> None:
        assert await layer.get_response(requests[i]) is not None

    async def miss(i: int) -> None:
        assert await layer.get_response(SearchRequest(query=f"never asked {i}")) is None

    stores = await timed(n, put)
    hits = await timed(n, hit)
    misses = await timed(n, miss)
    print(f"{name:7} store {ms_stats(stores)}")
    print(f"{'':7} hit   {ms_stats(hits)}   (30-hit response: key + lookup + decode)")
    print(f"{'':7} miss  {ms_stats(misses)}")
    await cache.clear()
    await cache.close()


def start_redis() -> tuple[subprocess.Popen[bytes], str] | None:
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(port=port)
    for _ in range(200):
        try:
            client.ping()
            break
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
    client.close()
    return proc, f"redis://127.0.0.1:{port}/0"


def bench_history(tmp: Path, n: int) -> None:
    store = QueryLog(tmp / "history.sqlite", retention=10_000)
    request = SearchRequest(query="how does caching work")
    response = sample_response(request)
    for _ in range(10_000 - n):
        store.record(response)
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        store.record(response)
        samples.append((time.perf_counter() - start) * 1000)
    print(f"history record()            {ms_stats(samples)}   (10 sources, at the 10,000 bound)")
    start = time.perf_counter()
    summary = store.summary()
    took = (time.perf_counter() - start) * 1000
    print(f"history summary()           {took:7.1f} ms over {summary.queries} searches")
    store.close()
    reputation = ReputationStore(tmp / "history.sqlite")
    for i in range(1000):
        reputation.record(hit_id=str(i), source=SOURCES[i % 10], useful=i % 3 != 0)
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        reputation.all_reputations()
        samples.append((time.perf_counter() - start) * 1000)
    print(f"reputation all_reputations() {ms_stats(samples)}   (1,000 events, decay on)")
    reputation.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="operations per measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        await bench_cache("memory", MemoryCache(max_entries=10_000), args.n)
        await bench_cache("sqlite", SqliteCache(tmp / "cache.sqlite", max_entries=10_000), args.n)
        redis_server = start_redis()
        if redis_server is None:
            print("redis   skipped: redis-server not installed (apt-get install -y redis-server)")
        else:
            proc, url = redis_server
            try:
                from tributary.engine.cache.redis_backend import RedisCache

                await bench_cache("redis", RedisCache(url), args.n)
            finally:
                proc.terminate()
                proc.wait(timeout=10)
        bench_history(tmp, args.n)


if __name__ == "__main__":
    asyncio.run(main())
