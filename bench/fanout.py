"""Fan-out overhead and hung-source isolation, with real stdio servers (prints figures).

    .venv/bin/python bench/fanout.py [--queries 120] [--hung-timeout 1.0]

Part 1: 10 fake MCP servers (tests/fakes/fake_server.py) answering after known
delays (0, 10, …, 90 ms). For each query, end-to-end latency of the fan-out
(``gather_all``) minus the slowest server's delay is the overhead: transport,
JSON-RPC, normalisation and scheduling. Targets: p50 ≤ 10 ms, p95 ≤ 25 ms.

Part 2: 3 of the 10 servers hang. Each query must return within the timeout
+ 100 ms, with the other 7 sources' hits.

Part 3 (issue 8): once the hung sources' circuit breakers are open, a query's
median latency against the same query with those sources left out.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.config.schema import HealthConfig, ServerConfig  # noqa: E402
from engine.fanout import gather_all  # noqa: E402
from engine.model import SourceStatus  # noqa: E402
from engine.sources import SourcePool  # noqa: E402

FAKE = ROOT / "tests" / "fakes" / "fake_server.py"


def server(name: str, *args: str, timeout: float, breaker: int = 3) -> ServerConfig:
    return ServerConfig(name=name, command=sys.executable,
                        args=[str(FAKE), "--name", name, "--hits", "10", *args], timeout=timeout,
                        health=HealthConfig(failure_threshold=breaker))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def overhead(queries: int) -> None:
    delays = [i * 0.010 for i in range(10)]
    servers = [server(f"s{i}", "--delay", f"{d}", timeout=3.0) for i, d in enumerate(delays)]
    names = [s.name for s in servers]
    async with SourcePool(servers) as pool:
        t = time.perf_counter()
        await pool.warm_up(timeout=120)
        print(f"start-up of 10 servers (concurrent): {time.perf_counter() - t:.1f} s")
        for i in range(5):  # warm the sessions and the code paths
            await gather_all(pool, names, f"warm {i}", top_k=10)
        over: list[float] = []
        cpu: list[float] = []
        hits = 0
        for i in range(queries):
            t, c = time.perf_counter(), time.process_time()
            results = await gather_all(pool, names, f"query number {i}", top_k=10)
            wall = (time.perf_counter() - t) * 1000
            cpu.append((time.process_time() - c) * 1000)
            assert all(r.report.status is SourceStatus.OK for r in results), [
                r.report.error for r in results if not r.ok]
            hits += sum(len(r.hits) for r in results)
            over.append(wall - max(delays) * 1000)
    print(f"overhead over the slowest server's delay ({queries} queries, 10 sources, "
          f"{hits // queries} hits/query):")
    print(f"  p50 {statistics.median(over):.1f} ms   p95 {pct(over, 0.95):.1f} ms   "
          f"mean {statistics.fmean(over):.1f} ms   max {max(over):.1f} ms   "
          f"(targets ≤ 10 / ≤ 25 ms)")
    print(f"  Tributary's own CPU per query (client side, all 10 sources): p50 "
          f"{statistics.median(cpu):.1f} ms, p95 {pct(cpu, 0.95):.1f} ms")


async def hung(timeout: float, queries: int) -> None:
    # Breakers effectively off: every query pays the hung sources' timeout.
    servers = [server(f"h{i}", "--mode", "hang", timeout=timeout, breaker=10**6) for i in range(3)]
    servers += [server(f"ok{i}", "--delay", "0.02", timeout=timeout) for i in range(7)]
    names = [s.name for s in servers]
    async with SourcePool(servers) as pool:
        await pool.warm_up(timeout=120)
        walls: list[float] = []
        for i in range(queries):
            t = time.perf_counter()
            results = await gather_all(pool, names, f"hung query {i}", top_k=10)
            walls.append((time.perf_counter() - t) * 1000)
            ok = [r for r in results if r.ok]
            timeouts = [r for r in results if r.report.status is SourceStatus.TIMEOUT]
            assert len(ok) == 7 and all(len(r.hits) == 10 for r in ok), [
                r.report.error for r in results]
            assert len(timeouts) == 3, [(r.name, r.report.status, r.report.error) for r in results]
    limit = timeout * 1000 + 100
    print(f"3 of 10 hung, timeout {timeout:g} s ({queries} queries): wall p50 "
          f"{statistics.median(walls):.0f} ms, max {max(walls):.0f} ms "
          f"(limit {limit:.0f} ms: {'met' if max(walls) <= limit else 'MISSED'}); "
          f"7/7 healthy sources' hits every time")


async def breaker(timeout: float, queries: int) -> None:
    """Issue 8: with the hung sources' breakers open, a query costs what it would without them."""
    hung_servers = [server(f"h{i}", "--mode", "hang", timeout=timeout) for i in range(3)]
    healthy = [server(f"ok{i}", "--delay", "0.02", timeout=timeout) for i in range(7)]
    names = [s.name for s in hung_servers + healthy]
    async with SourcePool(hung_servers + healthy) as pool:
        await pool.warm_up(timeout=120)
        for i in range(3):  # three timeouts open each hung source's breaker
            await gather_all(pool, names, f"open {i}", top_k=10)
        assert all(pool.state(s.name).breaker.state == "open" for s in hung_servers)
        with_open, without = [], []
        for i in range(queries):
            t = time.perf_counter()
            results = await gather_all(pool, names, f"q {i}", top_k=10)
            with_open.append((time.perf_counter() - t) * 1000)
            assert sum(r.report.status is SourceStatus.CIRCUIT_OPEN for r in results) == 3
            t = time.perf_counter()
            await gather_all(pool, [s.name for s in healthy], f"q {i}", top_k=10)
            without.append((time.perf_counter() - t) * 1000)
    print(f"breaker open on 3 hung sources ({queries} queries): p50 "
          f"{statistics.median(with_open):.1f} ms vs {statistics.median(without):.1f} ms with "
          f"them left out (difference {statistics.median(with_open) - statistics.median(without):+.1f} ms; "
          "target within 10 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=120)
    parser.add_argument("--hung-timeout", type=float, default=1.0)
    parser.add_argument("--hung-queries", type=int, default=10)
    args = parser.parse_args()
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} at start")
    asyncio.run(overhead(args.queries))
    asyncio.run(hung(args.hung_timeout, args.hung_queries))
    asyncio.run(breaker(args.hung_timeout, 50))
    print(f"load average {os.getloadavg()[0]:.1f} at end")


if __name__ == "__main__":
    main()
