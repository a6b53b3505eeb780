"""Filters written in the query, and how they narrow sources and hits."""

from __future__ import annotations

from tributary.engine.model import Hit, RouteDecision, SearchFilters, SearchRequest
from tributary.engine.query.filters import filter_hits, filter_sources, keep_hit
from tributary.engine.query.syntax import format_filters, parse_query, with_query_filters


def _hit(path: str | None, language: str | None = None, uri: str | None = None) -> Hit:
    metadata = {"language": language} if language else {}
    return Hit(id=path or uri or "x", source="files", tool="search", title="t", content="c",
               path=path, uri=uri, metadata=metadata)


def test_parse_takes_the_filters_out_of_the_words() -> None:
    parsed = parse_query("retry logic lang:go path:src/ -path:tests/ source:files -source:memory")
    assert parsed.text == "retry logic"
    assert parsed.filters == SearchFilters(sources=["files"], exclude_sources=["memory"], languages=["go"],
                                           paths=["src/"], exclude_paths=["tests/"])


def test_unknown_keys_urls_and_mid_word_colons_stay_words() -> None:
    parsed = parse_query("see http://x.org/a std::vector note:this x-lang:go")
    assert parsed.text == "see http://x.org/a std::vector note:this x-lang:go"
    assert parsed.filters.is_empty()


def test_a_file_uri_is_a_word_not_a_path_filter() -> None:
    parsed = parse_query("the page at file:///tmp/report.html renders blank")
    assert parsed.text == "the page at file:///tmp/report.html renders blank"
    assert parsed.filters.is_empty()


def test_the_words_keep_their_lines() -> None:
    """An issue with a filter is still read as an issue: its title, code and traceback
    on lines of their own (joined into one line, it was read as another question)."""
    issue = "Title of the bug\n\n```python\n    x = run()\n```\nTraceback:\n  File \"a.py\", line 3"
    assert parse_query(f"source:files {issue}  lang:py").text == issue
    assert parse_query(issue.replace("bug", "bug path:src/")).text == issue
    assert parse_query("one\nlang:py\ntwo").text == "one\n\ntwo"
    assert parse_query(issue).text == issue  # no filter: as written


def test_quoted_values_and_round_trip() -> None:
    parsed = parse_query('cache path:"my docs/" LANG:Py')
    assert parsed.filters.paths == ["my docs/"] and parsed.filters.languages == ["Py"]
    again = parse_query("cache " + format_filters(parsed.filters))
    assert again.filters == parsed.filters and again.text == "cache"


def test_with_query_filters_merges_into_the_request() -> None:
    request = SearchRequest(query="parse lang:python", filters=SearchFilters(paths=["tributary/engine/"]))
    out = with_query_filters(request)
    assert out.query == "parse"
    assert out.filters.languages == ["python"] and out.filters.paths == ["tributary/engine/"]
    plain = SearchRequest(query="no filters here")
    assert with_query_filters(plain) is plain


def test_language_by_name_extension_or_path() -> None:
    assert keep_hit(_hit("a/b.py"), SearchFilters(languages=["python"]))
    assert keep_hit(_hit("a/b.py"), SearchFilters(languages=["py"]))
    assert not keep_hit(_hit("a/b.go"), SearchFilters(languages=["py"]))
    assert keep_hit(_hit("a/b.txt", language="go"), SearchFilters(languages=["go"]))
    assert not keep_hit(_hit(None), SearchFilters(languages=["go"]))  # unknowable: not included
    assert keep_hit(_hit(None), SearchFilters(exclude_languages=["go"]))


def test_paths_prefix_segments_and_globs() -> None:
    include = SearchFilters(paths=["src/"])
    assert keep_hit(_hit("src/a.go"), include) and keep_hit(_hit("pkg/src/b.go"), include)
    assert not keep_hit(_hit("mysrc/a.go"), include)
    assert keep_hit(_hit("a/b/test_x.py"), SearchFilters(paths=["test_*.py"]))
    assert not keep_hit(_hit("a/b/x.py"), SearchFilters(paths=["test_*.py"]))
    assert keep_hit(_hit("tributary/engine/cache/base.py"), SearchFilters(paths=["tributary/engine/*/base.py"]))
    exclude = SearchFilters(exclude_paths=["tests/"])
    assert not keep_hit(_hit("tests/app/x.py"), exclude) and keep_hit(_hit("app/x.py"), exclude)
    assert keep_hit(_hit(None, uri="file:///home/u/src/x.go"), include)
    hits = [_hit("src/a.go"), _hit("tests/b.go"), _hit("src/c.py")]
    kept = filter_hits(hits, SearchFilters(languages=["go"], exclude_paths=["tests/"]))
    assert [h.path for h in kept] == ["src/a.go"]


def test_sources_narrow_the_route() -> None:
    decision = RouteDecision(servers=["files", "tasks", "memory"],
                             weights={"files": 1.0, "tasks": 1.0, "memory": 0.5})
    out = filter_sources(decision, SearchFilters(exclude_sources=["memory"]))
    assert out.servers == ["files", "tasks"] and "memory" in out.skipped and "memory" not in out.weights
    only = filter_sources(decision, SearchFilters(sources=["Files"]))
    assert only.servers == ["files"] and set(only.skipped) == {"tasks", "memory"}
