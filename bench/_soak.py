"""The soak: many queries through the real engine over 10 fake MCP servers
(real subprocesses, tests/fakes/fake_server.py) while a seeded RNG injects faults.

Shared by ``bench/reliability.py`` (1,000 queries, prints the figures) and
``tests/sources/test_soak.py`` (a smaller run in CI, asserts them)::

    report = await run_soak(SoakSettings(queries=150, seed=3))
    print("\\n".join(report.summary()))

How faults reach the servers: every server runs with ``--fault-file F``; before
each query the soak writes into ``F`` the fault each server must show on that
call (``plan_faults`` draws them from ``random.Random(seed)``). Kinds: slow,
garbage on stdout (both still answer), hang, freeze (the whole process blocks),
crash mid-call, crash at start (a window of queries during which the server
goes down and every restart fails), invalid JSON-RPC, a huge response,
non-UTF-8 output and a tool error. Some servers also crash on every Nth query,
so they go through many crash/restart cycles.

"Lost" is strict about what a healthy source is: a source counts as healthy
for a query when neither this query nor the ``quiet_before`` queries before it
injected a fault other than slow/garbage into it, and it was ready with its
circuit closed when the query was issued. Each of its hits must then be in the
response (ranked, or folded into a duplicate group); each missing hit is lost.
A fault that lingers (a frozen process, the tail of a 50 MB line, a restart)
is thus not counted as a loss on the query after it.

What else can make a healthy source time out is the engine's own process
stopping: the event loop blocked, or a full garbage-collector pass (it stops
every thread). The soak watches both, by query, and the summary names them, so a
loss says whether the process stood still while the source was answering. It
also settles the heap once the servers are up, as the app does (``tributary.engine.runtime.heap``).

Orphans: every server gets ``SOAK_TOKEN_VAR`` in its environment, which its own
children inherit; after ``Engine.aclose`` no process carrying it, and no server
process seen during the run, may remain (zombies included).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import gc
import json
import os
import random
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from tests.fakes import fake_server_config
from tributary.engine.config.schema import Config, HealthConfig
from tributary.engine.engine import Engine
from tributary.engine.model import SearchRequest, SearchResponse
from tributary.engine.runtime.heap import settle
from tributary.engine.sources import BreakerState, ServerState, ServerStatus

SOAK_TOKEN_VAR = "TRIBUTARY_SOAK_TOKEN"
BENIGN = frozenset({"slow", "garbage"})  # the server still answers with its hits
KINDS = ("slow", "garbage", "hang", "freeze", "crash-call", "crash-start",
         "invalid-jsonrpc", "huge", "non-utf8", "error")
SCHEDULED = "crash-every-nth"  # the planned crash/recover cycles, counted apart
STILL_DOWN = ("still-down", {"mode": "crash-start"})  # the rest of a crash-start window
FAULT_RATES = {  # per server and query
    "slow": 0.03, "garbage": 0.01, "hang": 0.004, "freeze": 0.002, "crash-call": 0.006,
    "crash-start": 0.0015, "invalid-jsonrpc": 0.006, "huge": 0.0015, "non-utf8": 0.006,
    "error": 0.005,
}

Plan = list[dict[str, tuple[str, dict[str, Any]]]]  # per query: server -> (kind, file entry)


@dataclass(frozen=True, slots=True)
class SoakSettings:
    queries: int = 1000
    seed: int = 7
    servers: int = 10
    hits: int = 3  # per server and query
    timeout_s: float = 2.0  # every server's call timeout
    rates: dict[str, float] = field(default_factory=lambda: dict(FAULT_RATES))
    slow_s: tuple[float, float] = (0.1, 0.6)  # well inside the timeout: still healthy
    freeze_s: float = 2.0
    huge_mb: float = 50.0
    crash_start_queries: tuple[int, int] = (5, 15)  # how long a server cannot start
    crash_every: tuple[int, ...] = (20, 35)  # the last len(...) servers crash every Nth query
    cover_every_kind: bool = False  # make sure each kind is injected at least once
    quiet_before: int = 2
    health_interval_s: float = 1.0
    breaker_open_s: float = 3.0
    spawn_child_every: int = 3  # every 3rd server starts a grandchild (orphan check)
    # RSS and fds are compared from after this many queries (first-use imports and caches
    # — tokenizer, regexes, sqlite pages — are not growth) to the end.
    warm_queries: int = 50

    def names(self) -> list[str]:
        return [f"s{i}" for i in range(self.servers)]


@dataclass(slots=True)
class Sample:
    rss: int
    fds: int


@dataclass(slots=True)
class SoakReport:
    settings: SoakSettings
    planned: Counter[str] = field(default_factory=Counter)
    delivered: Counter[str] = field(default_factory=Counter)  # reached a running server
    answered: int = 0
    failures: list[str] = field(default_factory=list)  # searches that raised
    healthy_answers: int = 0  # (query, healthy source) pairs checked
    lost: int = 0  # hits of healthy sources missing from responses
    lost_detail: list[tuple[int, str]] = field(default_factory=list)  # query, what went missing
    statuses: Counter[str] = field(default_factory=Counter)
    restarts: int = 0
    breaker_opens: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    slowest: list[tuple[float, int, str]] = field(default_factory=list)  # ms, query, faults
    orphans: list[str] = field(default_factory=list)
    stalls: list[tuple[float, int]] = field(default_factory=list)  # ms the loop stood still, query
    gc_pauses: list[tuple[float, int]] = field(default_factory=list)  # ms of a full GC pass, query
    samples: dict[str, Sample] = field(default_factory=dict)  # start, warm, end, closed
    wall_s: float = 0.0

    @property
    def over_deadline(self) -> int:
        """Queries slower than the timeout + 100 ms (the issue's limit)."""
        limit = self.settings.timeout_s * 1000 + 100
        return sum(1 for ms in self.latencies_ms if ms > limit)

    def _stood_still(self, q: int) -> str:
        """What stopped the engine's process in query ``q``, if anything did."""
        pauses = [ms for ms, at in self.stalls + self.gc_pauses if at == q]
        return f"; the engine's process stood still {max(pauses):.0f} ms in this query" if pauses else ""

    def summary(self) -> list[str]:
        """The figures, one per line."""
        s, smp = self.settings, self.samples
        kinds = sorted(self.planned, key=lambda k: (-self.planned[k], k))
        lines = [
            f"soak: {s.queries} queries, {s.servers} stdio servers, seed {s.seed}, "
            f"timeout {s.timeout_s:g} s, {self.wall_s:.0f} s wall",
            f"faults injected: {sum(self.planned.values())} "
            f"({sum(self.delivered.values())} reached a running server)",
            *(f"  {k:<16} {self.planned[k]:>5}  reached {self.delivered[k]:>5}" for k in kinds),
            f"queries answered: {self.answered}/{s.queries}"
            + (f"  (raised: {len(self.failures)})" if self.failures else ""),
            f"healthy source answers checked: {self.healthy_answers}; results lost: {self.lost}",
            *(f"  lost: {what}{self._stood_still(q)}" for q, what in self.lost_detail[:10]),
            "source outcomes: " + ", ".join(f"{k} {v}" for k, v in self.statuses.most_common()),
            f"restarts observed: {self.restarts}; circuit breaker opened {self.breaker_opens} times",
            f"latency per query: p50 {pct(self.latencies_ms, 0.5):.0f} ms, "
            f"p95 {pct(self.latencies_ms, 0.95):.0f} ms, max {max(self.latencies_ms, default=0):.0f} ms; "
            f"over timeout + 100 ms: {self.over_deadline}",
            *(f"  query {q}: {ms:.0f} ms ({faults or 'no fault'})"
              for ms, q, faults in sorted(self.slowest, reverse=True)[:self.over_deadline][:5]),
            _pauses(f"event loop stalls over {STALL_MS} ms", self.stalls),
            _pauses("full garbage-collector passes", self.gc_pauses),
        ]
        if {"start", "warm", "end", "closed"} <= smp.keys():
            mb = 2**20
            lines += [
                f"RSS: start {smp['start'].rss / mb:.1f} MiB, after {s.warm_queries} queries "
                f"{smp['warm'].rss / mb:.1f}, "
                f"end {smp['end'].rss / mb:.1f} (growth over the queries "
                f"{(smp['end'].rss - smp['warm'].rss) / mb:+.1f} MiB), "
                f"after shutdown {smp['closed'].rss / mb:.1f}",
                f"open fds: start {smp['start'].fds}, after {s.warm_queries} queries {smp['warm'].fds}, "
                f"end {smp['end'].fds}, after shutdown {smp['closed'].fds}",
            ]
        lines.append(f"orphans after shutdown: {len(self.orphans)}"
                     + "".join(f"\n  {o}" for o in self.orphans[:10]))
        return lines


def _pauses(what: str, pauses: list[tuple[float, int]]) -> str:
    if not pauses:
        return f"{what}: none"
    worst = sorted(pauses, reverse=True)[:5]
    return f"{what}: {len(pauses)}, longest " + ", ".join(f"{ms:.0f} ms (query {q})" for ms, q in worst)


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def sample() -> Sample:
    me = psutil.Process()
    return Sample(me.memory_info().rss, me.num_fds())


# ---------------------------------------------------------------------- the plan


def plan_faults(settings: SoakSettings) -> Plan:
    """Which fault each server shows on each query; deterministic for a seed."""
    rng = random.Random(settings.seed)
    names = settings.names()
    plan: Plan = [{} for _ in range(settings.queries)]
    down_until = dict.fromkeys(names, -1)  # crash-start windows
    for q in range(settings.queries):
        for name in names:
            if q <= down_until[name]:
                plan[q][name] = STILL_DOWN
                continue
            kind = _draw(rng, settings.rates)
            if kind == "crash-start":
                down_until[name] = q + rng.randint(*settings.crash_start_queries) - 1
            if kind:
                plan[q][name] = (kind, _entry(kind, rng, settings))
    _schedule_crashes(plan, settings)
    if settings.cover_every_kind:
        _cover(plan, rng, settings)
    return plan


def _draw(rng: random.Random, rates: dict[str, float]) -> str | None:
    roll = rng.random()
    for kind, rate in rates.items():
        if roll < rate:
            return kind
        roll -= rate
    return None


def _entry(kind: str, rng: random.Random, settings: SoakSettings) -> dict[str, Any]:
    if kind == "slow":
        return {"mode": "delay", "delay": round(rng.uniform(*settings.slow_s), 3)}
    if kind == "freeze":
        return {"mode": "freeze", "freeze_s": settings.freeze_s}
    if kind == "huge":
        return {"mode": "huge", "size_mb": settings.huge_mb}
    return {"mode": kind}


def _schedule_crashes(plan: Plan, settings: SoakSettings) -> None:
    """The last servers crash on every Nth query: repeated crash/recover cycles."""
    names = settings.names()[-len(settings.crash_every):] if settings.crash_every else []
    for name, every in zip(names, settings.crash_every, strict=True):
        for q in range(every - 1, len(plan), every):
            if plan[q].get(name, ("",))[0] not in ("crash-start", STILL_DOWN[0]):
                plan[q][name] = (SCHEDULED, {"mode": "crash-call"})


def _cover(plan: Plan, rng: random.Random, settings: SoakSettings) -> None:
    """Put each kind missing from ``plan`` on a fault-free server in the first 80 %."""
    present = {kind for row in plan for kind, _ in row.values()}
    room = max(1, int(len(plan) * 0.8))
    for kind in KINDS:
        if kind in present:
            continue
        for _ in range(1000):
            q, name = rng.randrange(room), rng.choice(settings.names())
            if name not in plan[q]:
                plan[q][name] = (kind, _entry(kind, rng, settings))
                if kind == "crash-start":
                    for later in range(q + 1, min(len(plan), q + settings.crash_start_queries[0])):
                        plan[later][name] = STILL_DOWN
                break


def write_faults(path: Path, row: dict[str, tuple[str, dict[str, Any]]]) -> None:
    """Atomically, so a server never reads half a file."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({name: entry for name, (_kind, entry) in row.items()}))
    os.replace(tmp, path)


# ---------------------------------------------------------------------- the run


def soak_config(settings: SoakSettings, fault_file: Path, token: str) -> Config:
    health = HealthConfig(interval_s=settings.health_interval_s, failure_threshold=3,
                          open_s=settings.breaker_open_s)
    servers = {}
    for i, name in enumerate(settings.names()):
        extra = ["--spawn-child"] if settings.spawn_child_every and i % settings.spawn_child_every == 0 else []
        servers[name] = fake_server_config(
            name, "--hits", str(settings.hits), "--fault-file", str(fault_file), *extra,
            timeout=settings.timeout_s, env={SOAK_TOKEN_VAR: token}, health=health,
        )
    return Config(servers=servers)


async def run_soak(settings: SoakSettings) -> SoakReport:
    """Run the soak; the report holds every figure (nothing is asserted here)."""
    report = SoakReport(settings)
    plan = plan_faults(settings)
    token = uuid.uuid4().hex
    seen: dict[int, float] = {}  # server pid -> create time, for the orphan check
    with tempfile.TemporaryDirectory(prefix="tributary-soak-") as tmp:
        fault_file = Path(tmp) / "faults.json"
        write_faults(fault_file, {})
        report.samples["start"] = sample()
        started = time.perf_counter()
        engine = await Engine.open(config=soak_config(settings, fault_file, token), warm=False)
        try:
            await engine.start_sources(settings.names(), timeout=60)
            engine.pool.start_health()  # pings run beside the queries, as in the app
            settle()
            async with _Watch(report) as watch:
                for q, row in enumerate(plan):
                    if q == min(settings.warm_queries, settings.queries - 1):
                        report.samples["warm"] = sample()
                    write_faults(fault_file, row)
                    watch.query = q
                    await _one_query(engine, q, plan, report)
                    _note_pids(engine.pool.states(), seen)
            report.samples["end"] = sample()
            _count_restarts(engine.pool.states(), report)
        finally:
            await engine.aclose()
        report.wall_s = time.perf_counter() - started
        report.orphans = await _orphans(token, seen)
        report.samples["closed"] = await _settled_sample(report.samples["start"].fds)
    return report


STALL_MS = 200
TICK_S = 0.02


class _Watch:
    """While the queries run: loop stalls (a tick that came late) and full GC passes,
    each noted with the query it happened in."""

    def __init__(self, report: SoakReport) -> None:
        self.report = report
        self._started: list[float] = []  # when each query began (perf_counter), in order
        self._queries: list[int] = []
        self._gc_started = 0.0
        self._ticker: asyncio.Task[None] | None = None

    @property
    def query(self) -> int:
        return self._queries[-1] if self._queries else -1

    @query.setter
    def query(self, q: int) -> None:
        self._started.append(time.perf_counter())
        self._queries.append(q)

    def query_at(self, moment: float) -> int:
        """The query that was running at ``moment`` (perf_counter)."""
        i = bisect.bisect_right(self._started, moment)
        return self._queries[i - 1] if i else -1

    async def __aenter__(self) -> _Watch:
        gc.callbacks.append(self._on_gc)
        self._ticker = asyncio.get_running_loop().create_task(self._tick())
        return self

    async def __aexit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._on_gc)
        assert self._ticker is not None
        self._ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._ticker

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self.report.gc_pauses.append(((time.perf_counter() - self._gc_started) * 1000, self.query))

    async def _tick(self) -> None:
        while True:
            due = time.perf_counter() + TICK_S
            await asyncio.sleep(TICK_S)
            late_ms = (time.perf_counter() - due) * 1000
            if late_ms > STALL_MS:
                # The loop stood still when the tick was due: blame the query running then
                # (the next may have begun by the time this task runs again).
                self.report.stalls.append((late_ms, self.query_at(due)))


async def _one_query(engine: Engine, q: int, plan: Plan, report: SoakReport) -> None:
    states = {s.name: s for s in engine.pool.states()}
    up = {n for n, s in states.items() if _ready(s)}
    for name, (kind, _entry) in plan[q].items():
        if kind == STILL_DOWN[0]:
            continue  # one crash-start window is one fault
        report.planned[kind] += 1
        report.delivered[kind] += name in up
    request = SearchRequest(f"soak query {report.settings.seed}-{q}", top_k=100)
    t = time.perf_counter()
    try:
        response = await engine.search(request)
    except Exception as exc:  # counted, never hidden: a search must not raise for a fault
        report.failures.append(f"query {q}: {type(exc).__name__}: {exc}")
        return
    ms = (time.perf_counter() - t) * 1000
    report.latencies_ms.append(ms)
    if ms > report.settings.timeout_s * 1000:
        faults = ", ".join(f"{n} {kind}" for n, (kind, _e) in sorted(plan[q].items()))
        report.slowest.append((ms, q, faults))
    report.answered += 1
    report.statuses.update(str(s.status) for s in response.sources)
    for name in healthy_sources(plan, q, up, report.settings):
        _check_source(response, name, q, report)


def healthy_sources(plan: Plan, q: int, up: set[str], settings: SoakSettings) -> list[str]:
    """Sources that must answer query ``q`` in full (see the module docstring)."""
    window = plan[max(0, q - settings.quiet_before): q + 1]
    return [n for n in settings.names()
            if n in up and all(row.get(n, ("slow",))[0] in BENIGN for row in window)]


def _ready(state: ServerState) -> bool:
    return state.status is ServerStatus.READY and state.breaker.state is BreakerState.CLOSED


def _check_source(response: SearchResponse, name: str, q: int, report: SoakReport) -> None:
    report.healthy_answers += 1
    want = {f"src/{name}/mod_{i}.py" for i in range(1, report.settings.hits + 1)}
    shown = {h.path for h in response.hits if h.source == name}
    shown |= {m.hit.path for g in response.groups for m in g.members if m.hit.source == name}
    missing = want - shown
    if missing:
        report.lost += len(missing)
        source = next((s for s in response.sources if s.name == name), None)
        why = f"{source.status}: {source.error}" if source else "no report"
        report.lost_detail.append((q, f"query {q}, {name}: {len(missing)} hits missing ({why})"))


def _note_pids(states: list[ServerState], seen: dict[int, float]) -> None:
    for state in states:
        if state.pid and state.pid not in seen:
            with contextlib.suppress(psutil.Error):
                seen[state.pid] = psutil.Process(state.pid).create_time()


def _count_restarts(states: list[ServerState], report: SoakReport) -> None:
    report.restarts = sum(s.restarts for s in states)
    report.breaker_opens = sum(s.breaker.opened for s in states)


# ---------------------------------------------------------------------- after shutdown


def _token_processes(token: str) -> Iterator[psutil.Process]:
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.environ().get(SOAK_TOKEN_VAR) == token:
                yield proc


def leftover_processes(token: str, seen: dict[int, float]) -> list[str]:
    """Processes carrying ``token`` in their environment, or seen as servers, still present."""
    found: dict[int, str] = {}
    for proc in _token_processes(token):
        with contextlib.suppress(psutil.Error):
            found[proc.pid] = f"{proc.pid} {proc.status()} {' '.join(proc.cmdline())[:120]}"
    for pid, created in seen.items():
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            if proc.create_time() == created:  # the same process, not a reused pid
                found.setdefault(pid, f"{pid} {proc.status()} (server process)")
    return sorted(found.values())


async def _orphans(token: str, seen: dict[int, float], grace_s: float = 5.0) -> list[str]:
    """What is still in the process table after shutdown, given ``grace_s`` to go."""
    deadline = time.monotonic() + grace_s
    while (left := leftover_processes(token, seen)) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return left


async def _settled_sample(fds_at_start: int, grace_s: float = 5.0) -> Sample:
    """Wait (bounded) for the stderr reader threads to close their pipes, then sample."""
    deadline = time.monotonic() + grace_s
    now = sample()
    while now.fds > fds_at_start and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        now = sample()
    return now


__all__ = ["KINDS", "SOAK_TOKEN_VAR", "SoakReport", "SoakSettings", "leftover_processes",
           "plan_faults", "run_soak"]
