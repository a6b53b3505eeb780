"""Searching one task-history store: similar tasks (hybrid BM25 + embeddings), files.

:class:`TaskIndex` keeps the store, the embedder and the path resolver open between
queries — the tasks MCP server holds one per repository.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tributary.engine.localsearch.embedder import Embedder, ModelInfo
from tributary.engine.localsearch.fusion import best_first, rrf
from tributary.engine.localsearch.longquery import embedding_text
from tributary.engine.tasks.model import FileScore, TaskHit
from tributary.engine.tasks.ranking import (
    DEFAULT_FILE_RANK,
    FileRankParams,
    PathResolver,
    TouchCounts,
    rank_files,
)
from tributary.engine.tasks.store import TaskStore

if TYPE_CHECKING:
    from tributary.engine.tasks.history import TaskHistory

log = logging.getLogger(__name__)

MODES = ("hybrid", "bm25", "dense")


@dataclass(frozen=True, slots=True)
class TaskSearchParams:
    """How similar tasks are found (defaults chosen on bench/tasks_pytest.py)."""

    mode: str = "hybrid"  # hybrid | bm25 | dense
    candidates: int = 300  # from each of BM25 and the vector index
    rrf_k: float = 60.0
    bm25_weight: float = 1.0
    dense_weight: float = 1.0


DEFAULT_SEARCH = TaskSearchParams()


def _as_of_ts(as_of: datetime | float | None) -> int | None:
    if as_of is None:
        return None
    return int(as_of.timestamp() if isinstance(as_of, datetime) else as_of)


class TaskIndex:
    """A repository's task history, open for searching."""

    def __init__(
        self,
        db_path: Path | str | TaskHistory,
        *,
        embedder: Embedder | None = None,
        load_embedder: bool = True,
        readonly: bool = False,
        check_same_thread: bool = True,
    ) -> None:
        self.store: TaskHistory = (
            TaskStore(db_path, readonly=readonly, check_same_thread=check_same_thread)
            if isinstance(db_path, Path | str)
            else db_path  # an open store of either backend (tributary.engine.tasks.history)
        )
        self._updated_at: str | None = None
        self._embedder = embedder
        self._load_embedder = load_embedder
        self._resolver: PathResolver | None = None
        self._touches: TouchCounts | None = None

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> TaskIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def embedder(self) -> Embedder | None:
        """The embedder matching the stored vectors (loaded once), or None for BM25 only."""
        if self._embedder is None and self._load_embedder and self.store.has_vectors():
            from tributary.engine.index.embed import load_default_embedder

            self._embedder = load_default_embedder()
        if self._embedder is not None and self.store.has_vectors():
            stored, mine = self.store.model(), ModelInfo.of(self._embedder)
            if stored != mine:
                log.warning("task vectors were made by %s, not %s: BM25 only",
                            stored.signature if stored else None, mine.signature)
                return None
        return self._embedder if self.store.has_vectors() else None

    def use_embedder(self, embedder: Embedder | None) -> None:
        """Search with this (already loaded) model from now on."""
        self._embedder = embedder

    def warm(self) -> None:
        """Read now what the first search would otherwise pay for: the vectors, the
        repository's files with their renames, and how often each file changed."""
        self.store.warm()
        self.touch_counts(self.resolver())

    def refresh(self) -> None:
        """Forget cached path information (after an import)."""
        self._resolver = None
        self._touches = None

    def touch_counts(self, resolver: PathResolver) -> TouchCounts:
        if resolver is not self._resolver:  # the caller's own file set: not cached
            return TouchCounts(self.store.file_touches(), resolver)
        if self._touches is None:
            self._touches = TouchCounts(self.store.file_touches(), resolver)
        return self._touches

    def resolver(self, existing: Collection[str] | None = None) -> PathResolver:
        if existing is not None:
            return PathResolver(self.store.renames(), existing)
        updated_at = self.store.get_meta("updated_at")
        if updated_at != self._updated_at:  # another process imported since: re-read
            self._resolver, self._touches, self._updated_at = None, None, updated_at
        if self._resolver is None:
            snapshot = self.store.snapshot_files()
            self._resolver = PathResolver(self.store.renames(), snapshot or None)
        return self._resolver

    def search(
        self,
        query: str,
        top_k: int = 10,
        *,
        as_of: datetime | float | None = None,
        params: TaskSearchParams = DEFAULT_SEARCH,
    ) -> list[TaskHit]:
        """Tasks similar to ``query``, best first; none dated after ``as_of``."""
        if params.mode not in MODES:
            raise ValueError(f"unknown mode {params.mode!r}; use one of {', '.join(MODES)}")
        cutoff = _as_of_ts(as_of)
        lists: list[tuple[float, list[int]]] = []
        bm25_rank: dict[int, int] = {}
        dense: dict[int, tuple[int, float]] = {}
        if params.mode in ("hybrid", "bm25"):
            ranked = self.store.bm25(query, params.candidates, cutoff)
            bm25_rank = {item: rank for rank, (item, _) in enumerate(ranked, start=1)}
            lists.append((params.bm25_weight, [item for item, _ in ranked]))
        embedder = self.embedder if params.mode in ("hybrid", "dense") else None
        if embedder is not None:
            vector = embedder.encode([embedding_text(query)])[0]
            ranked = self.store.knn(vector, params.candidates, cutoff)
            dense = {item: (rank, sim) for rank, (item, sim) in enumerate(ranked, start=1)}
            lists.append((params.dense_weight, [item for item, _ in ranked]))
        elif params.mode == "dense":
            raise ValueError("dense search needs task embeddings (import with an embedder)")
        fused = best_first(rrf(lists, params.rrf_k))[: max(top_k, 0)]
        tasks = self.store.load([item for item, _ in fused])
        hits: list[TaskHit] = []
        for rank, (item, score) in enumerate(fused, start=1):
            task = tasks.get(item)
            if task is None:
                continue
            dense_hit = dense.get(item)
            hits.append(
                TaskHit(
                    task=task,
                    score=score,
                    rank=rank,
                    bm25_rank=bm25_rank.get(item),
                    dense_rank=dense_hit[0] if dense_hit else None,
                    similarity=dense_hit[1] if dense_hit else None,
                )
            )
        return hits

    def files_for_task(
        self,
        query: str,
        top_k: int = 10,
        *,
        as_of: datetime | float | None = None,
        existing: Collection[str] | None = None,
        params: TaskSearchParams = DEFAULT_SEARCH,
        file_params: FileRankParams = DEFAULT_FILE_RANK,
        hits: list[TaskHit] | None = None,
    ) -> list[FileScore]:
        """Files ranked by the tasks similar to ``query`` that touched them (``hits``:
        the tasks, when the caller has already searched with ``file_params.top_tasks``).

        ``existing`` (the files in the repository now) overrides the snapshot taken at
        import; files missing from it are dropped or flagged per ``file_params.missing``.
        """
        if hits is None:
            hits = self.search(query, file_params.top_tasks, as_of=as_of, params=params)
        cutoff = _as_of_ts(as_of)
        resolver = self.resolver(existing)
        touched = self.touch_counts(resolver).counter(cutoff) if file_params.popularity else None
        ranked = rank_files(
            hits,
            query_time=cutoff if cutoff is not None else time.time(),
            params=file_params,
            resolver=resolver,
            touched=touched,
        )
        return ranked[: max(top_k, 0)]
