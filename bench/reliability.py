"""Reliability soak: queries through the real engine over 10 real stdio MCP
servers while a seeded RNG injects faults; prints the figures.

    .venv/bin/python bench/reliability.py [--queries 1000] [--seed 7]

The servers are tests/fakes/fake_server.py subprocesses started by the engine's
own source pool. Faults (slow, garbage on stdout, hang, freeze, crash mid-call,
crash at start, invalid JSON-RPC, 50 MB answers, non-UTF-8, tool errors; two
servers also crash on every Nth query) are drawn per server and query; see
bench/_soak.py for the plan and for what counts as a lost result.

Prints: faults injected by kind, queries answered, results lost, orphans after
shutdown, RSS and open file descriptors (start, after the warm-up queries,
end, after shutdown), restarts and breaker openings, p50/p95 query latency.
Then the hostile-input checks (bench/_hostile.py; ``--hostile-only`` runs just them):
catastrophic-backtracking routing patterns on short and 100,000-character queries,
and ``serve --http --host 127.0.0.2`` probed without a token and with a foreign
Host/Origin.
Exits 1 if any result was lost, any process was left behind, a search raised or a
hostile-input check did not hold.
The engine's cache and history live in a throw-away ``TRIBUTARY_HOME``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._hostile import run_hostile  # noqa: E402
from bench._soak import SoakReport, SoakSettings, run_soak  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=2.0, help="per-server call timeout (s)")
    parser.add_argument("--huge-mb", type=float, default=50.0, help="size of a huge answer")
    parser.add_argument("--hostile-only", action="store_true",
                        help="run only the hostile-input checks (patterns, HTTP bind)")
    return parser.parse_args(argv)


def failed(report: SoakReport) -> list[str]:
    """Why the run fails the issue's bar (empty: it passes)."""
    reasons = []
    if report.lost:
        reasons.append(f"{report.lost} results lost")
    if report.orphans:
        reasons.append(f"{len(report.orphans)} orphan processes")
    if report.failures:
        reasons.append(f"{len(report.failures)} searches raised: {report.failures[:3]}")
    return reasons


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    hostile = run_hostile()
    print("\n".join(hostile.lines))
    if args.hostile_only:
        print("FAILED: " + "; ".join(hostile.problems) if hostile.problems else "passed: hostile inputs held")
        return 1 if hostile.problems else 0
    settings = SoakSettings(queries=args.queries, seed=args.seed, timeout_s=args.timeout,
                            huge_mb=args.huge_mb)
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} at start "
          "(a shared machine: latency figures include other people's load)")
    with tempfile.TemporaryDirectory(prefix="tributary-home-") as home:
        os.environ["TRIBUTARY_HOME"] = home
        report = asyncio.run(run_soak(settings))
    print("\n".join(report.summary()))
    print(f"load average {os.getloadavg()[0]:.1f} at end")
    reasons = failed(report) + hostile.problems
    print("FAILED: " + "; ".join(reasons) if reasons else "passed: nothing lost, nothing left running")
    return 1 if reasons else 0


if __name__ == "__main__":
    sys.exit(main())
