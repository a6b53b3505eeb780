"""The query log: every response's metrics, kept locally, and their summary.

Each search leaves one ``queries`` row (time, query, strategy, latency, per-stage
timings, tokens, budget utilisation, dedup and cache rates) and one ``source_calls``
row per source (status, latency, hits, tokens, error). Only the newest ``retention``
queries are kept. :meth:`QueryLog.summary` turns them into what ``tributary
stats`` and the GUI's insights page show: percentiles overall and per source,
error/timeout rates, dedup and cache hit rates, utilisation, tokens per source.

Queries are stored as typed by default; ``redaction="hash"`` keeps only a hash (so
repeats still count) and ``"omit"`` keeps nothing. Whatever the setting, known secret
values are masked in the query and in error texts before they are written.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tributary.engine.cache.base import Clock
from tributary.engine.insights.db import InsightsStore, QueryRedaction
from tributary.engine.model import SearchResponse, SourceReport, SourceStatus

DEFAULT_RETENTION = 10_000
MAX_ERROR_CHARS = 500

# Statuses where the source was really called (latency percentiles use only these).
_CALLED = frozenset({SourceStatus.OK.value, SourceStatus.ERROR.value, SourceStatus.TIMEOUT.value})


@dataclass(slots=True)
class SourceCall:
    source: str
    status: str
    latency_ms: float | None
    hits: int
    tokens: int
    context_tokens: int = 0
    error: str | None = None


@dataclass(slots=True)
class QueryLogEntry:
    """One recorded search, as stored (the query possibly redacted)."""

    id: int
    request_id: str
    time: datetime
    query: str | None
    query_hash: str
    task_type: str | None
    strategy: str | None
    query_class: str | None
    hits: int
    total_ms: float
    raw_hits: int
    unique_hits: int
    dedup_rate: float
    tokens_total: int
    budget_utilisation: float
    cache_hits: int
    cache_lookups: int
    stage_ms: dict[str, float]
    error: str | None
    sources: list[SourceCall] = field(default_factory=list)


@dataclass(slots=True)
class SourceSummary:
    """One source over the summarised period."""

    name: str
    calls: int = 0  # asked and answered, failed or timed out
    ok: int = 0
    errors: int = 0
    timeouts: int = 0
    cached: int = 0
    skipped: int = 0
    circuit_open: int = 0
    hits: int = 0
    tokens: int = 0
    context_tokens: int = 0
    p50_ms: float | None = None
    p95_ms: float | None = None

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0

    @property
    def timeout_rate(self) -> float:
        return self.timeouts / self.calls if self.calls else 0.0


@dataclass(slots=True)
class QueryLogSummary:
    """What the recorded searches say, overall and per source."""

    since: datetime | None
    queries: int = 0
    failed: int = 0  # responses where every source failed
    first: datetime | None = None
    last: datetime | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    mean_dedup_rate: float = 0.0
    cache_hits: int = 0
    cache_lookups: int = 0
    mean_utilisation: float = 0.0
    tokens_total: int = 0
    stage_mean_ms: dict[str, float] = field(default_factory=dict)
    strategies: dict[str, int] = field(default_factory=dict)
    sources: dict[str, SourceSummary] = field(default_factory=dict)

    @property
    def cache_hit_rate(self) -> float:
        return self.cache_hits / self.cache_lookups if self.cache_lookups else 0.0

    @property
    def tokens_per_source(self) -> dict[str, int]:
        return {name: s.tokens for name, s in self.sources.items()}

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, with the derived rates spelled out."""
        return {
            "since": self.since.isoformat() if self.since else None,
            "queries": self.queries,
            "failed": self.failed,
            "first": self.first.isoformat() if self.first else None,
            "last": self.last.isoformat() if self.last else None,
            "latency_ms": {"p50": self.p50_ms, "p95": self.p95_ms},
            "mean_dedup_rate": self.mean_dedup_rate,
            "cache": {
                "hits": self.cache_hits,
                "lookups": self.cache_lookups,
                "hit_rate": self.cache_hit_rate,
            },
            "mean_utilisation": self.mean_utilisation,
            "tokens_total": self.tokens_total,
            "tokens_per_source": self.tokens_per_source,
            "stage_mean_ms": self.stage_mean_ms,
            "strategies": self.strategies,
            "sources": {
                name: {
                    "calls": s.calls,
                    "ok": s.ok,
                    "errors": s.errors,
                    "timeouts": s.timeouts,
                    "cached": s.cached,
                    "skipped": s.skipped,
                    "circuit_open": s.circuit_open,
                    "error_rate": s.error_rate,
                    "timeout_rate": s.timeout_rate,
                    "latency_ms": {"p50": s.p50_ms, "p95": s.p95_ms},
                    "hits": s.hits,
                    "tokens": s.tokens,
                    "context_tokens": s.context_tokens,
                }
                for name, s in self.sources.items()
            },
        }


Since = datetime | timedelta | float | None


class QueryLog(InsightsStore):
    """The local query log (one SQLite file, WAL)."""

    def __init__(
        self,
        path: Path | str,
        *,
        retention: int = DEFAULT_RETENTION,
        redaction: QueryRedaction = "keep",
        secrets: Iterable[str] | None = None,
        clock: Clock = time.time,
    ) -> None:
        if retention < 1:
            raise ValueError("retention must keep at least one query")
        super().__init__(path, redaction=redaction, secrets=secrets, clock=clock)
        self.retention = retention

    # --- writing ----------------------------------------------------------------------

    def record(self, response: SearchResponse) -> int:
        """Store ``response``'s metrics; returns the new entry's id."""
        request, metrics = response.request, response.metrics
        query, query_hash = self.stored_query(request.query)
        row = (
            request.request_id,
            self._clock(),
            query,
            query_hash,
            str(request.task_type),
            response.strategy,
            response.route.query_class,
            request.top_k,
            len(response.hits),
            metrics.total_ms,
            metrics.raw_hits,
            metrics.unique_hits,
            metrics.dedup_rate,
            metrics.tokens_total,
            metrics.budget_utilisation,
            metrics.cache_hits,
            metrics.cache_lookups,
            json.dumps(metrics.stage_ms, separators=(",", ":")),
            self._error(response.error),
        )
        calls = [
            (
                report.name,
                str(report.status),
                _own_latency(report),
                report.hits,
                report.tokens,
                metrics.tokens_per_source.get(report.name, 0),
                self._error(report.error),
            )
            for report in response.sources
        ]
        with self._db.write() as conn:
            cursor = conn.execute(
                "INSERT INTO queries(request_id, ts, query, query_hash, task_type, strategy,"
                " query_class, top_k, hits, total_ms, raw_hits, unique_hits, dedup_rate,"
                " tokens_total, budget_utilisation, cache_hits, cache_lookups, stage_ms, error)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            entry_id = int(cursor.lastrowid or 0)
            conn.executemany(
                "INSERT OR REPLACE INTO source_calls(query_id, source, status, latency_ms, hits,"
                " tokens, context_tokens, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(entry_id, *call) for call in calls],
            )
            # Retention by id: cheap (primary key range) and exact, oldest first.
            conn.execute("DELETE FROM queries WHERE id <= ?", (entry_id - self.retention,))
        return entry_id

    async def arecord(self, response: SearchResponse) -> int:
        """:meth:`record` in a worker thread: the event loop never waits on the disk or
        on another process's write lock."""
        return await asyncio.to_thread(self.record, response)

    def stored_query(self, query: str) -> tuple[str | None, str]:
        """What the log keeps of ``query``: (text per the redaction, its hash)."""
        clean = self._scrubber.text(query)
        digest = hashlib.blake2b(clean.strip().encode("utf-8", "surrogatepass"), digest_size=12)
        if self.redaction == "keep":
            return clean, digest.hexdigest()
        return None, digest.hexdigest()

    def _error(self, text: str | None) -> str | None:
        return None if text is None else _clip(self._scrubber.text(text))

    def clear(self) -> int:
        with self._db.write() as conn:
            return int(conn.execute("DELETE FROM queries").rowcount)

    # --- reading ----------------------------------------------------------------------

    def count(self) -> int:
        with self._db.read() as conn:
            (n,) = conn.execute("SELECT COUNT(*) FROM queries").fetchone()
        return int(n)

    def recent(self, n: int = 20) -> list[QueryLogEntry]:
        """The newest ``n`` entries, newest first, each with its per-source calls."""
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM queries ORDER BY id DESC LIMIT ?", (max(0, n),)
            ).fetchall()
            entries = [_entry(row) for row in rows]
            by_id = {entry.id: entry for entry in entries}
            if by_id:
                marks = ",".join("?" * len(by_id))
                calls = conn.execute(
                    "SELECT query_id, source, status, latency_ms, hits, tokens, context_tokens,"
                    f" error FROM source_calls WHERE query_id IN ({marks}) ORDER BY source",
                    list(by_id),
                )
                for call in calls:
                    by_id[call[0]].sources.append(SourceCall(*call[1:]))
        return entries

    def summary(self, since: Since = None) -> QueryLogSummary:
        """Aggregates over the entries recorded since ``since`` (all when None).

        ``since`` is a moment (datetime, or epoch seconds) or an age (timedelta).
        The work is done by SQLite (grouping, window functions for percentiles), so a
        summary of the full 10,000-search log stays quick.
        """
        start = _since_epoch(since, self._clock())
        result = QueryLogSummary(
            since=datetime.fromtimestamp(start, UTC) if start is not None else None
        )
        lower = start if start is not None else float("-inf")
        with self._db.read() as conn:
            _fill_overall(result, conn, lower)
            if result.queries:
                result.sources = _per_source(conn, lower)
        return result


_ENTRY_COLUMNS = (
    "id, request_id, ts, query, query_hash, task_type, strategy, query_class, hits, total_ms,"
    " raw_hits, unique_hits, dedup_rate, tokens_total, budget_utilisation, cache_hits,"
    " cache_lookups, stage_ms, error"
)


def _entry(row: Sequence[Any]) -> QueryLogEntry:
    values = list(row)
    values[2] = datetime.fromtimestamp(values[2], UTC)
    values[17] = json.loads(values[17] or "{}")
    return QueryLogEntry(*values)


def _fill_overall(result: QueryLogSummary, conn: sqlite3.Connection, lower: float) -> None:
    row = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(error IS NOT NULL), 0), MIN(ts), MAX(ts),"
        " AVG(dedup_rate), COALESCE(SUM(cache_hits), 0), COALESCE(SUM(cache_lookups), 0),"
        " AVG(budget_utilisation), COALESCE(SUM(tokens_total), 0)"
        " FROM queries WHERE ts >= ?",
        (lower,),
    ).fetchone()
    result.queries = int(row[0])
    if not result.queries:
        return
    result.failed = int(row[1])
    result.first = datetime.fromtimestamp(row[2], UTC)
    result.last = datetime.fromtimestamp(row[3], UTC)
    result.mean_dedup_rate = float(row[4])
    result.cache_hits, result.cache_lookups = int(row[5]), int(row[6])
    result.mean_utilisation = float(row[7])
    result.tokens_total = int(row[8])
    marks = _percentile_ranks(conn, "'all'", "total_ms", "queries WHERE ts >= ?", (lower,))
    result.p50_ms, result.p95_ms = marks.get("all", (None, None))
    result.stage_mean_ms = {
        str(stage): float(mean)
        for stage, mean in conn.execute(
            "SELECT j.key, AVG(j.value) FROM queries q, json_each(q.stage_ms) j"
            " WHERE q.ts >= ? GROUP BY j.key ORDER BY MIN(q.id), j.key",
            (lower,),
        )
    }
    result.strategies = {
        str(strategy): int(n)
        for strategy, n in conn.execute(
            "SELECT strategy, COUNT(*) FROM queries WHERE ts >= ? AND strategy IS NOT NULL"
            " GROUP BY strategy ORDER BY strategy",
            (lower,),
        )
    }


_STATUS_FIELD = {
    SourceStatus.OK.value: "ok",
    SourceStatus.ERROR.value: "errors",
    SourceStatus.TIMEOUT.value: "timeouts",
    SourceStatus.CACHED.value: "cached",
    SourceStatus.CIRCUIT_OPEN.value: "circuit_open",
    SourceStatus.SKIPPED.value: "skipped",
}


def _per_source(conn: sqlite3.Connection, lower: float) -> dict[str, SourceSummary]:
    in_period = "c.query_id IN (SELECT id FROM queries WHERE ts >= ?)"
    summaries: dict[str, SourceSummary] = {}
    for source, status, n, hits, tokens, context_tokens in conn.execute(
        "SELECT c.source, c.status, COUNT(*), SUM(c.hits), SUM(c.tokens), SUM(c.context_tokens)"
        f" FROM source_calls c WHERE {in_period} GROUP BY c.source, c.status",
        (lower,),
    ):
        s = summaries.setdefault(source, SourceSummary(name=source))
        s.hits += int(hits)
        s.tokens += int(tokens)
        s.context_tokens += int(context_tokens)
        if status in _CALLED:
            s.calls += int(n)
        field_name = _STATUS_FIELD.get(status)
        if field_name is not None:
            setattr(s, field_name, getattr(s, field_name) + int(n))
    called = ",".join(f"'{status}'" for status in sorted(_CALLED))
    marks = _percentile_ranks(
        conn,
        "c.source",
        "c.latency_ms",
        f"source_calls c WHERE {in_period} AND c.status IN ({called}) AND c.latency_ms IS NOT NULL",
        (lower,),
    )
    for source, (p50, p95) in marks.items():
        summaries[source].p50_ms, summaries[source].p95_ms = p50, p95
    return dict(sorted(summaries.items()))


def _percentile_ranks(
    conn: sqlite3.Connection, group: str, value: str, source: str, args: tuple[Any, ...]
) -> dict[str, tuple[float | None, float | None]]:
    """p50 and p95 of ``value`` per ``group``, interpolated like :func:`percentile`.

    Only the (at most four) rows around each percentile's rank leave SQLite.
    """
    rows = conn.execute(
        f"WITH ranked AS (SELECT {group} AS g, {value} AS v,"
        f" ROW_NUMBER() OVER (PARTITION BY {group} ORDER BY {value}) - 1 AS r,"
        f" COUNT(*) OVER (PARTITION BY {group}) AS n FROM {source})"
        " SELECT g, r, n, v FROM ranked WHERE"
        # Integer arithmetic: the same floor as _interpolate's, never off by a rounding.
        " r IN ((n - 1) * 50 / 100, (n - 1) * 50 / 100 + 1,"
        " (n - 1) * 95 / 100, (n - 1) * 95 / 100 + 1)",
        args,
    ).fetchall()
    around: dict[str, dict[int, float]] = {}
    sizes: dict[str, int] = {}
    for g, r, n, v in rows:
        around.setdefault(str(g), {})[int(r)] = float(v)
        sizes[str(g)] = int(n)
    result: dict[str, tuple[float | None, float | None]] = {}
    for g, values in around.items():
        result[g] = (
            _interpolate(values, sizes[g], 50),
            _interpolate(values, sizes[g], 95),
        )
    return result


def _interpolate(values: dict[int, float], n: int, q: int) -> float:
    low = (n - 1) * q // 100
    high = min(low + 1, n - 1)
    fraction = ((n - 1) * q % 100) / 100
    return values[low] + (values[high] - values[low]) * fraction


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of already sorted values, linearly interpolated."""
    if not sorted_values:
        return None
    rank = (len(sorted_values) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (rank - low)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str) -> datetime | timedelta:
    """``7d``, ``12h``, ``30m``, ``2w``, ``90s`` (an age) or an ISO date/date-time."""
    match = _DURATION.match(text)
    if match:
        return timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2).lower()])
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"not a duration (7d, 12h, 30m) or an ISO date: {text!r}") from None
    return moment if moment.tzinfo else moment.astimezone()  # naive: local time


def _since_epoch(since: Since, now: float) -> float | None:
    if since is None:
        return None
    if isinstance(since, timedelta):
        return now - since.total_seconds()
    if isinstance(since, datetime):
        return (since if since.tzinfo else since.astimezone()).timestamp()
    return float(since)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def _own_latency(report: SourceReport) -> float | None:
    """How long the source took to answer, without the wait for it to start: the first
    search after launch waits for every server's start-up, which says nothing about how
    fast the source answers. A call that never got past the start has no latency."""
    if report.latency_ms is None or not report.startup_ms:
        return report.latency_ms
    own = report.latency_ms - report.startup_ms
    return own if own > 0 else None
