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
from contextlib import contextmanager
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout

PRIVATE = 0o600  # a lock file is the user's alone, as every file of their data


def embed_lock_path(store_file: Path) -> Path:
    """The file an embedding pass over ``store_file`` holds locked."""
    return Path(f"{store_file}.embedding")


def take_embed_lock(store_file: Path) -> BaseFileLock | None:
    """The lock of ``store_file``'s embedding pass, held (release it when done); None
    when another process holds it."""
    lock = FileLock(embed_lock_path(store_file), timeout=0, mode=PRIVATE)
    try:
        lock.acquire()
    except Timeout:
        return None
    return lock


@contextmanager
def embedding_turn(store_file: Path) -> Iterator[bool]:
    """``store_file``'s embedding pass, taken without waiting: True while the block holds
    it, False when another process does (the twin of a shared index's
    ``PgCollection.embedding_turn``)."""
    lock = take_embed_lock(store_file)
    try:
        yield lock is not None
    finally:
        if lock is not None:
            lock.release()


def embedding_held(store_file: Path) -> bool:
    """Whether another process runs an embedding pass over ``store_file`` now."""
    if not embed_lock_path(store_file).exists():
        return False
    with embedding_turn(store_file) as ours:
        return not ours


def indexing_lock_path(store_file: Path) -> Path:
    """The file a keyword pass over ``store_file`` holds locked."""
    return Path(f"{store_file}.indexing")


@contextmanager
def indexing_turn(store_file: Path, *, wait: bool = True) -> Iterator[bool]:
    """A pass over the repository of the index ``store_file`` (its files chunked and its
    history imported): True while the block holds it; with ``wait`` False, False at once
    when another process (or thread) holds it."""
    lock = FileLock(indexing_lock_path(store_file), timeout=-1 if wait else 0, mode=PRIVATE)
    try:
        lock.acquire()
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def indexing_held(store_file: Path) -> bool:
    """Whether another process (or thread) runs a keyword pass over ``store_file`` now."""
    path = indexing_lock_path(store_file)
    if not path.exists():
        return False
    lock = FileLock(path, timeout=0, mode=PRIVATE)
    try:
        lock.acquire()
    except Timeout:
        return True
    lock.release()
    return False
