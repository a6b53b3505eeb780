"""SQLite files of the local indexes: ``tributary.engine.sqlite`` with sqlite-vec loaded, and the
``meta`` key-value table both the code index and the task history keep.

Every such file creates ``meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`` in its
first migration; the helpers below are the one way it is read and written.
"""

from __future__ import annotations

from pathlib import Path

from tributary.engine.sqlite import Connection, migrate, schema_version, transaction
from tributary.engine.sqlite import connect as _connect

__all__ = [
    "Connection",
    "connect",
    "current_version",
    "migrate",
    "read_meta",
    "transaction",
    "write_meta",
]

current_version = schema_version


def connect(path: Path | str, *, readonly: bool = False, check_same_thread: bool = True) -> Connection:
    """Open an index file (created unless ``readonly``) with sqlite-vec, WAL, FKs."""
    return _connect(path, readonly=readonly, check_same_thread=check_same_thread, vectors=True)


def read_meta(conn: Connection, key: str) -> str | None:
    """The ``meta`` value of ``key``, None when unset."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def write_meta(conn: Connection, key: str, value: str) -> None:
    """Set ``key`` in ``meta``; inside the caller's transaction when there is one, so a
    value can be written together with the rows it describes."""
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
