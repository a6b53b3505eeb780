"""One repository's code index in the shared PostgreSQL database (``IndexStore``).

The same contract as ``tributary.engine.index.store.SqliteStore``: each file is replaced in one
transaction (readers on other desktops see it either fully old or fully new), unchanged
embedding texts keep their vectors (by hash), and the searches return the same kinds
of scores — cosine similarity for dense hits, a relevance (higher is better) for
keyword hits. Dense search runs on the server: through the repository's HNSW or
IVFFlat index when unfiltered, by an exact scan when a language, kind or path filter
applies (an approximate index filtered afterwards would return too few).
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from tributary.engine.index import store as base
from tributary.engine.index.chunking import Chunk
from tributary.engine.index.store import (
    _ALNUM,
    COMMON_TERM_SHARE,
    QUEUE_START,
    FileRecord,
    ModelChanged,
    PendingCursor,
    PendingText,
    QueryVector,
    SearchFilter,
    StoredChunk,
    symbol_parts,
)
from tributary.engine.localsearch.embedder import ModelInfo, Vectors
from tributary.engine.localsearch.fts import keyword_terms, split_identifiers
from tributary.engine.pipeline.definitions import definition_signal
from tributary.engine.postgres.collection import (
    COMPLETED_PER_SEARCH,
    POSTINGS_PER_WORD,
    TS_CONFIG,
    PgCollection,
    idf,
)
from tributary.engine.postgres.db import (
    Connection,
    Database,
    VectorIndex,
    choose_vector_index,
    redact,
)
from tributary.engine.postgres.repositories import (
    Repository,
    ensure_repository,
    find_repository,
    list_repositories,
    lock_repository,
    remove_repository,
    vector_index_name,
)

# ts_rank's weights for {D, C, B, A}: path and symbol words (A) count 4x body words (D),
# as FTS5's column weights do in the SQLite backend.
RANK_WEIGHTS = "{0.25, 0.25, 0.25, 1.0}"
MAX_EF_SEARCH = 1000  # pgvector's limit; hybrid search asks for 800
IVFFLAT_MIN_ROWS = 1000  # fewer rows: an exact scan is as fast and has no training to go stale
IVFFLAT_ROWS_PER_LIST = 1000  # pgvector's advice for up to 1M rows
IVFFLAT_REBUILD_GROWTH = 4  # rebuild the lists when the rows grew this many times
# maintenance_work_mem for a vector index build, by the rows: the graph in memory
BUILD_MEMORY_MIN_MB = 256
BUILD_MEMORY_MAX_MB = 4096
BUILD_BYTES_PER_DIM = 5  # a graph node's share per dimension (its float32 vector plus neighbours)
MIN_EF_SEARCH = 100  # HNSW candidates for small k (pgvector's default 40 misses too many)
DENSE_POOL = 200  # vector candidates (the keyword pool stays deeper): HNSW's cost grows with it
FILE_OF_LIMIT = 200_000  # chunk -> file pairs kept from earlier searches
TERM_STATS_DRIFT = 0.1  # term counts are refreshed once the chunks changed this much
_NON_WORD = re.compile(r"[\W_]+")
_META_SCOPE = "files"


def code_words(text: str) -> str:
    """``text`` as plain words for the text-search parser, identifiers also split:
    ``urllib.request.urlopen(renderCart)`` -> ``urllib request urlopen renderCart render
    Cart``. (PostgreSQL's parser would keep dotted names and paths as one token.)"""
    words = _NON_WORD.sub(" ", text)
    return f"{words} {split_identifiers(text)}"


def symbol_key(symbol: str | None) -> str | None:
    """The name a lookup compares: the symbol's last part, case-folded
    (``CallSpec2.getparam`` -> ``getparam``)."""
    return symbol_parts(symbol)[-1].casefold() if symbol else None


def as_array(value: Any) -> Vectors:
    """A ``vector`` column's value as float32 (pgvector returns a ``Vector`` or an array)."""
    array = value.to_numpy() if hasattr(value, "to_numpy") else value
    result: Vectors = np.asarray(array, dtype=np.float32)
    return result


def build_memory(rows: int, dim: int) -> str:
    """``maintenance_work_mem`` for building a vector index over ``rows``: enough for the
    graph to stay in memory (a build that spills is many times slower), within bounds."""
    wanted = rows * dim * BUILD_BYTES_PER_DIM // 2**20
    return f"{min(BUILD_MEMORY_MAX_MB, max(BUILD_MEMORY_MIN_MB, wanted))}MB"


def location(dsn: str) -> str:
    """Where the shared index is, for reports: its DSN without the password."""
    return redact(dsn)


def repositories(dsn: str) -> list[Repository]:
    """Every repository of the shared database, with its counts."""
    db = Database(dsn, application_name="tributary-list")
    try:
        return list_repositories(db)
    finally:
        db.close()


def remove(dsn: str, root: str) -> bool:
    """Delete the repository indexed from ``root``, code and history; whether it was there."""
    db = Database(dsn, application_name="tributary-remove")
    try:
        return remove_repository(db, root)
    finally:
        db.close()


@lru_cache(maxsize=1)
def _keyword_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(4, thread_name_prefix="pg-keyword")


class PgIndexStore:
    """One repository's code index in a shared database."""

    def __init__(
        self, db: Database, repo: int, *, vector_index: str = "auto", owns_db: bool = False
    ) -> None:
        self.db = db
        self.repo = int(repo)
        self.collection = PgCollection(
            db, self.repo, table="chunks", scope=_META_SCOPE, postings="chunk_postings"
        )
        self.wanted_index = vector_index
        self._owns_db = owns_db
        self._kind: VectorIndex | None = None
        self._df: dict[str, int] = {}
        self._df_version: int | None = None
        self._file_of: dict[int, int] = {}  # chunk id -> file id, as the searches returned them

    @classmethod
    def open(
        cls, dsn: str, root: str, name: str | None, *, vector_index: str = "auto"
    ) -> PgIndexStore:
        """The index of the repository at ``root`` (its row made if missing), on its own
        connection."""
        db = Database(dsn, application_name="tributary-indexer")
        try:
            return cls(
                db, ensure_repository(db, root, name), vector_index=vector_index, owns_db=True
            )
        except BaseException:
            db.close()
            raise

    @classmethod
    def find(cls, dsn: str, root: str, *, vector_index: str = "auto") -> PgIndexStore | None:
        """The index of the repository at ``root`` for reading, on its own connection;
        None when the database has no such repository."""
        db = Database(dsn, application_name="tributary-search")
        try:
            repo = find_repository(db, root)
        except BaseException:
            db.close()
            raise
        if repo is None:
            db.close()
            return None
        return cls(db, repo, vector_index=vector_index, owns_db=True)

    def close(self) -> None:
        if self._owns_db:
            self.db.close()

    # meta ---------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        if key in ("root", "name"):
            row = self.db.read(lambda c: c.execute(
                f"SELECT {key} FROM repositories WHERE id = %s", (self.repo,)).fetchone())  # fmt: skip
            return None if row is None else str(row[0])
        return self.collection.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        with self.db.transaction() as conn:
            self._set_meta(conn, key, value)

    def _set_meta(self, conn: Connection, key: str, value: str) -> None:
        if key == "root":  # the repository's identity: fixed when its row was made
            return
        if key == "name":
            conn.execute("UPDATE repositories SET name = %s WHERE id = %s", (value, self.repo))
            return
        self.collection.write_meta(conn, key, value)

    def model(self) -> ModelInfo | None:
        return self.collection.model()

    def vector_index(self) -> VectorIndex:
        """The kind of vector index this repository's searches use (chosen at run time
        from what the server supports and ``vector_index`` asked for)."""
        if self._kind is not None:
            return self._kind
        kind: VectorIndex = self.db.read(lambda c: choose_vector_index(c, self.wanted_index))
        self._kind = kind
        return kind

    def set_model(self, info: ModelInfo) -> bool:
        kind = self.vector_index()
        current = self.model()
        if current == info and self.get_meta("vector_index") == kind:
            return False
        with self.db.transaction() as conn:
            lock_repository(conn, self.repo)
            self._bump(conn)
            if current is not None and current != info:  # another model's vectors are meaningless
                conn.execute("DELETE FROM files WHERE repo = %s", (self.repo,))
            # Built again after the next pass (ensure_vector_index), for this model and kind.
            conn.execute(f"DROP INDEX IF EXISTS {vector_index_name(self.repo)}")
            self.collection.write_model(conn, info)
            self._set_meta(conn, "vector_index", kind)
            self._set_meta(conn, "ivfflat_rows", "0")
        return current is not None and current != info

    def ensure_vector_index(self) -> str:
        """After an indexing pass: refresh the planner's statistics, and build the
        repository's vector index if it has none.

        HNSW is built once, over the rows of the first pass (a bulk build is many times
        faster than growing the graph one insert at a time), then kept up to date by
        every later insert. IVFFlat needs rows to train its lists: built once there are
        enough, rebuilt when the rows have grown several times. Returns the kind in use.
        """
        kind = self.vector_index()
        model = self.model()
        with self.db.session() as conn:
            # Fresh statistics: right after a bulk load the planner still thinks a
            # repository has a few dozen chunks and scans all of them for an id lookup.
            conn.execute("ANALYZE files, chunks")
        self.refresh_term_stats()
        if kind == "exact" or model is None:
            return kind
        _files, rows = self.counts()
        exists = self.db.read(lambda c: c.execute(
            "SELECT to_regclass(%s) IS NOT NULL", (vector_index_name(self.repo),)).fetchone())  # fmt: skip
        if kind == "hnsw":
            if rows and not (exists and exists[0]):
                self._build_index(
                    f"hnsw ((embedding::vector({int(model.dim)})) vector_cosine_ops)", {}
                )
            return kind
        built = int(self.get_meta("ivfflat_rows") or 0)
        if rows < IVFFLAT_MIN_ROWS or (
            built and exists and exists[0] and rows < built * IVFFLAT_REBUILD_GROWTH
        ):
            return kind
        lists = max(1, rows // IVFFLAT_ROWS_PER_LIST)
        self._build_index(
            f"ivfflat ((embedding::vector({int(model.dim)})) vector_cosine_ops) WITH (lists = {lists})",
            {"ivfflat_rows": str(rows), "ivfflat_lists": str(lists)},
        )
        return kind

    def refresh_term_stats(self) -> bool:
        """Count the chunks holding each lexeme again if the repository's chunks changed by
        more than ``TERM_STATS_DRIFT`` since the last count; whether it counted. (Counts a
        little stale only shift which rare words a search matches on.)"""
        _files, total = self.counts()
        counted = self.get_meta("term_stats_chunks")
        if counted is not None and abs(total - int(counted)) <= TERM_STATS_DRIFT * max(
            int(counted), 1
        ):
            return False
        with self.db.transaction() as conn:
            lock_repository(conn, self.repo)
            conn.execute("DELETE FROM term_stats WHERE repo = %s", (self.repo,))
            conn.execute(
                "INSERT INTO term_stats(repo, lexeme, chunks) SELECT repo, lexeme, COUNT(*) "
                "FROM chunk_postings WHERE repo = %s GROUP BY repo, lexeme", (self.repo,)
            )
            self._set_meta(conn, "term_stats_chunks", str(total))
        return True

    def _build_index(self, method: str, meta: dict[str, str]) -> None:
        model = self.model()
        _files, rows = self.counts()
        memory = build_memory(rows, int(model.dim) if model else 0)
        with self.db.transaction() as conn:
            lock_repository(conn, self.repo)
            conn.execute(f"SET LOCAL maintenance_work_mem = '{memory}'")
            conn.execute(f"DROP INDEX IF EXISTS {vector_index_name(self.repo)}")
            conn.execute(
                f"CREATE INDEX {vector_index_name(self.repo)} ON chunks USING {method} WHERE repo = {self.repo}"
            )
            for key, value in meta.items():
                self._set_meta(conn, key, value)

    def _bump(self, conn: Connection) -> None:
        """A write: readers' cached term counts are stale. (Also orders the writers of one
        repository: the row lock is taken first, so two writers cannot deadlock.)"""
        conn.execute("UPDATE repositories SET version = version + 1 WHERE id = %s", (self.repo,))

    # writes -------------------------------------------------------------------
    def file_states(self) -> dict[str, FileRecord]:
        rows = self.db.read(lambda c: c.execute(
            "SELECT path, hash, size, mtime_ns, language FROM files WHERE repo = %s", (self.repo,)
        ).fetchall())  # fmt: skip
        return {
            str(r[0]): FileRecord(str(r[0]), str(r[1]), int(r[2]), int(r[3]), str(r[4]))
            for r in rows
        }

    def forget_file_states(self) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE files SET hash = '', size = -1 WHERE repo = %s", (self.repo,))

    def touch_file(self, record: FileRecord) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE files SET size = %s, mtime_ns = %s WHERE repo = %s AND path = %s",
                (record.size, record.mtime_ns, self.repo, record.path),
            )

    def cached_vectors(self, embed_hashes: Iterable[str]) -> dict[str, Vectors]:
        wanted = list(dict.fromkeys(embed_hashes))
        if not wanted:
            return {}
        rows = self.db.read(lambda c: c.execute(
            "SELECT DISTINCT ON (embed_hash) embed_hash, embedding FROM chunks "
            "WHERE repo = %s AND embed_hash = ANY(%s) AND embedding IS NOT NULL",
            (self.repo, wanted)).fetchall())  # fmt: skip
        return {str(h): as_array(v) for h, v in rows}

    def write_file(
        self, record: FileRecord, chunks: Sequence[Chunk], known: Mapping[str, Vectors], order: int = 0
    ) -> None:
        """Replace a file's chunks (one transaction); a chunk whose vector ``known`` lacks
        is keyword-searchable at once and waits in ``pending_embeds`` for it, at ``order``."""
        vectors = [known.get(chunk.embed_hash) for chunk in chunks]
        pending = {
            c.embed_hash: c.embed_text for c, v in zip(chunks, vectors, strict=True) if v is None
        }
        path_words = code_words(record.path)
        rows = [
            (self.repo, chunk.language, chunk.kind, chunk.symbol, symbol_key(chunk.symbol),
             chunk.signature, chunk.docstring, chunk.start_line, chunk.end_line, chunk.content,
             chunk.embed_hash, f"{path_words} {code_words(chunk.symbol or '')}",
             code_words(chunk.content),
             None if vector is None else np.ascontiguousarray(vector, dtype=np.float32))
            for chunk, vector in zip(chunks, vectors, strict=True)
        ]  # fmt: skip
        with self.db.transaction() as conn:
            self._bump(conn)
            row = conn.execute(
                "INSERT INTO files(repo, path, hash, size, mtime_ns, language, chunks, indexed_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (repo, path) DO UPDATE SET "
                "hash = EXCLUDED.hash, size = EXCLUDED.size, mtime_ns = EXCLUDED.mtime_ns, "
                "language = EXCLUDED.language, chunks = EXCLUDED.chunks, indexed_at = EXCLUDED.indexed_at "
                "RETURNING id",
                (self.repo, record.path, record.hash, record.size, record.mtime_ns, record.language,
                 len(chunks), time.time()),
            ).fetchone()  # fmt: skip
            assert row is not None
            file_id = int(row[0])
            conn.execute("DELETE FROM chunks WHERE file_id = %s", (file_id,))
            if rows:
                with conn.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO chunks(repo, file_id, language, kind, symbol, symbol_key, "
                        "signature, docstring, start_line, end_line, content, embed_hash, terms, "
                        "embedding) VALUES (%s, " + str(file_id) + ", %s, %s, %s, %s, %s, %s, %s, "
                        f"%s, %s, %s, setweight(to_tsvector('{TS_CONFIG}', %s), 'A') || "
                        f"setweight(to_tsvector('{TS_CONFIG}', %s), 'D'), %s)",
                        rows,
                    )
                conn.execute(
                    "INSERT INTO chunk_postings(chunk, repo, lexeme, impact) SELECT c.id, c.repo, i.lexeme, "
                    "i.impact FROM chunks c, tributary_impacts(c.terms) i WHERE c.file_id = %s",
                    (file_id,),
                )
            if pending:
                with conn.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO pending_embeds(repo, embed_hash, embed_text, embed_order) "
                        "VALUES (%s, %s, %s, %s) ON CONFLICT (repo, embed_hash) DO UPDATE SET "
                        "embed_order = LEAST(pending_embeds.embed_order, EXCLUDED.embed_order)",
                        [(self.repo, h, text, order) for h, text in pending.items()],
                    )

    def pending_embeds(self, limit: int, after: PendingCursor = QUEUE_START) -> list[PendingText]:
        """Up to ``limit`` texts still to embed after ``after``, by order, then hash."""
        if after == QUEUE_START:  # a new sweep: forget texts no chunk waits for (file changed or gone)
            with self.db.transaction() as conn:
                conn.execute(
                    "DELETE FROM pending_embeds p WHERE p.repo = %s AND NOT EXISTS (SELECT 1 FROM "
                    "chunks c WHERE c.repo = p.repo AND c.embed_hash = p.embed_hash AND c.embedding IS NULL)",
                    (self.repo,),
                )
        rows = self.db.read(lambda c: c.execute(
            "SELECT embed_hash, embed_text, embed_order FROM pending_embeds WHERE repo = %s "
            "AND (embed_order, embed_hash) > (%s, %s) ORDER BY embed_order, embed_hash LIMIT %s",
            (self.repo, *after, limit)).fetchall())  # fmt: skip
        return [PendingText(str(h), str(t), int(o)) for h, t, o in rows]

    def add_vectors(self, vectors: Mapping[str, Vectors], model: ModelInfo) -> int:
        """Give every waiting chunk of these embed hashes its vector; how many got one.
        Raises ``ModelChanged``, writing nothing, unless ``model`` is still the index's."""
        added = 0
        with self.db.transaction() as conn:
            lock_repository(conn, self.repo)
            current = self.model()
            if current != model:
                raise ModelChanged(
                    f"repository {self.repo}: the index now records {current}, not {model}"
                )
            self._bump(conn)
            for embed_hash, vector in vectors.items():
                done = conn.execute(
                    "UPDATE chunks SET embedding = %s WHERE repo = %s AND embed_hash = %s AND embedding IS NULL",
                    (np.ascontiguousarray(vector, dtype=np.float32), self.repo, embed_hash),
                )
                added += max(done.rowcount, 0)
                conn.execute(
                    "DELETE FROM pending_embeds WHERE repo = %s AND embed_hash = %s",
                    (self.repo, embed_hash),
                )
        return added

    def vector_counts(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks)."""
        # (the waiting ones through their partial index: counting all would read every row)
        row = self.db.read(lambda c: c.execute(
            "SELECT (SELECT COALESCE(SUM(chunks), 0) FROM files WHERE repo = %s), "
            "(SELECT COUNT(*) FROM chunks WHERE repo = %s AND embedding IS NULL)",
            (self.repo, self.repo)).fetchone())  # fmt: skip
        return (int(row[0]) - int(row[1]), int(row[0])) if row else (0, 0)

    def code_waiting(self) -> bool:
        """Whether a chunk of a code file still waits for its vector."""
        row = self.db.read(lambda c: c.execute(
            "SELECT EXISTS (SELECT 1 FROM pending_embeds p WHERE p.repo = %s AND p.embed_order = %s "
            "AND EXISTS (SELECT 1 FROM chunks c WHERE c.repo = p.repo AND c.embed_hash = p.embed_hash "
            "AND c.embedding IS NULL))", (self.repo, base.CODE_ORDER)).fetchone())  # fmt: skip
        return bool(row[0]) if row else False

    def delete_files(self, paths: Iterable[str]) -> None:
        for path in paths:
            with self.db.transaction() as conn:
                self._bump(conn)
                conn.execute("DELETE FROM files WHERE repo = %s AND path = %s", (self.repo, path))

    # reads --------------------------------------------------------------------
    def warm(self) -> None:
        """Nothing to load: the server holds the vectors."""

    def dense_search(self, vector: Vectors, k: int, where: SearchFilter) -> list[tuple[int, float]]:
        model = self.model()
        if model is None or k <= 0:
            return []
        kind = self.vector_index()
        clauses, params = _filters(where)
        # Exact when filtered (an approximate index filtered afterwards returns too few).
        exact = bool(clauses) or kind == "exact"
        rows = self.collection.dense(
            vector, k, dim=model.dim, columns=["file_id"], where=clauses, params=params,
            setting=None if exact else self._scan_setting(kind, k),
        )  # fmt: skip
        self._remember({int(cid): int(fid) for cid, _, fid in rows})
        return [(int(cid), float(score)) for cid, score, _ in rows]

    def _scan_setting(self, kind: VectorIndex, k: int) -> str:
        """How far the approximate index searches for ``k`` neighbours (a session setting:
        every approximate search sets it first)."""
        if kind == "hnsw":
            return f"SET hnsw.ef_search = {min(MAX_EF_SEARCH, max(MIN_EF_SEARCH, k))}"
        lists = int(self.get_meta("ivfflat_lists") or 1)  # (read each time: a rebuild changes it)
        return f"SET ivfflat.probes = {max(1, int(lists**0.5))}"

    def candidates(
        self, query: str, vector: QueryVector, k: int, where: SearchFilter
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """The keyword query runs on a second connection while the query is embedded and
        the vector query runs on this one: the server answers both at once."""
        if vector is None:
            return [], self.keyword_search(query, k, where)
        keyword = _keyword_pool().submit(self.keyword_search, query, k, where)
        try:
            embedded = vector() if callable(vector) else vector
            dense = self.dense_search(embedded, min(k, DENSE_POOL), where)
        finally:
            words = keyword.result()
        return dense, words

    def keyword_search(self, query: str, k: int, where: SearchFilter) -> list[tuple[int, float]]:
        """Chunks ranked by BM25 over the query's words, as on SQLite (words in more than
        ``COMMON_TERM_SHARE`` of the chunks left out), read from the postings: without a
        filter only each word's ``POSTINGS_PER_WORD`` best chunks, which bounds the work
        whatever the index's size, the ``COMPLETED_PER_SEARCH`` best of them then scored
        by every word; with one, every chunk holding a word."""
        terms = list(dict.fromkeys(keyword_terms(query)))
        if not terms:
            return []
        found, total = self._word_counts(terms)
        kept = [(w, n) for w, n in found if n <= total * COMMON_TERM_SHARE] or found
        clauses, params = _filters(where)
        rows = self.collection.postings(
            [(word, idf(n, total), n) for word, n in kept], k, per_word=None if clauses else POSTINGS_PER_WORD,
            complete=COMPLETED_PER_SEARCH, columns=["file_id"], where=clauses, params=params,
        )  # fmt: skip
        self._remember({int(cid): int(fid) for cid, _, fid in rows})
        return [(int(cid), float(score)) for cid, score, _ in rows]

    def _word_counts(self, terms: Sequence[str]) -> tuple[list[tuple[str, int]], int]:
        """Each term's lexemes (in the terms' order) with the chunks holding each, and the
        chunks counted: from ``term_stats`` (one query), or, before an indexing pass has
        counted them, from the postings (capped; cached until the repository is written to)."""
        rows = self.db.read(lambda c: c.execute(
            "SELECT l.lexeme, COALESCE(s.chunks, 0), (SELECT value FROM repo_meta WHERE repo = %s "
            f"AND scope = '{_META_SCOPE}' AND key = 'term_stats_chunks') "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS t(term, n) "
            f"CROSS JOIN LATERAL unnest(to_tsvector('{TS_CONFIG}', t.term)) AS l "
            "LEFT JOIN term_stats s ON s.repo = %s AND s.lexeme = l.lexeme ORDER BY t.n",
            (self.repo, list(terms), self.repo)).fetchall())  # fmt: skip
        if not rows:
            return [], 0
        if rows[0][2] is not None:
            return [(str(word), int(n)) for word, n, _ in rows], int(rows[0][2])
        return self._counted([str(word) for word, _, _ in rows])

    def _counted(self, words: Sequence[str]) -> tuple[list[tuple[str, int]], int]:
        version, total = self.db.read(lambda c: c.execute(
            "SELECT version, (SELECT COALESCE(SUM(chunks), 0) FROM files WHERE repo = %s) "
            "FROM repositories WHERE id = %s", (self.repo, self.repo)).fetchone() or (None, 0))  # fmt: skip
        if version != self._df_version:
            self._df.clear()
            self._df_version = version
        cap = int(int(total) * COMMON_TERM_SHARE) + 1
        missing = [word for word in dict.fromkeys(words) if word not in self._df]
        if missing:
            rows = self.db.read(lambda c: c.execute(
                "SELECT w.word, (SELECT COUNT(*) FROM (SELECT 1 FROM chunk_postings WHERE repo = %s "
                "AND lexeme = w.word LIMIT %s) s) FROM unnest(%s::text[]) AS w(word)",
                (self.repo, cap, missing)).fetchall())  # fmt: skip
            self._df.update((str(word), int(n)) for word, n in rows)
        return [(word, self._df[word]) for word in words], int(total)

    def _count_matching(self, text: str, limit: int) -> int:
        """How many chunks ``to_tsquery(text)`` matches, counting up to ``limit``."""
        row = self.db.read(lambda c: c.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM chunks WHERE repo = %s AND "
            f"terms @@ to_tsquery('{TS_CONFIG}', %s) LIMIT %s) s", (self.repo, text, limit)).fetchone())  # fmt: skip
        return int(row[0]) if row else 0

    def symbol_search(
        self, names: Iterable[str], k: int, where: SearchFilter, written: frozenset[str] = frozenset()
    ) -> list[int]:
        """Chunks that define one of ``names`` (compared case-folded), best first: the
        same rules as the SQLite backend's (symbols named so, in ``symbol_order``; else
        definitions nested in a chunk, found among the body matches)."""
        wanted = frozenset(name.casefold() for name in names if name)
        if not wanted:
            return []
        clauses, params = _filters(where)
        extra = "".join(" AND " + x for x in clauses)
        rows = self.db.read(lambda c: c.execute(
            # (a Markdown section's heading is its symbol, but it defines nothing)
            f"SELECT id, symbol FROM chunks WHERE repo = %s AND symbol_key = ANY(%s) AND kind <> 'text'{extra}",
            [self.repo, sorted(wanted), *params]).fetchall())  # fmt: skip
        found = sorted((*base.symbol_order(str(s), written), int(cid)) for cid, s in rows)
        ranked = [cid for *_, cid in found[:k]]
        if ranked:
            return ranked
        phrases = [
            "(" + " <-> ".join(f"{w.lower()}:D" for w in words) + ")"
            for name in sorted(wanted)
            if (words := _ALNUM.findall(name))
        ]
        if not phrases:
            return []
        text = " | ".join(phrases)
        if self._count_matching(text, base.NESTED_MAX_USES + 1) > base.NESTED_MAX_USES:
            return []
        nested = self.db.read(lambda c: c.execute(
            f"SELECT id, content FROM (SELECT id, content, ts_rank('{RANK_WEIGHTS}', terms, q) AS r "
            f"FROM chunks, to_tsquery('{TS_CONFIG}', %s) q WHERE repo = %s AND terms @@ q{extra} "
            "ORDER BY r DESC, id LIMIT %s) best ORDER BY id",
            [text, self.repo, *params, base.NESTED_POOL]).fetchall())  # fmt: skip
        return [int(cid) for cid, content in nested if definition_signal(str(content), wanted)][:k]

    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, StoredChunk]:
        unique = list(dict.fromkeys(int(i) for i in ids))
        if not unique:
            return {}
        rows = self.db.read(lambda c: c.execute(
            "SELECT c.id, f.path, f.language, c.kind, c.symbol, c.signature, c.docstring, "
            "c.start_line, c.end_line, c.content FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE c.id = ANY(%s)", (unique,)).fetchall())  # fmt: skip
        return {int(r[0]): StoredChunk(*r) for r in rows}

    def unembedded(self, chunk_ids: Sequence[int]) -> set[int]:
        if not chunk_ids:
            return set()
        wanted = [int(i) for i in chunk_ids]
        rows = self.db.read(lambda c: c.execute(
            "SELECT id FROM chunks WHERE id = ANY(%s) AND embedding IS NULL", (wanted,)).fetchall())  # fmt: skip
        return {int(row[0]) for row in rows}

    def file_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        """Each chunk's file: from what the searches returned (a chunk id never moves to
        another file: a rewritten file gets new chunks), else asked."""
        wanted = [int(i) for i in chunk_ids if int(i) not in self._file_of]
        if wanted:
            rows = self.db.read(lambda c: c.execute(
                "SELECT id, file_id FROM chunks WHERE id = ANY(%s)", (wanted,)).fetchall())  # fmt: skip
            self._remember({int(cid): int(fid) for cid, fid in rows})
        known = self._file_of  # (after remembering: a full map starts afresh)
        return {int(cid): known[int(cid)] for cid in chunk_ids if int(cid) in known}

    def _remember(self, file_of: Mapping[int, int]) -> None:
        if len(self._file_of) + len(file_of) > FILE_OF_LIMIT:
            self._file_of = {}
        self._file_of.update(file_of)

    def chunk_ids_matching(self, path_glob: str) -> frozenset[int]:
        """Chunks of files whose path matches ``path_glob`` (``*`` also crosses ``/``)."""
        if not any(c in path_glob for c in "*?["):  # a path (a task names many): asked of the server
            like = "%/" + re.sub(r"([\\%_])", r"\\\1", path_glob)
            rows = self.db.read(lambda c: c.execute(
                "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.repo = %s "
                "AND (f.path = %s OR f.path LIKE %s)", (self.repo, path_glob, like)).fetchall())  # fmt: skip
            return frozenset(int(r[0]) for r in rows)
        pattern = path_glob.replace("**/", "*").replace("/**", "/*")
        files = self.db.read(lambda c: c.execute(
            "SELECT id, path FROM files WHERE repo = %s", (self.repo,)).fetchall())  # fmt: skip
        chosen = [
            int(fid) for fid, path in files
            if fnmatch.fnmatchcase(str(path), pattern) or fnmatch.fnmatchcase(str(path), "*/" + pattern)
        ]  # fmt: skip
        if not chosen:
            return frozenset()
        rows = self.db.read(lambda c: c.execute(
            "SELECT id FROM chunks WHERE file_id = ANY(%s)", (chosen,)).fetchall())  # fmt: skip
        return frozenset(int(r[0]) for r in rows)

    def counts(self) -> tuple[int, int]:
        row = self.db.read(lambda c: c.execute(
            "SELECT COUNT(*), COALESCE(SUM(chunks), 0) FROM files WHERE repo = %s", (self.repo,)
        ).fetchone())  # fmt: skip
        return (int(row[0]), int(row[1])) if row else (0, 0)


def _filters(where: SearchFilter) -> tuple[list[str], list[Any]]:
    """SQL conditions on ``chunks`` for ``where``, and their parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if where.languages:
        clauses.append("language = ANY(%s)")
        params.append(list(where.languages))
    if where.kinds:
        clauses.append("kind = ANY(%s)")
        params.append(list(where.kinds))
    if where.path_ids is not None:
        clauses.append("id = ANY(%s)")
        params.append(sorted(where.path_ids))
    return clauses, params
