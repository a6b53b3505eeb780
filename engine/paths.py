"""Where Tributary keeps its files: the config file, indexes, cache and history.

``TRIBUTARY_CONFIG`` overrides the config file; ``TRIBUTARY_HOME`` puts everything
(config and data) under one folder, which tests and portable installs use.
"""

from __future__ import annotations

import os
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


def history_path() -> Path:
    return data_dir() / "history.sqlite"


def runtime_dir() -> Path:
    """For the single-instance socket and similar per-session files."""
    home = home_override()
    if home:
        return home / "run"
    return Path(platformdirs.user_runtime_dir(APP_NAME))
