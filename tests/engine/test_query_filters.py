"""The one value a search applies its filters through: ``Filters``, from the checked query."""

from __future__ import annotations

from collections.abc import Callable

from tributary.engine.model import Hit, RouteDecision, SearchFilters, SearchRequest
from tributary.engine.query.check import check_query
from tributary.engine.query.filters import SKIP_EXCLUDED, SKIP_NOT_CHOSEN, Filters


def _hit(source: str, path: str) -> Hit:
    return Hit(id=path, source=source, tool="search", title="t", content="c", path=path)


def _router(asked: list[list[str] | None]) -> Callable[[list[str] | None], RouteDecision]:
    def route(sources: list[str] | None) -> RouteDecision:
        asked.append(sources)
        servers = list(sources) if sources is not None else ["files", "tasks", "memory"]
        return RouteDecision(servers=servers, weights=dict.fromkeys(servers, 1.0))

    return route


def test_the_checked_query_carries_the_filters_written_in_it() -> None:
    checked = check_query(SearchRequest("retry lang:go -path:tests/ repo:a source:files"))
    assert checked.request.query == "retry"
    assert checked.filters == Filters(SearchFilters(
        sources=["files"], languages=["go"], exclude_paths=["tests/"], repos=["a"]))


def test_route_asks_the_chosen_sources_within_the_request_and_skips_the_excluded() -> None:
    asked: list[list[str] | None] = []
    chosen = Filters(SearchFilters(sources=["files", "docs"]))
    decision = chosen.route(["files", "tasks"], _router(asked))
    assert asked == [["files"]] and decision.servers == ["files"]
    everything = Filters(SearchFilters()).route(None, _router(asked))
    assert asked[-1] is None and everything.servers == ["files", "tasks", "memory"]
    excluded = Filters(SearchFilters(exclude_sources=["Memory"])).route(None, _router(asked))
    assert excluded.servers == ["files", "tasks"] and excluded.skipped == {"memory": SKIP_EXCLUDED}
    assert "memory" not in excluded.weights
    chosen_only = Filters(SearchFilters(sources=["files"])).route(None, _router(asked))
    assert chosen_only.servers == ["files"] and asked[-1] == ["files"]
    assert SKIP_NOT_CHOSEN not in chosen_only.skipped.values()  # the others were never routed


def test_arguments_scope_each_server_to_the_chosen_repositories() -> None:
    assert Filters(SearchFilters()).arguments() == {}
    scoped = Filters(SearchFilters(repos=["a"], exclude_repos=["b"]))
    assert scoped.arguments() == {"repos": ["a"], "exclude_repos": ["b"]}


def test_hits_keeps_each_sources_hits_that_pass() -> None:
    hits = {"files": [_hit("files", "src/a.go"), _hit("files", "tests/b.go")],
            "tasks": [_hit("tasks", "src/c.py")]}
    assert Filters(SearchFilters()).hits(hits) is hits
    kept = Filters(SearchFilters(languages=["go"], exclude_paths=["tests/"])).hits(hits)
    assert {name: [h.path for h in found] for name, found in kept.items()} == {
        "files": ["src/a.go"], "tasks": []}


def test_a_note_says_when_the_filters_left_out_every_hit() -> None:
    hits = {"files": [_hit("files", "src/a.go"), _hit("files", "README.md")], "tasks": []}
    filters = Filters(SearchFilters(languages=["ts"], paths=["src/"]))
    note = filters.emptied_note(hits, filters.hits(hits))
    assert note == "lang:ts path:src/ left out all 2 hits the sources gave (they are in go, markdown)"
    some = Filters(SearchFilters(languages=["go"]))
    assert some.emptied_note(hits, some.hits(hits)) is None
    assert filters.emptied_note({"files": []}, {"files": []}) is None  # nothing was given
    # a path filter alone: the folders the hits are in, where the code is in lib/
    in_src = Filters(SearchFilters(paths=["src/"]))
    lib = {"files": [_hit("files", "lib/a.js"), _hit("files", "lib/b.js"), _hit("files", "index.js")]}
    assert in_src.emptied_note(lib, in_src.hits(lib)) == (
        "path:src/ left out all 3 hits the sources gave (they are in lib/, index.js)")
