"""What a query's filters do to a search, in one place: the :class:`Filters` value.

The filters (``lang:``, ``path:``, ``source:``, ``repo:`` and their ``-`` exclusions;
written in the query, see ``tributary.engine.query.syntax``, or set on the request)
act at three stages of a search, each a method of :class:`Filters`:

1. ``route``: which servers are asked (``source:``);
2. ``arguments``: what each server is told (``repo:``, for the tools that take it);
3. ``hits``: which of their answers are kept (``lang:``, ``path:``).

The engine takes the value from ``check_query`` (``CheckedQuery.filters``) and calls
these three from ``Engine._search_stream``, so that is where filtering happens. The
module functions below are the rules themselves.

A language is a name (``python``) or a file extension (``py``). A path without
``* ? [`` matches where it starts a path segment (``src/`` matches ``src/a.go`` and
``pkg/src/b.go``); with them it is a glob over the whole path, or over the file name
when it has no ``/``.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

from tributary.engine.model import Hit, RouteDecision, SearchFilters
from tributary.engine.query.languages import detect_language

# Each filter list, and the query syntax that writes it.
FILTER_SYNTAX = {
    "sources": "source:", "exclude_sources": "-source:", "languages": "lang:",
    "exclude_languages": "-lang:", "paths": "path:", "exclude_paths": "-path:",
    "repos": "repo:", "exclude_repos": "-repo:",
}
_HIT_FILTERS = ("languages", "exclude_languages", "paths", "exclude_paths")
_NAMED_IN_NOTE = 4  # languages or folders a note on an emptied answer lists
SKIP_EXCLUDED = "excluded by the query"
SKIP_NOT_CHOSEN = "not chosen by the query"
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Filters:
    """A request's filters, applied at each stage of its search (see the module docstring)."""

    spec: SearchFilters

    def route(
        self, requested: list[str] | None, router: Callable[[list[str] | None], RouteDecision]
    ) -> RouteDecision:
        """``router``'s decision for the servers the filters let it consider, without the
        ones they exclude (listed as skipped). ``requested`` is the request's own list of
        servers (None: routing decides); ``source:NAME`` asks NAME (within that list),
        whatever the routing rules say."""
        chosen = self.spec.sources or None
        sources = requested if chosen is None else [
            s for s in chosen if requested is None or s in requested]
        return filter_sources(router(sources), self.spec)

    def arguments(self) -> dict[str, list[str]]:
        """The arguments every server is sent besides the query (``scope_arguments``)."""
        return scope_arguments(self.spec)

    def hits(self, hits_by_source: dict[str, list[Hit]]) -> dict[str, list[Hit]]:
        """Each source's hits that pass the language and path filters."""
        if self.spec.is_empty():
            return hits_by_source
        return {name: filter_hits(hits, self.spec) for name, hits in hits_by_source.items()}

    def emptied_note(self, given: Mapping[str, list[Hit]], kept: Mapping[str, list[Hit]]) -> str | None:
        """When the language and path filters left out every hit the sources ``given``,
        a note saying so, with the languages (for a language filter) or the top folders
        those hits are in: "no results" after sources that answered with many reads as a
        fault otherwise, and the folders show a path filter that names none of them."""
        every = [hit for hits in given.values() for hit in hits]
        if not every or any(kept.values()):
            return None
        written = " ".join(f"{FILTER_SYNTAX[name]}{value}" for name in _HIT_FILTERS
                           for value in getattr(self.spec, name))
        note = f"{written} left out all {len(every)} hits the sources gave"
        if self.spec.languages or self.spec.exclude_languages:
            seen = Counter(hit_language(hit) or "no language" for hit in every)
        else:  # a path filter: the folders they are in (``path:src/`` where the code is in ``lib/``)
            seen = Counter(folder for hit in every if (folder := _top_folder(hit_path(hit))))
        if seen:
            named = ", ".join(name for name, _ in seen.most_common(_NAMED_IN_NOTE))
            note += f" (they are in {named}{', …' if len(seen) > _NAMED_IN_NOTE else ''})"
        return note


def _top_folder(path: str | None) -> str | None:
    """``lib/`` of ``lib/response.js``; a file at the top is named itself."""
    if not path:
        return None
    head, slash, _ = path.lstrip("/").partition("/")
    return head + slash


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
    """The hits that pass the language and path filters (``keep_hit``), in order."""
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


def scope_arguments(filters: SearchFilters) -> dict[str, list[str]]:
    """The arguments that limit a built-in server's search to the chosen repositories
    (sent only to tools that take them)."""
    scope: dict[str, list[str]] = {}
    if filters.repos:
        scope["repos"] = list(filters.repos)
    if filters.exclude_repos:
        scope["exclude_repos"] = list(filters.exclude_repos)
    return scope
