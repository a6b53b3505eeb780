"""The one SQLite layer: numbered migrations are atomic, idempotent and refuse the future."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.sqlite import connect, migrate, schema_version

MIGRATIONS = (
    "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1)",
    "CREATE TABLE b (y TEXT)",
)


def test_migrations_apply_once_in_order(tmp_path: Path) -> None:
    conn = connect(tmp_path / "db.sqlite")
    assert migrate(conn, MIGRATIONS) == 2
    assert migrate(conn, MIGRATIONS) == 2  # nothing applied twice
    assert conn.execute("SELECT COUNT(*) FROM a").fetchone() == (1,)
    assert [r[0] for r in conn.execute("SELECT version FROM schema_migrations")] == [1, 2]
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_failing_migration_leaves_the_previous_version(tmp_path: Path) -> None:
    conn = connect(tmp_path / "db.sqlite")
    broken = (*MIGRATIONS, "CREATE TABLE c (z INTEGER); INSERT INTO nowhere VALUES (1)")
    with pytest.raises(Exception, match="no such table: nowhere"):
        migrate(conn, broken)
    assert schema_version(conn) == 2
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "c" not in tables and not conn.in_transaction


def test_a_file_from_a_newer_program_is_refused_by_name(tmp_path: Path) -> None:
    conn = connect(tmp_path / "db.sqlite")
    migrate(conn, MIGRATIONS)
    with pytest.raises(RuntimeError, match=r"history file .* version 2 is newer .* \(1\)"):
        migrate(conn, MIGRATIONS[:1], what="history file")
