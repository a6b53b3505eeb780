"""A repository made searchable as a whole: its code and its history.

The built-in ``files`` server searches a repository's code index (``tributary.engine.index``), and
the ``tasks`` server its task history (``tributary.engine.tasks``: the commits, and the files each
one touched). Adding a repository — ``tributary index add``, ``--repo``, the app's
Indexes page — builds both; updating brings both up to date (changed files, new
commits); removing deletes both. So neither server misses a repository the user added,
nor keeps serving one they removed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, closing, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

from tributary.engine import sqlite
from tributary.engine.config.schema import RepoConfig
from tributary.engine.index.backend import IndexBackend, resolve_backend
from tributary.engine.index.manager import (
    IndexInfo,
    index_figures,
    index_path_for,
    index_repository,
    list_indexes,
    open_index_store,
    remove_postgres_repository,
    remove_sqlite_files,
    repository_readiness,
    unchanged_index,
)
from tributary.engine.index.progress import IndexStats, ProgressCallback
from tributary.engine.runtime.spawn import cli_command
from tributary.engine.tasks.api import (
    history_moved,
    import_git_history,
    open_history,
    tasks_db_path,
)
from tributary.engine.tasks.model import ImportStats
from tributary.engine.tasks.sources import GitError, is_git_repo
from tributary.engine.tasks.store import TaskStore
from tributary.engine.wording import counted


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


@dataclass(slots=True)
class RepoRefresh:
    """What bringing a repository up to date before a search did (``--repo``): its code
    index's run, the chunks still waiting for a vector, the history's import (None: not
    asked for) and whether past tasks wait for theirs."""

    code: IndexStats
    vectors_waiting: int = 0
    history: HistoryUpdate | None = None
    history_waiting: bool = False
    elsewhere: bool = False  # another process was indexing it: searched as far as it got

    @property
    def changed(self) -> bool:
        """Whether answers from before may be out of date now."""
        return bool(self.code.files_indexed or self.code.files_deleted or self._new_history)

    @property
    def _new_history(self) -> bool:
        return self.history is not None and self.history.stats is not None and self.history.stats.changed > 0

    def code_summary(self) -> str:
        """``91 files, up to date`` or ``91 files, 648 chunks (3 files updated in 0.2s)``."""
        stats = self.code
        if self.elsewhere:
            return f"{counted(stats.files_total, 'file')} so far, being indexed by another process"
        if not stats.files_indexed:
            return f"{counted(stats.files_total, 'file')}, up to date"
        return (f"{counted(stats.files_total, 'file')}, {counted(stats.chunks_total, 'chunk')} "
                f"({counted(stats.files_indexed, 'file')} updated in {stats.seconds:.1f}s)")

    def notes(self) -> list[str]:
        """What a person is told after the summary: files skipped, vectors still being
        made, the history's import when it brought commits or failed."""
        name = self.code.root.name
        lines = [f"  warning: {warning}" for warning in self.code.warnings[:5]]
        lines += [f"  skipped: {error}" for error in self.code.errors[:5]]
        if self.vectors_waiting:
            lines.append(f"{name}: keyword search ready; embedding {counted(self.vectors_waiting, 'chunk')} "
                         "in the background (meaning-based matches fill in as it goes)")
        if self.history is not None and (self.history.failed or self._new_history):
            lines.append(f"{name}: {self.history.summary()}")
        return lines


def refresh_repository(
    root: Path,
    *,
    history: bool = True,
    backend: IndexBackend | None = None,
    config: RepoConfig | None = None,
    index_dir: Path | None = None,
    on_progress: ProgressCallback | None = None,
    embed_later: Callable[[Path], None] | None = None,
    embed_new_only: bool = False,
) -> RepoRefresh:
    """Bring a repository's keyword tiers up to date for a search (indexing it the first
    time): changed files re-read (``config``: its entry, whose include and exclude
    patterns say which), new commits imported (``history``). The chunks and past tasks
    still without a vector go to ``embed_later`` unless a pass embeds them already
    (``embed_new_only``: only when this call changed something, not for what a stopped
    pass left); no vector is made here, so this is cheap when little changed."""
    chosen = resolve_backend(index_dir, backend)
    with repository_pass(root, backend=chosen, index_dir=index_dir, wait=False) as ours:
        if not ours:  # another process indexes it (the app's worker, `tributary index add`)
            code = index_figures(root, index_dir=index_dir) or IndexStats(root, index_path_for(root, directory=index_dir))
            embedded, total = repository_readiness(root, backend=chosen, index_dir=index_dir)
            return RepoRefresh(code, vectors_waiting=total - embedded, elsewhere=True)
        refresh = _refreshed(root, history, chosen, config, index_dir, on_progress)
    waiting = (refresh.vectors_waiting or refresh.history_waiting) and (refresh.changed or not embed_new_only)
    if embed_later is not None and waiting and not embedding_underway(root, backend=chosen, index_dir=index_dir):
        embed_later(root)
    return refresh


def _refreshed(
    root: Path, history: bool, backend: IndexBackend, config: RepoConfig | None, index_dir: Path | None,
    on_progress: ProgressCallback | None,
) -> RepoRefresh:
    """``refresh_repository``'s pass, its turn taken."""
    # Nothing to do is found without writing: a write makes every searching process read
    # the index's vectors again, which for a large one takes longer than the search.
    settled = unchanged_index(root, config=config, index_dir=index_dir) if backend.dsn is None else None
    moved = history and (settled is None or history_moved(root, index_dir))
    code = settled or index_repository(root, on_progress=on_progress, embed=False, backend=backend, config=config,
                                       index_dir=index_dir)
    embedded, total = repository_readiness(root, backend=backend, index_dir=index_dir)
    refresh = RepoRefresh(code, vectors_waiting=total - embedded)
    if history:
        if moved:
            refresh.history = update_history(root, embed=False, backend=backend, index_dir=index_dir)
        refresh.history_waiting = _history_waits(root, backend, index_dir)
    return refresh


def repository_pass(
    root: Path, *, backend: IndexBackend | None = None, index_dir: Path | None = None, wait: bool = True
) -> AbstractContextManager[bool]:
    """A pass over the repository at ``root`` (its files chunked, its history imported),
    one at a time: True while the block holds the turn; with ``wait`` False, False at
    once when another process or thread holds it. A second pass over the same files
    beside the first would do its work again; a search's update instead searches the
    index as far as the running pass has written it. A shared database's writers take
    turns in it: always True there."""
    from tributary.engine.localsearch.embed_lock import indexing_turn

    if resolve_backend(index_dir, backend).dsn is not None:
        return nullcontext(True)
    return indexing_turn(index_path_for(Path(root).expanduser().resolve(), directory=index_dir), wait=wait)


def repo_entry(repos: Sequence[RepoConfig], root: Path) -> RepoConfig | None:
    """The config's entry for the repository at ``root`` (its name, include and exclude
    patterns), if it has one."""
    for repo in repos:
        if Path(repo.path).expanduser().resolve() == root:
            return repo
    return None


def repository_indexed(root: Path, *, backend: IndexBackend | None = None) -> bool:
    """Whether the repository at ``root`` has a code index in the backend in effect."""
    try:
        store = open_index_store(root, backend=resolve_backend(None, backend))
    except FileNotFoundError:
        return False
    store.close()
    return True


# The passes this process started, kept until they end: a long-running engine reaps each
# (no zombie is left) and drops none still running (Python warns of those).
_STARTED: list[subprocess.Popen[bytes]] = []


def embed_in_background(root: Path) -> None:
    """Start ``tributary index embed ROOT`` detached: it outlives the process that
    starts it (a one-shot search, or the engine that answered one)."""
    _STARTED[:] = [process for process in _STARTED if process.poll() is None]
    _STARTED.append(subprocess.Popen(
        cli_command("index", "embed", "--quiet", str(root)),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    ))  # fmt: skip


def _history_waits(root: Path, backend: IndexBackend, index_dir: Path | None = None) -> bool:
    """Whether past tasks of the history wait for their vectors (imported just now, or
    left by a background pass that was stopped)."""
    store = open_history(root, index_dir, backend, create=False)
    if store is None:
        return False
    with closing(store):
        embedded, total = store.vector_counts()
    return embedded < total


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
    from tributary.engine.localsearch.embed_lock import embed_lock_path, indexing_lock_path

    index_path, history = index_path_for(root, directory=index_dir), tasks_db_path(root, index_dir)
    removed_code = remove_sqlite_files(index_path)
    removed_history = remove_sqlite_files(history)
    for store_file in (index_path, history):
        embed_lock_path(store_file).unlink(missing_ok=True)
    indexing_lock_path(index_path).unlink(missing_ok=True)
    return removed_code or removed_history


def embedding_underway(
    root: Path, *, index_dir: Path | None = None, backend: IndexBackend | None = None
) -> bool:
    """Whether another process is embedding the repository's code or history now (its
    SQLite lock files are held; in a shared PostgreSQL index, a pass on any machine):
    such a pass takes the chunks and commits still waiting, so a second one would only
    do nothing."""
    chosen = resolve_backend(index_dir, backend)
    if chosen.dsn is not None:
        return _embedding_in_database(root, chosen.dsn)
    from tributary.engine.localsearch.embed_lock import embedding_held

    return any(embedding_held(store_file)
               for store_file in (index_path_for(root, directory=index_dir), tasks_db_path(root, index_dir)))


def _embedding_in_database(root: Path, dsn: str) -> bool:
    from tributary.engine.index.pg_store import PgIndexStore
    from tributary.engine.tasks.pg_store import PgTaskStore

    store = PgIndexStore.find(dsn, str(root))
    if store is None:
        return False
    try:
        if store.collection.embedding_held():
            return True
    finally:
        store.close()
    history = PgTaskStore.open(dsn, str(root), create=False)
    if history is None:
        return False
    with closing(history):
        return history.collection.embedding_held()


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
