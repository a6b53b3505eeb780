"""The root of every error Tributary raises on purpose.

Catching :class:`TributaryError` separates "Tributary refused or could not do this, and
says why" (bad config, a server that will not start, a damaged index) from a bug. The
command line, the desktop app and the MCP face show such errors as their message
alone; anything else is reported with its traceback.
"""

from __future__ import annotations


class TributaryError(Exception):
    """An error whose message is meant for the user: it says what failed and where."""
