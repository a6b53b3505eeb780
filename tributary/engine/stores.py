"""What the built-in servers and the indexing API need from a store, whatever holds it.

Two backends implement these: SQLite files on this machine (``tributary.engine.index.store.
SqliteStore``, ``tributary.engine.tasks.store.TaskStore``) and a PostgreSQL + pgvector database
shared by a team (``tributary.engine.postgres``). The code index's writer side is
``tributary.engine.index.store.IndexStore``; a served index also warms up (loads what its searches
need) before the first query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import numpy as np

from tributary.engine.index.store import IndexStore
from tributary.engine.localsearch.embedder import Embedder, ModelInfo
from tributary.engine.tasks.model import ImportStats, Rename, Task, TaskStats


class CodeIndex(IndexStore, Protocol):
    """A code index the files server searches."""

    def warm(self) -> None: ...


class TaskHistory(Protocol):
    """A repository's task history: what the tasks server reads and an import writes."""

    def close(self) -> None: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def model(self) -> ModelInfo | None: ...
    def has_vectors(self) -> bool: ...
    def embed_missing(
        self, embedder: Embedder, on_progress: Callable[[int, int], None] | None = None
    ) -> int: ...
    def existing_hashes(self) -> dict[str, str]: ...
    def upsert(
        self,
        tasks: Sequence[Task],
        stats: ImportStats,
        *,
        embedder: Embedder | None = None,
        renames: Sequence[Rename] = (),
        meta: dict[str, str] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> None: ...
    def set_snapshot_files(self, paths: Iterable[str]) -> None: ...
    def bm25(self, query: str, limit: int, as_of: int | None = None) -> list[tuple[int, float]]: ...
    def knn(self, vector: np.ndarray, limit: int, as_of: int | None = None) -> list[tuple[int, float]]: ...
    def load(self, rowids: Sequence[int]) -> dict[int, Task]: ...
    def renames(self) -> list[Rename]: ...
    def snapshot_files(self) -> set[str]: ...
    def file_touches(self) -> list[tuple[str, int]]: ...
    def stats(self) -> TaskStats: ...
