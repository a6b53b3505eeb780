"""A team's index at scale: PostgreSQL + pgvector against SQLite, 100k to 1M chunks.

For each size, in one run, with the same chunks and vectors in both backends:

- ingest: the store's write rate with the vectors already computed (each unique text
  embedded once by the real model, ``bench/_code_corpus.py``), then PostgreSQL's upkeep
  after a pass (statistics, term counts, the HNSW build), timed apart;
- size on disk, and the memory of the searching clients (peak RSS each) and of the
  PostgreSQL server (PSS of its processes);
- hybrid and keyword-only search (the files server's ``hybrid_search``, top 10) p50,
  p95 and max with 1, 8 and 32 searching clients at once, each its own process and
  connection (one desktop each), while one more process indexes (rewrites files): how
  many searches failed, and whether every file the indexer wrote is there afterwards;
- the keyword list's agreement with reading every posting of the query's words
  (PostgreSQL reads each word's best postings only), and the top files' agreement
  between the backends.

Queries: the pytest benchmark's 195 commit messages (a developer's question), and the
SWE-bench issues for the issue-length ones. The text is CPython's ``Lib/`` and the
installed packages, repeated under other folders past its unique chunks (said in the
output). Run it alone: two cores shared with anything else give other figures.

    .venv/bin/python bench/team_scale.py --sizes 100000 1000000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._code_corpus import copy_vector, repeated, unique_files, unique_vectors  # noqa: E402
from bench._machine import load, machine  # noqa: E402
from bench.postgres_scale import percentiles, postgres  # noqa: E402
from tests.postgres_server import fresh_database  # noqa: E402
from tributary.engine.index import pg_store  # noqa: E402
from tributary.engine.index.pg_store import PgIndexStore  # noqa: E402
from tributary.engine.index.search import hybrid_search  # noqa: E402
from tributary.engine.index.store import (  # noqa: E402
    FileRecord,
    IndexStore,
    ModelInfo,
    SearchFilter,
    SqliteStore,
)
from tributary.engine.postgres.db import Database  # noqa: E402
from tributary.engine.postgres.repositories import ensure_repository  # noqa: E402

SHARED = ROOT.parent / "shared" / "bench"
UNIQUE = 60_000  # unique chunks embedded (about CPython's Lib/); the rest are copies
WRITER_FILES = 200  # files the indexing process rewrites, round and round


@dataclass(frozen=True)
class Target:
    backend: str  # sqlite | postgres
    location: str  # the SQLite file, or the DSN
    repo: int = 0


def _queries() -> tuple[list[str], list[str]]:
    short = [json.loads(ln)["query"] for ln in (SHARED / "pytest" / "queries.jsonl").read_text().splitlines()]
    long = [json.loads(ln)["problem_statement"] for ln in
            (SHARED / "swebench" / "instances.jsonl").read_text().splitlines()][:40]  # fmt: skip
    return short, long


def _open(target: Target) -> IndexStore:
    if target.backend == "sqlite":
        store = SqliteStore(Path(target.location), readonly=True, check_same_thread=False)
        store.warm()
        return store
    return PgIndexStore(Database(target.location, application_name="bench-client"), target.repo)


def _client(target: Target, queries: list[str], vectors: np.ndarray | None, start: float, seconds: float,
            offset: int, out: Any) -> None:  # fmt: skip
    """One desktop: searches one after another until the time is up."""
    store = _open(target)
    times: list[float] = []
    errors = 0
    delay = start - time.time()
    if delay > 0:
        time.sleep(delay)
    end = max(start, time.time()) + seconds  # (a client still warming starts late, runs as long)
    i = offset
    while time.time() < end:
        vector = None if vectors is None else vectors[i % len(queries)]
        began = time.perf_counter()
        try:
            hybrid_search(store, queries[i % len(queries)], vector, repo="bench", top_k=10)
        except Exception as exc:  # counted: nothing else may stop a client
            errors += 1
            print(f"  search failed: {exc!r}", file=sys.stderr)
        times.append((time.perf_counter() - began) * 1000)
        i += 1
    out.put((times, errors, _peak_mb()))


def _peak_mb() -> int:
    """This process's peak resident memory (``VmHWM``: ``ru_maxrss`` would carry the
    parent's peak across the exec that started it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0


def _writer(target: Target, files: list[Any], vectors: dict[str, np.ndarray], stop: Any, out: Any) -> None:
    """The indexer: rewrites ``files`` (under ``live/``) until told to stop."""
    if target.backend == "sqlite":
        store: IndexStore = SqliteStore(Path(target.location))
    else:
        store = PgIndexStore(Database(target.location, application_name="bench-writer"), target.repo)
    written: dict[str, str] = {}
    chunks = 0
    slowest = 0.0
    round_ = 0
    began = time.perf_counter()
    while not stop.is_set():
        for f in files:
            if stop.is_set():
                break
            path = f"live/{f.path}"
            moved = [replace(c, path=path) for c in f.chunks]
            known = {c.embed_hash: vectors[c.embed_hash] for c in moved}
            record = FileRecord(path, f"h{round_}", 1, round_, f.language)
            t = time.perf_counter()
            store.write_file(record, moved, known)
            slowest = max(slowest, time.perf_counter() - t)
            written[path] = record.hash
            chunks += len(moved)
        round_ += 1
    seconds = time.perf_counter() - began
    states = store.file_states()
    lost = sum(1 for p, h in written.items() if states.get(p) is None or states[p].hash != h)
    store.close()
    out.put((chunks / seconds, slowest * 1000, lost, len(written)))


class _LockWatch:
    """Samples the server every 50 ms for the longest-waiting query blocked on a lock
    (a search or a write waiting for another's lock, not for a CPU)."""

    def __init__(self, target: Target) -> None:
        import threading

        self.longest = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(target.location,), daemon=True)
        self._thread.start()

    def _run(self, dsn: str) -> None:
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:
            while not self._done.wait(0.05):
                row = conn.execute(
                    "SELECT COALESCE(MAX(EXTRACT(EPOCH FROM now() - query_start)), 0) FROM pg_stat_activity "
                    "WHERE wait_event_type = 'Lock' AND datname = current_database()"
                ).fetchone()
                self.longest = max(self.longest, float(row[0]) * 1000 if row else 0.0)

    def stop(self) -> float:
        self._done.set()
        self._thread.join()
        return self.longest


def _pss_mb(name: str) -> float:
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() != name:
                continue
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def concurrent(target: Target, queries: list[str], vectors: np.ndarray | None, clients: int, seconds: float,
               writer_files: list[Any], writer_vectors: dict[str, np.ndarray]) -> str:  # fmt: skip
    ctx = mp.get_context("spawn")
    out: Any = ctx.Queue()
    wout: Any = ctx.Queue()
    stop = ctx.Event()
    writer = ctx.Process(target=_writer, args=(target, writer_files, writer_vectors, stop, wout))
    if writer_files:
        writer.start()
    start = time.time() + 8 + clients * 0.6  # every client open and warm before the clock starts
    procs = [ctx.Process(target=_client, args=(target, queries, vectors, start, seconds, n * 7, out))
             for n in range(clients)]  # fmt: skip
    for p in procs:
        p.start()
    watch = _LockWatch(target) if target.backend == "postgres" else None
    results = [out.get() for _ in procs]
    stop.set()
    blocked = "" if watch is None else f", longest lock wait {watch.stop():.0f} ms"
    for p in procs:
        p.join()
    if not writer_files:
        indexer = "no indexer"
    else:
        rate, slowest_write, lost, files = wout.get()
        writer.join()
        indexer = f"indexer {rate:.0f} chunks/s, slowest file {slowest_write:.0f} ms, {lost} of {files} files lost"
    times = [t for r in results for t in r[0]]
    errors = sum(r[1] for r in results)
    rss = max(r[2] for r in results)
    p50, p95 = percentiles(times)
    return (f"p50 {p50:6.1f} ms  p95 {p95:7.1f} ms  max {max(times):7.0f} ms  {len(times) / seconds:5.1f} searches/s  "
            f"failed {errors}  client peak RSS {rss} MB | {indexer}{blocked} | {load()}")  # fmt: skip


def _ingest(store: IndexStore, files: list[Any], vectors: dict[str, np.ndarray], total: int, model: ModelInfo
            ) -> tuple[float, int]:  # fmt: skip
    store.set_model(model)
    started = time.perf_counter()
    count = 0
    for f, copy in repeated(files, total):
        known = {c.embed_hash: copy_vector(vectors[c.embed_hash], c.embed_hash, copy) for c in f.chunks}
        store.write_file(FileRecord(f.path, f"c{copy}", 1, 1, f.language), list(f.chunks), known)
        count += len(f.chunks)
    return time.perf_counter() - started, count


def _overlap(a: Sequence[tuple[int, float]], b: Sequence[tuple[int, float]], k: int) -> float:
    left, right = {c for c, _ in a[:k]}, {c for c, _ in b[:k]}
    return len(left & right) / max(1, min(k, len(right)))


def run(size: int, clients: Sequence[int], sqlite_clients: Sequence[int], seconds: float, skip_sqlite: bool,
        agreement: bool = True, skip_postgres: bool = False) -> None:  # fmt: skip
    from tributary.engine.index.embed import load_code_embedder
    from tributary.engine.index.search import encode_query
    from tributary.engine.localsearch.longquery import embedding_text

    embedder = load_code_embedder()
    model = ModelInfo(embedder.name, embedder.dim, embedder.version)
    files = unique_files(UNIQUE)
    vectors = unique_vectors(files, embedder)
    short, long = _queries()
    qvec = np.vstack([encode_query(embedder, embedding_text(q)) for q in short])
    lvec = np.vstack([encode_query(embedder, embedding_text(q)) for q in long])
    writer_files = files[:WRITER_FILES]
    unique = min(size, sum(len(f.chunks) for f in files))
    print(f"\n== {size:,} chunks ({unique:,} unique from {len(files):,} files of CPython's Lib/"
          f"{' and site-packages' if unique > 66_000 else ''}, the rest copies under copyNN/); {load()}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="tributary-team-") as tmp, postgres() as server:
        targets: list[tuple[str, Target, Sequence[int]]] = []
        sqlite_path = Path(tmp) / "team.files.sqlite"
        if not skip_sqlite:
            store = SqliteStore(sqlite_path)
            took, count = _ingest(store, files, vectors, size, model)
            store.close()
            disk = sum(p.stat().st_size for p in Path(tmp).glob("team.files.sqlite*")) / 2**20
            print(f"SQLite     ingest {count / took:7.0f} chunks/s ({count:,} in {took:.0f} s); on disk {disk:,.0f} MB")
            targets.append(("SQLite", Target("sqlite", str(sqlite_path)), sqlite_clients))
        if not skip_postgres:
            dsn = fresh_database(server)
            db = Database(dsn, application_name="bench-ingest")
            repo = ensure_repository(db, "/bench/team", "team")
            pg = PgIndexStore(db, repo)
            took, count = _ingest(pg, files, vectors, size, model)
            began = time.perf_counter()
            pg.ensure_vector_index()
            upkeep = time.perf_counter() - began
            row = db.read(lambda c: c.execute("SELECT pg_database_size(current_database())").fetchone())
            disk = int(row[0]) / 2**20 if row else 0
            print(f"PostgreSQL ingest {count / took:7.0f} chunks/s ({count:,} in {took:.0f} s); then statistics, "
                  f"term counts and {pg.vector_index()} build {upkeep:.0f} s; on disk {disk:,.0f} MB; "
                  f"server PSS {_pss_mb('postgres'):,.0f} MB")  # fmt: skip
            targets.append(("PostgreSQL", Target("postgres", dsn, repo), clients))
            if agreement:
                _agreement(pg, sqlite_path if not skip_sqlite else None, short, qvec)
            pg.close()
            db.close()
        for label, target, _counts in targets:
            for mode, queries, qv in (("hybrid", short, qvec), ("keyword", short, None)):
                line = concurrent(target, queries, qv, 1, seconds, [], vectors)
                print(f"{label:10s} {mode:15s}  1 client, idle: {line}", flush=True)
        for label, target, counts in targets:
            for mode, queries, qv in (("hybrid", short, qvec), ("keyword", short, None), ("hybrid, issues", long, lvec)):
                for n in counts if mode != "hybrid, issues" else counts[:1]:
                    line = concurrent(target, queries, qv, n, seconds, writer_files, vectors)
                    print(f"{label:10s} {mode:15s} {n:2d} clients: {line}", flush=True)
        if not skip_postgres:
            print(f"PostgreSQL server PSS after the runs {_pss_mb('postgres'):,.0f} MB")


def _agreement(pg: PgIndexStore, sqlite_path: Path | None, queries: list[str], qvec: np.ndarray) -> None:
    """How much the keyword budget and the backend change what is found."""
    where = SearchFilter()
    top10, top100, top800, same_top = [], [], [], []
    sample = list(range(0, len(queries), 4))
    saved = pg_store.POSTINGS_PER_WORD
    try:
        for i in sample:
            pg_store.POSTINGS_PER_WORD = saved
            a = pg.keyword_search(queries[i], 800, where)
            pg_store.POSTINGS_PER_WORD = 10**9  # every posting of every word
            b = pg.keyword_search(queries[i], 800, where)
            top10.append(_overlap(a, b, 10))
            top100.append(_overlap(a, b, 100))
            top800.append(_overlap(a, b, 800))
    finally:
        pg_store.POSTINGS_PER_WORD = saved
    print(f"PostgreSQL keyword list against reading every posting of its words: top-10 overlap "
          f"{statistics.mean(top10):.3f}, top-100 {statistics.mean(top100):.3f}, top-800 {statistics.mean(top800):.3f} ({len(sample)} queries)")
    if sqlite_path is None:
        return
    sqlite = SqliteStore(sqlite_path, readonly=True)
    for i in sample:
        s = {h.path for h in hybrid_search(sqlite, queries[i], qvec[i], repo="b", top_k=10)}
        p = {h.path for h in hybrid_search(pg, queries[i], qvec[i], repo="b", top_k=10)}
        same_top.append(len(s & p) / max(1, len(s)))
    sqlite.close()
    print(f"top-10 files shared by SQLite's and PostgreSQL's hybrid search: {statistics.mean(same_top):.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--sqlite-clients", type=int, nargs="+", default=[1, 8],
                        help="each SQLite client holds the vectors in memory")  # fmt: skip
    parser.add_argument("--seconds", type=float, default=20.0, help="each concurrency run's length")
    parser.add_argument("--skip-sqlite", action="store_true")
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--skip-agreement", action="store_true", help="not the backends' and budget's agreement")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(subprocess.run(["sh", "-c", "grep -o 'avx512[a-z_]*\\|avx2' /proc/cpuinfo | sort -u | tr '\\n' ' '"],
                         capture_output=True, text=True, check=False).stdout)  # fmt: skip
    for size in args.sizes:
        run(size, args.clients, args.sqlite_clients, args.seconds, args.skip_sqlite, not args.skip_agreement,
            args.skip_postgres)
    return 0


if __name__ == "__main__":
    sys.exit(main())
