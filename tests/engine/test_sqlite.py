"""The one SQLite layer (``tributary.engine.sqlite``; its migrations are also exercised through
``tributary.engine.localsearch.db`` in tests/index/test_store.py): errors say which file is too new."""

from __future__ import annotations

from pathlib import Path

import pytest

from tributary.engine.sqlite import Connection, connect, migrate, schema_version

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


def _damage(path: Path) -> None:
    """A database whose schema page is overwritten: every open says it is malformed."""
    conn = connect(path)
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with path.open("r+b") as file:
        file.seek(100)
        file.write(b"\xa5" * 3000)


def test_a_damaged_query_log_is_set_aside_and_a_new_one_started(tmp_path: Path) -> None:
    """A damaged insights file failed every open: the query log and the reputations
    stopped for good, silently. It is kept aside and a new one started."""
    from tributary.engine.insights.store import QueryLog

    path = tmp_path / "insights.sqlite"
    _damage(path)
    log = QueryLog.open(path)
    try:
        assert log.count() == 0
    finally:
        log.close()
    kept = [p.name for p in tmp_path.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1
    assert (tmp_path / kept[0]).read_bytes()[100:110] == b"\xa5" * 10  # the old file, untouched


def test_a_file_that_is_not_a_database_is_set_aside_too(tmp_path: Path) -> None:
    from tributary.engine.sqlite import open_or_set_aside

    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"not a database at all " * 400)
    conn = open_or_set_aside(path, _migrated, "the response cache")
    assert schema_version(conn) == 2
    assert any(".damaged-" in p.name for p in tmp_path.iterdir())


def _migrated(path: Path) -> Connection:
    conn = connect(path)
    migrate(conn, MIGRATIONS)
    return conn


def test_a_sound_file_that_fails_otherwise_is_left_alone(tmp_path: Path) -> None:
    from tributary.engine.sqlite import open_or_set_aside

    path = tmp_path / "db.sqlite"
    migrate(connect(path), MIGRATIONS)

    def refuse(p: Path) -> None:
        raise RuntimeError("schema version 3 is newer than this program knows")

    with pytest.raises(RuntimeError, match="newer"):
        open_or_set_aside(path, refuse, "a file")
    assert [p.name for p in tmp_path.iterdir() if ".damaged-" in p.name] == []
