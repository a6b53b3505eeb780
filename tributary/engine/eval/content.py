"""Content-level evaluation: did the *code that changed* reach the ranked list and the context?

File-level recall scores a hit on the right file as perfect even when what represents
the file is a run of commit titles. Here the ground truth is the lines each query's
commit changed (``EvalQuery.spans``, the snapshot's line ranges: ``gitspans``); the
*gold chunks* are the index's chunks of the snapshot holding those lines, each
narrowed to the changed lines it holds (a gold unit). For the default configuration:

* context recall     share of gold units that a chunk of the assembled context (at
                     the default budget) overlaps;
* context precision  share of the context's chunk tokens that are code of a relevant
                     file (not commit messages, not another file) — needs no spans;
* chunk MRR          1 / rank of the first ranked hit overlapping a gold unit;
* chunk NDCG@10      binary gain for each of the first 10 hits that overlaps a gold unit
                     no earlier hit did.

Queries without spans count only for precision.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tributary.engine.eval.datasets import EvalQuery
from tributary.engine.eval.experiment import QueryRun
from tributary.engine.localsearch.db import connect
from tributary.engine.model import Hit, ScoreParts, SearchRequest, is_task
from tributary.engine.pipeline.dedup import is_file_reference
from tributary.engine.pipeline.run import PipelineResult, run_pipeline

PathMapper = Callable[[str], str | None]
Unit = tuple[str, int, int]  # path, first and last line
CHUNK_DEPTH = 10


@dataclass(frozen=True, slots=True)
class ContentScores:
    context_recall: float | None  # None: the query has no spans
    context_precision: float | None  # None: the context is empty
    chunk_mrr: float | None
    chunk_ndcg: float | None


def snapshot_chunks(index_files: Iterable[Path]) -> dict[str, list[tuple[int, int]]]:
    """Every chunk's line range per path, from the files indexes of the snapshot."""
    out: dict[str, list[tuple[int, int]]] = {}
    for index in index_files:
        conn = connect(index, readonly=True)
        try:
            rows = conn.execute(
                "SELECT f.path, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id"
            ).fetchall()
        finally:
            conn.close()
        for path, start, end in rows:
            out.setdefault(str(path), []).append((int(start), int(end)))
    return out


def gold_units(query: EvalQuery, chunks: Mapping[str, Sequence[tuple[int, int]]]) -> list[Unit]:
    """The query's gold chunks, each narrowed to the changed lines it holds."""
    units: set[Unit] = set()
    for span in query.spans:
        for start, end in chunks.get(span.path, ()):
            lo, hi = max(start, span.start_line), min(end, span.end_line)
            if lo <= hi:
                units.add((span.path, lo, hi))
    return sorted(units)


def _overlaps(hit_path: str | None, start: int | None, end: int | None, unit: Unit) -> bool:
    if hit_path != unit[0] or start is None:
        return False
    return start <= unit[2] and (end if end is not None else start) >= unit[1]


def _is_code_of(hit: Hit, relevant: set[str], path_of: PathMapper) -> bool:
    return (bool(hit.path) and not is_task(hit) and not is_file_reference(hit)
            and path_of(hit.path or "") in relevant)


def score_content(result: PipelineResult, query: EvalQuery, gold: Sequence[Unit], path_of: PathMapper) -> ContentScores:
    """The four figures of one query's pipeline result (see the module docstring)."""
    def mapped(hit: Hit) -> str | None:
        return path_of(hit.path) if hit.path else None

    by_id = {h.id: h for h in result.ranked}
    relevant = set(query.relevant)
    context = result.context
    precision: float | None = None
    in_context: list[Hit] = []
    if context is not None and context.chunks:
        total = sum(c.tokens for c in context.chunks)
        useful = 0
        for chunk in context.chunks:
            hit = by_id.get(chunk.hit_id)
            if hit is None:
                continue
            in_context.append(hit)
            if _is_code_of(hit, relevant, path_of):
                useful += chunk.tokens
        precision = useful / total if total else None
    elif context is not None:
        precision = 0.0
    if not gold:
        return ContentScores(None, precision, None, None)
    recalled = sum(
        any(_overlaps(mapped(h), h.start_line, h.end_line, unit) for h in in_context if not is_task(h))
        for unit in gold
    )
    first: int | None = None
    gains: list[float] = []
    credited: set[Unit] = set()
    for rank, hit in enumerate(result.ranked, 1):
        if is_task(hit):
            hits_units: list[Unit] = []
        else:
            hits_units = [u for u in gold if _overlaps(mapped(hit), hit.start_line, hit.end_line, u)]
        if hits_units and first is None:
            first = rank
        if rank <= CHUNK_DEPTH:
            new = [u for u in hits_units if u not in credited]
            gains.append(1.0 if new else 0.0)
            credited.update(new)
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(CHUNK_DEPTH, len(gold))))
    return ContentScores(recalled / len(gold), precision, 1.0 / first if first else 0.0, dcg / ideal if ideal else 0.0)


def default_context(run: QueryRun, request: SearchRequest | None = None) -> PipelineResult:
    """The pipeline over a query's raw hits as ``tributary context`` runs it: default
    budget, dedup, fusion, Markdown."""
    asked = request or SearchRequest(query=run.query.query, use_cache=False)
    hits = {s: [replace(h, parts=ScoreParts(), metadata=dict(h.metadata)) for h in found]
            for s, found in run.hits.items()}
    return run_pipeline(hits, replace(asked, query=run.query.query), weights=run.weights)


@dataclass(frozen=True, slots=True)
class ContentSummary:
    """Means over queries (of those a figure applies to) and how many it covers."""

    context_recall: float | None
    context_precision: float | None
    chunk_mrr: float | None
    chunk_ndcg: float | None
    with_spans: int
    queries: int

    def text(self) -> str:
        def show(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.3f}"

        return (f"context recall {show(self.context_recall)}, context precision "
                f"{show(self.context_precision)}, chunk MRR {show(self.chunk_mrr)}, chunk NDCG@10 "
                f"{show(self.chunk_ndcg)} ({self.with_spans} of {self.queries} queries with changed lines)")


def summarise(scores: Sequence[ContentScores]) -> ContentSummary:
    def mean(values: Iterable[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return statistics.fmean(present) if present else None

    return ContentSummary(
        context_recall=mean(s.context_recall for s in scores),
        context_precision=mean(s.context_precision for s in scores),
        chunk_mrr=mean(s.chunk_mrr for s in scores),
        chunk_ndcg=mean(s.chunk_ndcg for s in scores),
        with_spans=sum(s.context_recall is not None for s in scores),
        queries=len(scores),
    )


def evaluate_content(
    runs: Sequence[QueryRun], index_files: Iterable[Path], path_of: PathMapper
) -> dict[str, ContentScores]:
    """Per query id, the content figures of the default context."""
    chunks = snapshot_chunks(index_files)
    out: dict[str, ContentScores] = {}
    for run in runs:
        gold = gold_units(run.query, chunks)
        out[run.query.id] = score_content(default_context(run), run.query, gold, path_of)
    return out
