"""A config file's identity: the hash of its bytes, shared by the file watcher and the
attach socket so both name the same file alike (and the client imports nothing more)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_digest(path: Path) -> str | None:
    """A SHA-256 hex digest of the file's bytes, or None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
