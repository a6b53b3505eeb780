"""A collection: rows found by their words and by their meaning.

One collection is a keyword index (an FTS5 table whose rowid is the row's id, ranked by
BM25 with column weights), the rows' vectors (a sqlite-vec table of one model's
vectors), the record of that model, and those vectors held in memory as one matrix for
exact nearest-neighbour search (read again after writes; with an int8 first pass when
large). Code chunks (``tributary.engine.index.store``) and task history
(``tributary.engine.tasks.store``) each keep theirs in their own SQLite file and define
only their rows (what is written, what a search may filter on) and their ranking (how
the two lists are fused and weighed). The PostgreSQL twin is
``tributary.engine.postgres.collection``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol

import numpy as np
import numpy.typing as npt

from tributary.engine.localsearch.db import Connection, read_meta, write_meta
from tributary.engine.localsearch.embedder import ModelInfo, Vectors
from tributary.engine.localsearch.knn import shortlist_size
from tributary.engine.localsearch.vectors import (
    Matrix,
    VectorCache,
    VectorMatrix,
    VectorTable,
    read_model,
)

Ranked = list[tuple[int, float]]  # (row id, score), best first
# Meta key of a code index: the unix time of its last full pass over the folder, which
# may find nothing to write; with its files' ``indexed_at`` it says when it was last
# brought up to date (on either backend).
CHECKED_AT = "checked_at"


def up_to_date_at(written: float | None, checked: str | None) -> float | None:
    """When an index was last brought up to date: the later of its last file written
    and its last full pass (``CHECKED_AT``), which writes nothing when no file changed."""
    times = [float(written)] if written is not None else []
    with contextlib.suppress(ValueError):  # a value some other writer left: the files' time holds
        times += [float(checked)] if checked is not None else []
    return max(times, default=None)


class Collection(Protocol):
    """What every collection offers, on either backend: its meta and its model record.
    How it is searched depends on the backend (SQL fragments differ), so each backend's
    class has its own ``keyword``; the SQLite one ranks its vectors with :func:`rank_dense`
on the matrix a search fetched once, the PostgreSQL one has ``dense``."""

    def get_meta(self, key: str) -> str | None: ...
    def model(self) -> ModelInfo | None: ...


@dataclass(frozen=True, slots=True)
class KeywordIndex:
    """An FTS5 table over a collection's rows and the BM25 weight of each of its columns."""

    table: str
    weights: tuple[float, ...]


def rank_dense(
    vectors: VectorMatrix | None, query: Vectors, k: int, mask: npt.NDArray[np.bool_] | None = None
) -> Ranked:
    """Exact KNN over ``vectors``: the top ``k`` rows by dot product with ``query`` (unit
    vectors: cosine), among the rows ``mask`` keeps; equal scores by id, so copied text
    ranks the same every time. With an int8 first pass (``vectors.coarse``) only its
    shortlist is scored in float32, so every returned score is still exact."""
    if vectors is None or not len(vectors.ids) or k <= 0:
        return []
    query = np.asarray(query, dtype=np.float32)
    candidates = np.arange(len(vectors.ids)) if mask is None else np.flatnonzero(mask)
    if not len(candidates):
        return []
    k = min(k, len(candidates))
    size = shortlist_size(k, len(candidates))
    if vectors.coarse is not None and size < len(candidates):
        approx = vectors.coarse.scores(query)[candidates]
        candidates = candidates[np.argpartition(-approx, size - 1)[:size]]
        local = vectors.matrix[candidates] @ query
    else:
        local = (vectors.matrix @ query)[candidates]
    top = np.argpartition(-local, k - 1)[:k]
    ids = vectors.ids[candidates[top]]
    order = np.lexsort((ids, -local[top]))
    return [(int(ids[i]), float(local[top[i]])) for i in order]


class SqliteCollection(Generic[Matrix]):
    """A collection in a SQLite file: ``keywords`` over the rows, ``vectors`` for one
    model, and ``load`` to read the vectors (with what a search filters on) into memory.
    ``reopen`` and ``writing`` let a large matrix be read again on a worker while a
    writer is at work (:class:`VectorCache`)."""

    def __init__(
        self,
        conn: Connection,
        *,
        keywords: KeywordIndex,
        vectors: VectorTable,
        load: Callable[[Connection], Matrix | None],
        reopen: Callable[[], Connection] | None = None,
        writing: Callable[[Connection], bool] | None = None,
    ) -> None:
        self.conn = conn
        self.keywords = keywords
        self.vector_table = vectors
        self._cache = VectorCache(conn, load, reopen=reopen, writing=writing)

    # meta and the model record ---------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        return read_meta(self.conn, key)

    def set_meta(self, key: str, value: str) -> None:
        """Write a meta value (inside the caller's transaction, when there is one)."""
        write_meta(self.conn, key, value)

    def model(self) -> ModelInfo | None:
        """The model the vectors were made by (None: no vectors yet)."""
        return read_model(self.conn)

    def has_vector_table(self) -> bool:
        return self.vector_table.exists(self.conn)

    def make_vector_table(self, model: ModelInfo) -> None:
        """The vector table anew and empty for ``model``, and its record (in the caller's
        transaction): vectors of another model are meaningless beside it."""
        self.vector_table.create(self.conn, model)

    # searching ---------------------------------------------------------------------
    def vectors(self) -> Matrix | None:
        """Every row's vector in memory (None: none written)."""
        return self._cache.get()

    def settle(self) -> None:
        """Wait for a read of the vectors running on the worker (closing, tests)."""
        self._cache.settle()

    def keyword(
        self,
        match: str,
        limit: int,
        *,
        join: str = "",
        where: Sequence[str] = (),
        params: Sequence[object] = (),
    ) -> Ranked:
        """Row ids whose text matches the FTS5 expression ``match``, by BM25 (best first,
        the score positive). ``join`` may bring in the tables that ``where``'s
        conditions (with ``params``) filter on."""
        table = self.keywords.table
        weights = ", ".join(str(w) for w in self.keywords.weights)
        clauses = " AND ".join([f"{table} MATCH ?", *where])
        rows = self.conn.execute(
            f"SELECT {table}.rowid, bm25({table}, {weights}) AS score FROM {table}{join} "
            f"WHERE {clauses} ORDER BY score LIMIT ?",
            [match, *params, limit],
        ).fetchall()
        return [(int(rowid), -float(score)) for rowid, score in rows]


if TYPE_CHECKING:

    def _the_sqlite_collection_is_a_collection(collection: SqliteCollection[VectorMatrix]) -> Collection:
        """Never called: mypy checks here that the SQLite collection meets the protocol."""
        return collection
