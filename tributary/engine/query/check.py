"""What the engine accepts as a query: checked and cut before any source is asked.

- An empty or blank query is an error (:class:`QueryError`, naming what is wrong).
- A query holding a lone surrogate (``"\\ud800"``: half of a UTF-16 pair, from a JSON
  escape or a mis-decoded command line) is not Unicode text: no source could be sent it,
  and every layer that tries fails its own way (the MCP SDK drops such a message without
  a reply). It is refused here, once, naming the character and where it is.
- A query longer than ``MAX_QUERY_CHARS`` (a pasted file, a log) is cut at a word
  boundary and the response says so in ``SearchResponse.notes``. The cut comes before
  anything parses the query (its filters, its class), so no parser ever reads more
  than ``MAX_QUERY_CHARS`` of untrusted text.
- A filter value that can name nothing (a ``repo:`` of 300 characters, a control
  character, hundreds of values) is refused here, naming the filter and where it is,
  before any source sees it: one client's bad input is not a source's failure, and
  must not open a breaker that every other client then finds open.
- A query with no letters or digits (``?!``, ``---``) has nothing any source could
  match: it is answered at once, with no hits, a note and the short "nothing relevant
  found" context, instead of a full budget of whatever the sources return.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from tributary.engine.errors import TributaryError
from tributary.engine.model import SearchFilters, SearchRequest
from tributary.engine.query.filters import FILTER_SYNTAX, Filters
from tributary.engine.query.syntax import with_query_filters

# An issue handed over whole by an agent (tracebacks, code and all) fits; a pasted log
# or file does not.
MAX_QUERY_CHARS = 32_000
_WORD = re.compile(r"\w", re.UNICODE)
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


# What a ``repos`` value may be: an index name or a folder, each part of it no longer
# than a file name may be (longer cannot name anything, and the OS refuses it).
MAX_SCOPE_VALUES = 64
MAX_SCOPE_CHARS = 1024
MAX_NAME_BYTES = 255


def values_problem(values: Sequence[str], what: str) -> str | None:
    """Why a request's list of filter values cannot be taken, or None: too many, not
    text, too long, or holding a control character. Only where, never the value."""
    if len(values) > MAX_SCOPE_VALUES:
        return f"{what} has {len(values)} values, at most {MAX_SCOPE_VALUES}"
    for number, value in enumerate(values, 1):
        if not isinstance(value, str):
            return f"{what} value {number} is not a string"
        if len(value) > MAX_SCOPE_CHARS:
            return f"{what} value {number} is {len(value)} characters long, at most {MAX_SCOPE_CHARS}"
        if any(ord(c) < 32 or ord(c) == 127 for c in value):
            return f"{what} value {number} holds a control character"
    return None


def scope_problem(values: Sequence[str], what: str = "repos") -> str | None:
    """Why ``values`` (a ``repos`` or ``exclude_repos`` list from a request) cannot name
    repositories, or None when they can: ``values_problem``'s reasons, or a part longer
    than a file name. The value itself is not repeated, only where it is."""
    problem = values_problem(values, what)
    if problem is not None:
        return problem
    for number, value in enumerate(values, 1):
        longest = max(len(part.encode("utf-8", "surrogatepass")) for part in value.split("/"))
        if longest > MAX_NAME_BYTES:
            return (f"{what} value {number} has a part of {longest} bytes, which names no "
                    f"repository or folder (at most {MAX_NAME_BYTES})")
    return None


def filter_problem(filters: SearchFilters, query: str) -> str | None:
    """Why ``filters`` cannot be searched with, naming the filter and where it was
    written (its place in ``query``, or the request's own filters), or None."""
    for name, syntax in FILTER_SYNTAX.items():
        values: list[str] = getattr(filters, name)
        check = scope_problem if name.endswith("repos") else values_problem
        problem = check(values, f"the filter {syntax}")
        if problem is None:
            continue
        bad = next((v for v in values if check([v], "") is not None), None)
        at = query.find(bad) if isinstance(bad, str) and bad else -1
        where = f"at character {at + 1} of the query" if at >= 0 else "in the request's filters"
        return f"{problem} ({where})"
    return None


@dataclass(frozen=True, slots=True)
class CheckedQuery:
    request: SearchRequest
    notes: list[str] = field(default_factory=list)
    searchable: bool = True  # False: no word in it, nothing to ask the sources

    @property
    def filters(self) -> Filters:
        """The request's filters, those written in the query among them, as the one value
        a search applies them through."""
        return Filters(self.request.filters)


def check_query(request: SearchRequest) -> CheckedQuery:
    """``request`` with its query cut to size, then the filters written in it moved to
    ``request.filters``, the notes saying what was done, and whether there is anything
    to search for; raises :class:`QueryError` for a blank query
    or one that is not valid Unicode."""
    query = request.query
    if not isinstance(query, str) or not query.strip():
        raise QueryError("the query is empty: type what to search for")
    problem = unicode_problem(query)
    if problem is not None:
        raise QueryError(problem)
    notes: list[str] = []
    if len(query) > MAX_QUERY_CHARS:
        cut = query[:MAX_QUERY_CHARS]
        space = cut.rfind(" ", MAX_QUERY_CHARS - 200)
        cut = (cut[:space] if space > 0 else cut).rstrip()
        notes.append(f"the query was {len(query):,} characters; only its first {len(cut):,} were searched")
        request = replace(request, query=cut)
    written = request.query
    request = with_query_filters(request)  # lang:go path:src/ source:files … (after the cut)
    problem = filter_problem(request.filters, written)
    if problem is not None:
        raise QueryError(problem)
    if not _WORD.search(request.query):
        notes.append("the query has no letters or digits: nothing to search for")
        return CheckedQuery(request, notes, searchable=False)
    return CheckedQuery(request, notes)
