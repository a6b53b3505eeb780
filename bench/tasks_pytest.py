"""Task history on the shared benchmarks: import time and files-from-tasks quality.

For each benchmark (default: pytest and click under ../shared/bench): import its
``tasks.jsonl`` with the default embedder (timed: parse + FTS + embeddings), record
the sdist's files as the repository snapshot, then run every query through
``files_for_task`` with ``as_of`` = the query's date, and print recall@10 and MRR
over files (a file's rank is its first position) for a table of variants, with
the default split into two halves (odd/even queries) to show it is not tuned to
one of them. Also the in-process p50 latency of ``files_for_task``.

    .venv/bin/python bench/tasks_pytest.py [pytest click] [--fresh] [--work-dir DIR] [--threads N]

``--threads`` defaults to 1: on a busy machine torch's intra-op threads encode several
times slower than one thread (docs/benchmarks.md).

"prefer code" rows use ``FileRankParams.non_code_weight``: a general option that
down-weights files whose extension is not a programming language's (docs, config);
the default configuration leaves it off (1.0).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tarfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tributary.engine.index.embed import load_default_embedder  # noqa: E402
from tributary.engine.tasks import import_tasks_jsonl, open_index, tasks_db_path  # noqa: E402
from tributary.engine.tasks.model import TaskHit, parse_date  # noqa: E402
from tributary.engine.tasks.ranking import (  # noqa: E402
    DEFAULT_FILE_RANK,
    FileRankParams,
    PathResolver,
    TouchCounts,
    rank_files,
)
from tributary.engine.tasks.search import TaskIndex, TaskSearchParams  # noqa: E402

BENCH = ROOT.parent / "shared" / "bench"
DATA = ROOT / ".bench-data"


def fetch_corpus(bench: Path) -> Path:
    """The benchmark's sdist, unpacked (downloaded once with pip, like bench/index_pytest.py)."""
    meta = json.loads((bench / "corpus.json").read_text())
    target = DATA / meta["sdist_root"]
    if target.is_dir():
        return target
    DATA.mkdir(exist_ok=True)
    archive = DATA / f"{meta['sdist_root']}.tar.gz"
    if not archive.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             meta["pypi"], "-d", str(DATA), "-q"],
            check=True,
        )  # fmt: skip
    with tarfile.open(archive) as tar:
        tar.extractall(DATA, filter="data")
    return target


def score(rankings: list[list[str]], queries: list[dict[str, Any]]) -> tuple[float, float]:
    recalls, rrs = [], []
    for files, query in zip(rankings, queries, strict=True):
        relevant = set(query["relevant"])
        recalls.append(len(relevant & set(files[:10])) / len(relevant))
        rrs.append(next((1 / i for i, f in enumerate(files, 1) if f in relevant), 0.0))
    return statistics.fmean(recalls), statistics.fmean(rrs)


def run_bench(name: str, work: Path, fresh: bool) -> None:
    bench = BENCH / name
    corpus = fetch_corpus(bench)
    queries = [json.loads(line) for line in (bench / "queries.jsonl").open()]
    db = tasks_db_path(corpus, work)
    if fresh and db.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    model = load_default_embedder()
    started = time.perf_counter()
    stats = import_tasks_jsonl(corpus, bench / "tasks.jsonl", indexes_dir=work, embedder=model)
    took = time.perf_counter() - started
    rate = stats.embedded / took if stats.embedded else 0.0
    print(f"\n== {name}: {stats.read} tasks read, {stats.added} added, {stats.unchanged} unchanged, "
          f"{stats.embedded} embedded in {took:.1f} s ({rate:.0f} tasks/s, "
          f"{getattr(model, 'precision', '?')}), skipped {stats.skipped}")  # fmt: skip

    with open_index(corpus, indexes_dir=work, embedder=model) as index:
        latencies = []
        for query in queries[:60]:
            t0 = time.perf_counter()
            index.files_for_task(query["query"], 10, as_of=parse_date(query["date"]))
            latencies.append((time.perf_counter() - t0) * 1000)
        print(f"files_for_task p50 {statistics.median(latencies):.1f} ms in-process "
              f"(hybrid, 300 candidate tasks each side)")  # fmt: skip
        evaluate_variants(index, queries, corpus)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


def evaluate_variants(index: TaskIndex, queries: list[dict[str, Any]], corpus: Path) -> None:
    top = DEFAULT_FILE_RANK.top_tasks
    hits: dict[str, list[list[TaskHit]]] = {}
    for mode in ("hybrid", "bm25", "dense"):
        params = TaskSearchParams(mode=mode)
        hits[mode] = [
            index.search(q["query"], top, as_of=parse_date(q["date"]), params=params)
            for q in queries
        ]
    collection = index.store.collection
    saved = collection.keywords
    collection.keywords = replace(saved, weights=(saved.weights[0], saved.weights[1], 0.0))  # no path tokens
    try:
        for mode in ("hybrid", "bm25"):
            params = TaskSearchParams(mode=mode)
            hits[mode + "-nopaths"] = [
                index.search(q["query"], top, as_of=parse_date(q["date"]), params=params)
                for q in queries
            ]
    finally:
        collection.keywords = saved
    snapshot = index.resolver()
    raw = PathResolver(index.store.renames(), None)
    touches = {id(snapshot): TouchCounts(index.store.file_touches(), snapshot),
               id(raw): TouchCounts(index.store.file_touches(), raw)}  # fmt: skip
    d = DEFAULT_FILE_RANK
    variants: list[tuple[str, str, FileRankParams, PathResolver]] = [
        ("default: hybrid, all signals", "hybrid", d, snapshot),
        ("BM25 tasks only", "bm25", d, snapshot),
        ("dense tasks only", "dense", d, snapshot),
        ("BM25 tasks only, no path tokens", "bm25-nopaths", d, snapshot),
        ("hybrid, BM25 without path tokens", "hybrid-nopaths", d, snapshot),
        ("hybrid, no recency", "hybrid", replace(d, recency=0.0), snapshot),
        ("hybrid, no task-size normalisation", "hybrid", replace(d, alpha=0.0), snapshot),
        ("hybrid, alpha=1 (1/files)", "hybrid", replace(d, alpha=1.0), snapshot),
        ("hybrid, no popularity prior", "hybrid", replace(d, popularity=0.0), snapshot),
        ("hybrid, flat rank weights (k=60)", "hybrid", replace(d, rank_k=60.0), snapshot),
        ("hybrid, weights = cosine", "hybrid", replace(d, use_similarity=True), snapshot),
        ("hybrid, top 50 tasks", "hybrid", replace(d, top_tasks=50), snapshot),
        ("hybrid, no snapshot (raw paths)", "hybrid", d, raw),
        ("hybrid, prefer code 0.3", "hybrid", replace(d, non_code_weight=0.3), snapshot),
        ("hybrid, code files only", "hybrid", replace(d, non_code_weight=0.0), snapshot),
        ("BM25, code files only", "bm25", replace(d, non_code_weight=0.0), snapshot),
        ("README-like baseline (BM25, 1/rank, raw)", "bm25",
         FileRankParams(rank_k=0.0, alpha=0.0, recency=0.0, popularity=0.0), raw),
    ]  # fmt: skip
    print(f"{'variant':44} {'R@10':>6} {'MRR':>6}   {'odd R/MRR':>13} {'even R/MRR':>13}")
    for label, mode, params, resolver in variants:
        rankings = []
        for query, found in zip(queries, hits[mode], strict=True):
            when = parse_date(query["date"]).timestamp()
            counter = touches[id(resolver)].counter(when)
            ranked = rank_files(found, query_time=when, params=params, resolver=resolver,
                                touched=counter)  # fmt: skip
            rankings.append([f.path for f in ranked[:100]])
        recall, mrr = score(rankings, queries)
        odd = score(rankings[0::2], queries[0::2])
        even = score(rankings[1::2], queries[1::2])
        print(f"{label:44} {recall:6.3f} {mrr:6.3f}   {odd[0]:.3f}/{odd[1]:.3f}   "
              f"{even[0]:.3f}/{even[1]:.3f}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", default=["pytest", "click"])
    parser.add_argument("--work-dir", default=str(DATA / "tasks"), help="task databases")
    parser.add_argument("--fresh", action="store_true", help="re-import (times the embedding)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch intra-op threads (1: far faster on a busy 2-core machine)",
    )
    args = parser.parse_args()
    if args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    for name in args.names:
        run_bench(name, Path(args.work_dir), args.fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
