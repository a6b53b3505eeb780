"""The environment a server process gets: its configured variables plus a minimal allowlist.

Nothing else from Tributary's own environment reaches a server, so an API key
exported in the user's shell for one tool never leaks into another. The
configured ``env`` arrives already expanded (``${VAR}`` is resolved by the connector,
:mod:`tributary.engine.sources.connect`); this module only merges.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

# The SDK's stdio client adds HOME, LOGNAME, PATH, SHELL, TERM and USER on POSIX
# itself; they are listed here too so this list is the whole truth.
POSIX_ALLOWLIST = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE",
    "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ",
)
WINDOWS_ALLOWLIST = (
    "PATH", "PATHEXT", "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "APPDATA",
    "LOCALAPPDATA", "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "USERNAME", "TEMP", "TMP",
    "PROGRAMDATA", "PROGRAMFILES", "PROCESSOR_ARCHITECTURE",
)


def allowlist() -> tuple[str, ...]:
    return WINDOWS_ALLOWLIST if sys.platform == "win32" else POSIX_ALLOWLIST


def child_environment(
    configured: Mapping[str, str], parent: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Allowlisted variables from ``parent`` (default: ``os.environ``), then ``configured``."""
    source = os.environ if parent is None else parent
    env = {
        key: value
        for key in allowlist()
        if (value := source.get(key)) is not None and not value.startswith("()")  # no bash functions
    }
    env.update(configured)
    return env
