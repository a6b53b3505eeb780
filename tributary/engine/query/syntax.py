"""Filters written in the query: ``lang:go path:src/ -path:tests/ source:files``.

``parse_query`` splits a query into its words and its filters; ``with_query_filters``
does it for a request (the engine calls it first, so the desktop app, the CLI and
the MCP face all understand the same syntax). ``keep_hit`` decides whether a hit
passes; ``filter_sources`` narrows a routing decision.

Keys: ``lang:``/``language:``, ``path:``/``file:``, ``source:``/``server:``, ``repo:`` (an
index's name or a folder: the built-in servers search only those); a leading
``-`` excludes. Values may be quoted (``path:"my docs/"``); several of one key are
alternatives (``lang:go lang:rust``). A language is a name (``python``) or a file
extension (``py``). A path without ``* ? [`` matches where it starts a path segment
(``src/`` matches ``src/a.go`` and ``pkg/src/b.go``); with them it is a glob over the
whole path, or over the file name when it has no ``/``. Unknown ``word:value`` tokens
(``http://…``, ``std::vector``) stay words.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

from tributary.engine.model import Hit, RouteDecision, SearchFilters, SearchRequest
from tributary.engine.query.languages import detect_language

KEYS: dict[str, str] = {
    "lang": "languages", "language": "languages",
    "path": "paths", "file": "paths",
    "source": "sources", "server": "sources",
    "repo": "repos",
}
SKIP_EXCLUDED = "excluded by the query"
SKIP_NOT_CHOSEN = "not chosen by the query"
# A token starts the query or follows whitespace, and its key is short: a long run of
# letters is tried once, not once per letter, so parsing is linear in the query's length.
_MAX_KEY = max(len(key) for key in KEYS)
_TOKEN = re.compile(rf'(?<!\S)(-?)([A-Za-z]{{1,{_MAX_KEY}}}):("[^"]*"|\'[^\']*\'|\S+)')
_GLOB_CHARS = frozenset("*?[")


@dataclass(slots=True)
class ParsedQuery:
    text: str  # the words to search for, filters removed
    filters: SearchFilters = field(default_factory=SearchFilters)


def parse_query(query: str) -> ParsedQuery:
    """The query's words and the filters written in it."""
    filters = SearchFilters()
    words: list[str] = []
    position = 0
    for match in _TOKEN.finditer(query):
        start = match.start()  # at a word's start: "a-path:x" or "xlang:go" are words
        sign, key, raw = match.groups()
        target = KEYS.get(key.lower())
        value = _unquote(raw)
        if target is None or not value:
            continue
        words.append(query[position:start])
        position = match.end()
        name = f"exclude_{target}" if sign else target
        values: list[str] = getattr(filters, name)
        if value not in values:
            values.append(value)
    words.append(query[position:])
    return ParsedQuery(" ".join(" ".join(words).split()), filters)


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


def filter_sources(decision: RouteDecision, filters: SearchFilters) -> RouteDecision:
    """``decision`` without the servers the filters leave out (they are listed as skipped)."""
    chosen = {s.lower() for s in filters.sources}
    excluded = {s.lower() for s in filters.exclude_sources}
    if not chosen and not excluded:
        return decision
    kept: list[str] = []
    skipped = dict(decision.skipped)
    for name in decision.servers:
        if name.lower() in excluded:
            skipped[name] = SKIP_EXCLUDED
        elif chosen and name.lower() not in chosen:
            skipped[name] = SKIP_NOT_CHOSEN
        else:
            kept.append(name)
    return replace(decision, servers=kept, skipped=skipped,
                   weights={n: w for n, w in decision.weights.items() if n in kept})


def keep_hit(hit: Hit, filters: SearchFilters) -> bool:
    """Whether ``hit`` passes the language and path filters. A hit that names no file
    fails an include filter (it cannot be shown to be in ``src/`` or in Go) and passes
    an exclude filter."""
    path = hit_path(hit)
    if filters.languages or filters.exclude_languages:
        language = hit_language(hit, path)
        if filters.languages and language not in {normalise_language(v) for v in filters.languages}:
            return False
        if language is not None and language in {normalise_language(v) for v in filters.exclude_languages}:
            return False
    if filters.paths and (path is None or not any(path_matches(path, p) for p in filters.paths)):
        return False
    return not (path is not None and any(path_matches(path, p) for p in filters.exclude_paths))


def filter_hits(hits: list[Hit], filters: SearchFilters) -> list[Hit]:
    if not (filters.languages or filters.exclude_languages or filters.paths or filters.exclude_paths):
        return hits
    return [hit for hit in hits if keep_hit(hit, filters)]


def hit_path(hit: Hit) -> str | None:
    """The hit's file path (``/``-separated), from ``path`` or a ``file://`` uri."""
    if hit.path:
        return hit.path.replace("\\", "/")
    if hit.uri and hit.uri.startswith("file://"):
        return unquote(urlparse(hit.uri).path)
    return None


def hit_language(hit: Hit, path: str | None = None) -> str | None:
    stated = hit.metadata.get("language")
    if isinstance(stated, str) and stated:
        return stated.lower()
    path = path if path is not None else hit_path(hit)
    return detect_language(path) if path else None


def normalise_language(value: str) -> str:
    """``py`` → ``python``, ``Go`` → ``go``: a file extension becomes its language."""
    value = value.strip().lower().lstrip(".")
    by_extension = detect_language(f"x.{value}")
    return by_extension if by_extension not in (None, "text") else value


def path_matches(path: str, pattern: str) -> bool:
    pattern = pattern.replace("\\", "/")
    if _GLOB_CHARS & set(pattern):
        if "/" not in pattern.strip("/"):
            return fnmatch.fnmatchcase(PurePosixPath(path).name, pattern.strip("/"))
        return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, f"*/{pattern.lstrip('/')}")
    return f"/{pattern.lstrip('/')}" in f"/{path.lstrip('/')}"


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1].strip()
    return raw.strip()


def _quote(value: str) -> str:
    return value if value and not any(c.isspace() for c in value) and '"' not in value else shlex.quote(value)


def scope_arguments(filters: SearchFilters) -> dict[str, list[str]]:
    """The arguments that limit a built-in server's search to the chosen repositories
    (sent only to tools that take them)."""
    scope: dict[str, list[str]] = {}
    if filters.repos:
        scope["repos"] = list(filters.repos)
    if filters.exclude_repos:
        scope["exclude_repos"] = list(filters.exclude_repos)
    return scope
