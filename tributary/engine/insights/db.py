"""The insights database: one SQLite file (``tributary.engine.paths.insights_path()``) for the
query log and feedback, with numbered migrations.

WAL so the GUI's insights page and ``tributary stats`` read while a search writes;
each store holds one connection, serialised by a lock, and is the only writer of its
tables in its process. Opening and migrating is ``tributary.engine.sqlite``'s.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Self

from tributary.engine.cache.base import Clock
from tributary.engine.cache.redact import Scrubber, likely_secret_values
from tributary.engine.paths import insights_path
from tributary.engine.sqlite import connect, migrate, open_or_set_aside, transaction

QueryRedaction = Literal["keep", "hash", "omit"]
REDACTIONS: tuple[QueryRedaction, ...] = ("keep", "hash", "omit")

MIGRATIONS: tuple[str, ...] = (
    # 1: the query log and per-source calls; feedback events.
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
    """One connection to the insights file, shared by the calling threads under a lock."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = connect(self.path, check_same_thread=False)
        migrate(self._conn, MIGRATIONS, what=f"history database {self.path}")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._connection()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, else rolled back."""
        with self._lock, transaction(self._connection()) as conn:
            yield conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"history database {self.path} is closed")
        return self._conn


class InsightsStore:
    """What the query log and the feedback store share: their database, how a query is
    kept (``redaction``), the scrubber that masks known secret values, and the clock."""

    def __init__(
        self,
        path: Path | str,
        *,
        redaction: QueryRedaction = "keep",
        secrets: Iterable[str] | None = None,
        clock: Clock = time.time,
    ) -> None:
        if redaction not in REDACTIONS:
            raise ValueError(f"redaction must be one of {', '.join(REDACTIONS)}")
        self.redaction: QueryRedaction = redaction
        self._scrubber = Scrubber(likely_secret_values() if secrets is None else secrets)
        self._clock: Clock = clock
        self._db = open_or_set_aside(Path(path), Database, "the insights database")

    @classmethod
    def open(cls, path: Path | str | None = None, **options: Any) -> Self:
        """The store at ``path`` (default ``tributary.engine.paths.insights_path()``)."""
        return cls(path or insights_path(), **options)

    @property
    def path(self) -> Path:
        return self._db.path

    def close(self) -> None:
        self._db.close()
