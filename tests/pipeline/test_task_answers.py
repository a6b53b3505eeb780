"""Past tasks as answers of their own: never folded into code, rendered as commits."""

from __future__ import annotations

from datetime import UTC, datetime

from mcp import types

from tests.pipeline.helpers import FUNC_A, hit
from tributary.engine.config.schema import DedupConfig
from tributary.engine.model import ContextFormat, Hit, SearchRequest, is_task
from tributary.engine.pipeline.dedup import deduplicate
from tributary.engine.pipeline.run import run_pipeline
from tributary.engine.query.kinds import asks_history
from tributary.engine.sources.normalize import normalize_result

MESSAGE = "Validate every server entry when reading the config\n\nStrict mode rejects unknown keys."


def _task(rank: int, content: str = MESSAGE) -> Hit:
    return hit("tasks", rank, content, title=content.partition("\n")[0],
               timestamp=datetime(2024, 3, 5, tzinfo=UTC),
               metadata={"kind": "task", "id": "a" * 40, "short_id": "a" * 12, "author": "Ann Lee",
                         "files": ["engine/config.py"]})


def test_tasks_server_items_become_task_hits_with_their_stated_rank() -> None:
    result = types.CallToolResult(content=[], structuredContent={"results": [
        {"kind": "file", "path": "engine/config.py", "title": "engine/config.py", "score": 0.5, "rank": 1,
         "content": "Validate config (2024-03-05)", "tasks": ["a" * 40]},
        {"kind": "task", "id": "a" * 40, "short_id": "a" * 12, "title": "Validate config", "rank": 2,
         "date": "2024-03-05T10:00:00+00:00", "author": "Ann Lee", "score": 0.4,
         "files": ["engine/config.py"], "content": MESSAGE},
    ]})
    hits = normalize_result(result, source="tasks", tool="files_for_task").hits
    assert [is_task(h) for h in hits] == [False, True]
    task = hits[1]
    assert task.source_rank == 2 and task.path is None
    assert task.timestamp == datetime(2024, 3, 5, 10, tzinfo=UTC)
    assert task.metadata["author"] == "Ann Lee" and task.metadata["files"] == ["engine/config.py"]


def test_a_task_is_never_folded_into_a_code_chunk() -> None:
    chunk = hit("files", 1, FUNC_A, path="engine/config.py", lines=(1, 8))
    # The same words as the chunk, which fuzzy or hash dedup would otherwise fold.
    task = _task(1, FUNC_A)
    twin = hit("web", 1, FUNC_A)
    result = deduplicate([chunk, task, twin], DedupConfig())
    kept = {h.id for h in result.hits}
    assert task.id in kept and chunk.id in kept
    assert all(task.id not in {m.hit.id for m in g.members} | {g.kept.id} for g in result.groups)


def test_the_context_renders_a_commit_as_a_commit() -> None:
    chunk = hit("files", 1, FUNC_A, path="engine/config.py", lines=(1, 8))
    request = SearchRequest(query="validate every server entry of the config", format=ContextFormat.MARKDOWN)
    done = run_pipeline({"files": [chunk], "tasks": [_task(1)]}, request)
    assert done.context is not None
    text = done.context.text
    head = "### Validate every server entry when reading the config\n_commit aaaaaaaaaaaa · 2024-03-05 · Ann Lee"
    assert head in text
    block = text[text.index(head):]
    assert "```" not in block.split("### ")[1]  # the message is prose, not a fenced block
    assert "Strict mode rejects unknown keys." in block
    xml = run_pipeline({"tasks": [_task(1)]}, SearchRequest(query="validate server entry", format=ContextFormat.XML))
    assert xml.context is not None and '<commit source="tasks"' in xml.context.text
    assert 'date="2024-03-05"' in xml.context.text


def test_a_question_about_the_past_is_answered_by_commits_first() -> None:
    chunk = hit("files", 1, FUNC_A, path="engine/config.py", lines=(1, 8))
    why = hit("tasks", 1, "Validate every server entry (2024-03-05)", path="engine/config.py")
    hits = {"files": [chunk], "tasks": [why, _task(6)]}
    history = run_pipeline(hits, SearchRequest(query="when did config validation change", assemble=False))
    assert is_task(history.hits[0])
    other = run_pipeline(hits, SearchRequest(query="validate server entries of the config", assemble=False))
    assert other.hits[0].id == chunk.id


def test_an_issue_saying_what_happened_is_answered_by_code() -> None:
    """A bug report's "What happened:" is its prose, not a question about the past: its
    answer is the code, as for any task."""
    chunk = hit("files", 1, FUNC_A, path="engine/config.py", lines=(1, 8))
    why = hit("tasks", 1, "Validate every server entry (2024-03-05)", path="engine/config.py")
    issue = ("Config validation drops server entries\nWhat happened:\n```\nIn [1]: load_config('servers.toml')\n"
             "Out[1]: {}\n```\nWhat I expected to happen: every server entry kept. " + "The entries vanish. " * 30)
    assert not asks_history(issue) and asks_history("what happened to the config loader")
    answer = run_pipeline({"files": [chunk], "tasks": [why, _task(6)]}, SearchRequest(query=issue, assemble=False))
    assert answer.hits[0].id == chunk.id


def test_a_why_did_question_asks_about_the_past() -> None:
    assert asks_history("why did the cache plugin change") and asks_history("why did they drop Python 3.8")
    assert asks_history("why did we rename the config loader")
    assert not asks_history("why did the test fail") and not asks_history("why does the cache plugin change paths")
