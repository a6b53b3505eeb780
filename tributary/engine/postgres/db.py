"""Connections to the shared PostgreSQL index: pooled, reconnecting, migrated, typed for pgvector.

A :class:`Database` is a small pool of autocommit connections (``psycopg_pool``): a
desktop's server runs a search's keyword and vector queries at once, each on its own
connection, and two searches never wait on one socket. Writers group statements with
:meth:`Database.transaction`; reads run through :meth:`Database.read`, which checks the
pool and runs once more when its connection turns out to be dead (the server
restarted, an idle connection was dropped), so the first query after an outage works
instead of failing on a stale socket.

Statements a connection runs repeatedly are prepared on the server (psycopg's
``prepare_threshold``): their plans do not depend on session settings, since the exact
vector scan is written so that no index can serve it rather than switched by a setting.

Migrations are numbered like the SQLite stores' (``tributary.engine.sqlite``): version ``i + 1``
is ``MIGRATIONS[i]``, recorded in ``schema_migrations`` in the same transaction, under an
advisory lock so two indexers starting at once on a fresh database apply each one once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool, PoolTimeout

from tributary.engine.errors import TributaryError
from tributary.engine.postgres.schema import MIGRATIONS

log = logging.getLogger(__name__)

T = TypeVar("T")
Connection = psycopg.Connection[Any]
VectorIndex = Literal["hnsw", "ivfflat", "exact"]
VECTOR_INDEXES: tuple[str, ...] = ("auto", "hnsw", "ivfflat", "exact")

CONNECT_TIMEOUT_S = 5
POOL_SIZE = 3  # a search's keyword and vector queries at once, and one more
POOL_WAIT_S = 30.0  # a caller waits this long for a free connection before failing
READ_ATTEMPTS = 3  # a read on a dead connection is tried this often in all
PREPARE_THRESHOLD = 2  # executions of one statement text before it is prepared
_MIGRATION_LOCK = 0x7472_6962  # pg_advisory_xact_lock key: "trib"


class PostgresError(TributaryError):
    """The shared index cannot be used: unreachable, wrong schema, no pgvector."""


def redact(dsn: str) -> str:
    """``dsn`` without its password, for messages and listings."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "postgresql://…"
    host = info.get("host") or "localhost"
    port = f":{info['port']}" if info.get("port") else ""
    user = f"{info['user']}@" if info.get("user") else ""
    return f"postgresql://{user}{host}{port}/{info.get('dbname') or ''}"


class Database:
    """A few connections to the shared index, re-opened when they break."""

    def __init__(
        self, dsn: str, *, application_name: str = "tributary", size: int = POOL_SIZE
    ) -> None:
        self.dsn = dsn
        self.application_name = application_name
        options: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": CONNECT_TIMEOUT_S,
            "application_name": application_name,
            "prepare_threshold": PREPARE_THRESHOLD,
        }
        # The first connection is made here, so a wrong DSN or a missing extension is
        # reported now, with the server's own words, rather than as a pool timeout.
        first = self._connect(options)
        try:
            migrate(first)
        except BaseException:
            first.close()
            raise
        first.close()
        self._pool: ConnectionPool[Connection] = ConnectionPool(
            dsn, min_size=1, max_size=max(1, size), kwargs=options, configure=register_vector,
            timeout=POOL_WAIT_S, name=application_name, open=False,
        )  # fmt: skip
        self._pool.open(wait=False)

    def _connect(self, options: dict[str, Any]) -> Connection:
        try:
            conn = psycopg.connect(self.dsn, **options)
        except psycopg.OperationalError as exc:
            raise PostgresError(f"cannot connect to {redact(self.dsn)}: {exc}") from exc
        return conn

    @contextmanager
    def session(self) -> Iterator[Connection]:
        """A live connection, this thread's until the block ends."""
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise PostgresError(
                f"no connection to {redact(self.dsn)} within {POOL_WAIT_S:.0f} s: {exc}"
            ) from exc

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One transaction: committed on success, rolled back on any exception."""
        with self.session() as conn, conn.transaction():
            yield conn

    def read(self, work: Callable[[Connection], T]) -> T:
        """``work(connection)``; run again on a fresh connection while the one it had was
        dead, a few times at most (reads only: they are safe to repeat). One outage can
        cut several connections, the first replacement among them."""
        for _ in range(READ_ATTEMPTS - 1):
            dead = False
            try:
                with self.session() as conn:
                    try:
                        return work(conn)
                    except psycopg.OperationalError:
                        if not (conn.closed or conn.broken):
                            raise
                        dead = True
            except psycopg.OperationalError:
                if not dead:
                    raise
            log.info("connection to %s lost; reconnecting", redact(self.dsn))
            self._pool.check()  # the other idle connections died with it: drop them too
        with self.session() as conn:
            return work(conn)

    @contextmanager
    def advisory_lock(self, space: int, key: int) -> Iterator[bool]:
        """A session advisory lock ``(space, key)`` taken without waiting, on a
        connection of its own: True while this block holds it, False when another
        session (another process, another machine) does. It is released when the block
        ends, and by the server when this process dies with its connection."""
        conn = self._connect({"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S,
                              "application_name": self.application_name})
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (space, key)).fetchone()
            yield bool(row and row[0])
        finally:
            conn.close()

    def close(self) -> None:
        self._pool.close()


def schema_version(conn: Connection) -> int:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    )
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(row[0]) if row else 0


def _applied(conn: Connection) -> int | None:
    """The applied version, without writing anything (None: no schema yet)."""
    exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return None
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: Connection, migrations: tuple[str, ...] = MIGRATIONS) -> int:
    """Apply the migrations not applied yet; the version. A database newer than this
    program is refused rather than misread. A database already up to date is only read,
    so desktops may connect with a read-only role."""
    applied = _applied(conn)
    if applied is not None and applied > len(migrations):
        raise PostgresError(
            f"index database schema version {applied} is newer than this program knows "
            f"({len(migrations)}); upgrade Tributary"
        )
    if applied == len(migrations):
        return applied
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        version = schema_version(conn)
        if version > len(migrations):
            raise PostgresError(
                f"index database schema version {version} is newer than this program knows "
                f"({len(migrations)}); upgrade Tributary"
            )
        try:
            for number in range(version + 1, len(migrations) + 1):
                conn.execute(migrations[number - 1])
                conn.execute("INSERT INTO schema_migrations(version) VALUES (%s)", (number,))
        except psycopg.errors.FeatureNotSupported as exc:
            raise PostgresError(f"the server lacks a feature the index needs: {exc}") from exc
        except psycopg.errors.UndefinedFile as exc:
            raise PostgresError(
                f"the pgvector extension is not installed on the server: {exc}"
            ) from exc
    return len(migrations)


def supported_vector_indexes(conn: Connection) -> set[str]:
    """The pgvector access methods this server has (``hnsw`` since pgvector 0.5)."""
    rows = conn.execute("SELECT amname FROM pg_am WHERE amname IN ('hnsw', 'ivfflat')").fetchall()
    return {str(r[0]) for r in rows}


def choose_vector_index(conn: Connection, wanted: str = "auto") -> VectorIndex:
    """The vector index to use: ``wanted`` when the server has it, else the best it has
    (HNSW, then IVFFlat, then an exact scan)."""
    if wanted not in VECTOR_INDEXES:
        raise PostgresError(
            f"unknown vector index {wanted!r}; use one of {', '.join(VECTOR_INDEXES)}"
        )
    have = supported_vector_indexes(conn)
    if wanted == "exact":
        return "exact"
    if wanted in have:
        return "hnsw" if wanted == "hnsw" else "ivfflat"
    if wanted != "auto":
        log.warning("the server has no %s index; choosing another", wanted)
    if "hnsw" in have:
        return "hnsw"
    return "ivfflat" if "ivfflat" in have else "exact"
