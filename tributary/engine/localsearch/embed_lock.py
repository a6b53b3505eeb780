"""One pass at a time per store file (a code index, a task history), each kind of pass
with a lock file beside the store.

An embedding pass takes its lock without waiting, so a second one does nothing instead
of embedding the same texts again. A repository's pass (its files chunked and written,
its history imported) waits for its lock, so a second one runs after the first and
finds its work done; a search that would bring the repository up to date first finds
the lock held and searches the index as it is instead: the folder is being indexed by
another process (the app's worker, ``tributary index add``), which would otherwise be
read twice at once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

PRIVATE = 0o600  # a lock file is the user's alone, as every file of their data


def embed_lock_path(store_file: Path) -> Path:
    """The file an embedding pass over ``store_file`` holds locked."""
    return Path(f"{store_file}.embedding")


def indexing_lock_path(store_file: Path) -> Path:
    """The file a pass over the repository of the index ``store_file`` holds locked."""
    return Path(f"{store_file}.indexing")


@contextmanager
def _turn(lock_file: Path, wait: bool) -> Iterator[bool]:
    """The lock ``lock_file``: True while the block holds it; False at once when another
    process (or thread) holds it and ``wait`` is False."""
    lock = FileLock(lock_file, timeout=-1 if wait else 0, mode=PRIVATE)
    try:
        lock.acquire()
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def _held(lock_file: Path) -> bool:
    if not lock_file.exists():
        return False
    with _turn(lock_file, wait=False) as ours:
        return not ours


def embedding_turn(store_file: Path) -> AbstractContextManager[bool]:
    """``store_file``'s embedding pass, taken without waiting: True while the block holds
    it, False when another process does (the twin of a shared index's
    ``PgCollection.embedding_turn``)."""
    return _turn(embed_lock_path(store_file), wait=False)


def embedding_held(store_file: Path) -> bool:
    """Whether another process runs an embedding pass over ``store_file`` now."""
    return _held(embed_lock_path(store_file))


def indexing_turn(store_file: Path, *, wait: bool = True) -> AbstractContextManager[bool]:
    """A pass over the repository of the index ``store_file`` (its files chunked and its
    history imported): True while the block holds it; with ``wait`` False, False at once
    when another process (or thread) holds it."""
    return _turn(indexing_lock_path(store_file), wait)


def indexing_held(store_file: Path) -> bool:
    """Whether another process (or thread) runs a pass over the repository of the index
    ``store_file`` now."""
    return _held(indexing_lock_path(store_file))
