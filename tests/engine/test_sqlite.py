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


def test_a_second_connection_keeps_the_first_ones_locks(tmp_path: Path) -> None:
    """The engine and the insights page each open the insights file in one process. The
    second open used to open and close the file itself first, which drops every POSIX
    lock the process holds on it: another process closing its last connection then
    took the WAL away from under the first one ("database disk image is malformed")."""
    import subprocess
    import sys

    path = tmp_path / "db.sqlite"
    first = connect(path)
    first.execute("CREATE TABLE t (x INTEGER)")
    first.execute("INSERT INTO t VALUES (1)")
    connect(path).close()
    other = ("import sys; from tributary.engine.sqlite import connect; "
             "c = connect(sys.argv[1]); c.execute('INSERT INTO t VALUES (2)'); c.close()")
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", other, str(path)], check=True, cwd=root, timeout=120)
    assert path.with_name("db.sqlite-wal").exists()  # still this process's WAL
    first.execute("INSERT INTO t VALUES (3)")
    assert first.execute("SELECT count(*) FROM t").fetchone() == (3,)
