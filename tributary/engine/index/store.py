"""Index storage: the backend-neutral interface and its SQLite (sqlite-vec + FTS5) backend.

The indexer and the search code only talk to :class:`IndexStore`; its PostgreSQL +
pgvector twin is ``tributary.engine.index.pg_store``. The SQLite backend keeps one file
per repository: ``files`` and ``chunks`` tables, a contentless FTS5 table for BM25 (path
tokens, symbol names, code with identifiers split) and a vec0 table for cosine KNN,
made, recorded and held in memory through ``tributary.engine.localsearch.vectors``. A
chunk leaves the FTS5 table through its ``delete`` command with the very texts it was
indexed with (``_fts_texts``): that keeps BM25's document count and average length
exact, where a ``contentless_delete`` table's plain ``DELETE`` left them counting every
chunk ever replaced. Every file's replacement is one transaction, so a crash leaves
each file either fully old or fully new, and a finished file is never redone.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from tributary.engine import sqlite
from tributary.engine.errors import TributaryError
from tributary.engine.index.chunking import Chunk
from tributary.engine.index.priors import CODE, embed_order
from tributary.engine.localsearch.collection import KeywordIndex, SqliteCollection, rank_dense
from tributary.engine.localsearch.db import (
    Connection,
    connect,
    migrate,
    transaction,
)
from tributary.engine.localsearch.embedder import ModelInfo as ModelInfo  # (re-exported)
from tributary.engine.localsearch.embedder import Vectors
from tributary.engine.localsearch.fts import (
    CODE_WEIGHTS,
    fts_query,
    fts_terms,
    keyword_terms,
    split_identifiers,
    symbol_text,
)
from tributary.engine.localsearch.vectors import (
    VectorMatrix,
    VectorTable,
    blob_matrix,
    coarse_scorer,
    mark_writer,
    read_model,
    upgrade_model_record,
    vector_bytes,
    write_stamp,
    writer_at_work,
)
from tributary.engine.pipeline.definitions import definition_signal

# A query's vector, or a function that embeds the query when called (on a worker).
QueryVector = Vectors | Callable[[], Vectors] | None

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        language TEXT NOT NULL,
        chunks INTEGER NOT NULL DEFAULT 0,
        indexed_at REAL NOT NULL
    );
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        symbol TEXT,
        signature TEXT,
        docstring TEXT,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        content TEXT NOT NULL,
        embed_hash TEXT NOT NULL
    );
    CREATE INDEX chunks_file ON chunks(file_id);
    CREATE INDEX chunks_embed_hash ON chunks(embed_hash);
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        path, symbol, body, terms,
        content='', contentless_delete=1, tokenize='porter unicode61'
    );
    """,
    # Two tiers: chunks are keyword-searchable as soon as written; their vectors follow.
    # ``embedded`` is 0 until a chunk has its vector; ``pending_embeds`` holds the texts
    # the model still has to read (once per distinct text).
    """
    ALTER TABLE chunks ADD COLUMN embedded INTEGER NOT NULL DEFAULT 1;
    CREATE INDEX chunks_unembedded ON chunks(embed_hash) WHERE embedded = 0;
    CREATE TABLE pending_embeds (embed_hash TEXT PRIMARY KEY, embed_text TEXT NOT NULL);
    """,
    # Exact BM25 statistics: a contentless table deleted from with the indexed texts.
    # ``_fill_keyword_index`` puts the chunks back in when the store opens.
    """
    DROP TABLE chunks_fts;
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        path, symbol, body, terms, content='', tokenize='porter unicode61'
    );
    DELETE FROM meta WHERE key = 'fts_texts'
    """,
    # The pending texts in an order: code before tests, translations and vendored copies.
    """
    ALTER TABLE pending_embeds ADD COLUMN embed_order INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX pending_embeds_order ON pending_embeds(embed_order, embed_hash);
    """,
)
# What ``_fts_texts`` derives from a chunk. Change it together with that function: the
# keyword index is then rebuilt once, since a chunk can only be deleted with the texts it
# was indexed with.
FTS_TEXTS_VERSION = "2"

CHUNK_KEYWORDS = KeywordIndex("chunks_fts", CODE_WEIGHTS)

# A term in more than half of the chunks (``def``, ``self`` in a Python repository) is
# left out of the keyword query unless every term is that common: FTS5's BM25 gives it
# no weight (its IDF is clamped to ~0), so no score changes, yet OR-ing it in made FTS5
# score most of the index: leaving it out made hybrid search on a large repository
# several times faster with recall and MRR unchanged (docs/benchmarks.md).
COMMON_TERM_SHARE = 0.5
# The share of the index written since the term counts were taken that renews them.
COMMON_TERM_DRIFT = 0.1


@lru_cache(maxsize=4096)
def _path_terms(path: str) -> str:
    return split_identifiers(path)


def _fts_texts(path: str, symbol: str | None, content: str) -> tuple[str, str, str, str]:
    """A chunk's keyword-index columns: its path, its symbol with the symbol's parts, its
    code, and the parts of the identifiers in its path and code (``FTS_TEXTS_VERSION``)."""
    return (path, symbol_text(symbol), content,
            f"{_path_terms(path)} {split_identifiers(content)}")  # fmt: skip


@dataclass(frozen=True, slots=True)
class FileRecord:
    path: str
    hash: str
    size: int
    mtime_ns: int
    language: str


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: int
    path: str
    language: str
    kind: str
    symbol: str | None
    signature: str | None
    docstring: str | None
    start_line: int
    end_line: int
    content: str


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """Restrictions a search applies before ranking (None: no restriction)."""

    languages: tuple[str, ...] | None = None
    kinds: tuple[str, ...] | None = None
    path_ids: frozenset[int] | None = None  # chunk ids allowed, when a path glob applies


class PendingText(NamedTuple):
    """A text still to embed, and its place in the queue (``priors.embed_order``)."""

    embed_hash: str
    text: str
    order: int


# Where a sweep of the pending texts resumes: after this ``(order, embed_hash)``.
PendingCursor = tuple[int, str]
QUEUE_START: PendingCursor = (-1, "")
CODE_ORDER = embed_order(CODE)  # the code's place in the queue (``code_waiting``)


class ModelChanged(TributaryError):
    """Another process recorded another embedding model while vectors were being made."""


class IndexStore(Protocol):
    """What the indexer and the searcher need from a storage backend."""

    def model(self) -> ModelInfo | None: ...
    def set_model(self, info: ModelInfo) -> bool:
        """Record the embedding model; True when that wiped existing vectors (model changed)."""
        ...

    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def file_states(self) -> dict[str, FileRecord]: ...
    def touch_file(self, record: FileRecord) -> None: ...
    def forget_file_states(self) -> None:
        """Make every file look changed (its chunks stay searchable until replaced)."""
        ...

    def cached_vectors(self, embed_hashes: Iterable[str]) -> dict[str, Vectors]: ...
    def write_file(
        self, record: FileRecord, chunks: Sequence[Chunk], known: Mapping[str, Vectors], order: int = 0
    ) -> None:
        """Replace a file's chunks (one transaction); a chunk whose embed hash ``known``
        lacks is keyword-searchable at once and waits for its vector in the pending queue,
        at ``order`` (lower: sooner; a text shared with another file takes the sooner)."""
        ...

    def pending_embeds(self, limit: int, after: PendingCursor = QUEUE_START) -> list[PendingText]:
        """Up to ``limit`` texts still to embed after ``after``, by order, then hash."""
        ...

    def add_vectors(self, vectors: Mapping[str, Vectors], model: ModelInfo) -> int:
        """Give every waiting chunk of these embed hashes its vector; how many got one.
        Raises :class:`ModelChanged`, writing nothing, unless ``model`` (what made the
        vectors) is still the index's model: an index never mixes two models' vectors."""
        ...

    def vector_counts(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks)."""
        ...

    def code_waiting(self) -> bool:
        """Whether a chunk of a code file still waits for its vector (the queue takes
        them first: ``priors.embed_order``)."""
        ...

    def delete_files(self, paths: Iterable[str]) -> None: ...
    def dense_search(
        self, vector: Vectors, k: int, where: SearchFilter
    ) -> list[tuple[int, float]]: ...
    def keyword_search(
        self, query: str, k: int, where: SearchFilter
    ) -> list[tuple[int, float]]: ...
    def symbol_search(
        self, names: Iterable[str], k: int, where: SearchFilter, written: frozenset[str] = frozenset()
    ) -> list[int]: ...
    def candidates(
        self, query: str, vector: QueryVector, k: int, where: SearchFilter
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """Both pools for a hybrid query: (dense, keyword); dense is empty without a vector.
        ``vector`` may be a function that embeds the query, so that work can overlap too."""
        ...
    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, StoredChunk]: ...
    def file_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]: ...
    def unembedded(self, chunk_ids: Sequence[int]) -> set[int]:
        """Those of ``chunk_ids`` that have no vector yet (written since the last embedding pass)."""
        ...
    def chunk_ids_matching(self, path_glob: str) -> frozenset[int]: ...
    def counts(self) -> tuple[int, int]: ...
    def close(self) -> None: ...


# ----------------------------------------------------------------- symbols and filters

_SYMBOL_PARTS = re.compile(r"\.|::|#")


def symbol_parts(symbol: str | None) -> list[str]:
    """A chunk's symbol split at its separators: ``CallSpec2.getparam`` -> both names."""
    return _SYMBOL_PARTS.split(symbol) if symbol else []


def symbol_order(symbol: str, written: frozenset[str]) -> tuple[int, int, int]:
    """Where a lookup puts a symbol it found (lower first): a member whose class and
    name the query both writes (``APIRouter include_router``: ``APIRouter.include_router``
    before the class and before ``FastAPI.include_router``), then named as the query
    writes the name (``written``: the whole qualified name, ``res.sendFile`` before a
    helper ``sendfile``, then its last part in the same case), then top-level before
    members, shorter first. Names are found case-folded by their last part, so without
    these rules the shorter top-level name would lead."""
    parts = symbol_parts(symbol)
    if len(parts) > 1 and parts[-1] in written and parts[-2] in written:
        as_written = -1
    elif symbol in written:
        as_written = 0
    else:
        as_written = 1 if parts and any(symbol_parts(name)[-1] == parts[-1] for name in written) else 2
    return as_written, len(parts), len(symbol)


_ALNUM = re.compile(r"[A-Za-z0-9]+")  # unicode61's tokens of an identifier
NESTED_POOL = 200  # body matches checked for a definition the chunk's symbol does not name
NESTED_MAX_USES = 1000  # ... when the name is in at most this many chunks


def _filter_sql(where: SearchFilter) -> tuple[list[str], list[object]]:
    """The SQL conditions (on ``f``: files, ``c``: chunks) for ``where``'s languages and
    kinds, and their parameters; path globs are applied to ids afterwards."""
    clauses: list[str] = []
    params: list[object] = []
    if where.languages:
        clauses.append(f"f.language IN ({','.join('?' * len(where.languages))})")
        params.extend(where.languages)
    if where.kinds:
        clauses.append(f"c.kind IN ({','.join('?' * len(where.kinds))})")
        params.extend(where.kinds)
    return clauses, params


# ----------------------------------------------------------------- SQLite backend

# The chunks' vectors, by chunk id, with the columns dense search filters on.
CHUNK_VECTORS = VectorTable("chunks_vec", key="chunk_id INTEGER PRIMARY KEY",
                            metadata=("language TEXT", "kind TEXT"))  # fmt: skip


@dataclass(frozen=True, slots=True)
class _ChunkVectors(VectorMatrix):
    """Every vector of the index in one matrix, for exact KNN by one matrix product,
    with each chunk's language, kind and file (``files``, in the rows' order; ``by_id``
    sorts the rows by chunk id); 50k chunks x 384 float32 is 77 MB."""

    languages: npt.NDArray[np.int32]
    kinds: npt.NDArray[np.int32]
    files: npt.NDArray[np.int64]
    by_id: npt.NDArray[np.intp]
    language_codes: dict[str, int]
    kind_codes: dict[str, int]

    def files_of(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        """The file of each of ``chunk_ids`` that has a row here (chunks written since
        the matrix was read have none). Arrays, not a dict: a million chunks' pairs as
        Python ints would cost more than a tenth of the matrix."""
        if not chunk_ids or not len(self.ids):
            return {}
        wanted = np.fromiter(chunk_ids, dtype=np.int64, count=len(chunk_ids))
        rows = self.by_id[np.minimum(np.searchsorted(self.ids, wanted, sorter=self.by_id), len(self.ids) - 1)]
        held = self.ids[rows] == wanted
        return dict(zip(wanted[held].tolist(), self.files[rows[held]].tolist(), strict=True))


LOAD_BATCH = 8192  # vectors read at a time into the matrix


@lru_cache(maxsize=1)
def _dense_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(1, thread_name_prefix="knn")


def _embed_and_rank(
    cache: _ChunkVectors | None,
    vector: Vectors | Callable[[], Vectors],
    k: int,
    where: SearchFilter,
) -> list[tuple[int, float]]:
    return _rank_dense(cache, vector() if callable(vector) else vector, k, where)


def _rank_dense(
    cache: _ChunkVectors | None, vector: Vectors, k: int, where: SearchFilter
) -> list[tuple[int, float]]:
    """Exact KNN among the chunks ``where``'s languages, kinds and paths keep."""
    if cache is None or not len(cache.ids):
        return []
    mask: npt.NDArray[np.bool_] | None = None
    if where.languages or where.kinds or where.path_ids is not None:
        mask = np.ones(len(cache.ids), dtype=bool)
        if where.languages:
            codes = [cache.language_codes[x] for x in where.languages if x in cache.language_codes]
            mask &= np.isin(cache.languages, codes)
        if where.kinds:
            codes = [cache.kind_codes[x] for x in where.kinds if x in cache.kind_codes]
            mask &= np.isin(cache.kinds, codes)
        if where.path_ids is not None:
            mask &= np.isin(cache.ids, np.fromiter(where.path_ids, dtype=np.int64))
    return rank_dense(cache, vector, k, mask)


class SqliteStore:
    """One repository's index in one SQLite file (one writer; readers any time, WAL)."""

    def __init__(
        self, path: Path, *, readonly: bool = False, check_same_thread: bool = True
    ) -> None:
        self.path = path
        self.conn: Connection = connect(
            path, readonly=readonly, check_same_thread=check_same_thread
        )
        self._writer = not readonly
        self.collection = SqliteCollection(
            self.conn, keywords=CHUNK_KEYWORDS, vectors=CHUNK_VECTORS, load=self._load_vectors,
            reopen=lambda: connect(path, readonly=True, check_same_thread=False),
            writing=writer_at_work,
        )  # fmt: skip
        if not readonly:
            migrate(self.conn, MIGRATIONS)
            upgrade_model_record(self.conn)
            self._fill_keyword_index()
            mark_writer(self.conn, True)  # readers' vectors may lag while it writes
        self._df: dict[str, int] = {}  # term -> chunks holding it (capped; see _common_terms)
        self._df_version: tuple[int, int] | None = None
        self._df_chunks = 0
        self._df_top = -1  # the highest chunk id when the counts were taken

    def close(self) -> None:
        self.collection.settle()
        if self._writer:
            with contextlib.suppress(*sqlite.ERRORS):  # (closing must not fail on it)
                mark_writer(self.conn, False)
        self.conn.close()

    # meta ---------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        return self.collection.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self.collection.set_meta(key, value)

    def model(self) -> ModelInfo | None:
        return self.collection.model()

    def set_model(self, info: ModelInfo) -> bool:
        current = self.model()
        if current == info and self._has_vec_table():
            return False
        if current is None:
            # A new index: its chunks (keyword tier) stay; none has a vector yet.
            with transaction(self.conn):
                self.collection.make_vector_table(info)
            return False
        with transaction(self.conn):
            wiped = True
            # Vectors of another model are meaningless: drop them and forget every file,
            # so the next run re-embeds the whole repository.
            self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")
            self.conn.execute("DELETE FROM chunks")
            self.conn.execute("DELETE FROM files")
            self.conn.execute("DELETE FROM pending_embeds")
            self.collection.make_vector_table(info)
        return wiped

    def _two_tier(self) -> bool:
        columns = self.conn.execute("PRAGMA table_info(chunks)").fetchall()
        return any(column[1] == "embedded" for column in columns)

    def _has_vec_table(self) -> bool:
        return self.collection.has_vector_table()

    # writes -------------------------------------------------------------------
    def file_states(self) -> dict[str, FileRecord]:
        return {
            str(row[0]): FileRecord(*row)
            for row in self.conn.execute("SELECT path, hash, size, mtime_ns, language FROM files")
        }

    def forget_file_states(self) -> None:
        self.conn.execute("UPDATE files SET hash = '', size = -1")

    def touch_file(self, record: FileRecord) -> None:
        self.conn.execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?",
            (record.size, record.mtime_ns, record.path),
        )

    def cached_vectors(self, embed_hashes: Iterable[str]) -> dict[str, Vectors]:
        wanted = list(dict.fromkeys(embed_hashes))
        found: dict[str, Vectors] = {}
        if not self._has_vec_table():
            return found
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self.conn.execute(
                "SELECT c.embed_hash, v.embedding FROM chunks c "
                "JOIN chunks_vec v ON v.chunk_id = c.id "
                f"WHERE c.embed_hash IN ({marks}) GROUP BY c.embed_hash",
                batch,
            )
            for embed_hash, blob in rows:
                found[str(embed_hash)] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def _fill_keyword_index(self) -> None:
        """Index every chunk's texts anew when the keyword index was made by another
        ``_fts_texts`` (or by none: a new or migrated index)."""
        if self.get_meta("fts_texts") == FTS_TEXTS_VERSION:
            return
        with transaction(self.conn):
            if self.get_meta("fts_texts") == FTS_TEXTS_VERSION:  # another writer was first
                return
            self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")
            rows = self.conn.execute(
                "SELECT c.id, f.path, c.symbol, c.content FROM chunks c JOIN files f ON f.id = c.file_id"
            )
            self.conn.executemany(
                "INSERT INTO chunks_fts(rowid, path, symbol, body, terms) VALUES (?, ?, ?, ?, ?)",
                ((cid, *_fts_texts(path, symbol, content)) for cid, path, symbol, content in rows),
            )
            self.set_meta("fts_texts", FTS_TEXTS_VERSION)

    def _delete_file_rows(self, file_id: int) -> None:
        rows = self.conn.execute(
            "SELECT c.id, f.path, c.symbol, c.content FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE c.file_id = ?",
            (file_id,),
        ).fetchall()
        self.conn.executemany(
            "INSERT INTO chunks_fts(chunks_fts, rowid, path, symbol, body, terms) "
            "VALUES ('delete', ?, ?, ?, ?, ?)",
            [(cid, *_fts_texts(path, symbol, content)) for cid, path, symbol, content in rows],
        )
        ids = [int(row[0]) for row in rows]
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ",".join("?" * len(batch))
            if self._has_vec_table():
                self.conn.execute(f"DELETE FROM chunks_vec WHERE chunk_id IN ({marks})", batch)
        self.conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def write_file(
        self, record: FileRecord, chunks: Sequence[Chunk], known: Mapping[str, Vectors], order: int = 0
    ) -> None:
        has_vec = self._has_vec_table()
        with transaction(self.conn):
            row = self.conn.execute(
                "SELECT id FROM files WHERE path = ?", (record.path,)
            ).fetchone()
            if row is not None:
                self._delete_file_rows(int(row[0]))
            cursor = self.conn.execute(
                "INSERT INTO files(path, hash, size, mtime_ns, language, chunks, indexed_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (record.path, record.hash, record.size, record.mtime_ns, record.language,
                 len(chunks), time.time()),
            )  # fmt: skip
            file_id = cursor.lastrowid
            for chunk in chunks:
                vector = known.get(chunk.embed_hash) if has_vec else None
                cur = self.conn.execute(
                    "INSERT INTO chunks(file_id, kind, symbol, signature, docstring, start_line, "
                    "end_line, content, embed_hash, embedded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (file_id, chunk.kind, chunk.symbol, chunk.signature, chunk.docstring,
                     chunk.start_line, chunk.end_line, chunk.content, chunk.embed_hash,
                     int(vector is not None)),
                )  # fmt: skip
                chunk_id = cur.lastrowid
                self.conn.execute(
                    "INSERT INTO chunks_fts(rowid, path, symbol, body, terms) VALUES (?, ?, ?, ?, ?)",
                    (chunk_id, *_fts_texts(record.path, chunk.symbol, chunk.content)),
                )
                if vector is None:
                    self.conn.execute(
                        "INSERT INTO pending_embeds(embed_hash, embed_text, embed_order) VALUES (?, ?, ?) "
                        "ON CONFLICT(embed_hash) DO UPDATE SET embed_order = MIN(embed_order, excluded.embed_order)",
                        (chunk.embed_hash, chunk.embed_text, order),
                    )
                    continue
                self.conn.execute(
                    "INSERT INTO chunks_vec(chunk_id, embedding, language, kind) VALUES (?, ?, ?, ?)",
                    (chunk_id, vector_bytes(vector), chunk.language, chunk.kind),
                )  # fmt: skip

    def pending_embeds(self, limit: int, after: PendingCursor = QUEUE_START) -> list[PendingText]:
        if after == QUEUE_START:  # a new sweep: forget texts no chunk waits for (file changed or gone)
            with transaction(self.conn):
                self.conn.execute(
                    "DELETE FROM pending_embeds WHERE NOT EXISTS (SELECT 1 FROM chunks c "
                    "WHERE c.embed_hash = pending_embeds.embed_hash AND c.embedded = 0)"
                )
        rows = self.conn.execute(
            "SELECT embed_hash, embed_text, embed_order FROM pending_embeds "
            "WHERE (embed_order, embed_hash) > (?, ?) ORDER BY embed_order, embed_hash LIMIT ?",
            (*after, limit),
        ).fetchall()
        return [PendingText(str(h), str(t), int(o)) for h, t, o in rows]

    def add_vectors(self, vectors: Mapping[str, Vectors], model: ModelInfo) -> int:
        if not self._has_vec_table():
            raise ValueError("no embedding model recorded: set_model first")
        added = 0
        with transaction(self.conn):
            current = self.model()
            if current != model:
                raise ModelChanged(f"{self.path}: the index now records {current}, not {model}")
            for embed_hash, vector in vectors.items():
                blob = vector_bytes(vector)
                rows = self.conn.execute(
                    "SELECT c.id, f.language, c.kind FROM chunks c JOIN files f ON f.id = c.file_id "
                    "WHERE c.embed_hash = ? AND c.embedded = 0",
                    (embed_hash,),
                ).fetchall()
                for chunk_id, language, kind in rows:
                    self.conn.execute(
                        "INSERT INTO chunks_vec(chunk_id, embedding, language, kind) VALUES (?, ?, ?, ?)",
                        (chunk_id, blob, language, kind),
                    )
                    self.conn.execute("UPDATE chunks SET embedded = 1 WHERE id = ?", (chunk_id,))
                added += len(rows)
                self.conn.execute("DELETE FROM pending_embeds WHERE embed_hash = ?", (embed_hash,))
        return added

    def vector_counts(self) -> tuple[int, int]:
        total = int(self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        if not self._two_tier():  # an index from before the two tiers, opened read-only
            return total, total
        waiting = int(
            self.conn.execute("SELECT COUNT(*) FROM chunks WHERE embedded = 0").fetchone()[0]
        )
        return total - waiting, total

    def code_waiting(self) -> bool:
        if not self._two_tier():
            return False
        try:
            row = self.conn.execute(
                "SELECT EXISTS (SELECT 1 FROM pending_embeds p WHERE p.embed_order = ? AND EXISTS "
                "(SELECT 1 FROM chunks c WHERE c.embed_hash = p.embed_hash AND c.embedded = 0))",
                (CODE_ORDER,),
            ).fetchone()
        except sqlite.ERRORS:  # a queue from before its order, opened read-only
            return True
        return bool(row[0])

    def delete_files(self, paths: Iterable[str]) -> None:
        for path in paths:
            with transaction(self.conn):
                row = self.conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
                if row is not None:
                    self._delete_file_rows(int(row[0]))

    # reads --------------------------------------------------------------------
    def warm(self) -> None:
        """Load the vector matrix now, so the first search does not pay for it."""
        self._vectors()

    def _vectors(self) -> _ChunkVectors | None:
        return self.collection.vectors()

    def _load_vectors(self, conn: Connection) -> _ChunkVectors | None:
        """Every chunk's vector with its language, kind and file (None: no vector table),
        read in batches into arrays of their final size: a million-chunk index would
        otherwise hold its vectors twice over as rows and bytes while they are read."""
        if not CHUNK_VECTORS.exists(conn):
            return None
        model = read_model(conn)
        dim = model.dim if model else 0
        size = int(conn.execute("SELECT COUNT(*) FROM chunks_vec").fetchone()[0])
        ids = np.empty(size, dtype=np.int64)
        matrix = np.empty((size, dim), dtype=np.float32)
        languages = np.empty(size, dtype=np.int32)
        kinds = np.empty(size, dtype=np.int32)
        files = np.empty(size, dtype=np.int64)
        language_codes: dict[str, int] = {}
        kind_codes: dict[str, int] = {}
        cursor = conn.execute(
            "SELECT v.chunk_id, v.embedding, v.language, v.kind, c.file_id "
            "FROM chunks_vec v JOIN chunks c ON c.id = v.chunk_id"
        )
        filled = 0
        # (rows written between the count and the read wait for the next read: the write
        # changed the file, so the cache reads it again)
        while filled < size and (rows := cursor.fetchmany(min(LOAD_BATCH, size - filled))):
            end = filled + len(rows)
            ids[filled:end] = [r[0] for r in rows]
            matrix[filled:end] = blob_matrix([r[1] for r in rows], dim)
            languages[filled:end] = [language_codes.setdefault(r[2], len(language_codes)) for r in rows]
            kinds[filled:end] = [kind_codes.setdefault(r[3], len(kind_codes)) for r in rows]
            files[filled:end] = [r[4] for r in rows]
            filled = end
        cursor.close()  # (a statement left open would hold its snapshot of the file)
        matrix, ids = matrix[:filled], ids[:filled]
        return _ChunkVectors(
            ids=ids, matrix=matrix, languages=languages[:filled], kinds=kinds[:filled],
            files=files[:filled], by_id=np.argsort(ids, kind="stable"),
            language_codes=language_codes, kind_codes=kind_codes,
            coarse=coarse_scorer(matrix),
        )  # fmt: skip

    def dense_search(self, vector: Vectors, k: int, where: SearchFilter) -> list[tuple[int, float]]:
        return _rank_dense(self._vectors(), vector, k, where)

    def candidates(
        self, query: str, vector: QueryVector, k: int, where: SearchFilter
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """Embedding the query and the matrix product run on a worker thread while SQLite
        answers the keyword query on this one (ONNX Runtime, numpy and SQLite all release
        the GIL): on CPython's Lib/ (66k chunks) ~5 + 5 ms against ~15 ms, so the query
        costs about the longer side. The worker never touches the connection: the matrix
        is fetched here first."""
        if vector is None:
            return [], self.keyword_search(query, k, where)
        dense = _dense_pool().submit(_embed_and_rank, self._vectors(), vector, k, where)
        try:
            keyword = self.keyword_search(query, k, where)
        finally:
            ranked = dense.result()
        return ranked, keyword

    def unembedded(self, chunk_ids: Sequence[int]) -> set[int]:
        cache = self._vectors()  # (read again once the file changes: a vector written since is in it)
        if cache is None:
            return set(chunk_ids)
        held = cache.files_of(chunk_ids)
        return {cid for cid in chunk_ids if cid not in held}

    def file_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        cache = self._vectors()
        if cache is None:
            return self._file_ids_from_db(chunk_ids)
        found = cache.files_of(chunk_ids)
        missing = [cid for cid in chunk_ids if cid not in found]  # written since the matrix was read
        return {**found, **self._file_ids_from_db(missing)} if missing else found

    def keyword_search(self, query: str, k: int, where: SearchFilter) -> list[tuple[int, float]]:
        terms = keyword_terms(query)
        common = self._common_terms(terms)
        match = fts_query([t for t in terms if t not in common] or terms)
        if match is None:
            return []
        filters, values = _filter_sql(where)
        join = " JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id" if filters else ""
        limit = k if where.path_ids is None else k * 8
        hits = self.collection.keyword(match, limit, join=join, where=filters, params=values)
        if where.path_ids is not None:
            hits = [hit for hit in hits if hit[0] in where.path_ids][:k]
        return hits

    def symbol_search(
        self, names: Iterable[str], k: int, where: SearchFilter, written: frozenset[str] = frozenset()
    ) -> list[int]:
        """Chunks that define one of ``names`` (compared case-folded), best first.

        First the chunks whose symbol, or its last part (``CallSpec2.getparam`` ->
        ``getparam``), is the name: found through the FTS symbol column (every word of
        the name), checked exactly, in ``symbol_order`` (``written``: the names as the
        query writes them).
        When no symbol is the name, the chunks that define it inside them (a helper
        nested in a test, whose chunk is the test's): the name as a phrase in the body,
        the best ``NESTED_POOL`` of them checked for a definition line of it; unless the
        name is in more than ``NESTED_MAX_USES`` chunks."""
        wanted = frozenset(name.casefold() for name in names if name)
        by_symbol = [
            "(" + " AND ".join(f'"{term}"' for term in terms) + ")"
            for name in sorted(wanted)
            if (terms := fts_terms(name))
        ]
        if not by_symbol:
            return []
        found: list[tuple[int, int, int, int]] = []
        # (a Markdown section's heading is its symbol, but it defines nothing)
        defined = "CASE WHEN c.kind = 'text' THEN NULL ELSE c.symbol END"
        for cid, symbol in self._chunks_matching("symbol : (" + " OR ".join(by_symbol) + ")", defined, where):
            parts = symbol_parts(str(symbol or ""))
            if parts and parts[-1].casefold() in wanted:
                found.append((*symbol_order(str(symbol), written), cid))
        ranked = [cid for *_, cid in sorted(found)[:k]]
        if not ranked:  # (a body search ranks every chunk using the name: only when needed)
            phrases = " OR ".join(f'"{" ".join(_ALNUM.findall(name))}"' for name in sorted(wanted) if _ALNUM.search(name))
            match = f"body : ({phrases})"
            # A name in very many chunks (``pytest``, ``self``) is a word, not a helper's name:
            # ranking all of them would cost time in proportion to the index for nothing.
            used = self.conn.execute(
                "SELECT COUNT(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
                (match, NESTED_MAX_USES + 1),
            ).fetchone()[0]
            if int(used) <= NESTED_MAX_USES:
                nested = self._chunks_matching(match, "c.content", where, limit=NESTED_POOL)
                ranked = [cid for cid, content in nested if definition_signal(str(content), wanted)][:k]
        return ranked

    def _chunks_matching(
        self, match: str, column: str, where: SearchFilter, limit: int | None = None
    ) -> list[tuple[int, object]]:
        """``(chunk id, column)`` of the chunks an FTS query matches (its best ``limit``,
        by BM25, when given), within ``where``, in id order."""
        pool = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?" + (
            " ORDER BY rank LIMIT ?" if limit is not None else ""
        )
        filters, values = _filter_sql(where)
        clauses = [f"c.id IN ({pool})", *filters]
        params: list[object] = [match, *([limit] if limit is not None else []), *values]
        join = " JOIN files f ON f.id = c.file_id" if where.languages else ""
        rows = self.conn.execute(
            f"SELECT c.id, {column} FROM chunks c{join} WHERE {' AND '.join(clauses)} ORDER BY c.id", params
        ).fetchall()
        return [(int(cid), value) for cid, value in rows if where.path_ids is None or cid in where.path_ids]

    def _common_terms(self, terms: Sequence[str]) -> set[str]:
        """The terms more than ``COMMON_TERM_SHARE`` of the chunks hold. The counts are
        kept until chunks written since reach ``COMMON_TERM_DRIFT`` of the index: while
        an indexer writes, recounting at every write would make each search count its
        words over the whole index again, and whether a word is common barely moves."""
        version = write_stamp(self.conn)
        if version != self._df_version:
            self._df_version = version
            top = int(self.conn.execute("SELECT COALESCE(MAX(id), 0) FROM chunks").fetchone()[0])
            if top < self._df_top or top - self._df_top > COMMON_TERM_DRIFT * self._df_chunks:
                self._df.clear()
                self._df_top = top
                self._df_chunks = int(self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        limit = int(self._df_chunks * COMMON_TERM_SHARE)
        common: set[str] = set()
        for term in terms:
            count = self._df.get(term)
            if count is None:
                # Counting stops past the limit: only "common or not" matters.
                count = int(self.conn.execute(
                    "SELECT COUNT(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
                    (f'"{term}"', limit + 1),
                ).fetchone()[0])
                self._df[term] = count
            if count > limit:
                common.add(term)
        return common

    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, StoredChunk]:
        found: dict[int, StoredChunk] = {}
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), 500):
            batch = unique[start : start + 500]
            marks = ",".join("?" * len(batch))
            for row in self.conn.execute(
                "SELECT c.id, f.path, f.language, c.kind, c.symbol, c.signature, c.docstring, "
                f"c.start_line, c.end_line, c.content FROM chunks c JOIN files f ON f.id = c.file_id "
                f"WHERE c.id IN ({marks})",
                batch,
            ):
                found[int(row[0])] = StoredChunk(*row)
        return found

    def _file_ids_from_db(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        found: dict[int, int] = {}
        for start in range(0, len(chunk_ids), 500):
            batch = list(chunk_ids[start : start + 500])
            marks = ",".join("?" * len(batch))
            for cid, fid in self.conn.execute(
                f"SELECT id, file_id FROM chunks WHERE id IN ({marks})", batch
            ):
                found[int(cid)] = int(fid)
        return found

    def chunk_ids_matching(self, path_glob: str) -> frozenset[int]:
        """Chunks of files whose path matches ``path_glob`` (``*`` also crosses ``/``)."""
        pattern = path_glob.replace("**/", "*").replace("/**", "/*")
        return frozenset(
            int(row[0])
            for row in self.conn.execute(
                # (the files first, then their chunks by index: joining from the chunks
                # would read every chunk of a large index)
                "SELECT c.id FROM chunks c WHERE c.file_id IN "
                "(SELECT id FROM files WHERE path GLOB ? OR path GLOB ?)",
                (pattern, "*/" + pattern),
            )
        )

    def counts(self) -> tuple[int, int]:
        files = self.conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        chunks = self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return int(files), int(chunks)
