"""The one SQLite layer (``tributary.engine.sqlite``; its migrations are also exercised through
``tributary.engine.localsearch.db`` in tests/index/test_store.py): errors say which file is too new."""

from __future__ import annotations

from pathlib import Path

import pytest

from tributary.engine.sqlite import connect, migrate, schema_version

MIGRATIONS = (
    "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1)",
    "CREATE TABLE b (y TEXT)",
)


def test_a_file_from_a_newer_program_is_refused_by_name(tmp_path: Path) -> None:
    conn = connect(tmp_path / "db.sqlite")
    assert migrate(conn, MIGRATIONS) == 2
    with pytest.raises(RuntimeError, match=r"history file .* version 2 is newer .* \(1\)"):
        migrate(conn, MIGRATIONS[:1], what="history file")
    assert schema_version(conn) == 2
