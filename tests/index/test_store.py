"""Storage: migrations are transactional and versioned; the schema loads sqlite-vec."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.index.store import MIGRATIONS, SqliteStore
from engine.localsearch.db import connect, current_version, migrate


def test_migrations_apply_once_and_record_versions(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a.db")
    steps = ["CREATE TABLE one (x)", "CREATE TABLE two (y); INSERT INTO two VALUES (1)"]
    assert migrate(conn, steps) == 2
    assert migrate(conn, steps) == 2  # idempotent
    assert conn.execute("SELECT COUNT(*) FROM two").fetchone()[0] == 1
    versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == [1, 2]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    conn.close()


def test_failed_migration_rolls_back_entirely(tmp_path: Path) -> None:
    conn = connect(tmp_path / "b.db")
    migrate(conn, ["CREATE TABLE one (x)"])
    with pytest.raises(Exception, match="syntax"):
        migrate(conn, ["CREATE TABLE one (x)", "CREATE TABLE half (z); THIS IS NOT SQL"])
    assert current_version(conn) == 1
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'half'").fetchone() is None
    assert not conn.in_transaction


def test_newer_database_is_refused(tmp_path: Path) -> None:
    conn = connect(tmp_path / "c.db")
    migrate(conn, ["CREATE TABLE one (x)", "CREATE TABLE two (x)"])
    with pytest.raises(RuntimeError, match="newer"):
        migrate(conn, ["CREATE TABLE one (x)"])


def test_store_schema_and_vec_extension(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.files.sqlite")
    assert current_version(store.conn) == len(MIGRATIONS)
    assert store.conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
    store.close()

