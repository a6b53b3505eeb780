"""Filters written in the query: ``lang:go path:src/ -path:tests/ source:files``.

``parse_query`` splits a query into its words and its filters; ``with_query_filters``
does it for a request (``check_query`` calls it first, so the desktop app, the CLI and
the MCP face all understand the same syntax). What the filters then do to a search is
``tributary.engine.query.filters``.

Keys: ``lang:``/``language:``, ``path:``/``file:``, ``source:``/``server:``, ``repo:`` (an
index's name or a folder: the built-in servers search only those); a leading
``-`` excludes. Values may be quoted (``path:"my docs/"``); several of one key are
alternatives (``lang:go lang:rust``). Unknown ``word:value`` tokens (``http://…``,
``std::vector``) and URIs (``file:///tmp/x``) stay words.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, replace

from tributary.engine.model import SearchFilters, SearchRequest

KEYS: dict[str, str] = {
    "lang": "languages", "language": "languages",
    "path": "paths", "file": "paths",
    "source": "sources", "server": "sources",
    "repo": "repos",
}
# A token starts the query or follows whitespace, and its key is short: a long run of
# letters is tried once, not once per letter, so parsing is linear in the query's length.
_MAX_KEY = max(len(key) for key in KEYS)
_TOKEN = re.compile(rf'(?<!\S)(-?)([A-Za-z]{{1,{_MAX_KEY}}}):("[^"]*"|\'[^\']*\'|\S+)')


@dataclass(slots=True)
class ParsedQuery:
    text: str  # the words to search for, filters removed
    filters: SearchFilters = field(default_factory=SearchFilters)


def parse_query(query: str) -> ParsedQuery:
    """The query's words and the filters written in it.

    The words keep their lines: an issue pasted with a filter (or given one by the
    app's filter controls) is still read as an issue, its title, code blocks and
    traceback apart; only the spaces a filter leaves behind are taken up."""
    filters = SearchFilters()
    pieces: list[str] = []
    position = 0
    for match in _TOKEN.finditer(query):
        start = match.start()  # at a word's start: "a-path:x" or "xlang:go" are words
        sign, key, raw = match.groups()
        target = KEYS.get(key.lower())
        value = _unquote(raw)
        if target is None or not value or value.startswith("//"):  # file:///x is a URI
            continue
        pieces.append(query[position:start])
        position = match.end()
        name = f"exclude_{target}" if sign else target
        values: list[str] = getattr(filters, name)
        if value not in values:
            values.append(value)
    if not pieces:
        return ParsedQuery(query.strip(), filters)
    pieces.append(query[position:])
    return ParsedQuery(_joined(pieces), filters)


def _joined(pieces: list[str]) -> str:
    """The text around the filters taken out, one space where one stood between words
    of a line, the lines as they were."""
    text = pieces[0]
    for piece in pieces[1:]:
        left, right = text.rstrip(" \t"), piece.lstrip(" \t")
        gap = " " if left and right and not left.endswith("\n") and not right.startswith(("\n", "\r")) else ""
        text = left + gap + right
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))


def format_filters(filters: SearchFilters) -> str:
    """The query syntax for ``filters`` (what ``parse_query`` reads back)."""
    parts: list[str] = []
    for key, name in (("source", "sources"), ("lang", "languages"), ("path", "paths"), ("repo", "repos")):
        for sign, attribute in (("", name), ("-", f"exclude_{name}")):
            for value in getattr(filters, attribute):
                parts.append(f"{sign}{key}:{_quote(value)}")
    return " ".join(parts)


def merge_filters(a: SearchFilters, b: SearchFilters) -> SearchFilters:
    """Both sets of filters (each list the union, in order)."""
    merged = SearchFilters()
    for name in ("sources", "exclude_sources", "languages", "exclude_languages", "paths",
                 "exclude_paths", "repos", "exclude_repos"):
        setattr(merged, name, list(dict.fromkeys([*getattr(a, name), *getattr(b, name)])))
    return merged


def with_query_filters(request: SearchRequest) -> SearchRequest:
    """``request`` with the filters written in its query moved to ``request.filters``.

    A query of filters only keeps its text as the words (there is nothing else to ask)."""
    parsed = parse_query(request.query)
    if parsed.filters.is_empty():
        return request
    return replace(request, query=parsed.text or request.query,
                   filters=merge_filters(request.filters, parsed.filters))


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1].strip()
    return raw.strip()


def _quote(value: str) -> str:
    return value if value and not any(c.isspace() for c in value) and '"' not in value else shlex.quote(value)
