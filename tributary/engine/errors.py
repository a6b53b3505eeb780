"""The root of every error Tributary raises on purpose.

Catching :class:`TributaryError` separates "Tributary refused or could not do this, and
says why" (bad config, a server that will not start, a damaged index) from a bug. The
command line, the desktop app and the MCP face show such errors as their message
alone; anything else is reported with its traceback.
"""

from __future__ import annotations


class TributaryError(Exception):
    """An error whose message is meant for the user: it says what failed and where."""


_SQLITE_FULL = 13  # SQLite's result code for "database or disk is full"


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the user's quota) is full: ``ENOSPC`` or
    ``EDQUOT`` from the OS, or ``SQLITE_FULL`` from SQLite (whichever SQLite module
    raised it)."""
    import errno

    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
    if getattr(exc, "sqlite_errorcode", None) == _SQLITE_FULL:
        return True
    return type(exc).__name__ == "OperationalError" and "disk is full" in str(exc)


def disk_full_message(exc: BaseException) -> str:
    """One line for the user about a full disk (``exc`` names the file when it can)."""
    where = getattr(exc, "filename", None)
    place = f" writing {where}" if where else ""
    return f"the disk is full{place}: free some space and run it again"
