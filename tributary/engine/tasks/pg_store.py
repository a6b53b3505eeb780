"""One repository's task history in the shared PostgreSQL database (``TaskHistory``).

The same contract as ``tributary.engine.tasks.store.TaskStore``: each batch of tasks — rows,
files, words and embeddings — is one transaction; re-imports skip unchanged tasks by
content hash; keyword hits come ranked with a positive score, dense hits as cosine
similarities (exact: a repository's history is thousands of rows, not millions).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from tributary.engine.localsearch.embedder import Embedder, ModelInfo
from tributary.engine.postgres.collection import (
    COMPLETED_PER_SEARCH,
    POSTINGS_PER_WORD,
    TS_CONFIG,
    PgCollection,
    idf,
)
from tributary.engine.postgres.db import Connection, Database, redact
from tributary.engine.postgres.repositories import ensure_repository, find_repository
from tributary.engine.tasks.model import Changed, ImportStats, Rename, Task, TaskStats
from tributary.engine.tasks.store import BATCH, path_tokens, query_terms

# The postings' weights are made over the history's average length in words; they are
# made again once that average has moved by this share (as a history grows).
LENGTH_DRIFT = 0.1
_META_SCOPE = "tasks"
_LENGTH_KEY = "postings_length"
# Task postings made from the tasks' weighted terms over an average length; the caller
# adds which tasks (a condition on ``t``) and gives the length, then that condition's value.
_POSTINGS_OF_TASKS = (
    "INSERT INTO task_postings(task, repo, lexeme, impact) SELECT t.id, t.repo, i.lexeme, i.impact "
    "FROM tasks t, tributary_task_impacts(t.terms, %s::real) i WHERE "
)
_NON_WORD = re.compile(r"[\W_]+")


class PgTaskStore:
    """Read and write one repository's task history in a shared database."""

    def __init__(self, db: Database, repo: int, *, owns_db: bool = False) -> None:
        self.db = db
        self.repo = int(repo)
        self.collection = PgCollection(
            db, self.repo, table="tasks", scope=_META_SCOPE, postings="task_postings", postings_key="task"
        )
        self.path = redact(db.dsn)
        self._owns_db = owns_db

    @classmethod
    def open(cls, dsn: str, root: str, *, create: bool = True) -> PgTaskStore | None:
        """The history of the repository at ``root`` on its own connection; with
        ``create`` false, None when the database has no such repository."""
        db = Database(dsn, application_name="tributary-tasks")
        try:
            repo = ensure_repository(db, root, None) if create else find_repository(db, root)
        except BaseException:
            db.close()
            raise
        if repo is None:
            db.close()
            return None
        return cls(db, repo, owns_db=True)

    def close(self) -> None:
        if self._owns_db:
            self.db.close()

    def __enter__(self) -> PgTaskStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta -----------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        return self.collection.get_meta(key)

    def _set_meta(self, conn: Connection, key: str, value: str) -> None:
        self.collection.write_meta(conn, key, value)

    def set_meta(self, key: str, value: str) -> None:
        with self.db.transaction() as conn:
            self._set_meta(conn, key, value)

    # -- embeddings -----------------------------------------------------------------
    def model(self) -> ModelInfo | None:
        """The model the tasks' vectors were made by (None: no vectors)."""
        return self.collection.model()

    def has_vectors(self) -> bool:
        return self.model() is not None

    def vector_counts(self) -> tuple[int, int]:
        """(tasks with a vector, all tasks)."""
        row = self.db.read(lambda c: c.execute(
            "SELECT COUNT(embedding), COUNT(*) FROM tasks WHERE repo = %s", (self.repo,)).fetchone())  # fmt: skip
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def embed_missing(
        self, embedder: Embedder, on_progress: Callable[[int, int], None] | None = None
    ) -> int:
        """Embed every task without a vector (all of them after a model change)."""
        info = ModelInfo.of(embedder)
        if self.model() != info:
            with self.db.transaction() as conn:
                conn.execute("UPDATE tasks SET embedding = NULL WHERE repo = %s", (self.repo,))
                self.collection.write_model(conn, info)
        todo = [int(r[0]) for r in self.db.read(lambda c: c.execute(
            "SELECT id FROM tasks WHERE repo = %s AND embedding IS NULL ORDER BY id", (self.repo,)
        ).fetchall())]  # fmt: skip
        for start in range(0, len(todo), BATCH):
            ids = todo[start : start + BATCH]
            rows = self._rows_to_embed(ids)
            vectors = embedder.encode([f"{r[1]}\n\n{r[2]}".strip() for r in rows])
            with self.db.transaction() as conn, conn.cursor() as cursor:
                cursor.executemany(
                    "UPDATE tasks SET embedding = %s WHERE id = %s",
                    [(np.asarray(v, dtype=np.float32), r[0]) for r, v in zip(rows, vectors, strict=True)],
                )
            if on_progress:
                on_progress(min(start + BATCH, len(todo)), len(todo))
        return len(todo)

    def _rows_to_embed(self, ids: list[int]) -> list[Any]:
        return self.db.read(lambda c: c.execute(
            "SELECT id, title, body FROM tasks WHERE id = ANY(%s) ORDER BY id", (ids,)).fetchall())  # fmt: skip

    # -- writing --------------------------------------------------------------------
    def existing_hashes(self) -> dict[str, str]:
        rows = self.db.read(lambda c: c.execute(
            "SELECT task_id, hash FROM tasks WHERE repo = %s", (self.repo,)).fetchall())  # fmt: skip
        return {str(r[0]): str(r[1]) for r in rows}

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
        """Add new tasks, replace changed ones, skip unchanged ones (by content hash);
        each batch is one transaction, renames and ``meta`` go with the last one."""
        if embedder is not None:
            stats.embedded += self.embed_missing(embedder)
        known = self.existing_hashes()
        changed: dict[str, Task] = {}
        for task in tasks:  # the same id twice in one import: the later one wins
            changed.pop(task.id, None)
            if known.get(task.id) == task.content_hash():
                stats.unchanged += 1
                continue
            changed[task.id] = task
        pending = list(changed.values())
        length = self._postings_length()
        for start in range(0, max(len(pending), 1), BATCH):
            batch = pending[start : start + BATCH]
            vectors = embedder.encode([t.text for t in batch]) if embedder and batch else None
            with self.db.transaction() as conn:
                rows = [self._write_task(conn, task, None if vectors is None else vectors[i], stats)
                        for i, task in enumerate(batch)]  # fmt: skip
                if rows:
                    if length is None:  # a new history: weighed by its first tasks
                        length = self._average_length(conn)
                        self._set_meta(conn, _LENGTH_KEY, repr(length))
                    self._write_postings(conn, rows, length)
                if vectors is not None:
                    stats.embedded += len(batch)
                if start + BATCH >= len(pending):
                    with conn.cursor() as cursor:
                        cursor.executemany(
                            "INSERT INTO renames(repo, old_path, new_path, ts) VALUES (%s, %s, %s, %s) "
                            "ON CONFLICT DO NOTHING",
                            [(self.repo, r.old_path, r.new_path, r.timestamp) for r in renames],
                        )
                    for key, value in (meta or {}).items():
                        self._set_meta(conn, key, value)
                    self._set_meta(conn, "updated_at", datetime.now(UTC).isoformat())
                    if pending and length is not None:
                        self._reweigh(conn, length)
            if on_progress:
                on_progress(min(start + BATCH, len(pending)), len(pending))

    def _postings_length(self) -> float | None:
        value = self.get_meta(_LENGTH_KEY)
        return float(value) if value else None

    def _average_length(self, conn: Connection) -> float:
        """The history's average task length in words, as its postings weigh it."""
        row = conn.execute(
            "SELECT AVG(tributary_length(terms)) FROM tasks WHERE repo = %s", (self.repo,)
        ).fetchone()
        return float(row[0]) if row and row[0] is not None else 1.0

    def _write_postings(self, conn: Connection, rows: Sequence[int], length: float) -> None:
        """The postings of the task rows ``rows`` (old ones deleted first), weighted over ``length``."""
        conn.execute("DELETE FROM task_postings WHERE task = ANY(%s)", (list(rows),))
        conn.execute(_POSTINGS_OF_TASKS + "t.id = ANY(%s)", (length, list(rows)))

    def _reweigh(self, conn: Connection, known: float) -> None:
        """Make the postings' weights again over the history's average length, once it
        has moved by ``LENGTH_DRIFT`` from ``known``, the one they were made with."""
        average = self._average_length(conn)
        if abs(average - known) <= LENGTH_DRIFT * known:
            return
        conn.execute("DELETE FROM task_postings WHERE repo = %s", (self.repo,))
        conn.execute(_POSTINGS_OF_TASKS + "t.repo = %s", (average, self.repo))
        self._set_meta(conn, _LENGTH_KEY, repr(average))

    def _write_task(self, conn: Connection, task: Task, vector: Any, stats: ImportStats) -> int:
        """Write ``task``'s row and files; its row id (its postings are the caller's)."""
        files = tuple(dict.fromkeys(task.files))
        row = conn.execute(
            "INSERT INTO tasks(repo, task_id, ts, date, title, body, source, hash, author, terms, embedding) "
            f"VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, setweight(to_tsvector('{TS_CONFIG}', %s), 'A') || "
            f"setweight(to_tsvector('{TS_CONFIG}', %s), 'B') || setweight(to_tsvector('{TS_CONFIG}', %s), 'C'), %s) "
            "ON CONFLICT (repo, task_id) DO UPDATE SET ts = EXCLUDED.ts, date = EXCLUDED.date, "
            "title = EXCLUDED.title, body = EXCLUDED.body, source = EXCLUDED.source, "
            "hash = EXCLUDED.hash, author = EXCLUDED.author, terms = EXCLUDED.terms, "
            "embedding = EXCLUDED.embedding "
            "RETURNING id, (xmax = 0)",
            (self.repo, task.id, task.timestamp, task.date.isoformat(), task.title, task.body,
             task.source, task.content_hash(), task.author, _NON_WORD.sub(" ", task.title),
             _NON_WORD.sub(" ", task.body), path_tokens(files),
             None if vector is None else np.asarray(vector, dtype=np.float32)),
        ).fetchone()  # fmt: skip
        assert row is not None
        task_row, inserted = int(row[0]), bool(row[1])
        if inserted:
            stats.added += 1
        else:
            stats.updated += 1
            conn.execute("DELETE FROM task_files WHERE task = %s", (task_row,))
        if files:
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO task_files(task, path) VALUES (%s, %s)", [(task_row, p) for p in files]
                )
        return task_row

    def record_functions(
        self, functions: Mapping[str, Sequence[Changed]], meta: dict[str, str], *, whole: bool = False
    ) -> int:
        """Record the (path, name, line) of the functions each task (by id) changed, and
        ``meta``, in one transaction; tasks not in the history are passed over. The
        number of tasks that got functions. ``whole``: a read of the whole history,
        which replaces what was recorded for this repository."""
        ids = list(functions)
        recorded = 0
        with self.db.transaction() as conn:
            if whole:
                conn.execute("DELETE FROM task_functions WHERE task IN (SELECT id FROM tasks WHERE repo = %s)",
                             (self.repo,))
            for start in range(0, len(ids), 1000):
                chunk = ids[start : start + 1000]
                rows = conn.execute(
                    "SELECT task_id, id FROM tasks WHERE repo = %s AND task_id = ANY(%s)", (self.repo, chunk)
                ).fetchall()
                pairs = [(int(row), *changed) for task_id, row in rows for changed in functions[str(task_id)]]
                with conn.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO task_functions(task, path, name, line) VALUES (%s, %s, %s, %s) "
                        "ON CONFLICT DO NOTHING",
                        pairs,
                    )
                recorded += len(rows)
            for key, value in meta.items():
                self._set_meta(conn, key, value)
        return recorded

    def set_snapshot_files(self, paths: Iterable[str]) -> None:
        """Record which files exist in the repository now (replacing the previous set)."""
        unique = sorted(set(paths))
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM snapshot_files WHERE repo = %s", (self.repo,))
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO snapshot_files(repo, path) VALUES (%s, %s)", [(self.repo, p) for p in unique]
                )
            self._set_meta(conn, "updated_at", datetime.now(UTC).isoformat())

    # -- reading --------------------------------------------------------------------
    def bm25(self, query: str, limit: int, as_of: int | None = None) -> list[tuple[int, float]]:
        """Task row ids by BM25 (best first), with a positive score: the SQLite task
        store's terms and weights, read from the postings (every posting of a word when
        ``as_of`` narrows the tasks, since a word's best may all be later)."""
        terms = query_terms(query)
        if not terms:
            return []
        rows = self.db.read(lambda c: c.execute(
            "SELECT l.lexeme, (SELECT COUNT(*) FROM task_postings p WHERE p.repo = %s AND p.lexeme = l.lexeme), "
            "(SELECT COUNT(*) FROM tasks WHERE repo = %s) "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS t(term, n) "
            f"CROSS JOIN LATERAL unnest(to_tsvector('{TS_CONFIG}', t.term)) AS l ORDER BY t.n",
            (self.repo, self.repo, terms)).fetchall())  # fmt: skip
        words = [(str(word), idf(int(n), int(total)), int(n)) for word, n, total in rows if n]
        cutoff = [] if as_of is None else ["ts <= %s"]
        found = self.collection.postings(
            words, limit, per_word=None if as_of is not None else POSTINGS_PER_WORD,
            complete=COMPLETED_PER_SEARCH, where=cutoff, params=[] if as_of is None else [as_of],
        )  # fmt: skip
        return [(int(r[0]), float(r[1])) for r in found if float(r[1]) > 0]

    def warm(self) -> None:
        """Nothing to load: the server holds the vectors."""

    def knn(self, vector: np.ndarray, limit: int, as_of: int | None = None) -> list[tuple[int, float]]:
        """Task row ids by cosine similarity to ``vector`` (best first), ties by id; tasks
        whose vector is all zeros have no cosine and are left out."""
        model = self.model()
        if limit <= 0 or not np.any(vector) or model is None:
            return []
        where = ["vector_norm(embedding) > 0", *([] if as_of is None else ["ts <= %s"])]
        rows = self.collection.dense(
            vector, limit, dim=model.dim, where=where, params=[] if as_of is None else [as_of]
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def load(self, rowids: Sequence[int]) -> dict[int, Task]:
        """The tasks with these row ids, with their files."""
        ids = [int(i) for i in rowids]
        if not ids:
            return {}

        def work(conn: Connection) -> tuple[list[Any], list[Any], list[Any]]:
            files = conn.execute("SELECT task, path FROM task_files WHERE task = ANY(%s)", (ids,)).fetchall()
            named = conn.execute(
                "SELECT task, path, name, line FROM task_functions WHERE task = ANY(%s)", (ids,)
            ).fetchall()
            rows = conn.execute(
                "SELECT id, task_id, date, title, body, source, author FROM tasks "
                "WHERE id = ANY(%s) AND repo = %s",
                (ids, self.repo),
            ).fetchall()
            return files, named, rows

        file_rows, function_rows, task_rows = self.db.read(work)
        files: dict[int, list[str]] = {}
        for task, path in file_rows:
            files.setdefault(int(task), []).append(str(path))
        functions: dict[int, list[Changed]] = {}
        for task, path, name, line in function_rows:
            functions.setdefault(int(task), []).append((str(path), str(name), str(line)))
        return {
            int(r[0]): Task(id=str(r[1]), date=datetime.fromisoformat(str(r[2])), title=str(r[3]),
                            body=str(r[4]), files=tuple(sorted(files.get(int(r[0]), []))), source=str(r[5]),
                            author=str(r[6] or ""), functions=tuple(sorted(functions.get(int(r[0]), []))))
            for r in task_rows
        }  # fmt: skip

    def renames(self) -> list[Rename]:
        rows = self.db.read(lambda c: c.execute(
            "SELECT old_path, new_path, ts FROM renames WHERE repo = %s ORDER BY ts", (self.repo,)
        ).fetchall())  # fmt: skip
        return [Rename(str(r[0]), str(r[1]), int(r[2])) for r in rows]

    def snapshot_files(self) -> set[str]:
        rows = self.db.read(lambda c: c.execute(
            "SELECT path FROM snapshot_files WHERE repo = %s", (self.repo,)).fetchall())  # fmt: skip
        return {str(r[0]) for r in rows}

    def file_touches(self) -> list[tuple[str, int]]:
        """Every (path, task timestamp) pair: which files were touched when."""
        rows = self.db.read(lambda c: c.execute(
            "SELECT f.path, t.ts FROM task_files f JOIN tasks t ON t.id = f.task WHERE t.repo = %s",
            (self.repo,)).fetchall())  # fmt: skip
        return [(str(r[0]), int(r[1])) for r in rows]

    def stats(self) -> TaskStats:
        def work(conn: Connection) -> tuple[Any, list[Any]]:
            totals = conn.execute(
                "SELECT COUNT(*), MIN(ts), MAX(ts), (SELECT COUNT(DISTINCT f.path) FROM task_files f "
                "JOIN tasks t ON t.id = f.task WHERE t.repo = %s) FROM tasks WHERE repo = %s",
                (self.repo, self.repo),
            ).fetchone()
            sources = conn.execute(
                "SELECT source, COUNT(*) FROM tasks WHERE repo = %s GROUP BY source", (self.repo,)
            ).fetchall()
            named = conn.execute(
                "SELECT COUNT(DISTINCT f.task) FROM task_functions f JOIN tasks t ON t.id = f.task WHERE t.repo = %s",
                (self.repo,),
            ).fetchone()
            assert totals is not None and named is not None  # (aggregates always give a row)
            return (*totals, named[0]), sources

        totals, sources = self.db.read(work)
        result = TaskStats(db_path=self.path)
        result.tasks = int(totals[0])
        result.files = int(totals[3])
        result.by_source = {str(s): int(n) for s, n in sources}
        if totals[1] is not None:
            result.first = datetime.fromtimestamp(int(totals[1]), UTC)
            result.last = datetime.fromtimestamp(int(totals[2]), UTC)
        model = self.model()
        result.embedder = model.signature if model else None
        result.last_git_commit = self.get_meta("git_head")
        result.with_functions = int(totals[4])
        return result
