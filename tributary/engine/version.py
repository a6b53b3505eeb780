"""The installed package's version, read once from its metadata (pyproject.toml is the
only place it is written), and the identity of the engine's code that answers carry."""

from __future__ import annotations

import hashlib
import importlib.metadata
from functools import lru_cache
from pathlib import Path

from tributary.engine.extras import DISTRIBUTION

UNKNOWN = "0+unknown"  # run from a source tree that was never installed
ENGINE_ROOT = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def package_version() -> str:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return UNKNOWN


@lru_cache(maxsize=1)
def code_identity() -> str:
    """The version and a digest of the engine's Python sources: what a cached answer was
    made by. A development tree keeps one version across commits that rank differently,
    so its answers must not outlive an edit; a frozen build has no sources to read and
    is told apart by its version alone."""
    return f"{package_version()}+{sources_digest(ENGINE_ROOT)}"


def sources_digest(root: Path) -> str:
    """A short digest of the names and contents of the ``.py`` files under ``root``."""
    digest = hashlib.blake2b(digest_size=8)
    for source in sorted(root.rglob("*.py")):
        try:
            content = source.read_bytes()
        except OSError:
            continue
        digest.update(source.relative_to(root).as_posix().encode() + b"\0" + content)
    return digest.hexdigest()
