"""Persistent cache in one SQLite file (the default backend).

Survives restarts and is shared by every Tributary process on the machine (GUI, CLI,
MCP face): WAL lets readers proceed while one writes, and the busy timeout queues
writers. Reads never write, so lookups from many processes do not contend. Capacity
is bounded by ``max_entries`` and by ``max_bytes`` of stored values: expired rows are
pruned first, then the oldest entries go (insertion order — unlike the memory
backend, a read does not refresh an entry, which is what keeps reads write-free).
The file uses incremental auto-vacuum, so the pages of evicted entries are returned
to the file system instead of keeping the file at its largest size ever.

``sqlean`` is used as everywhere else in the project (the interpreter's own ``sqlite3``
often cannot load extensions). Blocking calls run
in a worker thread so the event loop (and the GUI on it) never waits on the disk;
one connection per cache object, serialised by a lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import sqlean

from tributary.engine.cache.base import Cache, Clock
from tributary.engine.cache.redact import Scrubber
from tributary.engine.sqlite import connect, open_or_set_aside, statements, transaction

T = TypeVar("T")

SCHEMA_VERSION = 2
PRUNE_EVERY_SETS = 64
DEFAULT_MAX_BYTES = 50 * 1024 * 1024

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    size INTEGER NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_expires ON entries(expires);
CREATE INDEX IF NOT EXISTS entries_created ON entries(created);
CREATE TABLE IF NOT EXISTS entry_tags (
    tag TEXT NOT NULL,
    key TEXT NOT NULL REFERENCES entries(key) ON DELETE CASCADE,
    PRIMARY KEY (tag, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entry_tags_key ON entry_tags(key);
"""


class SqliteCache(Cache):
    backend = "sqlite"
    backend_errors = (sqlean.Error, sqlite3.Error, OSError)

    def __init__(
        self,
        path: Path | str,
        *,
        max_entries: int = 1000,
        max_bytes: int = DEFAULT_MAX_BYTES,
        ttl_s: float = 300.0,
        clock: Clock | None = None,
        scrubber: Scrubber | None = None,
    ) -> None:
        super().__init__(ttl_s=ttl_s, max_entries=max_entries, clock=clock, scrubber=scrubber)
        self.path = Path(path)
        self.max_bytes = max_bytes
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._sets_since_prune = PRUNE_EVERY_SETS  # prune on the first write

    # --- backend operations (each runs in a worker thread) --------------------------

    async def _get(self, key: str, now: float) -> str | None:
        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT value FROM entries WHERE key = ? AND expires > ?", (key, now)
            ).fetchone()
            return None if row is None else str(row[0])

        return await self._run(read)

    async def _set(self, key: str, text: str, now: float, expires: float, tags: list[str]) -> int:
        size = len(text.encode("utf-8"))

        def write(conn: sqlite3.Connection) -> int:
            with transaction(conn):
                conn.execute("DELETE FROM entries WHERE key = ?", (key,))
                conn.execute(
                    "INSERT INTO entries(key, value, size, created, expires) VALUES (?, ?, ?, ?, ?)",
                    (key, text, size, now, expires),
                )
                conn.executemany(
                    "INSERT OR IGNORE INTO entry_tags(tag, key) VALUES (?, ?)",
                    [(tag, key) for tag in tags],
                )
                evicted = self._enforce_bounds(conn, now)
            if evicted:
                _give_back_space(conn)
            return evicted

        return await self._run(write)

    async def _delete(self, key: str) -> int:
        def write(conn: sqlite3.Connection) -> int:
            with transaction(conn):
                return conn.execute("DELETE FROM entries WHERE key = ?", (key,)).rowcount

        return await self._run(_shrinking(write))

    async def _invalidate_prefix(self, prefix: str) -> int:
        def write(conn: sqlite3.Connection) -> int:
            with transaction(conn):
                # substr comparison, not LIKE/GLOB: the prefix is literal text.
                return conn.execute(
                    "DELETE FROM entries WHERE substr(key, 1, ?) = ?", (len(prefix), prefix)
                ).rowcount

        return await self._run(_shrinking(write))

    async def _invalidate_tag(self, tag: str) -> int:
        def write(conn: sqlite3.Connection) -> int:
            with transaction(conn):
                return conn.execute(
                    "DELETE FROM entries WHERE key IN (SELECT key FROM entry_tags WHERE tag = ?)",
                    (tag,),
                ).rowcount

        return await self._run(_shrinking(write))

    async def _clear(self) -> int:
        def write(conn: sqlite3.Connection) -> int:
            with transaction(conn):
                count = conn.execute("DELETE FROM entries").rowcount
                conn.execute("DELETE FROM entry_tags")
                return count

        return await self._run(_shrinking(write))

    async def _size(self, now: float) -> int:
        def read(conn: sqlite3.Connection) -> int:
            row = conn.execute("SELECT COUNT(*) FROM entries WHERE expires > ?", (now,)).fetchone()
            return int(row[0])

        return await self._run(read)

    async def close(self) -> None:
        def shut() -> None:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.to_thread(shut)

    # --- helpers ----------------------------------------------------------------------

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def locked() -> T:
            with self._lock:
                return work(self._connection())

        return await asyncio.to_thread(locked)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = open_or_set_aside(self.path, _open, "the response cache")
        return self._conn

    def _enforce_bounds(self, conn: sqlite3.Connection, now: float) -> int:
        """Prune expired rows now and then, and the oldest rows beyond capacity."""
        evicted = 0
        self._sets_since_prune += 1
        if self._sets_since_prune >= PRUNE_EVERY_SETS:
            self._sets_since_prune = 0
            evicted += conn.execute("DELETE FROM entries WHERE expires <= ?", (now,)).rowcount
        (count,) = conn.execute("SELECT COUNT(*) FROM entries").fetchone()
        excess = int(count) - (self.max_entries or 1)
        if excess > 0:
            evicted += conn.execute(
                "DELETE FROM entries WHERE key IN "
                "(SELECT key FROM entries ORDER BY expires <= ? DESC, created LIMIT ?)",
                (now, excess),
            ).rowcount
        return evicted + self._enforce_size(conn, now)

    def _enforce_size(self, conn: sqlite3.Connection, now: float) -> int:
        """Delete the oldest (expired first) entries until the values fit ``max_bytes``."""
        (total,) = conn.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()
        over = int(total) - self.max_bytes
        if over <= 0:
            return 0
        doomed: list[str] = []
        for key, size in conn.execute(
            "SELECT key, size FROM entries ORDER BY expires <= ? DESC, created", (now,)
        ):
            doomed.append(key)
            over -= int(size)
            if over <= 0:
                break
        conn.executemany("DELETE FROM entries WHERE key = ?", [(key,) for key in doomed])
        return len(doomed)


def _shrinking(work: Callable[[sqlite3.Connection], int]) -> Callable[[sqlite3.Connection], int]:
    """``work`` (a deletion returning its count), then the freed space given back."""
    def run(conn: sqlite3.Connection) -> int:
        deleted = work(conn)
        if deleted:
            _give_back_space(conn)
        return deleted

    return run


def _give_back_space(conn: sqlite3.Connection) -> None:
    """Return the free pages to the file system (incremental auto-vacuum); best effort."""
    with contextlib.suppress(sqlean.Error, sqlite3.Error):
        conn.execute("PRAGMA incremental_vacuum").fetchall()


def _incremental_vacuum(conn: sqlite3.Connection) -> None:
    """Switch the file to incremental auto-vacuum (a VACUUM applies it to an existing file);
    best effort: another process holding the file only delays it to a later rebuild."""
    (mode,) = conn.execute("PRAGMA auto_vacuum").fetchone()
    if int(mode) == 2:
        return
    with contextlib.suppress(sqlean.Error, sqlite3.Error):
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("VACUUM")


def _open(path: Path) -> sqlite3.Connection:
    conn = connect(path, check_same_thread=False)
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version == SCHEMA_VERSION:
        return conn
    # A cache holds nothing that cannot be fetched again: rebuild rather than migrate.
    with transaction(conn):
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version == SCHEMA_VERSION:  # another process built it while we waited
            return conn
        conn.execute("DROP TABLE IF EXISTS entry_tags")
        conn.execute("DROP TABLE IF EXISTS entries")
    _incremental_vacuum(conn)  # on the emptied file: cheap
    with transaction(conn):
        for statement in statements(SCHEMA):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return conn
