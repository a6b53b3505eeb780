"""The installed package's version, read once from its metadata (pyproject.toml is the
only place it is written)."""

from __future__ import annotations

import importlib.metadata
from functools import lru_cache

from tributary.engine.extras import DISTRIBUTION

UNKNOWN = "0+unknown"  # run from a source tree that was never installed


@lru_cache(maxsize=1)
def package_version() -> str:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return UNKNOWN
