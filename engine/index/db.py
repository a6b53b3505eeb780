"""SQLite connections with sqlite-vec loaded, and numbered schema migrations.

The interpreter's own ``sqlite3`` often cannot load extensions (STACK.md), so we use
``sqlean`` — a drop-in ``sqlite3`` that bundles a SQLite with extension loading on
Linux, macOS and Windows. Connections are in autocommit mode (``isolation_level=None``):
callers group writes explicitly with :func:`transaction`, which keeps transaction
boundaries visible and lets a writer take the lock up front (``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import cast

import sqlean
import sqlite_vec

Connection = sqlite3.Connection  # sqlean's Connection has the same API; typed as stdlib's

BUSY_TIMEOUT_MS = 10_000


def connect(
    path: Path | str,
    *,
    readonly: bool = False,
    check_same_thread: bool = True,
) -> Connection:
    """Open ``path`` (created unless ``readonly``) with sqlite-vec, WAL, busy timeout, FKs."""
    target = str(path)
    if readonly:
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        raw = sqlean.connect(
            uri, uri=True, isolation_level=None, check_same_thread=check_same_thread
        )
    else:
        if target != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        raw = sqlean.connect(target, isolation_level=None, check_same_thread=check_same_thread)
    conn = cast(Connection, raw)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
        # NORMAL is durable across application crashes in WAL mode (only an OS crash
        # may lose the last transactions), and much faster than FULL.
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


@contextmanager
def transaction(conn: Connection, *, immediate: bool = True) -> Iterator[Connection]:
    """One transaction: committed on success, rolled back on any exception."""
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def current_version(conn: Connection) -> int:
    """The highest applied migration number (0 for a fresh database)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (datetime('now')))"
    )
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(row[0])


def migrate(conn: Connection, migrations: Sequence[str]) -> int:
    """Apply ``migrations[i]`` as version ``i + 1`` when not yet applied; return the version.

    Each migration runs in its own transaction together with its ``schema_migrations``
    row, so a crash leaves the database at the previous version, never half-way.
    A database newer than the code (more versions than ``migrations``) is refused.
    """
    version = current_version(conn)
    if version > len(migrations):
        raise RuntimeError(
            f"database schema version {version} is newer than this program knows "
            f"({len(migrations)}); upgrade Tributary"
        )
    for number in range(version + 1, len(migrations) + 1):
        script = migrations[number - 1].strip().rstrip(";")
        try:
            # executescript runs the whole script; BEGIN/COMMIT inside it make it atomic.
            conn.executescript(
                f"BEGIN IMMEDIATE;\n{script};\n"
                f"INSERT INTO schema_migrations(version) VALUES ({number});\nCOMMIT;"
            )
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return len(migrations)
