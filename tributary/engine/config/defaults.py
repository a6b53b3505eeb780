"""The default config shipped with Tributary, read from package data.

``tributary/engine/config/default_config.yaml`` is the copy the installed package reads (through
importlib.resources, so it works from a wheel or a zip); ``resources/default_config.yaml``
is the same file at the project's top level, and a test keeps the two identical.
"""

from __future__ import annotations

from importlib import resources

DEFAULT_CONFIG_RESOURCE = "default_config.yaml"


def default_config_text() -> str:
    """The commented YAML a new user starts from."""
    return resources.files("tributary.engine.config").joinpath(DEFAULT_CONFIG_RESOURCE).read_text("utf-8")
