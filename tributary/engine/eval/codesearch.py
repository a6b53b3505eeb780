"""Annotated code-search datasets: short questions, the files (or spans) that answer them.

The format is the public one of MinishLab/semble's benchmark: a JSON list of
``{"query", "relevant": [...], "secondary": [...], "category"}`` where a target is a path
relative to the indexed folder, ``"path:START-END"`` or ``{"path", "start_line",
"end_line"}``; secondary targets count like relevant ones. Scored the way that benchmark
scores it, so figures stand beside the published ones:

- chunk protocol: the top 10 hits; a target's rank is that of the first hit in its file
  whose lines overlap its span (any hit of the file when it has none);
- file protocol: the hits reduced to distinct files in order of first hit, top 10;
- NDCG@10 with binary gains against min(10, targets) ideal hits; recall@10 the share of
  targets found; MRR the reciprocal rank of the first target found.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tributary.engine.errors import TributaryError

if TYPE_CHECKING:
    from tributary.engine.config.schema import Config, ServerConfig
    from tributary.engine.model import Hit

K = 10
PROTOCOLS = ("chunk", "file")
_SPAN = re.compile(r"^(?P<path>.+?):(?P<start>\d+)-(?P<end>\d+)$")


class AnnotationError(TributaryError):
    """An annotations file that cannot be read: says which file and which entry."""


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True, slots=True)
class CodeQuery:
    query: str
    targets: tuple[Target, ...]
    category: str = "other"


@dataclass(frozen=True, slots=True)
class Located:
    """What scoring needs of a hit: its file (relative to the indexed folder) and lines."""

    path: str
    start: int | None = None
    end: int | None = None


@dataclass(slots=True)
class Scores:
    ndcg: float
    recall: float
    mrr: float


@dataclass(slots=True)
class Summary:
    """Means over queries, overall and by category, for each protocol."""

    queries: int
    overall: dict[str, Scores] = field(default_factory=dict)
    by_category: dict[str, dict[str, Scores]] = field(default_factory=dict)


def _target(raw: Any, where: str) -> Target:
    if isinstance(raw, str):
        match = _SPAN.match(raw)
        if match:
            return Target(match["path"], int(match["start"]), int(match["end"]))
        return Target(raw)
    if isinstance(raw, dict) and isinstance(raw.get("path"), str):
        start, end = raw.get("start_line"), raw.get("end_line")
        if (start is None) != (end is None) or not all(isinstance(v, int) or v is None for v in (start, end)):
            raise AnnotationError(f"{where}: start_line and end_line must be whole numbers, both or neither")
        return Target(raw["path"], start, end)
    raise AnnotationError(f"{where}: a target is a path, 'path:START-END' or an object with a path")


def load_annotations(path: Path) -> list[CodeQuery]:
    """The queries of an annotations file, each with its relevant and secondary targets."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnnotationError(f"{path}: cannot read annotations: {exc}") from exc
    if not isinstance(data, list):
        raise AnnotationError(f"{path}: expected a JSON list of queries")
    queries: list[CodeQuery] = []
    for number, entry in enumerate(data, 1):
        where = f"{path}: entry {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("query"), str) or not entry["query"].strip():
            raise AnnotationError(f"{where}: needs a non-empty 'query'")
        raw = [*entry.get("relevant", []), *entry.get("secondary", [])]
        targets = tuple(dict.fromkeys(_target(t, where) for t in raw))
        if not targets:
            raise AnnotationError(f"{where}: no relevant targets")
        queries.append(CodeQuery(entry["query"], targets, str(entry.get("category") or "other")))
    return queries


def unreachable_targets(queries: Sequence[CodeQuery], code: Path, folder: str = ".") -> list[str]:
    """The target paths no search of ``folder`` in the checkout ``code`` can return: not a
    file there, or outside the folder indexed. A set scored against the wrong folder
    would score zero for every query, and say nothing of why."""
    root = code / folder
    missing: list[str] = []
    for path in dict.fromkeys(target.path for query in queries for target in query.targets):
        where = code / path
        if not where.is_file() or not where.resolve().is_relative_to(root.resolve()):
            missing.append(path)
    return missing


def _overlaps(hit: Located, target: Target) -> bool:
    if hit.path != target.path:
        return False
    if target.start is None or target.end is None or hit.start is None or hit.end is None:
        return True
    return hit.start <= target.end and target.start <= hit.end


def target_ranks(hits: Sequence[Located], targets: Sequence[Target], protocol: str) -> list[int | None]:
    """Each target's 1-based rank within the top ``K`` (None: not found there)."""
    if protocol == "file":
        files = list(dict.fromkeys(hit.path for hit in hits))[:K]
        return [files.index(t.path) + 1 if t.path in files else None for t in targets]
    top = hits[:K]
    return [next((rank for rank, hit in enumerate(top, 1) if _overlaps(hit, t)), None) for t in targets]


def score(ranks: Sequence[int | None]) -> Scores:
    found = sorted(r for r in ranks if r is not None)
    dcg = sum(1.0 / math.log2(r + 1) for r in found)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(K, len(ranks))))
    return Scores(
        ndcg=dcg / ideal if ideal else 0.0,
        recall=len(found) / len(ranks) if ranks else 0.0,
        mrr=1.0 / found[0] if found else 0.0,
    )


def _mean(scores: Sequence[Scores]) -> Scores:
    n = len(scores) or 1
    return Scores(
        sum(s.ndcg for s in scores) / n, sum(s.recall for s in scores) / n, sum(s.mrr for s in scores) / n
    )


def summarise(queries: Sequence[CodeQuery], ranked: Sequence[Sequence[Located]]) -> Summary:
    """Score every query's hits under both protocols; means overall and per category."""
    summary = Summary(queries=len(queries))
    for protocol in PROTOCOLS:
        per_query = [score(target_ranks(hits, q.targets, protocol)) for q, hits in zip(queries, ranked, strict=True)]
        summary.overall[protocol] = _mean(per_query)
        for category in sorted({q.category for q in queries}):
            chosen = [s for q, s in zip(queries, per_query, strict=True) if q.category == category]
            summary.by_category.setdefault(category, {})[protocol] = _mean(chosen)
    return summary


@dataclass(slots=True)
class CodeRun:
    """One dataset run: the summary, each query's located hits, and the index's timings."""

    summary: Summary
    ranked: list[list[Located]]
    index_s: float
    chunks: int


def hits_located(hits: Sequence[Hit], root: Path, files: frozenset[str], folder: str = ".") -> list[Located]:
    """Hits as paths relative to the checkout. Hits name their file ``<index>/<path>``:
    the eval's :class:`PathMapper` makes that relative to the indexed ``root`` (whose
    ``files`` it knows), and ``folder`` (the part indexed) goes back in front."""
    from tributary.engine.eval.retrieval import PathMapper

    mapper = PathMapper(root, files)
    prefix = "" if folder in ("", ".") else folder.strip("/") + "/"
    return [Located(prefix + path, hit.start_line, hit.end_line)
            for hit in hits if hit.path and (path := mapper(hit.path)) is not None]


async def run_code_dataset(
    queries: Sequence[CodeQuery],
    code: Path,
    *,
    folder: str = ".",
    index_dir: Path,
    config: Config | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    beside: Sequence[ServerConfig] = (),
    history: bool = False,
) -> CodeRun:
    """Index ``folder`` of the checkout ``code`` into ``index_dir`` (incrementally), ask the
    engine every query with the files source (and the servers ``beside`` it, fused with
    it), and score the top hits it returns against targets relative to the checkout.
    ``history``: the checkout's git history is imported too and the tasks source asked
    beside the files source, as the app asks both by default."""
    import time

    from tributary.engine.config.schema import Config as DefaultConfig
    from tributary.engine.engine import Engine
    from tributary.engine.eval.experiment import FILES, TASKS
    from tributary.engine.eval.retrieval import corpus_files, eval_config
    from tributary.engine.index.manager import index_repository
    from tributary.engine.model import SearchRequest

    root = (code.expanduser() / folder).resolve()
    started = time.perf_counter()
    stats = index_repository(root, index_dir=index_dir)
    if history:
        from tributary.engine.tasks.api import import_git_history

        import_git_history(root, indexes_dir=index_dir)
    index_s = time.perf_counter() - started
    files = corpus_files(root)
    built_in = [FILES, TASKS] if history else [FILES]
    settings = eval_config(config or DefaultConfig(), index_dir, built_in)
    settings = replace(settings, servers={**settings.servers, **{server.name: server for server in beside}})
    sources = [*built_in, *(server.name for server in beside)]
    engine = Engine(settings)
    ranked: list[list[Located]] = []
    try:
        await engine.pool.start(sources)
        for number, query in enumerate(queries, 1):
            request = SearchRequest(query.query, sources=sources, top_k=K, assemble=False, use_cache=False)
            response = await engine.search(request)
            ranked.append(hits_located(response.hits, root, files, folder))
            if on_progress is not None:
                on_progress("queries", number, len(queries))
    finally:
        await engine.aclose()
    return CodeRun(summarise(queries, ranked), ranked, index_s, stats.chunks_total)
