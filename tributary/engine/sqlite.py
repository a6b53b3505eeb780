"""SQLite for every store (indexes, task history, query log, cache): one way to
open a file, group writes, and number schema migrations.

The interpreter's own ``sqlite3`` often cannot load extensions, so we use
``sqlean`` — a drop-in ``sqlite3`` that bundles a SQLite with extension loading on
Linux, macOS and Windows; indexes load sqlite-vec into it. Connections are in
autocommit mode (``isolation_level=None``): writers group their statements with
:func:`transaction`, which keeps transaction boundaries visible and takes the write
lock up front (``BEGIN IMMEDIATE``). WAL lets readers (the GUI, ``tributary stats``)
read while the one writer writes.

Migrations are numbered: ``migrations[i]`` is version ``i + 1``, recorded in
``schema_migrations`` in the same transaction as its statements, so a crash leaves a
file at the previous version, never half-way; the version is re-read under the write
lock, so two processes opening a fresh file at once do not both apply one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import cast

import sqlean

from tributary.engine.paths import private_file

Connection = sqlite3.Connection  # sqlean's Connection has the same API; typed as stdlib's

BUSY_TIMEOUT_MS = 10_000


def connect(
    path: Path | str,
    *,
    readonly: bool = False,
    check_same_thread: bool = True,
    vectors: bool = False,
) -> Connection:
    """Open ``path`` (created unless ``readonly``) with WAL, a busy timeout and foreign
    keys; ``vectors`` loads sqlite-vec. A file opened to write is the owner's alone
    (0600, its WAL and shared-memory files too: SQLite gives them the file's mode)."""
    target = str(path)
    if readonly:
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        raw = sqlean.connect(uri, uri=True, isolation_level=None, check_same_thread=check_same_thread)
    else:
        if target != ":memory:":
            private_file(Path(path))
        raw = sqlean.connect(target, isolation_level=None, check_same_thread=check_same_thread)
    conn = cast(Connection, raw)
    if vectors:
        import sqlite_vec

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


def schema_version(conn: Connection) -> int:
    """The highest applied migration number (0 for a fresh database)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (datetime('now')))"
    )
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(row[0])


def migrate(conn: Connection, migrations: Sequence[str], *, what: str = "database") -> int:
    """Apply the migrations not yet applied, each in its own transaction with its
    ``schema_migrations`` row; return the version. A file newer than this program (more
    versions than ``migrations``) is refused rather than misread."""
    version = schema_version(conn)
    while True:
        if version > len(migrations):
            raise RuntimeError(
                f"{what} schema version {version} is newer than this program knows "
                f"({len(migrations)}); upgrade Tributary"
            )
        if version == len(migrations):
            return version
        with transaction(conn):
            version = schema_version(conn)  # another process may have moved it on
            if version < len(migrations):
                for statement in statements(migrations[version]):
                    conn.execute(statement)
                version += 1
                conn.execute("INSERT INTO schema_migrations(version) VALUES (?)", (version,))


def statements(script: str) -> list[str]:
    """A migration's statements. Migrations hold no semicolons inside literals or
    trigger bodies, so a split is enough, and it keeps each migration inside our
    transaction (``executescript`` would commit on its own)."""
    return [part.strip() for part in script.split(";") if part.strip()]
