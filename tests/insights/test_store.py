"""Query history: recording, reading back, summarising, retention, redaction, secrets."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlean

from tests.insights.helpers import Clock
from tributary.engine.insights.store import QueryLog, parse_since, percentile
from tributary.engine.model import (
    Hit,
    Metrics,
    RouteDecision,
    SearchRequest,
    SearchResponse,
    SourceReport,
    SourceStatus,
)

SECRET = "ghp_S3cr3tT0kenValue1234"


def response(
    query: str = "where is the cache",
    total_ms: float = 100.0,
    sources: list[SourceReport] | None = None,
    **metrics: object,
) -> SearchResponse:
    m = Metrics(
        total_ms=total_ms,
        stage_ms={"fanout": total_ms - 5, "fuse": 1.0},
        raw_hits=10,
        unique_hits=8,
        tokens_total=500,
        tokens_per_source={"files": 400, "web": 100},
        budget_utilisation=0.75,
        cache_hits=1,
        cache_lookups=4,
    )
    for name, value in metrics.items():
        setattr(m, name, value)
    return SearchResponse(
        request=SearchRequest(query=query, top_k=20),
        hits=[Hit(id=f"h{i}", source="files", tool="t", title="", content="") for i in range(3)],
        sources=sources
        if sources is not None
        else [
            SourceReport("files", SourceStatus.OK, 40.0, 6, 450),
            SourceReport("web", SourceStatus.TIMEOUT, 3000.0, 0, 0, error="timed out after 3 s"),
        ],
        route=RouteDecision(query_class="lookup"),
        metrics=m,
        strategy="rrf",
    )


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> Iterator[QueryLog]:
    s = QueryLog(tmp_path / "history.sqlite", clock=clock, secrets=[SECRET])
    yield s
    s.close()


def test_record_and_read_back(store: QueryLog, clock: Clock) -> None:
    r = response()
    entry_id = store.record(r)
    [entry] = store.recent(5)
    assert entry.id == entry_id
    assert entry.request_id == r.request_id
    assert entry.time == datetime.fromtimestamp(clock.now, UTC)
    assert entry.query == "where is the cache"
    assert (entry.strategy, entry.query_class, entry.task_type) == (
        "rrf",
        "lookup",
        "implementation",
    )
    assert (entry.hits, entry.total_ms, entry.raw_hits, entry.unique_hits) == (3, 100.0, 10, 8)
    assert entry.dedup_rate == pytest.approx(0.2)
    assert (entry.tokens_total, entry.budget_utilisation) == (500, 0.75)
    assert (entry.cache_hits, entry.cache_lookups) == (1, 4)
    assert entry.stage_ms == {"fanout": 95.0, "fuse": 1.0}
    files, web = entry.sources
    assert (files.source, files.status, files.latency_ms, files.hits, files.tokens) == (
        "files", "ok", 40.0, 6, 450,
    )  # fmt: skip
    assert files.context_tokens == 400
    assert (web.status, web.error) == ("timeout", "timed out after 3 s")


def test_recent_is_newest_first_and_limited(store: QueryLog, clock: Clock) -> None:
    for i in range(5):
        clock.now += 1
        store.record(response(query=f"q{i}"))
    assert [e.query for e in store.recent(3)] == ["q4", "q3", "q2"]
    assert store.recent(0) == []
    assert store.count() == 5


def test_summary_overall_and_per_source(store: QueryLog) -> None:
    for i in range(1, 11):
        sources = [
            SourceReport("files", SourceStatus.OK, 10.0 * i, 5, 100),
            SourceReport(
                "web",
                SourceStatus.ERROR if i % 5 == 0 else SourceStatus.OK,
                200.0 + i,
                1,
                10,
                error="boom" if i % 5 == 0 else None,
            ),
            SourceReport("git", SourceStatus.TIMEOUT if i == 1 else SourceStatus.SKIPPED),
        ]
        store.record(
            response(total_ms=10.0 * i, sources=sources, cache_hits=i % 2, cache_lookups=1)
        )
    failed = response(sources=[SourceReport("web", SourceStatus.CACHED, 1.0, 2, 20)])
    failed.error = "every source failed"
    store.record(failed)

    s = store.summary()
    assert s.queries == 11 and s.failed == 1
    assert s.p50_ms == pytest.approx(60.0)  # of 10..100 and 100
    assert s.p95_ms == pytest.approx(100.0)
    assert s.cache_hits == 6 and s.cache_lookups == 14
    assert s.cache_hit_rate == pytest.approx(6 / 14)
    assert s.mean_dedup_rate == pytest.approx(0.2)
    assert s.mean_utilisation == pytest.approx(0.75)
    assert s.tokens_total == 5500
    assert s.strategies == {"rrf": 11}
    assert set(s.stage_mean_ms) == {"fanout", "fuse"}
    assert list(s.sources) == ["files", "git", "web"]
    files, git, web = (s.sources[n] for n in ("files", "git", "web"))
    assert (files.calls, files.ok, files.hits, files.tokens) == (10, 10, 50, 1000)
    assert files.p50_ms == pytest.approx(55.0)
    assert files.p95_ms == pytest.approx(95.5)
    assert (web.calls, web.errors, web.cached) == (10, 2, 1)  # the cached call is no call
    assert web.error_rate == pytest.approx(0.2)
    assert (git.calls, git.timeouts, git.skipped) == (1, 1, 9)
    assert git.timeout_rate == 1.0
    assert s.tokens_per_source == {"files": 1000, "git": 0, "web": 120}
    data = s.as_dict()
    assert data["sources"]["web"]["error_rate"] == pytest.approx(0.2)
    assert data["cache"]["hit_rate"] == pytest.approx(6 / 14)


def test_summary_since(store: QueryLog, clock: Clock) -> None:
    store.record(response(total_ms=500))
    clock.now += 3 * 86400
    store.record(response(total_ms=20))
    assert store.summary().queries == 2
    recent = store.summary(timedelta(days=1))
    assert recent.queries == 1 and recent.p50_ms == 20
    assert recent.since == datetime.fromtimestamp(clock.now - 86400, UTC)
    moment = datetime.fromtimestamp(clock.now - 10, UTC)
    assert store.summary(moment).queries == 1
    assert store.summary(clock.now + 1).queries == 0
    empty = store.summary(clock.now + 1)
    assert empty.p50_ms is None and empty.sources == {}


def test_retention_keeps_the_newest(tmp_path: Path) -> None:
    store = QueryLog(tmp_path / "h.sqlite", retention=3)
    for i in range(7):
        store.record(response(query=f"q{i}"))
    assert [e.query for e in store.recent(10)] == ["q6", "q5", "q4"]
    conn = sqlean.connect(str(tmp_path / "h.sqlite"))
    (calls,) = conn.execute("SELECT COUNT(*) FROM source_calls").fetchone()
    conn.close()
    assert calls == 6  # the dropped queries' per-source rows went with them
    store.close()


def test_persists_across_reopen_and_migrates_once(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    first = QueryLog(path)
    first.record(response())
    first.close()
    second = QueryLog.open(path)
    assert second.count() == 1
    second.close()
    conn = sqlean.connect(str(path))
    assert conn.execute("SELECT version FROM schema_migrations").fetchall() == [(1,)]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_refuses_a_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    QueryLog(path).close()
    conn = sqlean.connect(str(path))
    conn.execute("INSERT INTO schema_migrations(version) VALUES (99)")
    conn.commit()
    conn.close()
    with pytest.raises(RuntimeError, match="newer"):
        QueryLog(path)


def test_default_path_is_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path))
    store = QueryLog.open()
    assert store.path == tmp_path / "data" / "insights.sqlite"
    store.close()


def test_a_log_under_its_old_name_is_moved_with_its_write_ahead_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``history.sqlite`` (its name before the task history took the word) is moved to
    ``insights.sqlite`` once, with the searches it holds, including those still in the
    write-ahead log; a file of the new name is never replaced."""
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path))
    data = tmp_path / "data"
    data.mkdir()
    old = QueryLog(data / "history.sqlite")
    old.record(response(query="where is the retry loop"))
    old.record(response(query="who calls fuse"))
    import shutil

    for suffix in ("", "-wal", "-shm"):  # a copy as a crash would leave it: log not merged
        shutil.copy(data / f"history.sqlite{suffix}", tmp_path / f"copy{suffix}")
    old.close()
    for suffix in ("", "-wal", "-shm"):
        shutil.copy(tmp_path / f"copy{suffix}", data / f"history.sqlite{suffix}")
    store = QueryLog.open()
    try:
        assert store.path == data / "insights.sqlite"
        assert {e.query for e in store.recent(10)} == {"where is the retry loop", "who calls fuse"}
        assert not (data / "history.sqlite").exists() and not (data / "history.sqlite-wal").exists()
    finally:
        store.close()
    (data / "history.sqlite").write_text("an older file that must stay where it is")
    QueryLog.open().close()
    assert (data / "history.sqlite").read_text() == "an older file that must stay where it is"


@pytest.mark.parametrize(
    ("redaction", "stored"), [("keep", "why is **** rejected"), ("hash", None), ("omit", None)]
)
def test_query_redaction(tmp_path: Path, redaction: str, stored: str | None) -> None:
    store = QueryLog(tmp_path / "h.sqlite", redaction=redaction, secrets=[SECRET])  # type: ignore[arg-type]
    store.record(response(query=f"why is {SECRET} rejected"))
    store.record(response(query=f"why is {SECRET} rejected"))
    first, second = store.recent(2)
    assert first.query == stored
    assert first.query_hash == second.query_hash  # repeats still recognisable
    store.close()


def test_no_secret_reaches_the_history_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No secret value in any stored row — here taken from a credential-named
    environment variable, which is what a store gets when no secrets are passed."""
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    path = tmp_path / "h.sqlite"
    store = QueryLog(path)
    r = response(query=f"token {SECRET}")
    r.error = f"auth failed with {SECRET}"
    r.sources[1].error = f"HTTP 401: bad credentials {SECRET}"
    store.record(r)
    store.close()
    conn = sqlite3.connect(path)
    rows = [
        *conn.execute("SELECT * FROM queries").fetchall(),
        *conn.execute("SELECT * FROM source_calls").fetchall(),
    ]
    conn.close()
    assert SECRET not in repr(rows)
    assert "bad credentials ****" in repr(rows)
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("h.sqlite*"))
    assert SECRET.encode() not in raw


def test_long_errors_are_clipped(store: QueryLog) -> None:
    r = response()
    r.sources[1].error = "x" * 10_000
    store.record(r)
    error = store.recent(1)[0].sources[1].error
    assert error is not None and len(error) == 500 and error.endswith("…")


def test_bad_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        QueryLog(tmp_path / "h.sqlite", retention=0)
    with pytest.raises(ValueError):
        QueryLog(tmp_path / "h.sqlite", redaction="shout")  # type: ignore[arg-type]


def test_parse_since() -> None:
    assert parse_since("7d") == timedelta(days=7)
    assert parse_since(" 12H ") == timedelta(hours=12)
    assert parse_since("1.5h") == timedelta(minutes=90)
    assert parse_since("2w") == timedelta(weeks=2)
    assert parse_since("2026-11-01T00:00:00+00:00") == datetime(2026, 11, 1, tzinfo=UTC)
    assert parse_since("2026-11-01").tzinfo is not None  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        parse_since("last tuesday")


def test_percentile() -> None:
    assert percentile([], 50) is None
    assert percentile([7.0], 95) == 7.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([float(i) for i in range(101)], 95) == 95.0


def test_sql_percentiles_match_the_reference(tmp_path: Path) -> None:
    import random

    rng = random.Random(7)
    for n in (1, 2, 3, 5, 20, 21, 37, 101):
        store = QueryLog(tmp_path / f"p{n}.sqlite")
        latencies = [round(rng.uniform(1, 900), 3) for _ in range(n)]
        for value in latencies:
            store.record(
                response(total_ms=value, sources=[SourceReport("s", SourceStatus.OK, value, 1)])
            )
        summary = store.summary()
        ordered = sorted(latencies)
        for got in (summary, summary.sources["s"]):
            assert got.p50_ms == pytest.approx(percentile(ordered, 50)), n
            assert got.p95_ms == pytest.approx(percentile(ordered, 95)), n
        store.close()


def test_concurrent_writers_and_readers(tmp_path: Path) -> None:
    """Threads sharing one store, and a second store on the same file, lose nothing."""
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "h.sqlite"
    first, second = QueryLog(path), QueryLog(path)

    def work(n: int) -> int:
        store = first if n % 2 else second
        for i in range(15):
            store.record(response(query=f"w{n}-{i}"))
            store.summary()
        return n

    with ThreadPoolExecutor(4) as pool:
        assert sorted(pool.map(work, range(4))) == [0, 1, 2, 3]
    assert first.count() == 60 and second.summary().queries == 60
    first.close()
    second.close()


@pytest.mark.asyncio
async def test_arecord_from_the_event_loop(store: QueryLog) -> None:
    import asyncio

    ids = await asyncio.gather(*(store.arecord(response(query=f"a{i}")) for i in range(5)))
    assert sorted(ids) == [1, 2, 3, 4, 5]
    assert {e.query for e in store.recent(5)} == {f"a{i}" for i in range(5)}


def test_a_source_s_latency_leaves_out_the_wait_for_its_start(store: QueryLog) -> None:
    """The first search after launch waits for each server to start; the source's own
    latency is what it took after that, and a call that never got past the start has none."""
    for latency in (40.0, 60.0):
        store.record(response(sources=[SourceReport("files", SourceStatus.OK, latency, 1, 10)]))
    store.record(response(sources=[SourceReport("files", SourceStatus.OK, 9050.0, 1, 10, startup_ms=9000.0)]))
    store.record(response(sources=[SourceReport("files", SourceStatus.TIMEOUT, 3000.0, startup_ms=3000.0)]))
    files = store.summary().sources["files"]
    assert files.calls == 4 and files.timeouts == 1
    assert files.p95_ms == pytest.approx(59.0)  # of 40, 50 and 60
