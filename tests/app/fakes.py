"""A test double of the engine facade: answers from fake sources after set delays.

It builds real ``tributary.engine.model`` objects (hits, dedup groups, score parts, source
reports, assembled context), so the UI under test renders exactly what the real
engine returns; only where the hits come from is faked.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tributary.engine.config.schema import Config, RoutingRule, ServerConfig
from tributary.engine.model import (
    AssembledContext,
    ContextChunk,
    ContextFormat,
    DedupGroup,
    DedupReason,
    GroupMember,
    Hit,
    Metrics,
    ReputationRow,
    RouteDecision,
    ScoreParts,
    SearchRequest,
    SearchResponse,
    SearchUpdate,
    SourceReport,
    SourceStatus,
    make_hit_id,
)
from tributary.engine.query.kinds import classify_query
from tributary.engine.sources.health import BreakerSnapshot, BreakerState
from tributary.engine.sources.state import ServerState, ServerStatus, ServerTest, ToolInfo

SAMPLE_CODE = '''def fixture(scope="function", params=None, autouse=False):
    """Decorator to mark a fixture factory function."""
    if callable(scope) and params is None:
        return FixtureFunctionMarker(scope="function")(scope)
    return FixtureFunctionMarker(scope=scope, params=params, autouse=autouse)
'''


def server_state(name: str, **changes: Any) -> ServerState:
    """The engine's state of a running server ``name``, with ``changes`` applied."""
    state = ServerState(
        name=name, transport="stdio", status=ServerStatus.READY, pid=4242, restarts=0,
        last_error=None, tools=["search"], tool="search(query)", tool_error=None,
        breaker=BreakerSnapshot(BreakerState.CLOSED, 0, None, 0), retry_in_s=None,
        server_info="fake 1.0", uptime_s=125.0, last_ping_ms=None,
    )
    return replace(state, **changes)


Delay = Callable[[str, str], float]  # (source, query) -> seconds


def default_config(names: list[str]) -> Config:
    config = Config()
    for name in names:
        config.servers[name] = ServerConfig(name=name, command="python", args=["-m", name])
    config.routing.rules.append(RoutingRule(name="code", pattern=r"def |class |\(\)", servers=names[:1]))
    return config


@dataclass
class FakeEngine:
    sources: list[str] = field(default_factory=lambda: ["files", "tasks", "git"])
    delay: Delay = lambda source, query: 0.0
    failing: dict[str, str] = field(default_factory=dict)  # source -> error text
    config: Config = field(default_factory=Config)
    started: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    applied: list[Config] = field(default_factory=list)
    changed_repositories: list[Path] = field(default_factory=list)
    closed: int = 0
    requests: list[SearchRequest] = field(default_factory=list)
    # (hit id, source, useful, query) per credited source, in order
    feedback_events: list[tuple[str, str, bool, str]] = field(default_factory=list)
    feedback_times: dict[str, datetime] = field(default_factory=dict)
    persistent: bool = True

    def __post_init__(self) -> None:
        if not self.config.servers:
            self.config = default_config(self.sources)

    @property
    def effective_config(self) -> Config:
        return self.config

    async def search(self, request: SearchRequest) -> SearchResponse:
        final: SearchResponse | None = None
        async for update in self.search_stream(request):
            final = update.response
        assert final is not None
        return final

    async def search_stream(self, request: SearchRequest) -> AsyncIterator[SearchUpdate]:
        query = request.query
        self.started.append(query)
        self.requests.append(request)
        start = time.perf_counter()
        order = sorted(self.sources, key=lambda s: self.delay(s, query))
        reports = {s: SourceReport(name=s) for s in self.sources}
        answered: list[str] = []
        clock = 0.0
        try:
            for source in order:
                wait = self.delay(source, query) - clock
                clock += max(0.0, wait)
                await asyncio.sleep(max(0.0, wait))
                report = reports[source]
                report.latency_ms = (time.perf_counter() - start) * 1000
                if source in self.failing:
                    report.status = SourceStatus.ERROR
                    report.error = self.failing[source]
                else:
                    report.status = SourceStatus.OK
                    report.hits = 3
                    answered.append(source)
                response = build_response(request, answered, list(reports.values()))
                yield SearchUpdate(response=response, source=report, final=False)
            response = build_response(request, answered, list(reports.values()))
            if not answered:
                response.error = "every source failed"
            self.finished.append(query)
            yield SearchUpdate(response=response, source=None, final=True)
        except (asyncio.CancelledError, GeneratorExit):
            self.cancelled.append(query)
            raise

    def route(self, query: str) -> RouteDecision:
        decision = RouteDecision()
        for rule in self.config.routing.rules:
            if rule.enabled and re.search(rule.pattern, query, re.IGNORECASE):
                decision.matched_rules.append(rule.name)
                decision.servers.extend(s for s in rule.servers if s not in decision.servers)
                if self.config.routing.mode == "first":
                    break
        if not decision.matched_rules:
            decision.fallback = True
            decision.servers = [s.name for s in self.config.enabled_servers()]
        for name in self.config.servers:
            if name not in decision.servers:
                decision.skipped[name] = "not routed"
        return decision

    async def test_server(self, server: ServerConfig) -> ServerTest:
        await asyncio.sleep(0.01)
        if server.name in self.failing:
            return ServerTest(server.name, False, latency_ms=10.0, error=self.failing[server.name])
        hits = make_hits(server.name, "probe")
        return ServerTest(
            server.name, True, tools=[ToolInfo("search", "Search the corpus")], probe_hits=hits,
            latency_ms=12.5,
        )

    def server_states(self) -> list[ServerState]:
        return [
            server_state(name, status=ServerStatus.BACKOFF, pid=None, uptime_s=None,
                         last_error=self.failing[name])
            if name in self.failing else server_state(name)
            for name in self.config.servers
        ]

    def stderr_lines(self, name: str) -> list[str]:
        return [f"[{name}] starting", f"[{name}] ready"]

    async def apply_config(self, config: Config) -> None:
        self.applied.append(config)
        self.config = config

    async def repository_changed(self, path: str | Path) -> int:
        self.changed_repositories.append(Path(path))
        return 0

    async def feedback(
        self, hit: Hit, useful: bool, query: str = "", *, group: DedupGroup | None = None
    ) -> dict[str, float]:
        """Like ``Engine.feedback``: credits every distinct source of the group."""
        await asyncio.sleep(0.005)
        if not self.persistent:
            raise RuntimeError("feedback is not stored in this session")
        credited = {hit.source: hit.id}
        if group is not None:
            for member in group.members:
                credited.setdefault(member.hit.source, member.hit.id)
        for source, hit_id in credited.items():
            self.feedback_events.append((hit_id, source, useful, query))
            self.feedback_times[source] = datetime(2026, 11, 22, 4, 30, tzinfo=UTC)
        return {source: self.reputation_of(source) for source in credited}

    def reputation_of(self, source: str) -> float:
        """The Beta(2, 2) posterior mean, as the real store computes without decay."""
        votes = [useful for _, s, useful, _ in self.feedback_events if s == source]
        return (2 + sum(votes)) / (4 + len(votes))

    async def reputation_rows(self) -> list[ReputationRow]:
        await asyncio.sleep(0.005)
        names = sorted(set(self.config.servers) | {s for _, s, _, _ in self.feedback_events})
        rows = []
        for name in names:
            votes = [useful for _, s, useful, _ in self.feedback_events if s == name]
            rows.append(ReputationRow(name, self.reputation_of(name), sum(votes),
                                      len(votes) - sum(votes), self.feedback_times.get(name)))
        return rows

    async def reset_reputation(self, source: str | None = None) -> int:
        await asyncio.sleep(0.005)
        before = len(self.feedback_events)
        self.feedback_events = [e for e in self.feedback_events if source is not None and e[1] != source]
        if source is None:
            self.feedback_times.clear()
        else:
            self.feedback_times.pop(source, None)
        return before - len(self.feedback_events)

    async def aclose(self) -> None:
        self.closed += 1


def make_hits(source: str, query: str) -> list[Hit]:
    hits = []
    for i in range(3):
        path = f"src/{source}/module_{i}.py"
        hit = Hit(
            id=make_hit_id(source, "search", query, i),
            source=source,
            tool="search",
            title=f"{query} — {source} result {i + 1}",
            content=SAMPLE_CODE if i == 0 else f"Result {i + 1} for {query!r} from {source}.",
            path=path,
            start_line=10 * (i + 1),
            end_line=10 * (i + 1) + 5,
            source_score=1.0 - i * 0.1,
            source_rank=i + 1,
            tokens=40,
        )
        hits.append(hit)
    return hits


def build_response(
    request: SearchRequest, answered: list[str], reports: list[SourceReport]
) -> SearchResponse:
    """Fuse what has answered: RRF over sources; each source's first hit folds into one group."""
    all_hits = [hit for source in answered for hit in make_hits(source, request.query)]
    firsts = [h for h in all_hits if h.source_rank == 1]
    kept_first = firsts[0] if firsts else None
    ranked: list[Hit] = []
    for hit in all_hits:
        if hit.source_rank == 1 and hit is not kept_first:
            continue
        parts = ScoreParts()
        parts.add("rrf", 1.0 / (60 + hit.source_rank), raw=float(hit.source_rank))
        parts.add("keyword", 0.004 * (3 - hit.source_rank), raw=0.5)
        if hit is kept_first:
            parts.add("agreement", 0.002 * (len(firsts) - 1))
        hit.parts = parts
        hit.score = parts.total
        ranked.append(hit)
    ranked.sort(key=lambda h: (-h.score, h.source, h.id))
    ranked = ranked[: request.top_k]
    groups = []
    if kept_first is not None and len(firsts) > 1:
        members = [
            GroupMember(hit=h, reason=DedupReason.FUZZY if i % 2 else DedupReason.HASH,
                        similarity=0.87 if i % 2 else 1.0)
            for i, h in enumerate(firsts[1:])
        ]
        groups.append(DedupGroup(kept=kept_first, members=members))
    chunks = [
        ContextChunk(h.id, h.source, h.location, h.score, h.content, h.tokens) for h in ranked
    ]
    fmt = request.format
    text = "\n\n".join(
        f"## {c.location} ({c.source})\n{c.content}" if fmt == ContextFormat.MARKDOWN
        else f'<chunk source="{c.source}">{c.content}</chunk>' if fmt == ContextFormat.XML
        else c.content
        for c in chunks
    )
    used = sum(c.tokens for c in chunks)
    context = AssembledContext(text, chunks, used, fmt, request.effective_budget)
    metrics = Metrics(total_ms=5.0, raw_hits=len(all_hits), unique_hits=len(ranked))
    return SearchResponse(
        request=request,
        hits=ranked,
        groups=groups,
        sources=[SourceReport(**{f: getattr(r, f) for f in r.__slots__}) for r in reports],
        context=context,
        metrics=metrics,
        strategy=request.strategy or "rrf",
        route=RouteDecision(servers=list(answered), query_class=classify_query(request.query)),
        # like the engine: real questions find something clear; gibberish does not
        confident=bool(ranked) and not request.query.startswith(WEAK_PREFIX),
    )


WEAK_PREFIX = "qwzxv"  # a query starting so gets hits, none of them confident


def by_query(delays: dict[str, float], default: float = 0.0) -> Delay:
    """A delay that depends on the query only (to make answers arrive out of order)."""
    return lambda source, query: delays.get(query, default)


def fixed(seconds: float) -> Delay:
    return lambda source, query: seconds


__all__ = ["FakeEngine", "by_query", "fixed"]
