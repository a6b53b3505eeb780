"""The indexing API the CLI, the GUI's index manager and ``search --repo`` call.

Every repository gets one SQLite file under :func:`tributary.engine.paths.indexes_dir`, named
after the folder plus a hash of its absolute path; the file records the root, so
``list_indexes`` needs nothing else. With the PostgreSQL backend (``backend``, or the
config's ``index`` section: ``tributary.engine.index.backend``) every repository is a row of one
shared database instead. All functions are synchronous and safe to run in a worker
thread (each opens its own connection).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tributary.engine.config.schema import RepoConfig
from tributary.engine.index.backend import IndexBackend, resolve_backend
from tributary.engine.index.embed import load_code_embedder
from tributary.engine.index.indexer import Indexer
from tributary.engine.index.naming import readable_name
from tributary.engine.index.progress import IndexStats, ProgressCallback
from tributary.engine.index.store import IndexStore, SqliteStore
from tributary.engine.localsearch.collection import CHECKED_AT, up_to_date_at
from tributary.engine.localsearch.embedder import Embedder
from tributary.engine.paths import indexes_dir, repo_id

log = logging.getLogger(__name__)

INDEX_SUFFIX = ".files.sqlite"  # tasks indexes (tributary.engine.tasks) sit beside as .tasks.sqlite


@dataclass(frozen=True, slots=True)
class IndexInfo:
    root: Path
    name: str
    index_path: Path
    files: int
    chunks: int
    model: str | None
    updated_at: float | None  # unix time it was last brought up to date (``up_to_date_at``)
    size_bytes: int
    exists: bool  # the repository folder is still there
    tasks: int = 0  # tasks in its history beside it (``tributary.engine.repos.manage.list_repositories`` counts)
    history: bool = True  # it has a history (not: a folder outside git, or indexed with --no-history)
    location: str = ""  # where it is when not a file: the shared database (no password)
    embedded: int | None = None  # chunks with their vector (None: not known)
    # past tasks of its history with their vector (None: not known, or no history)
    history_embedded: int | None = None
    code_embedded: bool = False  # every chunk of a code file has its vector

    @property
    def status(self) -> str:
        """``ready``, or how far the vectors are while keyword search already works."""
        if self.embedded is None or self.embedded >= self.chunks:
            return "ready"
        code = ", code done" if self.code_embedded and self.embedded else ""
        return f"semantic index {int(100 * self.embedded / self.chunks)} % ready{code}"


def repo_stem(repo_path: Path | str) -> str:
    """``<folder>-<hash of the absolute path>``: the stem the tasks index uses too."""
    return repo_id(repo_path)


def index_path_for(repo_path: Path | str, *, directory: Path | None = None) -> Path:
    return (directory or indexes_dir()) / f"{repo_stem(repo_path)}{INDEX_SUFFIX}"


def _open_store(
    root: Path, index_path: Path, name: str | None, backend: IndexBackend | None = None
) -> IndexStore:
    if backend is not None and backend.dsn is not None:
        from tributary.engine.index.pg_store import PgIndexStore

        return PgIndexStore.open(backend.dsn, str(root), name or readable_name(root),
                                 vector_index=backend.vector_index)
    store = SqliteStore(index_path, check_same_thread=False)
    store.set_meta("root", str(root))
    store.set_meta("name", name or readable_name(root))
    return store


def _location(root: Path, index_dir: Path | None, backend: IndexBackend) -> Path:
    """Where the index is, for reports: its SQLite file, or the database (no password)."""
    if backend.dsn is None:
        return index_path_for(root, directory=index_dir)
    from tributary.engine.index.pg_store import location

    return Path(location(backend.dsn))


def open_index_store(
    path: Path | str, *, index_dir: Path | None = None, backend: IndexBackend | None = None
) -> IndexStore:
    """The index of the repository at ``path`` for reading (``FileNotFoundError`` when it
    is not indexed); close it when done."""
    root = Path(path).expanduser().resolve()
    chosen = resolve_backend(index_dir, backend)
    if chosen.dsn is None:
        index_path = index_path_for(root, directory=index_dir)
        if not index_path.exists():
            raise FileNotFoundError(f"{path} is not indexed")
        return SqliteStore(index_path, readonly=True)
    from tributary.engine.index.pg_store import PgIndexStore

    store = PgIndexStore.find(chosen.dsn, str(root), vector_index=chosen.vector_index)
    if store is None:
        raise FileNotFoundError(f"{path} is not indexed")
    return store


def _indexer(
    store: IndexStore,
    root: Path,
    index_path: Path,
    config: RepoConfig | None,
    embedder: Embedder | None,
    on_progress: ProgressCallback | None,
) -> Indexer:
    return Indexer(
        store,
        root,
        embedder or load_code_embedder,
        include=config.include if config else (),
        exclude=config.exclude if config else (),
        on_progress=on_progress,
        index_path=index_path,
    )


def index_repository(
    path: Path | str,
    *,
    on_progress: ProgressCallback | None = None,
    config: RepoConfig | None = None,
    embedder: Embedder | None = None,
    index_dir: Path | None = None,
    backend: IndexBackend | None = None,
    embed: bool = True,
) -> IndexStats:
    """Create or bring up to date the index of the repository at ``path``: keyword and
    symbol search work once its files are chunked; ``embed`` False leaves the vectors to
    :func:`embed_repository` (dense search then covers only what has one)."""
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise NotADirectoryError(f"not a folder: {root}")
    chosen = resolve_backend(index_dir, backend)
    index_path = _location(root, index_dir, chosen)
    store = _open_store(root, index_path, config.name if config else None, chosen)
    try:
        stats = _indexer(store, root, index_path, config, embedder, on_progress).run(embed=embed)
        _after_run(store)
        return stats
    finally:
        store.close()


def unchanged_index(
    path: Path | str, *, config: RepoConfig | None = None, index_dir: Path | None = None
) -> IndexStats | None:
    """The figures of a local index that a pass would leave as it is; None when a pass
    would change it, or it is not indexed here. Reads only: a pass records itself even
    when nothing changed, and each write to an index makes every process searching it
    read its vectors again."""
    return _figures(path, index_dir, lambda store, root, index_path: _indexer(
        store, root, index_path, config, None, None).settled())


def index_figures(path: Path | str, *, index_dir: Path | None = None) -> IndexStats | None:
    """The figures of a local index as it is now, read only (None: not indexed here)."""
    return _figures(path, index_dir, lambda *_: True)


def _figures(
    path: Path | str, index_dir: Path | None, wanted: Callable[[SqliteStore, Path, Path], bool]
) -> IndexStats | None:
    """A local index's figures, as a pass that changed nothing reports them, when
    ``wanted(store, root, index_path)`` says so (else None, as for no index)."""
    root = Path(path).expanduser().resolve()
    index_path = index_path_for(root, directory=index_dir)
    if not index_path.exists():
        return None
    store = SqliteStore(index_path, readonly=True)
    try:
        if not wanted(store, root, index_path):
            return None
        files, chunks = store.counts()
    finally:
        store.close()
    return IndexStats(root, index_path, files_seen=files, files_unchanged=files, files_total=files,
                      chunks_total=chunks)


def embed_repository(
    path: Path | str,
    *,
    on_progress: ProgressCallback | None = None,
    config: RepoConfig | None = None,
    embedder: Embedder | None = None,
    index_dir: Path | None = None,
    backend: IndexBackend | None = None,
) -> IndexStats:
    """Embed the chunks of an existing index that have no vector yet (the second tier).
    One process at a time per index (in a shared PostgreSQL index, on any machine): when
    another embeds it, nothing is done."""
    from tributary.engine.localsearch.embed_lock import embedding_turn

    root = Path(path).expanduser().resolve()
    chosen = resolve_backend(index_dir, backend)
    if chosen.dsn is not None:
        from tributary.engine.index.pg_store import PgIndexStore

        store = open_index_store(root, backend=chosen)
        assert isinstance(store, PgIndexStore)
        try:
            location = _location(root, None, chosen)
            with store.collection.embedding_turn() as ours:
                if not ours:
                    log.info("%s: another process is embedding it", root)
                    return IndexStats(root, location)
                stats = _indexer(store, root, location, config, embedder, on_progress).embed_pending()
            _after_run(store)
            return stats
        finally:
            store.close()
    index_path = index_path_for(root, directory=index_dir)
    if not index_path.exists():
        raise FileNotFoundError(f"{root} is not indexed: run `tributary index add {root}`")
    with embedding_turn(index_path) as ours:  # (taken before the store is opened to write)
        if not ours:
            log.info("%s: another process is embedding it", root)
            return IndexStats(root, index_path)
        store = _open_store(root, index_path, config.name if config else None)
        try:
            return _indexer(store, root, index_path, config, embedder, on_progress).embed_pending()
        finally:
            store.close()


def repository_readiness(
    path: Path | str, *, index_dir: Path | None = None, backend: IndexBackend | None = None
) -> tuple[int, int]:
    """(chunks with a vector, all chunks) of a repository's index in the backend in
    effect; (0, 0) when it is not indexed or cannot be read."""
    try:
        store = open_index_store(path, index_dir=index_dir, backend=backend)
    except Exception:
        return 0, 0
    try:
        return store.vector_counts()
    except Exception:
        return 0, 0
    finally:
        store.close()


def _after_run(store: IndexStore) -> None:
    """Backend upkeep after a pass (PostgreSQL: an IVFFlat index trained on the rows)."""
    ensure = getattr(store, "ensure_vector_index", None)
    if ensure is not None:
        ensure()


def _info(index_path: Path) -> IndexInfo | None:
    try:
        store = SqliteStore(index_path, readonly=True)
    except Exception as exc:
        log.warning("cannot open index %s: %s", index_path, exc)
        return None
    try:
        root_text = store.get_meta("root")
        if root_text is None:
            return None
        files, chunks = store.counts()
        row = store.conn.execute("SELECT MAX(indexed_at) FROM files").fetchone()
        model = store.model()
        root = Path(root_text)
        return IndexInfo(
            root=root,
            name=store.get_meta("name") or root.name,
            index_path=index_path,
            files=files,
            chunks=chunks,
            model=model.name if model else None,
            updated_at=up_to_date_at(row[0] if row else None, store.get_meta(CHECKED_AT)),
            size_bytes=sum(
                p.stat().st_size for p in (index_path, Path(f"{index_path}-wal")) if p.exists()
            ),
            exists=root.is_dir(),
            embedded=store.vector_counts()[0],
            code_embedded=not store.code_waiting(),
        )
    except Exception as exc:  # a foreign or broken file in the folder: skip it
        log.warning("cannot read index %s: %s", index_path, exc)
        return None
    finally:
        store.close()


def list_indexes(
    index_dir: Path | None = None, *, backend: IndexBackend | None = None
) -> list[IndexInfo]:
    chosen = resolve_backend(index_dir, backend)
    if chosen.dsn is not None:
        return _postgres_indexes(chosen.dsn)
    directory = index_dir or indexes_dir()
    if not directory.is_dir():
        return []
    found = (_info(p) for p in sorted(directory.glob(f"*{INDEX_SUFFIX}")))
    return [info for info in found if info is not None]


def _postgres_indexes(dsn: str) -> list[IndexInfo]:
    """The repositories of the shared database that have code indexed."""
    from tributary.engine.index.pg_store import location, repositories

    where = location(dsn)
    return [
        IndexInfo(root=Path(r.root), name=r.name, index_path=Path(where), files=r.files,
                  chunks=r.chunks, model=r.model, updated_at=r.updated_at, size_bytes=0,
                  exists=Path(r.root).is_dir(), tasks=r.tasks, history=r.tasks > 0, embedded=r.chunks - r.waiting,
                  location=f"{where} ({r.vector_index or 'no'} vector index)")
        for r in repositories(dsn)
        if r.files or r.model is not None  # (not a history alone)
    ]  # fmt: skip


def remove_postgres_repository(dsn: str, root: Path) -> bool:
    """Delete the repository indexed from ``root`` from the shared database: its code and
    its history; whether it was there."""
    from tributary.engine.index.pg_store import remove

    return remove(dsn, str(root))


def remove_sqlite_files(database: Path) -> bool:
    """Delete an SQLite database with its WAL and shared-memory files; whether any was there."""
    removed = False
    for suffix in ("", "-wal", "-shm"):
        candidate = Path(f"{database}{suffix}")
        if candidate.exists():
            candidate.unlink()
            removed = True
    return removed


def _moves_heads(rel: str) -> bool:
    """Whether a change to this file under ``.git`` means a branch head moved."""
    return rel in (".git/HEAD", ".git/packed-refs") or rel.startswith((".git/refs/heads/", ".git/logs/HEAD"))


def _git_dir(root: Path) -> Path:
    """The ``.git`` folder that says when ``root``'s branch heads move: its own, or that of
    the work tree it is a folder of (``root``'s own when there is none). The nearest
    ``.git`` decides, a file too: a submodule's or a linked work tree's heads are not
    its enclosing repository's."""
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return folder / ".git"
    return root / ".git"


def _head_moved(changed: str, git_dir: Path) -> bool | None:
    """For a path under ``git_dir``, whether its change means a branch head moved; None
    for any other path."""
    git = str(git_dir) + os.sep
    if not changed.startswith(git):
        return None
    return _moves_heads(".git/" + changed[len(git):].replace(os.sep, "/"))


def _watch_filter(git_dir: Path) -> Callable[[Any, str], bool]:
    """watchfiles' default filter (no ``.git``, ``node_modules``, caches …), except for the
    files under ``git_dir`` that say a branch head moved."""
    from watchfiles import DefaultFilter

    default = DefaultFilter()

    def accept(change: Any, path: str) -> bool:
        moved = _head_moved(path, git_dir)
        return default(change, path) if moved is None else moved

    return accept


def watch_repository(
    path: Path | str,
    *,
    config: RepoConfig | None = None,
    on_progress: ProgressCallback | None = None,
    on_update: Callable[[IndexStats], None] | None = None,
    on_git_change: Callable[[], None] | None = None,
    stop_event: threading.Event | None = None,
    embedder: Embedder | None = None,
    index_dir: Path | None = None,
    debounce_ms: int = 300,
    backend: IndexBackend | None = None,
) -> None:
    """Index now, then apply every change under ``path`` until ``stop_event`` is set.

    Changes inside ``.git`` are not files of the repository; but when git's branch heads
    move (a commit, a checkout, a pull) ``on_git_change`` is called, so the caller can
    bring the task history up to date: the work tree's ``.git`` is watched too when
    ``path`` is a folder below its top. Blocking: run it in a thread or a child process
    (the app's watcher), or in the foreground (``index add --watch``).
    """
    from watchfiles import watch

    root = Path(path).expanduser().resolve()
    chosen = resolve_backend(index_dir, backend)
    index_path = _location(root, index_dir, chosen)
    store = _open_store(root, index_path, config.name if config else None, chosen)
    try:
        indexer = _indexer(store, root, index_path, config, embedder, on_progress)
        git_dir = _git_dir(root)
        watched = [root] if git_dir.parent == root or not git_dir.is_dir() else [root, git_dir]
        ready = False
        # The first (empty, on timeout) yield means the OS watcher is live: only then run
        # the full pass, so no edit made during or just after it can be missed.
        for changes in watch(
            *watched, watch_filter=_watch_filter(git_dir), stop_event=stop_event, debounce=debounce_ms,
            raise_interrupt=False, yield_on_timeout=True, rust_timeout=200,
        ):  # fmt: skip
            if not ready:
                ready = True
                first = indexer.run()
                _after_run(store)
                if on_update is not None:
                    on_update(first)
            if not changes:
                continue
            rel_paths = set()
            heads_moved = False
            for _change, changed in changes:
                moved = _head_moved(changed, git_dir)
                if moved is not None:
                    heads_moved = heads_moved or moved
                    continue
                try:
                    rel = Path(changed).resolve().relative_to(root).as_posix()
                except ValueError:
                    continue
                if rel.split("/", 1)[0] == ".git":
                    continue
                rel_paths.add(rel)
            if heads_moved and on_git_change is not None:
                on_git_change()
            if not rel_paths:
                continue
            started = time.perf_counter()
            stats = indexer.update_paths(sorted(rel_paths))
            log.info(
                "watch: %d paths in %.0f ms", len(rel_paths), (time.perf_counter() - started) * 1000
            )
            if on_update is not None:
                on_update(stats)
    finally:
        store.close()
