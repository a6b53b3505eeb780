"""The shared PostgreSQL + pgvector index against the SQLite one: writes, queries, quality.

Starts its own PostgreSQL 16 + pgvector (PyPI's pgserver) in a temporary folder and
prints, with the machine's CPU:

- ``index``: indexing the pytest 8.0.0 sdist (or ``--corpus``) into each backend with a
  384-d hashing embedder, so the figure is the store's cost, not the model's.
- ``scale``: dense query p50/p95 (k=10, and k=800: the hybrid search's pool) over N
  synthetic 384-d chunks, SQLite (exact: numpy, int8 first pass from 20k rows) against
  PostgreSQL with the vector index the server gives (HNSW here) and an exact scan;
  with the HNSW's recall@10 against the exact answer.
- ``retrieval``: files recall@10 / MRR on the pytest benchmark's 195 queries with the
  real embedding model, hybrid search on each backend, with 95 % intervals; with
  ``--per-word N ...``, PostgreSQL again reading only each word's N best postings, the
  share of a word's chunks that a million-chunk index reads.

    .venv/bin/python bench/postgres_scale.py index
    .venv/bin/python bench/postgres_scale.py scale --sizes 10000 100000
    .venv/bin/python bench/postgres_scale.py retrieval --per-word 7 70
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._machine import machine  # noqa: E402
from bench.index_pytest import BENCH, fetch_corpus, ranked_files  # noqa: E402
from tests.postgres_server import fresh_database, running_server  # noqa: E402
from tributary.engine.index import pg_store  # noqa: E402
from tributary.engine.index.backend import IndexBackend  # noqa: E402
from tributary.engine.index.chunking import Chunk  # noqa: E402
from tributary.engine.index.manager import index_repository, open_index_store  # noqa: E402
from tributary.engine.index.pg_store import PgIndexStore  # noqa: E402
from tributary.engine.index.search import hybrid_search  # noqa: E402
from tributary.engine.index.store import (  # noqa: E402
    FileRecord,
    IndexStore,
    ModelInfo,
    SearchFilter,
    SqliteStore,
)
from tributary.engine.localsearch.embedder import Vectors  # noqa: E402
from tributary.engine.postgres.db import Database  # noqa: E402
from tributary.engine.postgres.repositories import ensure_repository  # noqa: E402

DIM = 384
CHUNKS_PER_FILE = 100
QUERIES = 100
_TOKEN = re.compile(r"[A-Za-z]+")


class HashingEmbedder:
    """Feature hashing into 384 dimensions: cheap and deterministic."""

    name = "bench-hashing"
    dim = DIM
    version = "1"

    def encode(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                out[row, int(hashlib.blake2b(token.encode(), digest_size=4).hexdigest(), 16) % DIM] += 1.0
            out[row, 0] += 1e-3
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


class CachingEmbedder:
    """The real model, each text encoded once across both backends' runs."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name, self.dim, self.version = model.name, model.dim, model.version
        self.cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> Vectors:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            for text, vector in zip(missing, self.model.encode(missing), strict=True):
                self.cache[text] = vector
        return np.vstack([self.cache[t] for t in texts]).astype(np.float32) if texts else np.zeros((0, self.dim), np.float32)


@contextmanager
def postgres() -> Iterator[Any]:
    folder = Path(tempfile.mkdtemp(prefix="tributary-bench-pg-"))
    try:
        with running_server(folder / "data") as server:
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


# -- index throughput ---------------------------------------------------------------------


def bench_index(corpus: Path) -> None:
    embedder = HashingEmbedder()
    with postgres() as server, tempfile.TemporaryDirectory() as tmp:
        backends = {"sqlite": {"index_dir": Path(tmp)}, "postgres": {"backend": IndexBackend(fresh_database(server))}}
        for name, kw in backends.items():
            started = time.perf_counter()
            stats = index_repository(corpus, embedder=embedder, **kw)  # type: ignore[arg-type]
            seconds = time.perf_counter() - started
            started = time.perf_counter()
            again = index_repository(corpus, embedder=embedder, **kw)  # type: ignore[arg-type]
            noop = time.perf_counter() - started
            print(f"{name:9s} {stats.files_indexed} files, {stats.chunks_written} chunks in {seconds:.1f} s: "
                  f"{stats.chunks_written / seconds:.0f} chunks/s; unchanged re-run {noop * 1000:.0f} ms "
                  f"({again.files_indexed} re-indexed)")


# -- synthetic scale ----------------------------------------------------------------------


def _unit(matrix: np.ndarray) -> np.ndarray:
    result: np.ndarray = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
    return result


def synthetic(n: int, seed: int = 7, *, clustered: bool = True) -> np.ndarray:
    """``n`` unit vectors. Clustered (the default): 64 topics of 16 sub-topics each, every
    vector near one sub-topic (cosine ~0.7 to it), as text embeddings group by subject;
    otherwise uniform on the sphere, every point about as far from every other — the
    worst case for an approximate index."""
    rng = np.random.default_rng(seed)
    if not clustered:
        return _unit(rng.standard_normal((n, DIM)))
    shape = np.random.default_rng(12345)  # the same topics for the chunks and the queries
    topics = _unit(shape.standard_normal((64, DIM)))
    subtopics = _unit(topics[np.arange(1024) % 64] + 0.8 * _unit(shape.standard_normal((1024, DIM))))
    return _unit(subtopics[rng.integers(1024, size=n)] + 1.0 * _unit(rng.standard_normal((n, DIM))))


def fill(store: IndexStore, matrix: np.ndarray) -> float:
    """Write ``matrix`` as files of CHUNKS_PER_FILE chunks; the seconds it took."""
    store.set_model(ModelInfo("bench-synthetic", DIM, "1"))
    started = time.perf_counter()
    for start in range(0, len(matrix), CHUNKS_PER_FILE):
        rows = matrix[start : start + CHUNKS_PER_FILE]
        path = f"f{start // CHUNKS_PER_FILE:05d}.py"
        chunks = [Chunk(path, "python", "block", i, i, f"chunk {start + i}", embed_text=f"{start + i}")
                  for i in range(len(rows))]  # fmt: skip
        known = {c.embed_hash: v for c, v in zip(chunks, rows, strict=True)}
        store.write_file(FileRecord(path, str(start), 1, 1, "python"), chunks, known)
    return time.perf_counter() - started


def time_queries(search: Callable[[np.ndarray, int], list[tuple[int, float]]], queries: np.ndarray, k: int
                 ) -> tuple[list[list[int]], list[float]]:  # fmt: skip
    answers, times = [], []
    for query in queries:
        started = time.perf_counter()
        hits = search(query, k)
        times.append((time.perf_counter() - started) * 1000)
        answers.append([cid for cid, _ in hits])
    return answers, times


def vec0_knn(store: SqliteStore, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """sqlite-vec's own KNN over the store's vec0 table (what the numpy path replaced)."""
    rows = store.conn.execute(
        "SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?",
        (np.ascontiguousarray(query, dtype=np.float32).tobytes(), k),
    ).fetchall()
    return [(int(cid), 1.0 - float(d)) for cid, d in rows]


def recall(approx: list[list[int]], exact: list[list[int]], k: int) -> float:
    return statistics.mean(len(set(a[:k]) & set(e[:k])) / k for a, e in zip(approx, exact, strict=True))


def bench_scale(sizes: Sequence[int], clustered: bool) -> None:
    queries = synthetic(QUERIES, seed=99, clustered=clustered)
    where = SearchFilter()
    print("vectors:", "clustered (64 topics x 16 sub-topics)" if clustered else "uniform on the sphere")
    with postgres() as server, tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            matrix = synthetic(n, clustered=clustered)
            sqlite = SqliteStore(Path(tmp) / f"s{n}.files.sqlite")
            write_s = fill(sqlite, matrix)
            sqlite.warm()
            print(f"\n{n} chunks x {DIM}: SQLite write {n / write_s:.0f} chunks/s")
            ids_sqlite = {}
            for k in (10, 800):
                exact, times = time_queries(lambda q, k, s=sqlite: s.dense_search(q, k, where), queries, k)
                ids_sqlite[k] = exact
                p50, p95 = percentiles(times)
                print(f"  SQLite store (numpy exact) k={k:<4d} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms")
                _found, times = time_queries(lambda q, k, s=sqlite: vec0_knn(s, q, k), queries, k)
                p50, p95 = percentiles(times)
                print(f"  sqlite-vec vec0 KNN        k={k:<4d} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms")
            sqlite.close()
            dsn = fresh_database(server)
            db = Database(dsn)
            pg = PgIndexStore(db, ensure_repository(db, f"/bench/{n}", f"synthetic-{n}"))
            write_s = fill(pg, matrix)
            started = time.perf_counter()
            kind = pg.ensure_vector_index()  # what the indexer does after a pass
            build_s = time.perf_counter() - started
            print(f"  PostgreSQL write {n / write_s:.0f} chunks/s, then its {kind} index built in {build_s:.1f} s")
            offset = _id_offset(pg)
            exact_pg = PgIndexStore(db, pg.repo, vector_index="exact")
            for label, store in ((kind, pg), ("exact scan", exact_pg)):
                for k in (10, 800):
                    found, times = time_queries(lambda q, k, s=store: s.dense_search(q, k, where), queries, k)
                    shifted = [[cid - offset for cid in row] for row in found]
                    p50, p95 = percentiles(times)
                    print(f"  pgvector {label:12s}      k={k:<4d} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  "
                          f"recall@{min(k, 10)} vs exact {recall(shifted, ids_sqlite[k], min(k, 10)):.3f}")
            db.close()


def _id_offset(store: PgIndexStore) -> int:
    """PostgreSQL's chunk ids minus SQLite's (both number chunks in writing order)."""
    row = store.db.read(lambda c: c.execute("SELECT MIN(id) FROM chunks WHERE repo = %s", (store.repo,)).fetchone())
    return int(row[0]) - 1 if row and row[0] is not None else 0


# -- retrieval quality --------------------------------------------------------------------


def interval(values: list[float]) -> str:
    mean = statistics.mean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
    return f"{mean:.3f} ± {half:.3f}"


def bench_retrieval(corpus: Path, per_word: Sequence[int] = ()) -> None:
    from tributary.engine.index.embed import load_code_embedder

    queries = [json.loads(line) for line in (BENCH / "queries.jsonl").read_text().splitlines()]
    embedder = CachingEmbedder(load_code_embedder())
    with postgres() as server, tempfile.TemporaryDirectory() as tmp:
        backends = {"sqlite": {"index_dir": Path(tmp)}, "postgres": {"backend": IndexBackend(fresh_database(server))}}
        per_query: dict[str, tuple[list[float], list[float]]] = {}
        vectors = embedder.encode([q["query"] for q in queries])
        for name, kw in backends.items():
            started = time.perf_counter()
            index_repository(corpus, embedder=embedder, **kw)  # type: ignore[arg-type]
            print(f"{name}: indexed in {time.perf_counter() - started:.0f} s")
            store = open_index_store(corpus, **kw)  # type: ignore[arg-type]
            default = pg_store.POSTINGS_PER_WORD
            budgets = [default, *per_word] if name == "postgres" else [default]
            for budget in budgets:
                pg_store.POSTINGS_PER_WORD = budget
                recalls, rrs, times = [], [], []
                for query, vector in zip(queries, vectors, strict=True):
                    started = time.perf_counter()
                    hits = hybrid_search(store, query["query"], vector, repo="pytest", top_k=50)
                    times.append((time.perf_counter() - started) * 1000)
                    files = ranked_files([h.path for h in hits])
                    relevant = set(query["relevant"])
                    recalls.append(len(relevant & set(files[:10])) / len(relevant))
                    rrs.append(next((1 / r for r, p in enumerate(files, 1) if p in relevant), 0.0))
                label = name if budget == budgets[0] else f"{name}, {budget} postings a word"
                per_query.setdefault(name, (recalls, rrs))
                p50, p95 = percentiles(times)
                print(f"{label:9s} recall@10 {interval(recalls)}  MRR {interval(rrs)}  "
                      f"hybrid search p50 {p50:.0f} ms p95 {p95:.0f} ms")
            pg_store.POSTINGS_PER_WORD = default
            store.close()
        for label, index in (("recall@10", 0), ("MRR", 1)):
            diff = [a - b for a, b in zip(per_query["postgres"][index], per_query["sqlite"][index], strict=True)]
            print(f"postgres - sqlite {label}: {interval(diff)} (paired)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("index", "scale", "retrieval"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--uniform", action="store_true", help="scale: uniform random vectors, not clustered")
    parser.add_argument("--corpus", type=Path, help="a folder to index (default: the pytest 8.0.0 sdist)")
    parser.add_argument("--per-word", type=int, nargs="*", default=[],
                        help="retrieval: PostgreSQL again reading only this many postings a word, "
                             "as a large index does")  # fmt: skip
    args = parser.parse_args()
    print(f"machine: {machine()}")
    if args.what == "scale":
        bench_scale(args.sizes, clustered=not args.uniform)
    elif args.what == "index":
        bench_index(args.corpus or fetch_corpus())
    else:
        bench_retrieval(args.corpus or fetch_corpus(), args.per_word)
    return 0


if __name__ == "__main__":
    sys.exit(main())
