"""One embedding pass at a time per store file (a code index, a task history): a lock
file beside it, taken without waiting, so a second pass does nothing instead of
embedding the same texts again."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout


def embed_lock_path(store_file: Path) -> Path:
    """The file an embedding pass over ``store_file`` holds locked."""
    return Path(f"{store_file}.embedding")


def take_embed_lock(store_file: Path) -> BaseFileLock | None:
    """The lock of ``store_file``'s embedding pass, held (release it when done); None
    when another process holds it."""
    lock = FileLock(embed_lock_path(store_file), timeout=0)
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
