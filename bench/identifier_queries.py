"""Identifier lookups: a query that is just a name, answered by where it is defined.

    .venv/bin/python bench/identifier_queries.py [--queries N] [--work-dir DIR] [--as-words]

The shared pytest benchmark asks in prose (commit messages). Developers also type a
bare name (``FixtureDef``, ``getfixturemarker``) and expect its definition first. This
benchmark builds such queries from the pytest corpus itself: every class, function and
method name that is defined exactly once in ``src/`` and ``testing/`` (found with
``ast``; names shorter than 6 characters and names starting with ``test`` left out), a fixed
random sample of them. The relevant answer is the defining chunk (the hit whose lines
hold the ``def``/``class`` line) and its file.

It runs the way ``tributary eval run`` does, on the same corpus, index and task history
(kept in its own work dir, so the prose benchmark's recorded runs stay as they are):
one call per query to each built-in server (``files``, ``tasks``), then the pipeline
over those hits as the engine would run it (routing's strategy and weights for the
query). Printed, for the files server alone and for the fused default: the share of
queries whose first result is the definition (``def@1``), whose top 10 holds it
(``def@10``), the definition's MRR, and the defining file's MRR.

``--as-words`` asks each name the way a person types it as words ("get fixture
marker" for ``get_fixture_marker``, "fixture def" for ``FixtureDef``), from a sample of
the public names made of two to four words.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tributary.engine.config.schema import Config
from tributary.engine.engine import Engine
from tributary.engine.eval.datasets import (
    EvalQuery,
    Span,
    corpus_root,
    earliest_query_date,
    load_dataset,
)
from tributary.engine.eval.retrieval import collect, default_work_dir, eval_config, prepare
from tributary.engine.model import Hit, SearchRequest
from tributary.engine.pipeline import run_pipeline

SHARED = Path(__file__).resolve().parents[2] / "shared" / "bench" / "pytest"
MIN_NAME = 6


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    path: str  # corpus-relative
    line: int  # the def/class line (after decorators)


def definitions(root: Path) -> list[Definition]:
    """Names defined exactly once in the corpus's ``src`` and ``testing`` Python files."""
    found: dict[str, list[Definition]] = {}
    for folder in ("src", "testing"):
        for file in sorted((root / folder).rglob("*.py")):
            try:
                tree = ast.parse(file.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError):
                continue
            rel = file.relative_to(root).as_posix()
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    found.setdefault(node.name, []).append(Definition(node.name, rel, node.lineno))
    return [
        places[0]
        for name, places in sorted(found.items())
        if len(places) == 1 and len(name) >= MIN_NAME and not name.startswith("test")
        and not (name.startswith("__") and name.endswith("__"))
    ]


_NAME_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def as_words(name: str) -> str | None:
    """``name`` as the words it is made of, lower case (``FixtureDef`` -> "fixture def");
    None for a private name or one of more than four words or fewer than two."""
    if name.startswith("_"):
        return None
    words = [w.lower() for part in name.split("_") for w in _NAME_WORD.findall(part)]
    return " ".join(words) if 2 <= len(words) <= 4 else None


def write_queries(dataset_dir: Path, chosen: list[Definition], date: str, words: bool = False) -> None:
    """A dataset folder beside the shared one: its corpus and tasks, these queries."""
    dataset_dir.mkdir(parents=True, exist_ok=True)
    for name in ("corpus.json", "tasks.jsonl"):
        # copy2 keeps the modification time: the index key holds it, so a rerun reuses the index
        shutil.copy2(SHARED / name, dataset_dir / name)
    with (dataset_dir / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for d in chosen:
            asked = (as_words(d.name) or d.name) if words else d.name
            query = EvalQuery(id=f"{d.path}:{d.line}", query=asked, relevant={d.path: 1.0},
                              spans=(Span(d.path, d.line, d.line, d.name),))
            handle.write(json.dumps({**query.to_json(), "date": date}) + "\n")


def rank_of(hits: list[Hit], path: str, line: int | None) -> int | None:
    """1-based rank of the first hit on ``path`` (holding ``line``, if given)."""
    for rank, hit in enumerate(hits, start=1):
        if hit.path != path:
            continue
        if line is None or (hit.start_line or 0) <= line <= (hit.end_line or 0):
            return rank
    return None


def figures(ranks: list[tuple[int | None, int | None]]) -> str:
    n = len(ranks)
    at1 = sum(1 for d, _ in ranks if d == 1) / n
    at10 = sum(1 for d, _ in ranks if d is not None and d <= 10) / n
    mrr = sum(1 / d for d, _ in ranks if d is not None and d <= 10) / n
    file_mrr = sum(1 / f for _, f in ranks if f is not None and f <= 10) / n
    return f"def@1 {at1:.3f}  def@10 {at10:.3f}  def MRR {mrr:.3f}  file MRR {file_mrr:.3f}"


async def run(args: argparse.Namespace) -> None:
    shared = load_dataset(SHARED)
    work = Path(args.work_dir) if args.work_dir else default_work_dir() / "identifiers"
    dataset_dir = work / "dataset" / "pytest"
    first = earliest_query_date(shared.queries)
    assert first is not None
    cache = default_work_dir() / "corpora"  # the corpus download, shared with `eval run`
    started = time.perf_counter()
    every = definitions(corpus_root(shared, cache))
    if args.as_words:
        every = [d for d in every if as_words(d.name)]
    chosen = random.Random(11).sample(every, min(args.queries, len(every)))
    write_queries(dataset_dir, chosen, first.isoformat(), args.as_words)
    dataset = load_dataset(dataset_dir)
    prepared = prepare(dataset, work_dir=work, cache_dir=cache)
    print(f"{len(chosen)} names (of {len(every)} defined once), "
          f"index and tasks ready in {time.perf_counter() - started:.0f} s", file=sys.stderr)

    config = eval_config(Config(), prepared.index_dir, prepared.sources)
    engine = Engine(config)
    try:
        started = time.perf_counter()
        runs = await collect(engine, dataset.queries, prepared.sources)
        asked = time.perf_counter() - started
    finally:
        await engine.aclose()

    files_only: list[tuple[int | None, int | None]] = []
    fused: list[tuple[int | None, int | None]] = []
    misses: list[str] = []
    for run_ in runs:
        span = run_.query.spans[0]
        own = run_.hits.get("files", [])
        files_only.append((rank_of(own, span.path, span.start_line), rank_of(own, span.path, None)))
        request = SearchRequest(query=run_.query.query, top_k=100, strategy=run_.strategy,
                                source_weights=run_.weights, assemble=False)
        ranked = run_pipeline(run_.hits, request, fusion=config.fusion, dedup=config.dedup).hits
        place = rank_of(ranked, span.path, span.start_line)
        fused.append((place, rank_of(ranked, span.path, None)))
        if place != 1:
            misses.append(f"  {run_.query.query:<40} definition at {place}, files server put it at "
                          f"{files_only[-1][0]}; first: {ranked[0].source} {ranked[0].path}:{ranked[0].start_line}"
                          if ranked else f"  {run_.query.query}: nothing")
    kind = "names asked as words" if args.as_words else "identifier queries"
    print(f"\n{len(runs)} {kind} on pytest 8.0.0 (servers asked in {asked:.0f} s)")
    print(f"{'files server alone':<22} {figures(files_only)}")
    print(f"{'fused (default)':<22} {figures(fused)}")
    if args.misses:
        print("\nwhere the definition is not first after fusion:")
        print("\n".join(misses[: args.misses]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--work-dir", default=None, help="default: <data dir>/eval/identifiers")
    parser.add_argument("--misses", type=int, default=15, help="list this many queries that missed")
    parser.add_argument("--as-words", action="store_true", help="ask each name as its words: 'fixture def'")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
