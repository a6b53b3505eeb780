"""SQLite connections for indexes: ``engine.sqlite`` with sqlite-vec loaded."""

from __future__ import annotations

from pathlib import Path

from engine.sqlite import Connection, migrate, schema_version, transaction
from engine.sqlite import connect as _connect

__all__ = ["Connection", "connect", "current_version", "migrate", "transaction"]

current_version = schema_version


def connect(path: Path | str, *, readonly: bool = False, check_same_thread: bool = True) -> Connection:
    """Open an index file (created unless ``readonly``) with sqlite-vec, WAL, FKs."""
    return _connect(path, readonly=readonly, check_same_thread=check_same_thread, vectors=True)
