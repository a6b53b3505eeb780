"""A repository made searchable as a whole: its code and its history.

The built-in ``files`` server searches a repository's code index (``tributary.engine.index``), and
the ``tasks`` server its task history (``tributary.engine.tasks``: the commits, and the files each
one touched). Adding a repository — ``tributary index add``, ``--repo``, the app's
Indexes page — builds both; updating brings both up to date (changed files, new
commits); removing deletes both. So neither server misses a repository the user added,
nor keeps serving one they removed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from tributary.engine import sqlite
from tributary.engine.index.backend import IndexBackend, resolve_backend
from tributary.engine.index.manager import (
    IndexInfo,
    index_path_for,
    list_indexes,
    remove_postgres_repository,
    remove_sqlite_files,
)
from tributary.engine.tasks.api import import_git_history, tasks_db_path
from tributary.engine.tasks.model import ImportStats
from tributary.engine.tasks.sources import GitError, is_git_repo
from tributary.engine.tasks.store import TaskStore


@dataclass(slots=True)
class HistoryUpdate:
    """What bringing a repository's task history up to date did: the import's figures,
    or why there was none (not a git work tree; git or the task store failed)."""

    stats: ImportStats | None = None
    reason: str = ""
    failed: bool = False  # git or the store failed (not merely: no git history here)

    def summary(self) -> str:
        """One line for a person: ``history: 12 new commits``, ``history: up to date``, …"""
        if self.stats is None:
            return f"history: {self.reason}"
        stats = self.stats
        if not stats.changed:
            return "history: up to date"
        parts = [f"{stats.added:,} new commit{'s' if stats.added != 1 else ''}"] if stats.added else []
        parts += [f"{stats.updated:,} updated"] if stats.updated else []
        return f"history: {', '.join(parts)} in {stats.seconds:.1f} s"


def _store_errors(backend: IndexBackend) -> tuple[type[BaseException], ...]:
    """The errors a failing task store raises in ``backend``."""
    if backend.dsn is None:
        return sqlite.ERRORS
    # tributary.engine.postgres first: it says which extra to install when psycopg is missing
    from tributary.engine.postgres.db import PostgresError  # noqa: I001

    import psycopg

    return (psycopg.Error, PostgresError)


def update_history(
    root: Path, *, index_dir: Path | None = None, embed: bool = True, backend: IndexBackend | None = None
) -> HistoryUpdate:
    """Import the commits of ``root``'s git history not imported yet (the first time: all).

    Never raises for the history's sake: a folder that is not a git work tree has no
    history to import, and a failing ``git`` or task store is reported, not thrown, since
    the code index beside it is still good."""
    chosen = resolve_backend(index_dir, backend)
    try:
        return HistoryUpdate(import_git_history(root, indexes_dir=index_dir, embed=embed, backend=chosen))
    except GitError as exc:  # (the import asks git whether this is a work tree first)
        if not is_git_repo(root):
            return HistoryUpdate(reason="not a git work tree (code only)")
        return HistoryUpdate(reason=f"not imported: {exc}", failed=True)
    except Exception as exc:
        if not isinstance(exc, (OSError, *_store_errors(chosen))):
            raise
        return HistoryUpdate(reason=f"not imported: {exc}", failed=True)


def remove_repository(
    root: Path, *, index_dir: Path | None = None, backend: IndexBackend | None = None
) -> bool:
    """Delete the code index and the task history of the repository at ``root`` (which
    may be gone already); whether there was anything to delete."""
    chosen = resolve_backend(index_dir, backend)
    if chosen.dsn is not None:  # one row of the shared database: code and history go together
        return remove_postgres_repository(chosen.dsn, Path(root).expanduser().resolve())
    from tributary.engine.localsearch.embed_lock import embed_lock_path

    index_path, history = index_path_for(root, directory=index_dir), tasks_db_path(root, index_dir)
    removed_code = remove_sqlite_files(index_path)
    removed_history = remove_sqlite_files(history)
    for store_file in (index_path, history):
        embed_lock_path(store_file).unlink(missing_ok=True)
    return removed_code or removed_history


def embedding_underway(root: Path, *, index_dir: Path | None = None) -> bool:
    """Whether another process is embedding the repository's code or history now (its
    SQLite lock files are held): such a pass takes the chunks and commits still waiting,
    so a second one would only do nothing."""
    from tributary.engine.localsearch.embed_lock import embedding_held

    return any(embedding_held(store_file)
               for store_file in (index_path_for(root, directory=index_dir), tasks_db_path(root, index_dir)))


def list_repositories(
    index_dir: Path | None = None, *, backend: IndexBackend | None = None
) -> list[IndexInfo]:
    """The indexed repositories (``list_indexes``), each with the tasks its history holds."""
    chosen = resolve_backend(index_dir, backend)
    if chosen.dsn is not None:  # counted by the same query
        return list_indexes(backend=chosen)
    listed = []
    for info in list_indexes(index_dir):
        count, embedded = _task_counts(info.root, index_dir)
        listed.append(replace(info, tasks=count or 0, history=count is not None, history_embedded=embedded))
    return listed


def _task_counts(root: Path, index_dir: Path | None) -> tuple[int | None, int | None]:
    """The tasks of ``root``'s history and how many have their vector; None for both
    when it has none (no history file), None for the second when it cannot be read."""
    database = tasks_db_path(root, index_dir)
    if not database.exists():
        return None, None
    try:
        store = TaskStore(database, readonly=True)
    except sqlite.ERRORS:  # unreadable: listed as no history rather than not at all
        return 0, None
    try:
        tasks = store.stats().tasks
        try:
            return tasks, store.vector_counts()[0]
        except sqlite.ERRORS:  # (no vector table yet)
            return tasks, None
    except sqlite.ERRORS:  # (one being made: its tables are not written yet)
        return 0, None
    finally:
        store.close()
