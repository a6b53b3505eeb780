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


# Proxies and extra CA certificates: a server behind a corporate proxy or TLS inspection
# cannot reach anything without them, and they hold no secrets of other tools (a proxy
# URL with a password in it is the user's own network setting).
NETWORK_VARIABLES = (
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
)


def allowlist() -> tuple[str, ...]:
    base = WINDOWS_ALLOWLIST if sys.platform == "win32" else POSIX_ALLOWLIST
    return base + NETWORK_VARIABLES


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
