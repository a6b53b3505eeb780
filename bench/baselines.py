"""Plain baselines for the commit-history benchmarks, to set the default engine against.

    .venv/bin/python bench/baselines.py DATASET_DIR [DATASET_DIR ...] [--cache DIR]

For each dataset (``queries.jsonl``, ``tasks.jsonl``, ``corpus.json``; the shared ones or
any ``tributary eval build`` made) it ranks files three ways, with SQLite FTS5's BM25
and nothing of Tributary's ranking:

- ``bm25-files``: BM25 over whole files (identifiers split, path included);
- ``bm25-tasks``: BM25 over the past tasks' messages, each task's files in its rank
  order (a task sees only tasks dated before its own query);
- ``rrf``: the two fused by reciprocal rank (k = 60).

It prints recall@10 and MRR over every query, with the file kinds the dataset's
relevance covers, so they stand beside the "all queries" columns of ``tributary eval
run``'s report for the same dataset.
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tributary.engine.eval.datasets import EvalQuery, EvalTask, corpus_root, load_dataset
from tributary.engine.eval.metrics import recall_at_k, reciprocal_rank
from tributary.engine.sqlite import sqlite3

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[a-z]+|\d+")
RRF_K = 60
DEPTH = 100


def words(text: str) -> str:
    """Identifiers split into lowercase words, the way a code-aware BM25 sees them."""
    return " ".join(w.lower() for w in _WORD.findall(text))


def match_expression(query: str) -> str:
    terms = sorted(set(words(query).split()))
    return " OR ".join(f'"{t}"' for t in terms) or '""'


def _files(root: Path, suffixes: frozenset[str] | None) -> Iterable[tuple[str, str]]:
    for path in sorted(root.rglob("*")):
        if not path.is_file() or ".git" in path.parts:
            continue
        if suffixes is not None and path.suffix.lower() not in suffixes:
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        rel = path.relative_to(root).as_posix()
        yield rel, f"{words(rel)} {words(text)}"


def _fts(rows: Iterable[tuple[str, str]]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, body)")
    conn.executemany("INSERT INTO docs(key, body) VALUES (?, ?)", rows)
    return conn


def _bm25(conn: sqlite3.Connection, query: str, limit: int) -> list[str]:
    rows = conn.execute(
        "SELECT key FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", (match_expression(query), limit)
    ).fetchall()
    return [str(key) for (key,) in rows]


def _task_files(conn: sqlite3.Connection, tasks: dict[str, EvalTask], query: EvalQuery) -> list[str]:
    ranked: list[str] = []
    for task_id in _bm25(conn, query.query, 1000):
        task = tasks[task_id]
        if query.date is not None and task.date >= query.date:
            continue
        ranked.extend(f for f in task.files if f not in ranked)
        if len(ranked) >= DEPTH:
            break
    return ranked[:DEPTH]


def rrf(lists: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    scores: dict[str, float] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, 1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda item: (-scores[item], item))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--cache", type=Path, help="where corpora are unpacked (default: the eval cache)")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print(f"{'dataset':<12} {'queries':>7}  {'baseline':<11} {'recall@10':>9} {'MRR':>6}")
    for folder in args.datasets:
        dataset = load_dataset(folder)
        suffixes = dataset.candidate_suffixes()
        root = corpus_root(dataset, args.cache)
        files = _fts(_files(root, suffixes))
        tasks = {t.id: t for t in dataset.tasks()}
        task_index = _fts((t.id, words(f"{t.title}\n{t.body}")) for t in tasks.values())
        runs: dict[str, list[list[str]]] = {"bm25-files": [], "bm25-tasks": [], "rrf": []}
        for query in dataset.queries:
            by_file = _bm25(files, query.query, DEPTH)
            by_task = [f for f in _task_files(task_index, tasks, query)
                       if suffixes is None or Path(f).suffix.lower() in suffixes]
            runs["bm25-files"].append(by_file)
            runs["bm25-tasks"].append(by_task)
            runs["rrf"].append(rrf([by_file, by_task]))
        for name, ranked in runs.items():
            recall = sum(recall_at_k(r, q.relevant, 10) for r, q in zip(ranked, dataset.queries, strict=True))
            mrr = sum(reciprocal_rank(r, q.relevant) for r, q in zip(ranked, dataset.queries, strict=True))
            n = len(dataset.queries) or 1
            print(f"{dataset.name:<12} {len(dataset.queries):>7}  {name:<11} {recall / n:>9.3f} {mrr / n:>6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
