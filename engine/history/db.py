"""The history database: one SQLite file (``engine.paths.history_path()``) for query
history and feedback, with numbered migrations.

WAL so the GUI's insights page and ``tributary stats`` read while a search writes;
each store holds one connection, serialised by a lock, and is the only writer of its
tables in its process. Migrations run each in one transaction with their
``schema_migrations`` row, re-checked under the write lock so two processes opening
a fresh file at once do not both apply them.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import cast

import sqlean

BUSY_TIMEOUT_MS = 5_000

MIGRATIONS: tuple[str, ...] = (
    # 1: query history and per-source calls; feedback events.
    """
    CREATE TABLE queries (
        id INTEGER PRIMARY KEY,
        request_id TEXT NOT NULL,
        ts REAL NOT NULL,
        query TEXT,
        query_hash TEXT NOT NULL,
        task_type TEXT,
        strategy TEXT,
        query_class TEXT,
        top_k INTEGER,
        hits INTEGER NOT NULL DEFAULT 0,
        total_ms REAL NOT NULL DEFAULT 0,
        raw_hits INTEGER NOT NULL DEFAULT 0,
        unique_hits INTEGER NOT NULL DEFAULT 0,
        dedup_rate REAL NOT NULL DEFAULT 0,
        tokens_total INTEGER NOT NULL DEFAULT 0,
        budget_utilisation REAL NOT NULL DEFAULT 0,
        cache_hits INTEGER NOT NULL DEFAULT 0,
        cache_lookups INTEGER NOT NULL DEFAULT 0,
        stage_ms TEXT NOT NULL DEFAULT '{}',
        error TEXT
    );
    CREATE INDEX queries_ts ON queries(ts);
    CREATE TABLE source_calls (
        query_id INTEGER NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
        source TEXT NOT NULL,
        status TEXT NOT NULL,
        latency_ms REAL,
        hits INTEGER NOT NULL DEFAULT 0,
        tokens INTEGER NOT NULL DEFAULT 0,
        context_tokens INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        PRIMARY KEY (query_id, source)
    ) WITHOUT ROWID;
    CREATE INDEX source_calls_source ON source_calls(source);
    CREATE TABLE feedback (
        id INTEGER PRIMARY KEY,
        ts REAL NOT NULL,
        hit_id TEXT NOT NULL,
        source TEXT NOT NULL,
        query TEXT,
        useful INTEGER NOT NULL CHECK (useful IN (0, 1))
    );
    CREATE INDEX feedback_source ON feedback(source, ts);
    """,
)


class Database:
    """One connection to the history file, shared by the calling threads under a lock."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = _open(self.path)
        migrate(self._conn, MIGRATIONS)

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._connection()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, else rolled back."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"history database {self.path} is closed")
        return self._conn


def _open(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = cast(
        sqlite3.Connection,
        sqlean.connect(str(path), isolation_level=None, check_same_thread=False),
    )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def schema_version(conn: sqlite3.Connection) -> int:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (datetime('now')))"
    )
    (version,) = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(version)


def migrate(conn: sqlite3.Connection, migrations: Sequence[str]) -> int:
    """Apply the migrations not yet applied; refuse a file newer than this program."""
    version = schema_version(conn)
    if version > len(migrations):
        raise RuntimeError(
            f"history database schema {version} is newer than this program knows "
            f"({len(migrations)}); upgrade Tributary"
        )
    while version < len(migrations):
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = schema_version(conn)  # another process may have moved it on
            if version < len(migrations):
                for statement in _statements(migrations[version]):
                    conn.execute(statement)
                version += 1
                conn.execute("INSERT INTO schema_migrations(version) VALUES (?)", (version,))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return version


def _statements(script: str) -> list[str]:
    # The migrations hold no semicolons inside literals, so a split is enough; it keeps
    # each migration inside our transaction (executescript would commit on its own).
    return [part.strip() for part in script.split(";") if part.strip()]
