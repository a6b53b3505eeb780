"""One embedding pass at a time per store file (a code index, a task history): a lock
file beside it, taken without waiting, so a second pass does nothing instead of
embedding the same texts again."""

from __future__ import annotations

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


def embedding_held(store_file: Path) -> bool:
    """Whether another process runs an embedding pass over ``store_file`` now."""
    if not embed_lock_path(store_file).exists():
        return False
    lock = take_embed_lock(store_file)
    if lock is None:
        return True
    lock.release()
    return False
