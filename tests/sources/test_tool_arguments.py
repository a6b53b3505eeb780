"""How the query and top_k map onto a tool's arguments, and what is said when a
search tool needs arguments Tributary cannot fill."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import types

from tests.sources.test_third_party import npm_server
from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import NAME_ONLY
from tributary.engine.sources import SourcePool
from tributary.engine.sources.tools import ToolSelectionError, select_tool

READ_ONLY = types.ToolAnnotations(readOnlyHint=True)


def tool(name: str, properties: dict[str, Any], required: list[str]) -> types.Tool:
    return types.Tool(name=name, inputSchema={"type": "object", "properties": properties,
                                              "required": required}, annotations=READ_ONLY)


SEARCH = tool("search", {"query": {"type": "string"},
                         "count": {"type": "integer", "minimum": 2, "maximum": 10}}, ["query"])


def test_a_fixed_config_argument_wins_over_the_automatic_top_k() -> None:
    selection = select_tool(ServerConfig(name="s", arguments={"count": 5}), [SEARCH])
    assert selection.arguments("retry", 30) == {"count": 5, "query": "retry"}
    configured = select_tool(ServerConfig(name="s", tool="search", arguments={"count": 5}), [SEARCH])
    assert configured.arguments("retry", 30)["count"] == 5


def test_the_automatic_top_k_respects_the_schema_minimum_and_maximum() -> None:
    selection = select_tool(ServerConfig(name="s"), [SEARCH])
    assert selection.arguments("retry", 30)["count"] == 10
    assert selection.arguments("retry", 1)["count"] == 2
    assert selection.arguments("retry", 7)["count"] == 7
    exclusive = tool("search", {"query": {"type": "string"},
                                "limit": {"type": "integer", "exclusiveMaximum": 20}}, ["query"])
    assert select_tool(ServerConfig(name="s"), [exclusive]).arguments("q", 30)["limit"] == 19


def test_a_search_tool_needing_unfillable_arguments_is_named_with_the_fix() -> None:
    files = tool("search_files", {"path": {"type": "string"}, "pattern": {"type": "string"}},
                 ["path", "pattern"])
    with pytest.raises(ToolSelectionError) as caught:
        select_tool(ServerConfig(name="s"), [files])
    assert str(caught.value) == ("search_files needs `path` (required); "
                                 "set `arguments: {path: …}` and `tool: search_files`")


def test_an_unmarked_search_tool_needing_arguments_is_named_with_the_fix() -> None:
    # mcp-ripgrep: search(pattern, path), no annotations. It was reported as "no
    # search-like tool with a string query argument" though it has one.
    grep = types.Tool(name="search", inputSchema={
        "type": "object", "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
        "required": ["pattern", "path"]})
    listing = types.Tool(name="list-files", inputSchema={
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    with pytest.raises(ToolSelectionError) as caught:
        select_tool(ServerConfig(name="rg"), [listing, grep])
    assert str(caught.value) == ("search needs `path` (required); set `arguments: {path: …}` and "
                                 "`tool: search` (it is not marked read-only, so it is called only when named)")
    named = select_tool(ServerConfig(name="rg", tool="search", arguments={"path": "/repo"}), [listing, grep])
    assert named.arguments("retry", 5) == {"path": "/repo", "pattern": "retry"}
    marked = tool("find", {"query": {"type": "string"}, "root": {"type": "string"}}, ["query", "root"])
    with pytest.raises(ToolSelectionError) as caught:  # a marked one is named first
        select_tool(ServerConfig(name="rg"), [grep, marked])
    assert str(caught.value).startswith("find needs `root`")


def test_a_tool_taking_a_glob_is_named_with_the_glob_mode_too() -> None:
    files = tool("search_files", {"path": {"type": "string"}, "pattern": {"type": "string"}},
                 ["path", "pattern"])
    files.description = "Recursively search for files matching a pattern. Use glob-style patterns."
    with pytest.raises(ToolSelectionError) as caught:
        select_tool(ServerConfig(name="s"), [files])
    assert str(caught.value).endswith(", and `query_mode: glob`: it matches names against a glob "
                                      "pattern, not a question")


def test_a_string_of_a_few_set_values_never_takes_the_question() -> None:
    """server-everything's ``get-annotated-message(messageType)``: the question was sent
    as ``messageType`` and refused ("expected one of error|success|debug")."""
    annotated = tool("get-annotated-message",
                     {"messageType": {"type": "string", "enum": ["error", "success", "debug"]},
                      "includeImage": {"type": "boolean"}}, ["messageType"])
    with pytest.raises(ToolSelectionError, match=r"requires \['messageType'\]; give them under `arguments`"):
        select_tool(ServerConfig(name="ev", tool="get-annotated-message"), [annotated])
    fixed = ServerConfig(name="ev", tool="get-annotated-message", arguments={"messageType": "success"})
    selection = select_tool(fixed, [annotated])
    assert selection.query_argument is None and selection.arguments("retry", 5) == {"messageType": "success"}
    constant = tool("lookup", {"query": {"type": "string"}, "kind": {"type": "string", "const": "code"}},
                    ["query", "kind"])
    assert select_tool(ServerConfig(name="c", arguments={"kind": "code"}), [constant]).query_argument == "query"


def test_a_glob_for_another_argument_does_not_make_the_query_a_glob() -> None:
    """mcp-server-tree-sitter's ``find_text`` takes its text as ``pattern`` and a glob as
    ``file_pattern``: the advice said to send it a glob of the question's words."""
    find = tool("find_text", {"project": {"type": "string"}, "pattern": {"type": "string"},
                              "file_pattern": {"type": "string"}, "use_regex": {"type": "boolean"}},
                ["project", "pattern"])
    find.description = ("Search for text pattern in project files. Args: project: Project name "
                        "pattern: Text pattern to search for file_pattern: Optional glob pattern "
                        "use_regex: Whether to treat pattern as a regular expression")
    with pytest.raises(ToolSelectionError) as caught:
        select_tool(ServerConfig(name="ts"), [find])
    assert str(caught.value) == ("find_text needs `project` (required); set `arguments: {project: …}` "
                                 "and `tool: find_text`")
    named = select_tool(ServerConfig(name="ts", tool="find_text", arguments={"project": "click"}), [find])
    assert named.query_mode == "pattern" and named.arguments("echo via pager", 5) == {
        "use_regex": True, "project": "click", "pattern": "echo|pager"}


@pytest.mark.asyncio
@pytest.mark.integration
async def test_server_filesystem_says_search_files_needs_path(tmp_path: Path) -> None:
    entry = npm_server("server-filesystem")
    pool = SourcePool([ServerConfig(name="files", command="node", args=[str(entry), str(tmp_path)],
                                    timeout=10.0)])
    try:
        states = await pool.warm_up(timeout=60)
    finally:
        await pool.aclose()
    error = states["files"].tool_error or ""
    assert "search_files needs `path` (required)" in error, error
    assert "`tool: search_files`" in error and "`query_mode: glob`" in error


def test_glob_mode_sends_a_pattern_for_the_names_holding_the_questions_words() -> None:
    files = tool("search_files", {"path": {"type": "string"}, "pattern": {"type": "string"}},
                 ["path", "pattern"])
    config = ServerConfig(name="fs", tool="search_files", arguments={"path": "/repo"}, query_mode="glob")
    selection = select_tool(config, [files])
    assert selection.arguments("How are Routing rules matched?", 5) == {
        "path": "/repo", "pattern": "**/*{routing,rules,matched}*"}
    assert selection.query_text("where is routing.py") == "**/*routing.py*"
    assert selection.query_text("the") == "the"  # stopwords only: whole
    assert selection.describe() == "search_files(pattern as a glob) [configured]"


@pytest.mark.asyncio
@pytest.mark.integration
async def test_server_filesystem_finds_files_by_the_questions_words_in_glob_mode(tmp_path: Path) -> None:
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "routing.py").write_text("RULES = []\n", encoding="utf-8")
    (tmp_path / "engine" / "cache.py").write_text("CACHE = {}\n", encoding="utf-8")
    entry = npm_server("server-filesystem")
    config = ServerConfig(name="fs", command="node", args=[str(entry), str(tmp_path)], timeout=10.0,
                          tool="search_files", arguments={"path": str(tmp_path)}, query_mode="glob")
    pool = SourcePool([config])
    try:
        await pool.warm_up(timeout=60)
        outcome = await pool.call("fs", "How are routing rules matched?", top_k=5)
    finally:
        await pool.aclose()
    text = " ".join(f"{h.title} {h.content}" for h in outcome.hits)
    assert "routing.py" in text, (outcome.status, outcome.error, text)
    assert "cache.py" not in text
    assert all(h.metadata.get(NAME_ONLY) is True for h in outcome.hits)  # names, not contents


def test_keywords_mode_sends_the_content_words_and_a_bad_mode_is_refused() -> None:
    from tributary.engine.config.errors import ConfigError
    from tributary.engine.config.load import parse_config

    nodes = tool("search_nodes", {"query": {"type": "string"}}, ["query"])
    selection = select_tool(ServerConfig(name="s", query_mode="keywords"), [nodes])
    assert selection.arguments("Who owns the billing service?", 5) == {"query": "owns billing service"}
    # a search asks each telling word in turn, longest first, none inside another
    assert selection.query_texts("Who owns the billing service?") == ["billing", "service", "owns"]
    assert selection.query_texts("why does res.sendFile answer 404") == ["sendfile", "answer", "res"]
    assert selection.query_texts("who is it") == ["who is it"]
    assert select_tool(ServerConfig(name="s"), [nodes]).query_texts("Who owns it?") == ["Who owns it?"]
    assert selection.arguments("who is it", 5) == {"query": "who is it"}  # stopwords only: whole
    assert select_tool(ServerConfig(name="s"), [nodes]).arguments("who is it", 5) == {"query": "who is it"}
    with pytest.raises(ConfigError, match="query_mode: must be one of"):
        parse_config("servers:\n  m:\n    command: x\n    query_mode: words\n", source="x")


@pytest.mark.asyncio
async def test_a_server_whose_tool_takes_no_query_is_not_asked_unless_named() -> None:
    """Like mcp-server-time: get_current_time(timezone) would answer the time to every search."""
    from tests.fakes import fake_server_config
    from tributary.engine.model import SourceStatus
    from tributary.engine.sources.fanout import all_failed, gather_all

    base = ("--tool", "get_current_time", "--no-query")
    auto = fake_server_config("time", *base, timeout=10.0)
    named = fake_server_config("named", *base, timeout=10.0, tool="get_current_time",
                               arguments={"timezone": "UTC"})
    pool = SourcePool([auto, named, fake_server_config("docs", timeout=10.0)])
    try:
        results = {r.name: r for r in await gather_all(pool, ["time", "named", "docs"],
                                                       "who owns billing", top_k=5, timeout=30)}
        state = pool.state("time")
    finally:
        await pool.aclose()
    assert results["time"].report.status is SourceStatus.SKIPPED and results["time"].hits == []
    assert (state.tool_error or "").startswith("its tool takes no query"), state.tool_error
    assert results["named"].ok and "2026-01-01" in results["named"].hits[0].content
    assert all_failed(results.values()) is None


@pytest.mark.asyncio
async def test_a_tool_called_without_the_question_ranks_after_the_answers() -> None:
    """mcp-server-git's git_log named with its repository answers every search with the
    same log, and fused by rank its first item came second, level with the best answer
    to the question. Not sent the question, its items now rank after the answers."""
    from tests.fakes import fake_server_object
    from tributary.engine.config.schema import Config
    from tributary.engine.engine import Engine
    from tributary.engine.model import SearchRequest
    from tributary.engine.sources.memory import memory_connector
    from tributary.engine.sources.normalize import UNASKED_NOTE

    servers = {
        "docs": ServerConfig(name="docs", command="unused", timeout=10.0),
        "clock": ServerConfig(name="clock", command="unused", timeout=10.0, tool="get_current_time",
                              arguments={"timezone": "UTC"}),
    }
    flags = {"docs": ("--hits", "4"), "clock": ("--tool", "get_current_time", "--no-query")}
    connector = memory_connector(lambda cfg: fake_server_object(cfg.name, *flags[cfg.name]))
    async with Engine(Config(servers=servers), connector=connector) as engine:
        response = await engine.search(SearchRequest("who owns billing", top_k=10))
    sources = [hit.source for hit in response.hits]
    assert sources == ["docs"] * 4 + ["clock"], sources
    report = {r.name: r for r in response.sources}["clock"]
    assert UNASKED_NOTE in (report.detail or "")


@pytest.mark.asyncio
@pytest.mark.integration
async def test_a_word_whose_call_fails_leaves_the_others_answers(tmp_path: Path) -> None:
    """A substring search asked word by word: one failed call is a warning, not the
    source's failure; every call failing is."""
    from tests.fakes import fake_server_config
    from tributary.engine.model import SourceStatus

    flaky = fake_server_config("flaky", "--mode", "fail-then-ok", "--fail-times", "1", "--hits", "2",
                               "--state-file", str(tmp_path / "calls"), timeout=30.0, query_mode="keywords")
    broken = fake_server_config("broken", "--mode", "error", timeout=30.0, query_mode="keywords")
    pool = SourcePool([flaky, broken])
    try:
        await pool.warm_up(timeout=60)
        some = await pool.call("flaky", "who owns the billing service", top_k=5)
        none = await pool.call("broken", "who owns the billing service", top_k=5)
    finally:
        await pool.aclose()
    assert some.status is SourceStatus.OK and some.hits, (some.status, some.error)
    assert any("1 of 3 calls failed" in w for w in some.warnings), some.warnings
    assert none.status is SourceStatus.ERROR and "backend unavailable" in (none.error or "")
