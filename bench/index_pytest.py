"""Index the pytest 8.0.0 sdist and score files-only retrieval on its 195 queries.

Prints: full-index time, chunks/s, peak RSS, re-index time after editing one file,
hybrid query p50 (in-process), and recall@10 / MRR over files (a file's rank is the
rank of its first hit) for dense-only, BM25-only and the hybrid the files server uses.

    .venv/bin/python bench/index_pytest.py [--fresh] [--top-k 30]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tributary.engine.index.embed import load_code_embedder  # noqa: E402
from tributary.engine.index.indexer import Indexer  # noqa: E402
from tributary.engine.index.manager import index_path_for, index_repository  # noqa: E402
from tributary.engine.index.search import Weights, hybrid_search  # noqa: E402
from tributary.engine.index.store import SearchFilter, SqliteStore  # noqa: E402
from tributary.engine.localsearch.embedder import Embedder  # noqa: E402

DATA = ROOT / ".bench-data"
BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench" / "pytest"  # beside the checkout
SDIST = "pytest-8.0.0"


def fetch_corpus() -> Path:
    target = DATA / SDIST
    if target.is_dir():
        return target
    DATA.mkdir(exist_ok=True)
    archive = DATA / f"{SDIST}.tar.gz"
    if not archive.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             "pytest==8.0.0", "-d", str(DATA), "-q"],
            check=True,
        )  # fmt: skip
    with tarfile.open(archive) as tar:
        tar.extractall(DATA, filter="data")
    return target


def ranked_files(paths: list[str]) -> list[str]:
    return list(dict.fromkeys(paths))


def score(rankings: list[list[str]], queries: list[dict[str, object]]) -> tuple[float, float]:
    recalls, rrs = [], []
    for files, query in zip(rankings, queries, strict=True):
        relevant = set(query["relevant"])  # type: ignore[arg-type]
        top = files[:10]
        recalls.append(len(relevant & set(top)) / len(relevant))
        rr = 0.0
        for rank, path in enumerate(files, start=1):
            if path in relevant:
                rr = 1.0 / rank
                break
        rrs.append(rr)
    return statistics.mean(recalls), statistics.mean(rrs)


VARIANTS: dict[str, Weights] = {
    "rrf(dense,bm25)": Weights(1.0, 1.0, 0.0),
    "rrf(dense,bm25,file 0.5)": Weights(1.0, 1.0, 0.5),
    "rrf(dense,bm25,file 1)": Weights(1.0, 1.0, 1.0),
    "rrf(dense,bm25,file 2)": Weights(1.0, 1.0, 2.0),
    "rrf(dense 1.5,bm25,file 1)": Weights(1.5, 1.0, 1.0),
}


def evaluate(embedder: Embedder, index_path: Path, top_k: int) -> None:
    queries = [json.loads(line) for line in (BENCH / "queries.jsonl").read_text().splitlines()]
    store = SqliteStore(index_path, readonly=True)
    where = SearchFilter()
    t0 = time.perf_counter()
    vectors = embedder.encode([q["query"] for q in queries])
    encode_ms = (time.perf_counter() - t0) * 1000 / len(queries)
    single = []
    for q in queries[:20]:
        t0 = time.perf_counter()
        embedder.encode([q["query"]])
        single.append((time.perf_counter() - t0) * 1000)
    pool = 200
    dense_r, bm25_r = [], []
    for query, vector in zip(queries, vectors, strict=True):
        dense = store.dense_search(vector, pool, where)
        keyword = store.keyword_search(query["query"], pool, where)
        chunk_ids = {cid for cid, _ in dense} | {cid for cid, _ in keyword}
        paths = {cid: c.path for cid, c in store.chunks_by_id(list(chunk_ids)).items()}
        dense_r.append(ranked_files([paths[c] for c, _ in dense if c in paths]))
        bm25_r.append(ranked_files([paths[c] for c, _ in keyword if c in paths]))
    for name, ranking in (("dense chunks", dense_r), ("bm25 chunks", bm25_r)):
        r10, mrr = score(ranking, queries)
        print(f"{name:28s} recall@10 {r10:.3f}  MRR {mrr:.3f}")
    for name, weights in VARIANTS.items():
        ranking, times = [], []
        for query, vector in zip(queries, vectors, strict=True):
            t0 = time.perf_counter()
            hits = hybrid_search(
                store,
                query["query"],
                vector,
                repo="pytest",
                top_k=top_k,
                where=where,
                weights=weights,
            )
            times.append((time.perf_counter() - t0) * 1000)
            ranking.append(ranked_files([h.path for h in hits]))
        r10, mrr = score(ranking, queries)
        default = "  <- default" if weights == Weights() else ""
        print(
            f"{name:28s} recall@10 {r10:.3f}  MRR {mrr:.3f}  search p50 "
            f"{statistics.median(times):.1f} ms{default}"
        )
    print(
        f"query encode: {statistics.median(single):.1f} ms p50 one at a time "
        f"({encode_ms:.1f} ms/query batched)"
    )
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    store.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fresh", action="store_true", help="delete the index first")
    parser.add_argument("--top-k", type=int, default=50, help="chunks asked per query")
    parser.add_argument("--workdir", type=Path, default=DATA / "indexes")
    parser.add_argument("--eval-only", action="store_true", help="score the existing index")
    args = parser.parse_args()
    if args.eval_only:
        repo = args.workdir / "repo" / SDIST
        evaluate(
            load_code_embedder(), index_path_for(repo, directory=args.workdir / "db"), args.top_k
        )
        return 0

    corpus = fetch_corpus()
    # Index a private copy so the edit-one-file step never touches the pristine corpus.
    repo = args.workdir / "repo" / SDIST
    if args.fresh and args.workdir.exists():
        shutil.rmtree(args.workdir)
    if not repo.exists():
        shutil.copytree(corpus, repo, symlinks=True)
    index_dir = args.workdir / "db"

    t0 = time.perf_counter()
    embedder = load_code_embedder()
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    stats = index_repository(repo, embedder=embedder, index_dir=index_dir)
    index_s = time.perf_counter() - t0
    print(f"model load: {load_s:.2f} s ({getattr(embedder, 'precision', '?')}, {embedder.version})")
    print(
        f"full index: {index_s:.2f} s  files {stats.files_indexed}/{stats.files_seen}  "
        f"chunks {stats.chunks_written} (embedded {stats.chunks_embedded})  "
        f"{stats.chunks_written / max(index_s, 1e-9):.0f} chunks/s"
    )
    print(f"load + index: {load_s + index_s:.2f} s")

    # Re-index after editing one file.
    target = repo / "src/_pytest/junitxml.py"
    original = target.read_text()
    target.write_text(original.replace("def bin_xml_escape", "def bin_xml_escape_edited", 1))
    t0 = time.perf_counter()
    edit_stats = index_repository(repo, embedder=embedder, index_dir=index_dir)
    edit_s = time.perf_counter() - t0
    # The watcher's path: re-check just the edited file, no walk of the tree.
    store = SqliteStore(index_path_for(repo, directory=index_dir))
    indexer = Indexer(store, repo, embedder)
    target.write_text(original.replace("def bin_xml_escape", "def bin_xml_escape_again", 1))
    t0 = time.perf_counter()
    watch_stats = indexer.update_paths(["src/_pytest/junitxml.py"])
    watch_s = time.perf_counter() - t0
    target.write_text(original)
    indexer.update_paths(["src/_pytest/junitxml.py"])
    store.close()
    print(
        f"re-index one edited file (watcher path, no walk): {watch_s * 1000:.0f} ms "
        f"(chunks embedded {watch_stats.chunks_embedded})"
    )
    print(
        f"re-index after editing one file (full walk): {edit_s * 1000:.0f} ms "
        f"(files {edit_stats.files_indexed}, chunks embedded {edit_stats.chunks_embedded})"
    )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS so far: {peak_mb:.0f} MB")

    evaluate(embedder, index_path_for(repo, directory=index_dir), args.top_k)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
