"""Queries that cannot be searched, refused with a clear reason before any source is asked.

A Python ``str`` can hold a lone surrogate (``"\\ud800"``: half of a UTF-16 pair, from a
JSON escape or a mis-decoded command line). It is not Unicode text: it cannot be encoded
as UTF-8, so no source could be sent it, and every layer that tries fails in its own way
(the MCP SDK drops such a message without a reply). :func:`check_query` names the problem
and where it is, once, at the engine's door.
"""

from __future__ import annotations

import re

from engine.errors import TributaryError

_SURROGATE = re.compile("[\ud800-\udfff]")


class QueryError(TributaryError, ValueError):
    """The query cannot be searched; the message says why and where."""


def unicode_problem(text: str, what: str = "the query") -> str | None:
    """Why ``text`` is not valid Unicode text, or None when it is."""
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return (f"{what} is not valid Unicode: it holds a lone surrogate U+{ord(found.group()):04X} "
            f"at character {found.start() + 1}; send UTF-8 text")


def check_query(query: str) -> None:
    """Raise :class:`QueryError` when ``query`` cannot be searched."""
    problem = unicode_problem(query)
    if problem is not None:
        raise QueryError(problem)
