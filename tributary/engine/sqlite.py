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

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar, cast

import sqlean

from tributary.engine.paths import SQLITE_SIDE_FILES, private_file

log = logging.getLogger(__name__)

Connection = sqlite3.Connection  # sqlean's Connection has the same API; typed as stdlib's

BUSY_TIMEOUT_MS = 10_000
# What a store raises: connections come from sqlean (SQLite with extensions), whose
# errors are not the standard module's.
ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, sqlean.Error)


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


_CORRUPT_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
_T = TypeVar("_T")


def is_damaged(exc: BaseException) -> bool:
    """Whether ``exc`` says the file itself is damaged (or not a database at all)."""
    if not isinstance(exc, (sqlite3.DatabaseError, sqlean.DatabaseError)):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return int(code) & 0xFF in _CORRUPT_CODES
    text = str(exc)
    return "malformed" in text or "not a database" in text


def open_or_set_aside(path: Path, opener: Callable[[Path], _T], what: str) -> _T:
    """``opener(path)``; when the file is damaged, it (with its WAL and shared-memory
    files) is renamed ``NAME.damaged-YYYYmmdd-HHMMSS`` beside it and a new one opened.

    For the files that only record what happened (the query log, the cache): a damaged
    one failed every later open, so the record stopped for good; the old file is kept
    for whoever wants to look into it. The file is checked again first, so a process
    that saw another one's damaged copy does not set aside the new file."""
    try:
        return opener(path)
    except Exception as exc:
        if not is_damaged(exc) or not _still_damaged(path):
            raise
        aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        for suffix in ("", *SQLITE_SIDE_FILES):
            with contextlib.suppress(FileNotFoundError):
                os.replace(path.with_name(path.name + suffix), aside.with_name(aside.name + suffix))
        log.warning("%s %s was damaged (%s): kept as %s, starting a new one", what, path, exc, aside)
        return opener(path)


def _still_damaged(path: Path) -> bool:
    try:
        conn = connect(path, readonly=True)
    except Exception as exc:
        return is_damaged(exc)
    try:
        (result,) = conn.execute("PRAGMA quick_check(1)").fetchone()
        return str(result) != "ok"
    except Exception as exc:
        return is_damaged(exc)
    finally:
        conn.close()
