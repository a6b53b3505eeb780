"""A small soak in CI: the code path of bench/reliability.py at 150 queries.

Ten real stdio servers behind the real engine, every fault kind injected at
least once (seeded), two servers crashing on every Nth query. Asserted: every
query answered, no healthy source's hit lost, no process left behind and the
open file descriptors back to where they started once the engine is closed.
Latency and RSS are the benchmark's to print, not asserted here.
"""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import time
import uuid

import pytest

from bench._soak import (
    KINDS,
    SOAK_TOKEN_VAR,
    SoakReport,
    SoakSettings,
    _Watch,
    leftover_processes,
    plan_faults,
    run_soak,
)

pytestmark = pytest.mark.integration

# Rarer faults than the benchmark's (each hang or restart costs the CI machine a second);
# cover_every_kind still injects every kind at least once.
RATES = {"slow": 0.01, "garbage": 0.005, "hang": 0.001, "freeze": 0.0005, "crash-call": 0.002,
         "crash-start": 0.0005, "invalid-jsonrpc": 0.003, "huge": 0.001, "non-utf8": 0.003,
         "error": 0.003}
SETTINGS = SoakSettings(
    queries=150, seed=3, timeout_s=1.0, rates=RATES, freeze_s=1.0, huge_mb=20.0,
    slow_s=(0.05, 0.3), crash_every=(25, 40), crash_start_queries=(3, 6),
    cover_every_kind=True, warm_queries=20,
)
FD_SLACK = 10  # the event loop, sqlite and pytest itself may hold a few more


def test_the_plan_is_seeded_and_covers_every_fault_kind() -> None:
    plan = plan_faults(SETTINGS)
    assert plan == plan_faults(SETTINGS)
    kinds = {kind for row in plan for kind, _ in row.values()}
    assert set(KINDS) <= kinds
    assert plan != plan_faults(SoakSettings(**{**_fields(SETTINGS), "seed": 4}))


def test_the_orphan_check_sees_a_process_left_behind() -> None:
    token = uuid.uuid4().hex
    # Popen returns once the child's exec has begun, before the kernel has laid out its new
    # environment; the child's first line says the exec is over and its environment readable.
    script = "import time; print('up', flush=True); time.sleep(60)"
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                          env={**os.environ, SOAK_TOKEN_VAR: token}) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
            assert any(line.startswith(f"{proc.pid} ") for line in leftover_processes(token, {}))
        finally:
            proc.kill()
    assert leftover_processes(token, {}) == []


@pytest.mark.asyncio
async def test_the_watch_names_the_query_in_which_the_process_stood_still() -> None:
    report = SoakReport(SETTINGS)
    async with _Watch(report) as watch:
        watch.query = 4
        await asyncio.sleep(0.05)
        watch.query = 5
        await asyncio.sleep(0.03)  # the tick now pending was scheduled in query 5
        time.sleep(0.4)  # the loop blocked in query 5
        gc.collect()  # a full pass in query 5
        await asyncio.sleep(0.05)
        watch.query = 6
        await asyncio.sleep(0.05)
    assert [q for _ms, q in report.stalls] == [5]
    assert report.stalls[0][0] >= 300
    assert 5 in [q for _ms, q in report.gc_pauses]
    report.lost_detail = [(5, "query 5, s1: 3 hits missing (timeout)"), (6, "query 6, s2: 1 hits missing")]
    lines = report.summary()
    assert any(line.startswith("  lost: query 5, s1") and "stood still" in line for line in lines)
    assert any(line.startswith("  lost: query 6, s2") and "stood still" not in line for line in lines)
    assert any(line.startswith("event loop stalls over 200 ms: 1, longest") for line in lines)


@pytest.mark.asyncio
async def test_soak_loses_nothing_and_leaks_nothing() -> None:
    report = await run_soak(SETTINGS)
    summary = "\n".join(report.summary())
    assert report.failures == [], summary
    assert report.answered == SETTINGS.queries, summary
    assert report.healthy_answers > SETTINGS.queries * 5, summary  # the check had teeth
    assert report.lost == 0, summary
    assert report.orphans == [], summary
    assert report.restarts >= 3, summary  # the crash/recover cycles happened
    assert set(report.planned) >= set(KINDS), summary
    # Most faults reach a running server (some land on one that is restarting or skipped).
    assert sum(report.delivered.values()) >= 20, summary
    assert report.samples["closed"].fds <= report.samples["start"].fds + FD_SLACK, summary
    # No per-query leak while the servers run (the same ten sessions at both points).
    assert report.samples["end"].fds <= report.samples["warm"].fds + FD_SLACK, summary


def _fields(settings: SoakSettings) -> dict[str, object]:
    return {name: getattr(settings, name) for name in SoakSettings.__slots__}
