"""Index any folder from scratch and time hybrid queries on it (e.g. CPython's ``Lib/``).

    .venv/bin/python bench/index_repo.py PATH [--queries 100] [--top-k 30]

Prints the full-index time, files, chunks and chunks/s, peak RSS, then the p50/p95 of
a query inside the process (the files server's query path: embedding the query, then
``hybrid_search``; both parts are also reported apart) over queries made from the index's own chunk titles
(a symbol name, e.g. ``parse_args``, or a chunk's first line), sampled with a fixed seed.
For CPython's ``Lib/`` point it at the standard library of a Python install, e.g.
``/usr/lib/python3.11`` (the copy indexed leaves out ``site-packages``).
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tributary.engine.index.embed import load_code_embedder
from tributary.engine.index.manager import index_repository
from tributary.engine.index.search import encode_query, hybrid_search
from tributary.engine.index.store import SearchFilter, SqliteStore


def copy_tree(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True,
                    ignore=shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc"))
    return target


def sample_queries(store: SqliteStore, count: int, seed: int = 0) -> list[str]:
    rows = store.conn.execute("SELECT COALESCE(symbol, ''), content FROM chunks").fetchall()
    rng = random.Random(seed)
    picked = rng.sample(rows, min(count, len(rows)))
    queries = []
    for i, (title, content) in enumerate(picked):
        first = next((line.strip() for line in str(content).splitlines() if line.strip()), "")
        queries.append(str(title) if i % 2 == 0 and title else first[:120])
    return [q for q in queries if q]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--top-k", type=int, default=30)
    parser.add_argument("--work-dir", type=Path, default=None,
                        help="keep the copy and its index here (default: a temporary folder, removed)")
    args = parser.parse_args()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="tributary-index-bench-"))
    repo = copy_tree(args.path, work / args.path.name)
    files = sum(1 for _ in repo.rglob("*") if _.is_file())

    t0 = time.perf_counter()
    embedder = load_code_embedder()
    embedder.encode(["warm up"])
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    stats = index_repository(repo, embedder=embedder, index_dir=work / "db")
    index_s = time.perf_counter() - t0
    print(f"{repo}: {files} files in the tree")
    print(f"model load {load_s:.1f} s; full index {index_s:.1f} s ({index_s / 60:.1f} min): "
          f"files {stats.files_indexed}, chunks {stats.chunks_written} "
          f"({stats.chunks_written / max(index_s, 1e-9):.0f} chunks/s), errors {len(stats.errors)}")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")

    store = SqliteStore(stats.index_path, readonly=True)
    queries = sample_queries(store, args.queries)
    encode_ms, search_ms, total_ms = [], [], []
    for query in queries:
        # The server's path first: the query embeds on the search's worker thread while
        # SQLite answers the keyword query. Then the two parts apart.
        t0 = time.perf_counter()
        hybrid_search(store, query, partial(encode_query, embedder, query), repo=repo.name,
                      top_k=args.top_k, where=SearchFilter())
        total_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        vector = embedder.encode([query])[0]
        t1 = time.perf_counter()
        hybrid_search(store, query, vector, repo=repo.name, top_k=args.top_k, where=SearchFilter())
        t2 = time.perf_counter()
        encode_ms.append((t1 - t0) * 1000)
        search_ms.append((t2 - t1) * 1000)
    store.close()
    print(f"hybrid query over {len(queries)} queries (top {args.top_k}), embedding included: "
          f"p50 {statistics.median(total_ms):.1f} ms, p95 {pct(total_ms, 0.95):.1f} ms")
    print(f"  apart: hybrid_search p50 {statistics.median(search_ms):.1f} ms, "
          f"p95 {pct(search_ms, 0.95):.1f} ms; query embedding p50 "
          f"{statistics.median(encode_ms):.1f} ms")
    if args.work_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
