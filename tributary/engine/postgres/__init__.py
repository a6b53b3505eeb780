"""The shared index backend: PostgreSQL + pgvector, one database for a whole team.

Many repositories live in one database, each a row of ``repositories``: their code
chunks (full-text ``tsvector`` + ``vector`` embeddings), files, symbols and task
history. One indexer (a CI job, one machine) writes; every desktop's files and tasks
servers read. Selected by ``index: {backend: postgres, dsn: ...}`` in the config
(``tributary.engine.index.backend``). Needs the ``postgres`` extra (psycopg, pgvector).

This package is the database both stores share: connections and migrations (``db``,
``schema``), the repositories with their meta and model record (``repositories``), and
the collection each store searches through (``collection``).
The stores sit beside their SQLite twins, above it: ``tributary.engine.index.pg_store``
and ``tributary.engine.tasks.pg_store``.
"""

from __future__ import annotations

from tributary.engine.errors import TributaryError


class MissingExtra(TributaryError):
    """An optional extra this feature needs is not installed; the message says how to add it."""


def _require_extra() -> None:
    """Say which extra to install instead of failing later with ``ModuleNotFoundError``."""
    try:
        import pgvector  # noqa: F401
        import psycopg  # noqa: F401
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("psycopg", "pgvector"):
            raise
        from tributary.engine.extras import install_hint

        raise MissingExtra(f"a PostgreSQL index needs {exc.name}, which this installation "
                           f"lacks: install the postgres extra: {install_hint('postgres')}") from None


_require_extra()
