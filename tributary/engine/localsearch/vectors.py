"""Vectors in a local index file: the model that made them, the sqlite-vec table that
holds them, and the in-memory matrix searches multiply.

Both the code index and the task history keep one model record in ``meta``
(``model_name``, ``model_dim``, ``model_version``; task histories once kept one
``embedder`` key, ``name|version|dim``, which is still read and is rewritten when the
file is opened to write). A :class:`VectorTable` is made for one model and records it in
the same transaction, so the table and the record never disagree.

Searches rank by one matrix product over every vector (exact, and faster than a vec0
scan), so each store keeps its vectors in memory in a :class:`VectorCache`: read on
first use and again after any write to the file, by another connection (SQLite's
``data_version``) or by this one (``total_changes``, which ``data_version`` does not see).
A large matrix is read again on a worker thread while searches keep using the one they
have: an indexer writing beside a million-chunk index would otherwise make every search
wait for the whole matrix.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

from tributary.engine.localsearch.db import Connection, read_meta, transaction, write_meta
from tributary.engine.localsearch.embedder import MODEL_KEYS, ModelInfo, Vectors
from tributary.engine.localsearch.knn import COARSE_MIN_ROWS, Int8Scorer

LEGACY_MODEL_KEY = "embedder"  # a task history's record before the one layout
BACKGROUND_ROWS = 50_000  # a matrix of this many vectors or more is read again on a worker
RELOAD_SPACING = 4.0  # a worker's next read waits this many times the last read's length

log = logging.getLogger(__name__)


def read_model(conn: Connection) -> ModelInfo | None:
    """The model the file's vectors were made by; None when none is recorded."""
    name, dim, version = (read_meta(conn, key) for key in MODEL_KEYS)
    if name is not None and dim is not None and version is not None:
        return ModelInfo(name, int(dim), version)
    legacy = read_meta(conn, LEGACY_MODEL_KEY)
    return None if legacy is None else ModelInfo.from_signature(legacy)


def write_model(conn: Connection, info: ModelInfo) -> None:
    """Record ``info`` (inside the caller's transaction, when there is one)."""
    for key, value in zip(MODEL_KEYS, (info.name, str(info.dim), info.version), strict=True):
        write_meta(conn, key, value)
    conn.execute("DELETE FROM meta WHERE key = ?", (LEGACY_MODEL_KEY,))


def upgrade_model_record(conn: Connection) -> None:
    """Rewrite a record of the old layout in the one layout (a file opened to write)."""
    if read_meta(conn, LEGACY_MODEL_KEY) is None:
        return
    with transaction(conn):
        info = read_model(conn)
        if info is not None:
            write_model(conn, info)
        else:  # not a record this program can read: as if none had been made
            conn.execute("DELETE FROM meta WHERE key = ?", (LEGACY_MODEL_KEY,))


def vector_bytes(vector: npt.ArrayLike) -> bytes:
    """A vector as sqlite-vec stores it: contiguous float32."""
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def blob_matrix(blobs: Sequence[bytes], dim: int) -> Vectors:
    """Stored vectors as the rows of one float32 matrix (``0 x dim`` for none)."""
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim)


@dataclass(frozen=True, slots=True)
class VectorTable:
    """A sqlite-vec table of one model's vectors (cosine): an optional id column (else
    the table's rowid is the id) and the metadata columns a search filters on."""

    name: str
    key: str | None = None
    metadata: tuple[str, ...] = ()

    def exists(self, conn: Connection) -> bool:
        row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (self.name,)).fetchone()
        return row is not None

    def create(self, conn: Connection, model: ModelInfo) -> None:
        """Make the table anew, empty, for ``model`` and record the model (in the
        caller's transaction)."""
        columns = [*([self.key] if self.key else []),
                   f"embedding float[{int(model.dim)}] distance_metric=cosine", *self.metadata]  # fmt: skip
        conn.execute(f"DROP TABLE IF EXISTS {self.name}")
        conn.execute(f"CREATE VIRTUAL TABLE {self.name} USING vec0({', '.join(columns)})")
        write_model(conn, model)


WRITER_KEY = "writer:"  # a meta key per process that has the file open to write


def mark_writer(conn: Connection, open_: bool) -> None:
    """Say in the file that this process has it open to write, or no longer."""
    key = f"{WRITER_KEY}{os.getpid()}"
    if open_:
        write_meta(conn, key, "1")
    else:
        conn.execute("DELETE FROM meta WHERE key = ?", (key,))


def writer_at_work(conn: Connection) -> bool:
    """Whether some process has the file open to write (a crashed one counts until the
    file is next opened to write by the same process id: it only makes reads lazier)."""
    return conn.execute("SELECT 1 FROM meta WHERE key LIKE ? LIMIT 1", (f"{WRITER_KEY}%",)).fetchone() is not None


def write_stamp(conn: Connection) -> tuple[int, int]:
    """What changes whenever the file is written: by another connection
    (``data_version``) or by this one (``total_changes``)."""
    version = int(conn.execute("PRAGMA data_version").fetchone()[0])
    return version, int(conn.total_changes)


@dataclass(frozen=True, slots=True)
class VectorMatrix:
    """Every vector of a store in one matrix, row ``i`` the vector of ``ids[i]``; a
    large matrix also has its int8 copy for a fast first pass (:func:`coarse_scorer`)."""

    ids: npt.NDArray[np.int64]
    matrix: Vectors
    coarse: Int8Scorer | None = field(default=None, kw_only=True)


def coarse_scorer(matrix: Vectors) -> Int8Scorer | None:
    """The int8 first pass for a matrix large enough to need one (None otherwise, or
    without ONNX Runtime: the float32 product alone still works)."""
    if len(matrix) < COARSE_MIN_ROWS:
        return None
    try:
        return Int8Scorer(matrix)
    except ImportError:
        return None


Matrix = TypeVar("Matrix", bound=VectorMatrix)


class VectorCache(Generic[Matrix]):
    """A store's :class:`VectorMatrix`, loaded on first use and again after any write
    (:func:`write_stamp`). ``load`` reads it from a connection (None: no vectors).

    Given ``reopen`` (a new connection to the same file), a matrix of at least
    ``background_rows`` vectors is read again on a worker thread while ``writing`` says
    a writer has the file open, at most one read at a time and spaced by
    ``RELOAD_SPACING`` times the last one, and :meth:`get` keeps returning the matrix it
    has: a search during indexing sees the vectors of a moment ago (the keyword index is
    always current) instead of waiting for all of them. With no writer at work, a
    search after a write waits for the new matrix, so it always sees what was written
    before it started."""

    def __init__(
        self,
        conn: Connection,
        load: Callable[[Connection], Matrix | None],
        *,
        reopen: Callable[[], Connection] | None = None,
        writing: Callable[[Connection], bool] | None = None,
        background_rows: int = BACKGROUND_ROWS,
    ) -> None:
        self._conn = conn
        self._load = load
        self._reopen = reopen
        self._writing = writing
        self._background_rows = background_rows
        self._stamp: tuple[int, int] | None = None
        self._value: Matrix | None = None
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._not_before = 0.0

    def get(self) -> Matrix | None:
        stamp = write_stamp(self._conn)
        if stamp == self._stamp:
            return self._value
        value = self._value
        if (
            value is None
            or self._reopen is None
            or len(value.ids) < self._background_rows
            or (self._writing is not None and not self._writing(self._conn))
        ):
            self._value = self._load(self._conn)
            self._stamp = stamp
            return self._value
        self._reload_later(stamp)
        return value

    def settle(self, timeout: float | None = None) -> None:
        """Wait for a read running on the worker (tests, and closing the store)."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)

    def _reload_later(self, stamp: tuple[int, int]) -> None:
        with self._lock:
            if (self._worker is not None and self._worker.is_alive()) or time.monotonic() < self._not_before:
                return
            self._worker = threading.Thread(target=self._reload, args=(stamp,), name="vector-reload", daemon=True)
            self._worker.start()

    def _reload(self, stamp: tuple[int, int]) -> None:
        began = time.monotonic()
        try:
            assert self._reopen is not None
            conn = self._reopen()
            try:
                value = self._load(conn)
            finally:
                conn.close()
            # (stamped as seen before the read: a write during it brings another read)
            self._value, self._stamp = value, stamp
        except Exception as exc:  # the matrix in hand keeps serving; the next get() tries again
            log.warning("cannot read the vectors again: %s", exc)
        finally:
            self._not_before = time.monotonic() + RELOAD_SPACING * (time.monotonic() - began)
