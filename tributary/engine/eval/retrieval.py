"""Raw retrieval for an experiment: index once, ask each real built-in server once per query.

``prepare`` materialises the corpus, indexes it and imports the dataset's task history
into an index folder of the evaluation's own (keyed by the dataset, reused by later
runs). ``collect`` then starts an ``Engine`` whose only sources are the built-in
``files`` and ``tasks`` MCP servers over that folder — the same subprocesses a user
gets — and sends every query to every source exactly once with a generous ``top_k``,
keeping each source's raw hits and the engine's routing decision (strategy and
weights) for the query. Variants are fused later, in-process, from these hits.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.engine import Engine
from tributary.engine.eval.datasets import (
    Dataset,
    EvalQuery,
    corpus_root,
    latest_query_date,
    visible_tasks,
)
from tributary.engine.eval.experiment import FILES, TASKS, QueryRun
from tributary.engine.index.progress import IndexProgress
from tributary.engine.model import Hit
from tributary.engine.paths import data_dir
from tributary.engine.repos.builtins import builtin_server
from tributary.engine.sources.fanout import gather_all

RAW_TOP_K = 100  # the pipeline's ceiling: every variant can re-rank this deep
FIRST_CALL_TIMEOUT_S = 120.0  # the first call may wait for a server to load its model
CALL_TIMEOUT_S = 30.0
CONCURRENCY = 2
WARM_UP_LIMIT_S = 90.0
WARM_CALL_MS = 2500.0  # a built-in waits ~3 s for a loading model, then answers on keywords

# The tool a built-in answers an evaluation with: the tasks server ranks *files*
# through ``files_for_task`` (``search_tasks`` returns tasks, which name no single file).
EVAL_TOOLS: dict[str, str] = {TASKS: "files_for_task", FILES: "search_code"}

Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass(slots=True)
class Prepared:
    """What a dataset needs before its queries can run."""

    corpus: Path
    index_dir: Path
    sources: list[str]
    timings_s: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    corpus_files: frozenset[str] = frozenset()
    work: Path | None = None  # this dataset's folder under the work dir
    generation: int = 0  # bumped each time indexing or the task import changed something


def default_work_dir() -> Path:
    return data_dir() / "eval"


def corpus_files(root: Path) -> frozenset[str]:
    """Every file under ``root`` (``.git`` left out), relative, in posix form."""
    found: set[str] = set()
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            found.add(Path(folder, name).relative_to(root).as_posix())
    return frozenset(found)


def _tasks_file(dataset: Dataset, work: Path) -> tuple[Path | None, int, int]:
    """The task history to import: every task dated before the last query. Each query
    then sees only the tasks dated before itself (the ``before`` its calls pass).

    Returns the file (``None`` when there are no tasks), the tasks kept and dropped.
    """
    tasks = list(dataset.tasks())
    if not tasks:
        return None, 0, 0
    last = latest_query_date(dataset.queries)
    kept = visible_tasks(tasks, last) if last is not None else tasks
    if len(kept) == len(tasks):
        return dataset.tasks_path, len(kept), 0
    work.mkdir(parents=True, exist_ok=True)
    path = work / "tasks.visible.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for task in kept:
            handle.write(json.dumps(task.to_json(), ensure_ascii=False) + "\n")
    return path, len(kept), len(tasks) - len(kept)


def prepare(
    dataset: Dataset,
    *,
    work_dir: Path | None = None,
    cache_dir: Path | None = None,
    on_progress: Progress | None = None,
) -> Prepared:
    """Materialise the corpus, index it and import its tasks (each step reused when done)."""
    from tributary.engine.index.manager import index_repository
    from tributary.engine.tasks.api import import_tasks_jsonl

    work = (work_dir or default_work_dir()) / "runs" / f"{dataset.name}-{dataset.fingerprint()}"
    index_dir = work / "indexes"
    index_dir.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}

    started = time.perf_counter()
    root = corpus_root(dataset, cache_dir or (work_dir or default_work_dir()) / "corpora")
    timings["corpus_s"] = time.perf_counter() - started

    started = time.perf_counter()
    index_stats = index_repository(root, on_progress=_adapt(on_progress, "index"), index_dir=index_dir)
    timings["index_s"] = time.perf_counter() - started
    sources = [FILES]
    changed = bool(index_stats.files_indexed or index_stats.files_deleted or index_stats.model_reset)

    notes: list[str] = []
    tasks_path, kept, dropped = _tasks_file(dataset, work)
    if tasks_path is not None:
        notes.append(f"{kept} tasks imported; each query sees only those dated before it")
    if dropped:
        notes.append(f"{dropped} tasks dated at or after the last query were left out")
    if tasks_path is not None:
        started = time.perf_counter()
        stats = import_tasks_jsonl(root, tasks_path, indexes_dir=index_dir,
                                   on_progress=on_progress and (lambda p, d, t: on_progress(f"tasks {p}", d, t)))
        timings["tasks_s"] = time.perf_counter() - started
        if stats.skipped:
            notes.append(f"{stats.skipped} task lines could not be read")
        sources.append(TASKS)
        changed = changed or stats.changed > 0
    generation = _bump_generation(work) if changed else _generation(work)
    return Prepared(corpus=root, index_dir=index_dir, sources=sources, timings_s=timings,
                    notes=notes, corpus_files=corpus_files(root), work=work, generation=generation)


def _generation(work: Path) -> int:
    """How many times this dataset's indexes changed: raw hits are cached per generation
    (the index files' own times change whenever a server reads them, so they cannot say)."""
    try:
        return int((work / "generation").read_text().strip())
    except (OSError, ValueError):
        return 0


def _bump_generation(work: Path) -> int:
    value = _generation(work) + 1
    (work / "generation").write_text(f"{value}\n", encoding="utf-8")
    return value


def _adapt(on_progress: Progress | None, phase: str) -> Callable[[IndexProgress], None] | None:
    if on_progress is None:
        return None

    def forward(event: IndexProgress) -> None:
        on_progress(phase, event.files_done, event.files_total)

    return forward


def eval_config(base: Config, index_dir: Path, sources: Iterable[str]) -> Config:
    """``base`` (fusion, dedup, routing) with only the built-ins over ``index_dir`` as servers.

    A user's tuning of a built-in (weight, timeout, enabled) carries over; the cache is
    off so every query reaches the servers.
    """
    servers: dict[str, ServerConfig] = {}
    for name in sources:
        server = builtin_server(name, index_dir)
        user = base.servers.get(name)
        if user is not None and user.builtin == name:
            server = replace(server, weight=user.weight, timeout=user.timeout)
        servers[name] = replace(server, tool=server.tool or EVAL_TOOLS.get(name))
    return replace(base, servers=servers, cache=replace(base.cache, backend="off"))


class PathMapper:
    """Turns a hit's path into a corpus-relative path the dataset's relevance uses."""

    def __init__(
        self, root: Path, files: frozenset[str], candidates: frozenset[str] | None = None
    ) -> None:
        self.root = root.resolve()
        self.files = files
        self.candidates = candidates  # suffixes that can be relevant; None: every file

    def __call__(self, path: str) -> str | None:
        mapped = self._relative(path)
        if self.candidates is not None and PurePosixPath(mapped).suffix.lower() not in self.candidates:
            return None  # not a kind of file the dataset's relevance covers: not ranked
        return mapped

    def _relative(self, path: str) -> str:
        candidate = Path(path)
        if candidate.is_absolute():
            try:
                return candidate.resolve().relative_to(self.root).as_posix()
            except ValueError:
                return candidate.as_posix()
        text = candidate.as_posix().removeprefix("./")
        if not self.files or text in self.files:
            return text
        parts = text.split("/")
        for i in range(1, len(parts)):  # a repository label in front ("pytest-8.0.0/src/...")
            tail = "/".join(parts[i:])
            if tail in self.files:
                return tail
        return text


async def collect(
    engine: Engine,
    queries: Sequence[EvalQuery],
    sources: Sequence[str],
    *,
    top_k: int = RAW_TOP_K,
    concurrency: int = CONCURRENCY,
    on_progress: Progress | None = None,
) -> list[QueryRun]:
    """Every query to every source once; raw hits and the engine's routing per query."""
    weights_of = {s.name: s.weight for s in engine.effective_config.servers.values()}
    await engine.pool.start(list(sources))
    await warm_up(engine, sources)
    runs: list[QueryRun | None] = [None] * len(queries)
    if queries:
        runs[0] = await _one(engine, queries[0], sources, top_k, FIRST_CALL_TIMEOUT_S, weights_of)
    done = 1
    gate = asyncio.Semaphore(concurrency)

    async def worker(i: int) -> None:
        nonlocal done
        async with gate:
            runs[i] = await _one(engine, queries[i], sources, top_k, CALL_TIMEOUT_S, weights_of)
        done += 1
        if on_progress is not None:
            on_progress("queries", done, len(queries))

    await asyncio.gather(*(worker(i) for i in range(1, len(queries))))
    return [r for r in runs if r is not None]


async def warm_up(engine: Engine, sources: Sequence[str], *, limit_s: float = WARM_UP_LIMIT_S) -> None:
    """Wait until every source answers at full strength before any measured query.

    The built-ins answer on keywords alone while their embedding model loads, after
    waiting up to ~3 s for it; a call that comes back sooner than that found the model
    ready, so throwaway queries are repeated (within ``limit_s``) until one does.
    """
    deadline = time.monotonic() + limit_s
    pending = list(sources)
    while pending and time.monotonic() < deadline:
        results = await gather_all(engine.pool, pending, "warm up", top_k=1,
                                   timeout=FIRST_CALL_TIMEOUT_S)
        pending = [r.name for r in results
                   if r.ok and (r.report.latency_ms or 0.0) >= WARM_CALL_MS]


def query_scope(query: EvalQuery) -> dict[str, str]:
    """What a query's calls may see: the tasks dated before it (sent only to the tools
    that take ``before``: the task history's)."""
    return {"before": query.date.isoformat()} if query.date is not None else {}


async def _one(
    engine: Engine,
    query: EvalQuery,
    sources: Sequence[str],
    top_k: int,
    timeout: float,
    weights_of: Mapping[str, float],
) -> QueryRun:
    results = await gather_all(engine.pool, sources, query.query, top_k=top_k, timeout=timeout,
                               scope=query_scope(query))
    decision = engine.route(query.query, list(sources))
    run = QueryRun(
        query=query,
        hits={},
        strategy=decision.strategy or engine.config.fusion.strategy,
        weights={s: weights_of.get(s, 1.0) * decision.weights.get(s, 1.0) for s in sources},
        query_class=decision.query_class,
    )
    for result in results:
        if result.report.latency_ms is not None:
            run.latency_ms[result.name] = result.report.latency_ms
        if result.ok:
            run.hits[result.name] = result.hits
        else:
            run.errors[result.name] = result.report.error or str(result.report.status)
            run.hits[result.name] = []
    return run


# --------------------------------------------------------------------------- raw-hit cache


def _hit_json(hit: Hit) -> dict[str, Any]:
    return {
        "id": hit.id, "source": hit.source, "tool": hit.tool, "title": hit.title,
        "content": hit.content, "path": hit.path, "start_line": hit.start_line,
        "end_line": hit.end_line, "uri": hit.uri,
        "timestamp": hit.timestamp.isoformat() if hit.timestamp else None,
        "source_score": hit.source_score, "source_rank": hit.source_rank,
        "priority": hit.priority, "metadata": hit.metadata,
    }


def _hit_from(row: Mapping[str, Any]) -> Hit:
    stamp = row.get("timestamp")
    return Hit(
        id=str(row["id"]), source=str(row["source"]), tool=str(row["tool"]), title=str(row["title"]),
        content=str(row["content"]), path=row.get("path"), start_line=row.get("start_line"),
        end_line=row.get("end_line"), uri=row.get("uri"),
        timestamp=datetime.fromisoformat(stamp) if stamp else None,
        source_score=row.get("source_score"), source_rank=int(row.get("source_rank") or 0),
        priority=row.get("priority"), metadata=dict(row.get("metadata") or {}),
    )


@functools.cache
def engine_code_digest() -> str:
    """A digest of the engine's own source: the servers that answered are this code, so
    raw hits kept from another version of it are not this version's answers."""
    digest = hashlib.blake2b(digest_size=10)
    root = Path(__file__).resolve().parent.parent
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def raw_cache_key(prepared: Prepared, config: Config, queries: Sequence[EvalQuery], top_k: int) -> str:
    """Changes with the indexes (their generation), the servers, the queries and the
    engine's code."""
    digest = hashlib.blake2b(digest_size=10)
    digest.update(f"{prepared.index_dir}:{prepared.generation}:{engine_code_digest()}".encode())
    for name in sorted(config.servers):
        server = config.servers[name]
        digest.update(f"{name}:{server.tool}:{server.weight}:{server.args}".encode())
    digest.update(f"{top_k}:{','.join(q.id for q in queries)}".encode())
    digest.update(f"scope:{','.join(str(query_scope(q)) for q in queries)}".encode())
    return digest.hexdigest()


def raw_runs_path(prepared: Prepared, config: Config, queries: Sequence[EvalQuery], top_k: int) -> Path:
    """Where the raw hits of this corpus, config and query set are kept between runs."""
    folder = (prepared.work or prepared.index_dir) / "raw"
    return folder / (raw_cache_key(prepared, config, queries, top_k) + ".jsonl")


def save_runs(path: Path, runs: Sequence[QueryRun]) -> None:
    """The raw hits of every query, one JSON line each (data only: never pickled)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for run in runs:
            handle.write(json.dumps({
                "id": run.query.id, "strategy": run.strategy, "weights": run.weights,
                "latency_ms": run.latency_ms, "errors": run.errors, "query_class": run.query_class,
                "hits": {s: [_hit_json(h) for h in hits] for s, hits in run.hits.items()},
            }, ensure_ascii=False) + "\n")
    tmp.replace(path)


def load_runs(path: Path, queries: Sequence[EvalQuery]) -> list[QueryRun] | None:
    """Runs saved by ``save_runs`` for exactly these queries, or ``None``."""
    if not path.is_file():
        return None
    by_id = {q.id: q for q in queries}
    runs: list[QueryRun] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            query = by_id.get(str(row["id"]))
            if query is None:
                return None
            runs.append(QueryRun(
                query=query,
                hits={s: [_hit_from(h) for h in hits] for s, hits in row["hits"].items()},
                strategy=str(row["strategy"]), weights=dict(row["weights"]),
                latency_ms=dict(row["latency_ms"]), errors=dict(row["errors"]),
                query_class=row.get("query_class"),
            ))
    return runs if len(runs) == len(queries) else None
