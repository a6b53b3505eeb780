"""A source's single huge hit is split at structural boundaries; "no matches" texts are
no hits; a refused request's reason survives to the source's report."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import types

from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SearchRequest, SourceStatus
from tributary.engine.pipeline.run import run_pipeline
from tributary.engine.servers.files import FilesService, build_server
from tributary.engine.sources import SourcePool
from tributary.engine.sources.hit_split import MAX_HIT_CHARS, MAX_PARTS, says_nothing, split_text
from tributary.engine.sources.memory import memory_connector
from tributary.engine.sources.normalize import normalize_result


def git_log(commits: int) -> str:
    """What mcp-server-git's git_log returns: every commit in one text block."""
    return "Commit history:\n" + "".join(
        f"Commit: {i:040x}\nAuthor: Dev <dev@example.com>\nDate: 2024-01-{i % 28 + 1:02d}\n"
        f"Message: fix the retry loop, part {i}\n" + "details " * 25 + "\n\n"
        for i in range(commits))


def norm(text: str, **kw: object):  # type: ignore[no-untyped-def]
    content = [types.TextContent(type="text", text=text)]
    return normalize_result(types.CallToolResult(content=content), source="git", tool="git_log")


def test_a_git_log_answer_becomes_several_hits_cut_before_commits() -> None:
    text = git_log(120)
    assert len(text) > 30_000
    out = norm(text)
    assert 2 <= len(out.hits) <= MAX_PARTS
    assert all(len(h.content) <= MAX_HIT_CHARS for h in out.hits)
    assert all(h.content.startswith("Commit: ") for h in out.hits[1:])  # whole commits
    assert [h.source_rank for h in out.hits] == list(range(1, len(out.hits) + 1))
    assert len({h.id for h in out.hits}) == len(out.hits)
    assert "".join(h.content for h in out.hits).count("Commit: ") == 120
    assert out.note and "split into" in out.note


def test_parts_cut_at_paragraphs_keep_their_line_numbers() -> None:
    paragraphs = [f"para {i}\n" + "text of the paragraph\n" * 40 for i in range(30)]
    text = "\n".join(paragraphs)
    parts, complete = split_text(text, 3_000)
    assert complete and all(len(p.text) <= 3_000 for p in parts)
    lines = text.split("\n")
    for part in parts:
        assert part.text.startswith("para ")
        assert lines[part.first_line] == part.text.split("\n")[0]
    capped, complete = split_text(text, 3_000, max_parts=2)
    assert len(capped) == 2 and not complete


def test_no_split_hit_takes_most_of_the_context_budget() -> None:
    out = norm(git_log(120))
    small = normalize_result(types.CallToolResult(content=[
        types.TextContent(type="text", text=f"def retry_{i}():\n    return {i}\n")
        for i in range(5)]), source="code", tool="search")
    result = run_pipeline({"git": out.hits, "code": small.hits},
                          SearchRequest("retry loop", max_tokens=8000, reserved_tokens=1000))
    assert result.context is not None
    budget = result.context.budget
    assert max(c.tokens for c in result.context.chunks) < budget / 2
    assert {c.source for c in result.context.chunks} == {"git", "code"}


@pytest.mark.parametrize("text", ["No matches found", "No matches found for 'retry'.",
                                  "Found 0 results", "No results.", "No commits found"])
def test_a_no_matches_answer_is_no_hits(text: str) -> None:
    out = norm(text)
    assert out.hits == [] and out.note and text.strip() in out.note


@pytest.mark.parametrize("text", ["def no_results():\n    return []", "No retry here; see x.py",
                                  "results found in three modules: a.py, b.py and c.py"])
def test_ordinary_text_is_not_taken_for_no_matches(text: str) -> None:
    assert not says_nothing(text)
    assert len(norm(text).hits) == 1


@pytest.mark.asyncio
async def test_a_get_file_error_keeps_its_reason(tmp_path: Path) -> None:
    server = build_server(FilesService(tmp_path))  # nothing indexed there
    config = ServerConfig(name="files", command="unused", tool="get_file",
                          query_argument="path", timeout=30)
    pool = SourcePool([config], connector=memory_connector(lambda _c: server))
    try:
        outcome = await pool.call("files", "src/app.py", top_k=3)
    finally:
        await pool.aclose()
    assert outcome.status is SourceStatus.ERROR
    assert outcome.error and outcome.error.endswith("get_file: nothing indexed")
