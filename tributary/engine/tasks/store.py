"""The task-history store: one SQLite file per repository.

Tables: ``tasks`` (one row per task, keyed by the source's id), ``task_files`` (task →
path), ``tasks_fts`` (FTS5 over title, body and path tokens, for BM25), ``tasks_vec``
(sqlite-vec, cosine, with the task's timestamp as a metadata column so a KNN query
can be limited to tasks before a date; made, recorded and held in memory through
``tributary.engine.localsearch.vectors``), ``renames`` (path moves seen in git history),
``snapshot_files`` (the files that exist in the repository now) and ``meta``.

Writes go in batches, each one transaction holding the rows *and* their embeddings,
so a crash never leaves a task without its vector; re-imports skip unchanged tasks
by content hash, which also makes an interrupted import resumable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from tributary.engine.localsearch.collection import KeywordIndex, SqliteCollection, rank_dense
from tributary.engine.localsearch.db import (
    Connection,
    connect,
    migrate,
    transaction,
    write_meta,
)
from tributary.engine.localsearch.embedder import Embedder, ModelInfo
from tributary.engine.localsearch.fts import fts_query, fts_terms
from tributary.engine.localsearch.longquery import is_task_question, read_task
from tributary.engine.localsearch.vectors import (
    VectorMatrix,
    VectorTable,
    coarse_scorer,
    upgrade_model_record,
    vector_bytes,
)
from tributary.engine.tasks.model import Changed, ImportStats, Rename, Task, TaskStats

BATCH = 256

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE tasks (
        id INTEGER PRIMARY KEY,
        task_id TEXT NOT NULL UNIQUE,
        ts INTEGER NOT NULL,
        date TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        source TEXT NOT NULL,
        hash TEXT NOT NULL
    );
    CREATE INDEX tasks_ts ON tasks(ts);
    CREATE TABLE task_files (
        task INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        PRIMARY KEY (task, path)
    ) WITHOUT ROWID;
    CREATE INDEX task_files_path ON task_files(path);
    CREATE VIRTUAL TABLE tasks_fts USING fts5(title, body, paths, tokenize='porter unicode61');
    CREATE TABLE renames (
        old_path TEXT NOT NULL,
        new_path TEXT NOT NULL,
        ts INTEGER NOT NULL,
        PRIMARY KEY (old_path, new_path, ts)
    ) WITHOUT ROWID;
    CREATE TABLE snapshot_files (path TEXT PRIMARY KEY) WITHOUT ROWID;
    """,
    """
    ALTER TABLE tasks ADD COLUMN author TEXT NOT NULL DEFAULT '';
    """,
    """
    CREATE TABLE task_functions (
        task INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        name TEXT NOT NULL,
        line TEXT NOT NULL,
        PRIMARY KEY (task, path, name)
    ) WITHOUT ROWID;
    """,
)

# FTS5 column weights for bm25(): title, body, path tokens (measured in bench/tasks_pytest.py).
FTS_WEIGHTS = (2.0, 1.0, 0.5)
TASK_KEYWORDS = KeywordIndex("tasks_fts", FTS_WEIGHTS)
MAX_QUERY_TERMS = 64


def query_terms(text: str) -> list[str]:
    """A task query's FTS terms: the shared code-aware ones (``tributary.engine.localsearch.fts``),
    numbers kept, since task titles name issues and versions with them; for an
    issue-length question, the terms that say what it is about, wherever they stand."""
    if is_task_question(text):
        return list(read_task(text).terms)
    return fts_terms(text, numbers=True, limit=MAX_QUERY_TERMS)


def path_tokens(paths: Iterable[str]) -> str:
    """Paths as words for FTS: ``src/_pytest/junitxml.py`` → ``src pytest junitxml py``."""
    return " ".join(re.sub(r"[^0-9A-Za-z]+", " ", path).strip() for path in paths)


# The tasks' vectors, by task row id, with the task's time for ``as_of`` searches.
TASK_VECTORS = VectorTable("tasks_vec", metadata=("ts integer",))


@dataclass(frozen=True, slots=True)
class _TaskVectors(VectorMatrix):
    """Every task's unit vector (``matrix``) with its time."""

    ts: npt.NDArray[np.int64]


class TaskStore:
    """Read and write one repository's task history."""

    def __init__(
        self, path: Path | str, *, readonly: bool = False, check_same_thread: bool = True
    ) -> None:
        self.path = Path(path)
        self.conn: Connection = connect(
            self.path, readonly=readonly, check_same_thread=check_same_thread
        )
        self.collection = SqliteCollection(
            self.conn, keywords=TASK_KEYWORDS, vectors=TASK_VECTORS, load=self._load_vectors
        )
        self._author: bool | None = None
        self._functions: bool | None = None
        if not readonly:
            migrate(self.conn, MIGRATIONS)
            upgrade_model_record(self.conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> TaskStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta ---------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        return self.collection.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        with transaction(self.conn):
            self.collection.set_meta(key, value)

    # -- embeddings bookkeeping ---------------------------------------------------------

    def model(self) -> ModelInfo | None:
        """The model the tasks' vectors were made by (None: no vectors)."""
        return self.collection.model()

    def has_vectors(self) -> bool:
        return self.model() is not None

    def vector_counts(self) -> tuple[int, int]:
        """(tasks with a vector, all tasks)."""
        total = int(self.conn.execute("SELECT COUNT(*) FROM tasks").fetchone()[0])
        if not self.has_vectors():
            return 0, total
        return int(self.conn.execute("SELECT COUNT(*) FROM tasks_vec").fetchone()[0]), total

    def _ensure_vector_table(self, embedder: Embedder) -> list[int]:
        """Create the vector table for ``embedder``; on a model change drop the old vectors.

        Returns the ids of tasks that need (re-)embedding because of a model change.
        """
        info = ModelInfo.of(embedder)
        if self.model() == info:
            return []
        with transaction(self.conn):
            self.collection.make_vector_table(info)
        return [int(row[0]) for row in self.conn.execute("SELECT id FROM tasks ORDER BY id")]

    def embed_missing(
        self, embedder: Embedder, on_progress: Callable[[int, int], None] | None = None
    ) -> int:
        """Embed every task without a vector (after a model change); return how many."""
        todo = self._ensure_vector_table(embedder)
        if not todo:
            have = {int(r[0]) for r in self.conn.execute("SELECT rowid FROM tasks_vec")}
            todo = [
                int(r[0])
                for r in self.conn.execute("SELECT id FROM tasks")
                if int(r[0]) not in have
            ]
        for start in range(0, len(todo), BATCH):
            ids = todo[start : start + BATCH]
            marks = ",".join("?" * len(ids))
            rows = self.conn.execute(
                f"SELECT id, ts, title, body FROM tasks WHERE id IN ({marks})", ids
            ).fetchall()
            vectors = embedder.encode([f"{r[2]}\n\n{r[3]}".strip() for r in rows])
            with transaction(self.conn):
                for row, vector in zip(rows, vectors, strict=True):
                    self.conn.execute("DELETE FROM tasks_vec WHERE rowid = ?", (row[0],))
                    self.conn.execute(
                        "INSERT INTO tasks_vec(rowid, embedding, ts) VALUES (?, ?, ?)",
                        (row[0], vector_bytes(vector), row[1]),
                    )
            if on_progress:
                on_progress(min(start + BATCH, len(todo)), len(todo))
        return len(todo)

    # -- writing ------------------------------------------------------------------

    def existing_hashes(self) -> dict[str, str]:
        return {str(r[0]): str(r[1]) for r in self.conn.execute("SELECT task_id, hash FROM tasks")}

    def upsert(
        self,
        tasks: Sequence[Task],
        stats: ImportStats,
        *,
        embedder: Embedder | None = None,
        renames: Sequence[Rename] = (),
        meta: dict[str, str] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Add new tasks, replace changed ones, skip unchanged ones (by content hash).

        Each batch of tasks — rows, files, FTS and vectors — is one transaction; the
        renames and ``meta`` are written with the last batch, so an import that stops
        half-way is simply continued by the next one.
        """
        if embedder is not None:
            stats.embedded += self.embed_missing(embedder)
        known = self.existing_hashes()
        changed: list[Task] = []
        seen: set[str] = set()
        for task in tasks:
            if task.id in seen:  # the same id twice in one import: the later one wins
                changed = [t for t in changed if t.id != task.id]
            seen.add(task.id)
            old = known.get(task.id)
            if old == task.content_hash():
                stats.unchanged += 1
                continue
            changed.append(task)
        for start in range(0, max(len(changed), 1), BATCH):
            batch = changed[start : start + BATCH]
            vectors = embedder.encode([t.text for t in batch]) if embedder and batch else None
            last = start + BATCH >= len(changed)
            with transaction(self.conn):
                for i, task in enumerate(batch):
                    self._write_task(task, None if vectors is None else vectors[i], known, stats)
                if vectors is not None:
                    stats.embedded += len(batch)
                if last:
                    self.conn.executemany(
                        "INSERT OR IGNORE INTO renames(old_path, new_path, ts) VALUES (?, ?, ?)",
                        [(r.old_path, r.new_path, r.timestamp) for r in renames],
                    )
                    for key, value in (meta or {}).items():
                        write_meta(self.conn, key, value)
                    write_meta(self.conn, "updated_at", datetime.now(UTC).isoformat())
            if on_progress:
                on_progress(min(start + BATCH, len(changed)), len(changed))

    def _write_task(
        self, task: Task, vector: np.ndarray | None, known: dict[str, str], stats: ImportStats
    ) -> None:
        conn = self.conn
        files = tuple(dict.fromkeys(task.files))
        row = conn.execute("SELECT id FROM tasks WHERE task_id = ?", (task.id,)).fetchone()
        if row is not None:
            rowid = int(row[0])
            conn.execute(
                "UPDATE tasks SET ts=?, date=?, title=?, body=?, source=?, hash=?, author=? WHERE id=?",
                (
                    task.timestamp,
                    task.date.isoformat(),
                    task.title,
                    task.body,
                    task.source,
                    task.content_hash(),
                    task.author,
                    rowid,
                ),
            )
            conn.execute("DELETE FROM task_files WHERE task = ?", (rowid,))
            conn.execute("DELETE FROM tasks_fts WHERE rowid = ?", (rowid,))
            if self.has_vectors():
                conn.execute("DELETE FROM tasks_vec WHERE rowid = ?", (rowid,))
            stats.updated += 1
        else:
            cursor = conn.execute(
                "INSERT INTO tasks(task_id, ts, date, title, body, source, hash, author) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    task.id,
                    task.timestamp,
                    task.date.isoformat(),
                    task.title,
                    task.body,
                    task.source,
                    task.content_hash(),
                    task.author,
                ),
            )
            rowid = int(cursor.lastrowid or 0)
            stats.added += 1
        known[task.id] = task.content_hash()
        conn.executemany(
            "INSERT INTO task_files(task, path) VALUES (?, ?)", [(rowid, p) for p in files]
        )
        conn.execute(
            "INSERT INTO tasks_fts(rowid, title, body, paths) VALUES (?, ?, ?, ?)",
            (rowid, task.title, task.body, path_tokens(files)),
        )
        if vector is not None:
            conn.execute(
                "INSERT INTO tasks_vec(rowid, embedding, ts) VALUES (?, ?, ?)",
                (rowid, vector_bytes(vector), task.timestamp),
            )

    def record_functions(
        self, functions: Mapping[str, Sequence[Changed]], meta: dict[str, str], *, whole: bool = False
    ) -> int:
        """Record the (path, name, line) of the functions each task (by id) changed, and
        ``meta``, in one transaction; tasks not in the history are passed over. The
        number of tasks that got functions. ``whole``: a read of the whole history,
        which replaces what was recorded."""
        ids = list(functions)
        recorded = 0
        with transaction(self.conn):
            if whole:
                self.conn.execute("DELETE FROM task_functions")
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self.conn.execute(f"SELECT task_id, id FROM tasks WHERE task_id IN ({marks})", chunk)
                for task_id, rowid in rows.fetchall():
                    self.conn.executemany(
                        "INSERT OR IGNORE INTO task_functions(task, path, name, line) VALUES (?, ?, ?, ?)",
                        [(int(rowid), *changed) for changed in functions[str(task_id)]],
                    )
                    recorded += 1
            for key, value in meta.items():
                write_meta(self.conn, key, value)
        return recorded

    def set_snapshot_files(self, paths: Iterable[str]) -> None:
        """Record which files exist in the repository now (replacing the previous set)."""
        with transaction(self.conn):
            self.conn.execute("DELETE FROM snapshot_files")
            self.conn.executemany(
                "INSERT OR IGNORE INTO snapshot_files(path) VALUES (?)", [(p,) for p in paths]
            )
            write_meta(self.conn, "updated_at", datetime.now(UTC).isoformat())

    # -- reading ------------------------------------------------------------------

    def bm25(self, query: str, limit: int, as_of: int | None = None) -> list[tuple[int, float]]:
        """Task row ids by BM25 (best first) with a positive score (higher is better)."""
        match = fts_query(query_terms(query))
        if match is None:
            return []
        if as_of is None:
            return self.collection.keyword(match, limit)
        return self.collection.keyword(
            match, limit, join=" JOIN tasks t ON t.id = tasks_fts.rowid", where=["t.ts <= ?"], params=[as_of]
        )

    def knn(
        self, vector: np.ndarray, limit: int, as_of: int | None = None
    ) -> list[tuple[int, float]]:
        """Task row ids by cosine similarity to ``vector`` (best first), as (id, similarity),
        ties by id: the collection's exact KNN over every task's vector held in memory,
        with ``as_of`` as a mask on the tasks' times (docs/benchmarks.md compares it with
        sqlite-vec's own scan)."""
        if limit <= 0 or not np.any(vector) or not self.has_vectors():
            return []
        cache = self._vectors()
        if cache is None:
            return []
        query = np.asarray(vector, dtype=np.float32)
        query = query / np.linalg.norm(query)
        return rank_dense(cache, query, limit, None if as_of is None else cache.ts <= as_of)

    def _vectors(self) -> _TaskVectors | None:
        return self.collection.vectors()

    def warm(self) -> None:
        """Load the vector matrix now, so the first search does not pay for it."""
        if self.has_vectors():
            self._vectors()

    def _load_vectors(self, conn: Connection) -> _TaskVectors | None:
        """Every task's unit vector, its row id and time. Tasks whose vector is all zeros
        (no word the model knows) have no cosine and are left out, as sqlite-vec leaves
        them out."""
        if not TASK_VECTORS.exists(conn):
            return None
        rows = conn.execute("SELECT rowid, embedding, ts FROM tasks_vec ORDER BY rowid").fetchall()
        if not rows:
            return None
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        norms = np.linalg.norm(matrix, axis=1)
        keep = norms > 0
        unit = np.ascontiguousarray(matrix[keep] / norms[keep, None], dtype=np.float32)
        return _TaskVectors(
            ids=np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))[keep],
            matrix=unit,
            coarse=coarse_scorer(unit),
            ts=np.fromiter((r[2] if r[2] is not None else 0 for r in rows), dtype=np.int64, count=len(rows))[keep],
        )

    def load(self, rowids: Sequence[int]) -> dict[int, Task]:
        """The tasks with these row ids, with their files."""
        out: dict[int, Task] = {}
        for start in range(0, len(rowids), 500):
            ids = list(rowids[start : start + 500])
            marks = ",".join("?" * len(ids))
            files: dict[int, list[str]] = {}
            for task, path in self.conn.execute(
                f"SELECT task, path FROM task_files WHERE task IN ({marks})", ids
            ):
                files.setdefault(int(task), []).append(str(path))
            functions: dict[int, list[Changed]] = {}
            if self._has_functions():
                for task, path, name, line in self.conn.execute(
                    f"SELECT task, path, name, line FROM task_functions WHERE task IN ({marks})", ids
                ):
                    functions.setdefault(int(task), []).append((str(path), str(name), str(line)))
            author = "author" if self._has_author() else "''"
            for row in self.conn.execute(
                f"SELECT id, task_id, date, title, body, source, {author} FROM tasks WHERE id IN ({marks})",
                ids,
            ):
                rowid = int(row[0])
                out[rowid] = Task(
                    id=str(row[1]),
                    date=datetime.fromisoformat(str(row[2])),
                    title=str(row[3]),
                    body=str(row[4]),
                    files=tuple(sorted(files.get(rowid, []))),
                    source=str(row[5]),
                    author=str(row[6] or ""),
                    functions=tuple(sorted(functions.get(rowid, []))),
                )
        return out

    def _has_functions(self) -> bool:
        """Whether the file has the functions table (an older file opened read-only has not)."""
        if self._functions is None:
            found = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'task_functions'").fetchone()
            self._functions = found is not None
        return self._functions

    def _has_author(self) -> bool:
        """Whether the file has the author column (a read-only open of an older file is
        not migrated, and reads no authors)."""
        if self._author is None:
            columns = {str(r[1]) for r in self.conn.execute("PRAGMA table_info(tasks)")}
            self._author = "author" in columns
        return self._author

    def renames(self) -> list[Rename]:
        return [
            Rename(str(r[0]), str(r[1]), int(r[2]))
            for r in self.conn.execute("SELECT old_path, new_path, ts FROM renames ORDER BY ts")
        ]

    def snapshot_files(self) -> set[str]:
        return {str(r[0]) for r in self.conn.execute("SELECT path FROM snapshot_files")}

    def file_touches(self) -> list[tuple[str, int]]:
        """Every (path, task timestamp) pair: which files were touched when."""
        return [
            (str(r[0]), int(r[1]))
            for r in self.conn.execute(
                "SELECT f.path, t.ts FROM task_files f JOIN tasks t ON t.id = f.task"
            )
        ]

    def stats(self) -> TaskStats:
        conn = self.conn
        result = TaskStats(db_path=str(self.path))
        result.tasks = int(conn.execute("SELECT COUNT(*) FROM tasks").fetchone()[0])
        result.files = int(
            conn.execute("SELECT COUNT(DISTINCT path) FROM task_files").fetchone()[0]
        )
        result.by_source = {
            str(s): int(n)
            for s, n in conn.execute("SELECT source, COUNT(*) FROM tasks GROUP BY source")
        }
        first, last = conn.execute("SELECT MIN(ts), MAX(ts) FROM tasks").fetchone()
        if first is not None:
            result.first = datetime.fromtimestamp(int(first), UTC)
            result.last = datetime.fromtimestamp(int(last), UTC)
        model = self.model()
        result.embedder = model.signature if model else None
        result.last_git_commit = self.get_meta("git_head")
        if self._has_functions():
            result.with_functions = int(conn.execute("SELECT COUNT(DISTINCT task) FROM task_functions").fetchone()[0])
        return result
