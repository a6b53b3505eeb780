"""Fan-out overhead and hung-source isolation, with real stdio servers (prints figures).

    .venv/bin/python bench/fanout.py [--queries 120] [--hung-timeout 1.0]

Part 1: 10 fake MCP servers (tests/fakes/fake_server.py) answering after known
delays (0, 10, …, 90 ms). For each query, end-to-end latency of the fan-out
(``gather_all``) minus the slowest server's delay is the overhead: transport,
JSON-RPC, normalisation and scheduling. Targets: p50 ≤ 10 ms, p95 ≤ 25 ms.

Part 2: 3 of the 10 servers hang. Each query must return within the timeout
+ 100 ms, with the other 7 sources' hits.

Part 3: once the hung sources' circuit breakers are open, a query's
median latency against the same query with those sources left out.

``--timeline N`` (off by default) first runs N queries of part 1 with the fake
servers' ``--trace`` on and prints where the time goes: when each server read
its request and entered its tool, and, for the slowest server, how late it
started, how long its reply took to write, and what the client spent after
the reply was on the wire (both sides stamp ``time.monotonic_ns``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tributary.engine.config.schema import HealthConfig, ServerConfig  # noqa: E402
from tributary.engine.model import SourceStatus  # noqa: E402
from tributary.engine.sources import SourcePool  # noqa: E402
from tributary.engine.sources.fanout import gather_all  # noqa: E402

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


async def timeline(queries: int) -> None:
    """Part 1 with server-side stamps: the critical path of one query, step by step."""
    delays = [i * 0.010 for i in range(10)]
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.txt"
        servers = [server(f"s{i}", "--delay", f"{d}", "--trace", str(trace), timeout=3.0)
                   for i, d in enumerate(delays)]
        names = [s.name for s in servers]
        async with SourcePool(servers) as pool:
            await pool.warm_up(timeout=120)
            for i in range(5):
                await gather_all(pool, names, f"warm {i}", top_k=10)
            trace.write_text("")
            spans: list[tuple[int, int]] = []
            for i in range(queries):
                t0 = time.monotonic_ns()
                await gather_all(pool, names, f"query number {i}", top_k=10)
                spans.append((t0, time.monotonic_ns()))
                await asyncio.sleep(0.02)  # the last server's "sent" stamp lands before the next
            lines = trace.read_text().splitlines()
    # stamps[query][server][event] in ms since that query's start
    stamps: list[dict[str, dict[str, float]]] = [defaultdict(dict) for _ in spans]
    for line in lines:
        name, event, _id, ns = line.split()
        for q, (t0, _t1) in enumerate(spans):
            nxt = spans[q + 1][0] if q + 1 < len(spans) else 2**63
            if t0 <= int(ns) < nxt:
                stamps[q][name].setdefault(event, (int(ns) - t0) / 1e6)
    print(f"timeline ({queries} queries; ms since gather_all started, median over queries):")
    print("  server  delay   recv  start   (request read, tool entered)")
    for name, delay in zip(names, delays, strict=True):
        recv = [s[name]["recv"] for s in stamps if "recv" in s[name]]
        start = [s[name]["start"] for s in stamps if "start" in s[name]]
        if recv and start:
            print(f"  {name:6} {delay * 1000:5.0f} {statistics.median(recv):6.2f} "
                  f"{statistics.median(start):6.2f}")
    slow, delay_ms = names[-1], delays[-1] * 1000
    steps: dict[str, list[float]] = defaultdict(list)
    for s, (t0, t1) in zip(stamps, spans, strict=True):
        st = s[slow]
        if not {"recv", "start", "slept", "sent"} <= st.keys():
            continue
        end = (t1 - t0) / 1e6
        steps["request read by server"].append(st["recv"])
        steps["  ... tool entered"].append(st["start"] - st["recv"])
        steps["sleep overshoot"].append(st["slept"] - st["start"] - delay_ms)
        steps["reply written"].append(st["sent"] - st["slept"])
        steps["client after reply (read, parse, normalise, return)"].append(end - st["sent"])
        steps["overhead (end - delay)"].append(end - delay_ms)
    print(f"  slowest server ({slow}, {delay_ms:.0f} ms): step   p50   p90 (ms)")
    for step, values in steps.items():
        print(f"    {step:52} {statistics.median(values):5.2f} {pct(values, 0.9):5.2f}")


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
    """With the hung sources' breakers open, a query costs what it would without them."""
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
    parser.add_argument("--timeline", type=int, default=0, metavar="N",
                        help="first trace N queries and print where the time goes")
    args = parser.parse_args()
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} at start")
    if args.timeline:
        asyncio.run(timeline(args.timeline))
    asyncio.run(overhead(args.queries))
    asyncio.run(hung(args.hung_timeout, args.hung_queries))
    asyncio.run(breaker(args.hung_timeout, 50))
    print(f"load average {os.getloadavg()[0]:.1f} at end")


if __name__ == "__main__":
    main()
