"""The ``repositories`` table: one row per repository in the shared index.

A repository is known by the absolute path it was indexed from (its ``root``; a CI job
indexes from the same checkout path every time, so updates stay incremental) and shown
by its name. Removing one deletes every row of it (the foreign keys cascade) and its
vector index.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tributary.engine.localsearch.collection import CHECKED_AT, up_to_date_at
from tributary.engine.localsearch.embedder import MODEL_KEYS, ModelInfo
from tributary.engine.postgres.db import Connection, Database
from tributary.engine.repo_name import readable_name

_REPO_LOCK = 0x7265_706F  # with the repository id: pg_advisory_xact_lock(key, id)


@dataclass(frozen=True, slots=True)
class Repository:
    id: int
    root: str
    name: str
    files: int
    chunks: int
    tasks: int
    updated_at: float | None  # unix time of the last file written or full pass (``CHECKED_AT``)
    model: str | None
    vector_index: str | None
    waiting: int = 0  # chunks still without their vector


def ensure_repository(db: Database, root: str, name: str | None) -> int:
    """The id of ``root``'s row, made if missing (named ``name``, else as the SQLite
    indexes are: ``readable_name``); ``name`` (when given) replaces its name."""
    default = name or readable_name(Path(root))
    with db.transaction() as conn:
        row = conn.execute(
            "INSERT INTO repositories(root, name) VALUES (%s, %s) ON CONFLICT (root) DO UPDATE "
            "SET name = COALESCE(%s, repositories.name) RETURNING id",
            (root, default, name),
        ).fetchone()
    assert row is not None
    return int(row[0])


def find_repository(db: Database, root: str) -> int | None:
    row = db.read(lambda c: c.execute("SELECT id FROM repositories WHERE root = %s", (root,)).fetchone())
    return None if row is None else int(row[0])


def read_meta(db: Database, repo: int, scope: str, key: str) -> str | None:
    """A repository's ``repo_meta`` value of ``key`` in ``scope`` (``files``/``tasks``:
    each store keeps its own keys, as each SQLite index has its own ``meta``)."""
    row = db.read(lambda c: c.execute(
        "SELECT value FROM repo_meta WHERE repo = %s AND scope = %s AND key = %s",
        (repo, scope, key)).fetchone())  # fmt: skip
    return None if row is None else str(row[0])


def write_meta(conn: Connection, repo: int, scope: str, key: str, value: str) -> None:
    """Set ``key`` in ``scope`` inside the caller's transaction."""
    conn.execute(
        "INSERT INTO repo_meta(repo, scope, key, value) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (repo, scope, key) DO UPDATE SET value = EXCLUDED.value",
        (repo, scope, key, value),
    )


def read_model(db: Database, repo: int, scope: str) -> ModelInfo | None:
    """The model a store's vectors were made by, recorded as the SQLite stores record it
    (``MODEL_KEYS``: ``tributary.engine.localsearch.vectors``)."""
    rows = db.read(lambda c: c.execute(
        "SELECT key, value FROM repo_meta WHERE repo = %s AND scope = %s AND key = ANY(%s)",
        (repo, scope, list(MODEL_KEYS))).fetchall())  # fmt: skip
    found = {str(key): str(value) for key, value in rows}
    if len(found) < len(MODEL_KEYS):
        return None
    return ModelInfo(found["model_name"], int(found["model_dim"]), found["model_version"])


def write_model(conn: Connection, repo: int, scope: str, info: ModelInfo) -> None:
    """Record ``info`` as the model of ``scope``'s vectors, inside the caller's transaction."""
    for key, value in zip(MODEL_KEYS, (info.name, str(info.dim), info.version), strict=True):
        write_meta(conn, repo, scope, key, value)


def vector_index_name(repo: int) -> str:
    return f"chunks_vec_r{int(repo)}"


def list_repositories(db: Database) -> list[Repository]:
    """Every repository with its counts, by name."""
    rows = db.read(lambda c: c.execute(
        "SELECT r.id, r.root, r.name,"
        " (SELECT COUNT(*) FROM files f WHERE f.repo = r.id),"
        " (SELECT COALESCE(SUM(f.chunks), 0) FROM files f WHERE f.repo = r.id),"
        " (SELECT COUNT(*) FROM tasks t WHERE t.repo = r.id),"
        " (SELECT MAX(f.indexed_at) FROM files f WHERE f.repo = r.id),"
        " (SELECT value FROM repo_meta m WHERE m.repo = r.id AND m.scope = 'files' AND m.key = %s),"
        " (SELECT value FROM repo_meta m WHERE m.repo = r.id AND m.scope = 'files' AND m.key = 'model_name'),"
        " (SELECT value FROM repo_meta m WHERE m.repo = r.id AND m.scope = 'files' AND m.key = 'vector_index'),"
        " (SELECT COUNT(*) FROM chunks c WHERE c.repo = r.id AND c.embedding IS NULL)"
        " FROM repositories r ORDER BY r.name, r.root", (CHECKED_AT,)
    ).fetchall())
    return [
        Repository(int(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4]), int(r[5]),
                   up_to_date_at(r[6], r[7]), r[8], r[9], int(r[10]))
        for r in rows
    ]  # fmt: skip


def remove_repository(db: Database, root: str) -> bool:
    """Delete the repository indexed from ``root`` and all of its rows; whether it was there."""
    with db.transaction() as conn:
        row = conn.execute("SELECT id FROM repositories WHERE root = %s FOR UPDATE", (root,)).fetchone()
        if row is None:
            return False
        repo = int(row[0])
        lock_repository(conn, repo)
        conn.execute(f"DROP INDEX IF EXISTS {vector_index_name(repo)}")
        conn.execute("DELETE FROM repositories WHERE id = %s", (repo,))
    return True


def lock_repository(conn: Connection, repo: int) -> None:
    """Serialise schema changes of one repository (its vector index) within a transaction."""
    conn.execute("SELECT pg_advisory_xact_lock(%s::int, %s::int)", (_REPO_LOCK, repo))


@dataclass(frozen=True, slots=True)
class Served:
    """A repository a built-in server answers from: its code has a model, or it has tasks."""

    id: int
    root: str
    name: str
    model_version: str | None
    has_tasks: bool
    has_code: bool = False  # files chunked (keyword search works before any vector)


def served_repositories(db: Database) -> list[Served]:
    """The repositories with code indexed or a task history, by name (a light query: the
    servers run it before every search to see repositories added since)."""
    rows = db.read(lambda c: c.execute(
        "SELECT r.id, r.root, r.name,"
        " (SELECT value FROM repo_meta m WHERE m.repo = r.id AND m.scope = 'files' AND m.key = 'model_version'),"
        " EXISTS (SELECT 1 FROM tasks t WHERE t.repo = r.id),"
        " EXISTS (SELECT 1 FROM files f WHERE f.repo = r.id)"
        " FROM repositories r ORDER BY r.name, r.root").fetchall())  # fmt: skip
    return [Served(int(r[0]), str(r[1]), str(r[2]), r[3], bool(r[4]), bool(r[5])) for r in rows]
