"""Where Tributary keeps its files: the config file, indexes, cache and insights.

``TRIBUTARY_CONFIG`` overrides the config file; ``TRIBUTARY_HOME`` puts everything
(config and data) under one folder, which tests and portable installs use.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import platformdirs

APP_NAME = "tributary"


def home_override() -> Path | None:
    value = os.environ.get("TRIBUTARY_HOME")
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    home = home_override()
    return home if home else Path(platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    home = home_override()
    return home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME))


def default_config_path() -> Path:
    """The config file in effect: ``$TRIBUTARY_CONFIG``, else ``<config dir>/config.yaml``."""
    explicit = os.environ.get("TRIBUTARY_CONFIG")
    return Path(explicit).expanduser() if explicit else config_dir() / "config.yaml"


def indexes_dir() -> Path:
    return data_dir() / "indexes"


def cache_path() -> Path:
    return data_dir() / "cache.sqlite"


def insights_path() -> Path:
    """The query log and reputations (the file keeps its first name, ``history.sqlite``)."""
    return data_dir() / "history.sqlite"


def repo_id(repo_path: Path | str) -> str:
    """A stable, readable file-name stem for a repository: ``<folder>-<hash of path>``.

    Both of a repository's indexes (code, and task history) are named by it.
    """
    resolved = Path(repo_path).expanduser().resolve()
    digest = hashlib.sha1(str(resolved).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", resolved.name) or "repo"
    return f"{stem}-{digest}"
