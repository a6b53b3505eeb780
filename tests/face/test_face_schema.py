"""Tributary's own tools as an LLM sees them, through the mcp SDK's client over stdio:
every parameter described, choices as enums, limits in the schema, read-only hints,
a compact answer unless details are asked for, and the real version."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.fakes import FAKE_SERVER
from tributary.engine.model import ContextFormat, TaskType
from tributary.engine.version import UNKNOWN, package_version

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.integration
@pytest.mark.asyncio
async def test_tools_describe_themselves_and_answer_compactly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.yaml"
    args = json.dumps([str(FAKE_SERVER), "--name", "alpha", "--hits", "8"])
    config.write_text(f"servers:\n  alpha:\n    command: {json.dumps(sys.executable)}\n"
                      f"    args: {args}\n", encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tributary", "--config", str(config), "serve"],
        env={**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.server_info.version == package_version() != UNKNOWN
        assert "the whole task text" in (init.instructions or "")  # how to ask, said once

        tools = {t.name: t for t in (await session.list_tools()).tools}
        for tool in tools.values():
            for name, prop in tool.input_schema["properties"].items():
                assert prop.get("description"), f"{tool.name}.{name} has no description"
        search, context = tools["search"].input_schema, tools["get_context"].input_schema
        assert (search["properties"]["top_k"]["minimum"], search["properties"]["top_k"]["maximum"]) == (1, 100)
        assert context["properties"]["task_type"]["enum"] == [t.value for t in TaskType]
        assert context["properties"]["format"]["enum"] == [f.value for f in ContextFormat]
        for name in ("search", "get_context"):
            notes = tools[name].annotations
            assert notes is not None and notes.read_only_hint is True and notes.destructive_hint is False
        feedback = tools["feedback"].annotations
        assert feedback is not None and feedback.read_only_hint is False

        found = await session.call_tool("search", {"query": "retry logic", "top_k": 3})
        assert not found.is_error, found.content
        data = found.structured_content
        assert data is not None and len(data["hits"]) == 3
        hit = data["hits"][0]
        assert {"id", "path", "start_line", "end_line", "score", "snippet"} <= set(hit)
        assert hit["title"] == "alpha hit 1"  # what the hit is, where its location does not say
        assert not {"content", "score_parts", "source_views", "duplicates"} & set(hit)
        assert "retry logic" in hit["snippet"]

        detailed = await session.call_tool("search", {"query": "retry logic", "top_k": 3, "details": True})
        full = detailed.structured_content
        assert full is not None and full["hits"][0]["score_parts"] and full["hits"][0]["content"]

        pasted = await session.call_tool("search", {"query": "retry logic fails\n" + "frame line\n" * 1000})
        assert pasted.structured_content is not None
        assert pasted.structured_content["query"].startswith("retry logic fails frame line")
        assert pasted.structured_content["query"].endswith("…") and len(pasted.structured_content["query"]) <= 201

        too_many = await session.call_tool("search", {"query": "retry", "top_k": 1000})
        assert too_many.is_error
        assert "search: argument 'top_k': Input should be less than or equal to 100" in str(too_many.content)
        assert "errors.pydantic.dev" not in str(too_many.content)

        # An argument a tool does not take is an error, not silently the default.
        assert all(t.input_schema["additionalProperties"] is False for t in tools.values())
        misspelt = await session.call_tool("get_context", {"query": "retry", "maxTokens": 100})
        assert misspelt.is_error
        assert "unknown argument 'maxTokens' (did you mean 'max_tokens'?)" in str(misspelt.content)


def test_a_skipped_source_is_reported_to_clients_without_its_setup_advice() -> None:
    """Every answer lists every source: the advice a person gets in the app (the tools
    seen, the setting to change) cost each client call hundreds of tokens."""
    from types import SimpleNamespace

    from tributary.engine.model import SourceReport, SourceStatus
    from tributary.engine.servers.face import _sources_out

    reports = [
        SourceReport("git", SourceStatus.SKIPPED, 2238.734727994597,
                     detail="its tool takes no query, so it is not asked for searches (tools seen: "
                     "git_add, git_log); set `tool:` to ask it anyway"),
        SourceReport("fs", SourceStatus.SKIPPED, detail="search_files needs `path` (required); set "
                     "`arguments: {path: …}` and `tool: search_files`"),
        SourceReport("docs", SourceStatus.ERROR, 12.34, error="tool reported an error: boom (see log)"),
    ]
    out = _sources_out(SimpleNamespace(sources=reports))  # type: ignore[arg-type]
    assert [(s.name, s.latency_ms, s.error) for s in out] == [
        ("git", 2238.7, "its tool takes no query"),
        ("fs", None, "search_files needs `path`"),
        ("docs", 12.3, "tool reported an error: boom (see log)"),  # a source's own error stays whole
    ]


def test_unknown_arguments_are_named_with_the_ones_a_tool_takes() -> None:
    from tributary.engine.servers.face import unknown_arguments

    schema = {"properties": {"query": {}, "max_tokens": {}, "format": {}}}
    assert unknown_arguments("get_context", schema, {"query": "x", "format": "json"}) is None
    assert unknown_arguments("get_context", schema, {"qury": "x"}) == (
        "get_context: unknown argument 'qury' (did you mean 'query'?); it takes query, max_tokens, format")
    many = unknown_arguments("get_context", schema, {"query": "x", "a\nb" * 50: 1, **{f"k{n}": n for n in range(6)}})
    assert many is not None and many.startswith("get_context: unknown arguments one whose name is not shown, 'k0'")
    assert "and 2 more" in many and "a\nb" not in many  # not an identifier: not echoed


def test_the_context_text_ends_with_what_the_sources_did_within_its_room() -> None:
    from tributary.engine.servers.face import ContextOut, SourceOut, context_result

    out = ContextOut(
        context="### src/a.py:1-2\n```python\nx = 1\n```", confident=True, confidence=0.5, tokens=9,
        budget=8000, format="markdown", chunks=1, error=None,
        sources=[SourceOut(name="files", status="ok", latency_ms=3.0, hits=12),
                 SourceOut(name="ci", status="timeout", latency_ms=3000.0, hits=0, error="no answer in 3.0 s"),
                 SourceOut(name="git", status="ok", latency_ms=13.0, hits=1)],
        notes=["read as a task (2,000 characters)", "word " * 200],
    )
    text = context_result(out, 80).content[0].text  # type: ignore[union-attr]
    assert text.startswith(out.context + "\n\n---\n")
    assert "Sources: files (12 hits), ci (timeout: no answer in 3.0 s), git (1 hit)" in text
    assert "Note: read as a task (2,000 characters)" in text
    assert "word word" not in text  # a line past the room is left to the structured content
    assert context_result(out, 0).content[0].text == out.context  # type: ignore[union-attr]
    # a skipped server's reason is cut to its first clause, and the notes come first
    skipped = SourceOut(name="dc", status="skipped", latency_ms=None, hits=0,
                        error="no read-only search tool; set `tool:` to choose one (passed over: start_search: …)")
    emptied = out.model_copy(update={"sources": [skipped], "notes": ["lang:ts left out all 153 hits"]})
    footer = context_result(emptied, 80).content[0].text.split("\n---\n")[1]  # type: ignore[union-attr]
    assert footer == "Note: lang:ts left out all 153 hits\nSources: dc (skipped: no read-only search tool)"
    assert context_result(out, 80).structured_content == out.model_dump(mode="json")
