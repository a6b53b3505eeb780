"""The task-history API for the CLI, the GUI and the tasks MCP server.

Each repository's history lives in ``<indexes dir>/<repo id>.tasks.sqlite``
(:func:`tasks_db_path`). Imports are incremental and idempotent: git imports read
only commits after the last one imported, JSONL imports skip tasks whose content
is unchanged, and both record the repository's current files so that tasks pointing
at moved or deleted files can be followed or flagged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tributary.engine import paths
from tributary.engine.index.backend import IndexBackend, resolve_backend
from tributary.engine.localsearch.embedder import Embedder
from tributary.engine.paths import repo_id
from tributary.engine.tasks.functions import read_git_functions
from tributary.engine.tasks.model import FileScore, ImportStats, TaskHit, TaskStats
from tributary.engine.tasks.ranking import DEFAULT_FILE_RANK, FileRankParams
from tributary.engine.tasks.search import DEFAULT_SEARCH, TaskIndex, TaskSearchParams
from tributary.engine.tasks.sources import (
    MAX_ERRORS_KEPT,
    GitError,
    head_commit,
    is_ancestor,
    is_git_repo,
    list_repo_files,
    read_git_history,
    read_jsonl,
)
from tributary.engine.tasks.store import TaskStore

if TYPE_CHECKING:
    from tributary.engine.tasks.history import TaskHistory

log = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]  # (phase, done, total)


def tasks_db_path(repo_path: Path | str, indexes_dir: Path | str | None = None) -> Path:
    """Where a repository's task history is kept."""
    folder = Path(indexes_dir) if indexes_dir is not None else paths.indexes_dir()
    return folder / f"{repo_id(repo_path)}.tasks.sqlite"


def open_history(
    repo_path: Path | str,
    indexes_dir: Path | str | None = None,
    backend: IndexBackend | None = None,
    *,
    create: bool = True,
) -> TaskHistory | None:
    """The repository's task history in the backend in effect (``resolve_backend``); None
    when ``create`` is false and there is none yet. Close it when done."""
    chosen = resolve_backend(indexes_dir, backend)
    repo = Path(repo_path).expanduser().resolve()
    if chosen.dsn is None:
        db = tasks_db_path(repo, indexes_dir)
        return TaskStore(db) if create or db.exists() else None
    from tributary.engine.tasks.pg_store import PgTaskStore

    store = PgTaskStore.open(chosen.dsn, str(repo), create=create)
    if store is not None and not create and not store.stats().tasks:
        store.close()
        return None
    return store


def _embedder_for(embed: bool, embedder: Embedder | None) -> Embedder | None:
    if embedder is not None or not embed:
        return embedder
    from tributary.engine.index.embed import load_default_embedder

    return load_default_embedder()


def _snapshot(store: TaskHistory, repo: Path) -> None:
    if repo.is_dir():
        store.set_snapshot_files(list_repo_files(repo))


def history_moved(repo_path: Path | str, indexes_dir: Path | str | None = None) -> bool:
    """Whether a local history would import something: the work tree's HEAD is not the
    commit it last imported (no history yet: it would, in a git work tree). Reads only."""
    repo = Path(repo_path).expanduser().resolve()
    database = tasks_db_path(repo, indexes_dir)
    if not database.exists():
        return head_commit(repo) is not None  # (a folder outside git has none to import)
    with TaskStore(database, readonly=True) as store:
        last = store.get_meta("git_head")
    return last is None or head_commit(repo) != last


def import_git_history(
    repo_path: Path | str,
    *,
    indexes_dir: Path | str | None = None,
    embed: bool = True,
    embedder: Embedder | None = None,
    full: bool = False,
    on_progress: ProgressFn | None = None,
    backend: IndexBackend | None = None,
) -> ImportStats:
    """Import the repository's non-merge commits as tasks (only new ones unless ``full``)."""
    started = time.perf_counter()
    repo = Path(repo_path).expanduser().resolve()
    if not is_git_repo(repo):
        raise GitError(f"{repo} is not a git work tree")
    stats = ImportStats(source="git")
    model = _embedder_for(embed, embedder)
    store = open_history(repo, indexes_dir, backend)
    assert store is not None
    with closing(store):
        last = None if full else store.get_meta("git_head")
        head = head_commit(repo)
        if last is not None and head is not None and is_ancestor(repo, last, head):
            history = read_git_history(repo, since=last)
        else:  # first import, or history rewritten: read it all, unchanged ones are skipped
            history = read_git_history(repo)
        stats.read = len(history.tasks)
        stats.skipped = history.skipped
        stats.errors = history.errors
        if on_progress:
            on_progress("read", stats.read, stats.read)
        meta = {"git_head": history.head} if history.head else {}
        # The files that exist now go in first: tasks are searchable batch by batch,
        # and a query before the snapshot would list files deleted long ago.
        _snapshot(store, repo)
        store.upsert(
            history.tasks,
            stats,
            embedder=model,
            renames=history.renames,
            meta=meta,
            on_progress=(lambda d, t: on_progress("write", d, t)) if on_progress else None,
        )
        _record_functions(store, repo, history.head, full, stats)
    stats.seconds = time.perf_counter() - started
    return stats


_FUNCTIONS_HEAD = "functions_head"  # the commit up to which the changed functions were read


def _record_functions(store: TaskHistory, repo: Path, head: str | None, full: bool, stats: ImportStats) -> None:
    """Read and record which functions the commits since the last import changed (all
    of them on the first import, with ``full``, or when a history imported before kept
    none; such a whole read replaces what was recorded); a problem that stopped the
    read is one of the import's errors."""
    last = None if full else store.get_meta(_FUNCTIONS_HEAD)
    if head is None or last == head:
        return
    since = last if last is not None and is_ancestor(repo, last, head) else None
    read = read_git_functions(repo, head, since=since)
    # A whole read replaces what older reads recorded, unless it stopped part-way.
    store.record_functions(read.functions, {_FUNCTIONS_HEAD: head}, whole=since is None and read.problem is None)
    if read.problem is not None and len(stats.errors) < MAX_ERRORS_KEPT:
        stats.errors.append(read.problem)


def embed_history(
    repo_path: Path | str,
    *,
    indexes_dir: Path | str | None = None,
    embedder: Embedder | None = None,
    backend: IndexBackend | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> int:
    """Give every task of the repository's history that has no vector its vector (one
    imported with ``embed=False``, so its keywords were searchable at once); how many.
    ``on_progress(done, total)`` follows it batch by batch, over the whole history: it
    first says how many have their vector already (a pass that resumes at 42 % reports
    from there, not from 0). One process at a time per
    history: when another holds the lock, nothing is done (every ``--repo`` search that
    found vectors missing started one more pass, each embedding the same commits)."""
    store = open_history(repo_path, indexes_dir, backend, create=False)
    if store is None:
        return 0
    from tributary.engine.localsearch.embed_lock import embedding_turn

    with closing(store):
        if resolve_backend(indexes_dir, backend).dsn is not None:  # the database's lock: one pass on any machine
            from tributary.engine.tasks.pg_store import PgTaskStore

            assert isinstance(store, PgTaskStore)
            turn = store.collection.embedding_turn()
        else:
            turn = embedding_turn(tasks_db_path(repo_path, indexes_dir))
        with turn as ours:
            if not ours:
                log.info("%s: another process is embedding its history", repo_path)
                return 0
            return _embed_missing(store, embedder, on_progress)


def _embed_missing(
    store: TaskHistory, embedder: Embedder | None, on_progress: Callable[[int, int], None] | None
) -> int:
    from tributary.engine.index.embed import load_default_embedder

    embedded, total = store.vector_counts()
    if on_progress is not None:
        on_progress(min(embedded, total), total)
    return store.embed_missing(embedder or load_default_embedder(), _of_whole(total, on_progress))


def _of_whole(
    total: int, on_progress: Callable[[int, int], None] | None
) -> Callable[[int, int], None] | None:
    """``on_progress`` told of a pass over ``todo`` of ``total`` tasks as its share of
    all of them: the tasks not to do have their vectors already."""
    if on_progress is None:
        return None
    return lambda done, todo: on_progress(max(total - todo, 0) + done, max(total, todo))


def import_tasks_jsonl(
    repo_path: Path | str,
    jsonl_path: Path | str,
    *,
    indexes_dir: Path | str | None = None,
    embed: bool = True,
    embedder: Embedder | None = None,
    on_progress: ProgressFn | None = None,
    backend: IndexBackend | None = None,
) -> ImportStats:
    """Import tasks from a JSONL export (``{"id","date","title","body","files"}`` a line).

    Bad lines are skipped and counted; ``stats.errors`` names the first few as
    ``file:line: why``. Raises ``OSError`` when the file cannot be read.
    """
    started = time.perf_counter()
    source = Path(jsonl_path).expanduser()
    read = read_jsonl(source)
    stats = ImportStats(source=f"jsonl:{source.name}", read=read.lines, skipped=read.skipped)
    stats.errors = read.errors
    if on_progress:
        on_progress("read", read.lines, read.lines)
    model = _embedder_for(embed, embedder)
    repo = Path(repo_path).expanduser().resolve()
    store = open_history(repo, indexes_dir, backend)
    assert store is not None
    with closing(store):
        _snapshot(store, repo)  # before the tasks, as for a git import
        store.upsert(
            read.tasks,
            stats,
            embedder=model,
            on_progress=(lambda d, t: on_progress("write", d, t)) if on_progress else None,
        )
    stats.seconds = time.perf_counter() - started
    return stats


def open_index(
    repo_path: Path | str,
    *,
    indexes_dir: Path | str | None = None,
    embedder: Embedder | None = None,
    load_embedder: bool = True,
    backend: IndexBackend | None = None,
) -> TaskIndex:
    """The repository's task history, open for repeated searches (close it when done)."""
    store = open_history(repo_path, indexes_dir, backend, create=False)
    if store is None:
        raise FileNotFoundError(f"no task history for {repo_path}: run `tributary tasks import`")
    return TaskIndex(store, embedder=embedder, load_embedder=load_embedder)


def search_tasks(
    repo_path: Path | str,
    query: str,
    top_k: int = 10,
    *,
    as_of: datetime | None = None,
    indexes_dir: Path | str | None = None,
    embedder: Embedder | None = None,
    params: TaskSearchParams = DEFAULT_SEARCH,
    backend: IndexBackend | None = None,
) -> list[TaskHit]:
    """Tasks similar to ``query`` (hybrid BM25 + embeddings), none dated after ``as_of``."""
    with open_index(repo_path, indexes_dir=indexes_dir, embedder=embedder, backend=backend) as index:
        return index.search(query, top_k, as_of=as_of, params=params)


def files_for_task(
    repo_path: Path | str,
    query: str,
    top_k: int = 10,
    *,
    as_of: datetime | None = None,
    existing: Collection[str] | None = None,
    indexes_dir: Path | str | None = None,
    embedder: Embedder | None = None,
    params: TaskSearchParams = DEFAULT_SEARCH,
    file_params: FileRankParams = DEFAULT_FILE_RANK,
    backend: IndexBackend | None = None,
) -> list[FileScore]:
    """Files ranked by the similar past tasks that touched them."""
    with open_index(repo_path, indexes_dir=indexes_dir, embedder=embedder, backend=backend) as index:
        return index.files_for_task(
            query, top_k, as_of=as_of, existing=existing, params=params, file_params=file_params
        )


def task_stats(
    repo_path: Path | str,
    *,
    indexes_dir: Path | str | None = None,
    backend: IndexBackend | None = None,
) -> TaskStats:
    """What the repository's task history holds (zeros when nothing was imported)."""
    store = open_history(repo_path, indexes_dir, backend, create=False)
    if store is None:
        return TaskStats(db_path=str(tasks_db_path(repo_path, indexes_dir)))
    with closing(store):
        return store.stats()
