"""Which index backend a command uses: SQLite files on this machine, or a shared
PostgreSQL + pgvector database (``index: {backend: postgres, dsn: ...}`` in the config).

The indexing API (``tributary.engine.index.manager``, ``tributary.engine.repos.manage``, ``tributary.engine.tasks.api``)
takes an optional :class:`IndexBackend`; without one, an explicit ``index_dir`` means
SQLite files there, and otherwise the config in effect decides. The DSN's ``${VAR}``
references are expanded here, when it is used, so the config keeps only the references.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tributary.engine.config.errors import ConfigError, ConfigIssue
from tributary.engine.config.expand import expand_string

if TYPE_CHECKING:
    from tributary.engine.config.schema import IndexConfig


@dataclass(frozen=True, slots=True)
class IndexBackend:
    """A PostgreSQL index (``dsn`` set, expanded) or the SQLite files (``dsn`` None)."""

    dsn: str | None = None
    vector_index: str = "auto"

    @property
    def postgres(self) -> bool:
        return self.dsn is not None


SQLITE = IndexBackend()


def configured_backend(config_file: Path | None = None) -> IndexBackend:
    """The backend the config in effect names (``config_file``, else the default one)."""
    from tributary.engine.config.load import load_config

    return backend_for(load_config(config_file).index, config_file)


def backend_for(index: IndexConfig, config_file: Path | None = None) -> IndexBackend:
    """The backend a config's ``index`` section names, its DSN's ``${VAR}``s expanded
    (a :class:`ConfigError` naming ``config_file`` when one is not set)."""
    if index.backend != "postgres":
        return SQLITE
    dsn, missing = expand_string(index.dsn, os.environ)
    if missing:
        names = ", ".join(missing)
        raise ConfigError([ConfigIssue(str(config_file or "<config>"), "index.dsn", None,
                                       f"${{{missing[0]}}} is not set in the environment ({names})")])
    return IndexBackend(dsn, index.vector_index)


def resolve_backend(index_dir: Path | str | None, backend: IndexBackend | None) -> IndexBackend:
    """``backend`` when given; SQLite when a folder of index files is; else the config's."""
    if backend is not None:
        return backend
    if index_dir is not None:
        return SQLITE
    return configured_backend()


DSN_VARIABLE = "TRIBUTARY_INDEX_DSN"  # the shared index's DSN: kept out of the command line


def add_postgres_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--postgres", action="store_true",
                        help=f"serve the shared PostgreSQL index whose DSN is in ${DSN_VARIABLE}")
    parser.add_argument("--vector-index", default="auto", choices=("auto", "hnsw", "ivfflat", "exact"),
                        help="PostgreSQL: the vector index to use (default: the best the server has)")


def postgres_backend(args: argparse.Namespace) -> IndexBackend | None:
    """The shared index named by ``--postgres`` (its DSN from the environment), if any."""
    if not args.postgres:
        return None
    dsn = os.environ.get(DSN_VARIABLE, "")
    if not dsn:
        raise SystemExit(f"--postgres needs the index's DSN in ${DSN_VARIABLE}")
    return IndexBackend(dsn, args.vector_index)
