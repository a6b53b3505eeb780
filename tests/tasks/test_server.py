"""The tasks MCP server end to end: a real subprocess, driven by the SDK's client."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tributary.engine.index.embed import load_default_embedder
from tributary.engine.tasks import import_tasks_jsonl, search_tasks, tasks_db_path

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.asyncio
async def test_tasks_server_answers_with_structured_results(
    tmp_path: Path, repo_dir: Path, tasks_jsonl: Path
) -> None:
    ix = tmp_path / "ix"
    model = load_default_embedder()  # the real packaged MiniLM, as the server uses
    stats = import_tasks_jsonl(repo_dir, tasks_jsonl, indexes_dir=ix, embedder=model)
    assert stats.embedded == 6
    # the real model understands paraphrase: no shared word with "Add password reset email"
    local = search_tasks(repo_dir, "forgot my passphrase, send recovery mail", 1,
                         indexes_dir=ix, embedder=model)
    assert local[0].task.id == "t2"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tributary.engine.servers.tasks", "--repo", str(repo_dir), "--index-dir", str(ix),
              "--model-wait", "300"],  # this test is about hybrid results: wait for the model
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {"search_tasks", "files_for_task"}
        for tool in tools.values():
            assert tool.output_schema is not None
            assert "results" in tool.output_schema["properties"]
            assert len(tool.description or "") < 100

        found = await session.call_tool(
            "search_tasks", {"query": "forgot my passphrase, send recovery mail", "top_k": 3}
        )
        assert not found.is_error
        assert found.structured_content is not None
        items = found.structured_content["results"]
        assert len(items) == 3
        assert items[0]["id"] == "t2"
        assert items[0]["files"] == ["app/auth/reset.py", "app/mail/templates.py"]
        assert items[0]["content"].startswith("Add password reset email\n\n")
        assert items[0]["date"].startswith("2021-03-05")
        assert items[0]["score"] >= items[1]["score"]

        files = await session.call_tool(
            "files_for_task", {"query": "login fails because the session expired", "top_k": 4}
        )
        assert not files.is_error and files.structured_content is not None
        items = files.structured_content["results"]
        ranked = [item for item in items if item["kind"] == "file"]
        tasks = [item for item in items if item["kind"] == "task"]
        assert 1 <= len(ranked) <= 4
        assert ranked[0]["path"] == "app/auth/session.py"
        assert ranked[0]["start_line"] is None
        assert "session" in ranked[0]["content"].lower()
        assert all(item["exists"] is True for item in ranked)
        # The matching tasks come too, as answers of their own, after the files.
        assert tasks and items[: len(ranked)] == ranked
        assert [t["rank"] for t in tasks] == list(range(len(ranked) + 1, len(ranked) + len(tasks) + 1))
        assert {"id", "short_id", "title", "date", "author", "files", "content"} <= set(tasks[0])
        assert any("session" in t["content"].lower() for t in tasks)

        history = await session.call_tool(
            "files_for_task", {"query": "when did the session expiry change", "top_k": 4}
        )
        assert history.structured_content is not None
        first = history.structured_content["results"][0]
        assert first["kind"] == "task" and first["rank"] == 1  # a question about the past: commits first

        # `before`: the history as it stood then. t4 (2022-02-14) and t6 are later.
        then = await session.call_tool(
            "files_for_task",
            {"query": "login fails because the session expired", "top_k": 4, "before": "2022-02-14"},
        )
        assert then.structured_content is not None
        seen = [t["id"] for t in then.structured_content["results"] if t["kind"] == "task"]
        assert seen and not {"t4", "t5", "t6"} & set(seen)
        exact = await session.call_tool(
            "search_tasks", {"query": "password reset email", "top_k": 6, "before": "2021-03-05T09:00:01+00:00"}
        )
        assert exact.structured_content is not None
        assert {t["id"] for t in exact.structured_content["results"]} <= {"t1", "t2"}
        bad = await session.call_tool("search_tasks", {"query": "login", "before": "last tuesday"})
        assert bad.is_error and "before: not an ISO 8601 date" in str(bad.content)


def test_server_without_databases_refuses_to_start(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "tributary.engine.servers.tasks", "--index-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "no task database" in done.stderr


def test_db_path_is_per_repository(tmp_path: Path) -> None:
    one = tasks_db_path(tmp_path / "a", tmp_path)
    two = tasks_db_path(tmp_path / "b", tmp_path)
    assert one != two and one.parent == tmp_path and one.name.endswith(".tasks.sqlite")


def test_an_issue_weighs_the_files_past_fixes_touched_by_their_role() -> None:
    """Nearly every fix also touches the changelog, the author list and a test: for an
    issue those rank below the code, unless its title asks for them."""
    from tributary.engine.servers.tasks import weigh_roles
    from tributary.engine.tasks.model import FileScore

    def ranked(issue: str) -> list[str]:
        files = [FileScore(p, 1.0) for p in ("AUTHORS", "CHANGELOG.rst", "testing/test_util.py", "src/util.py")]
        weigh_roles(issue, files)
        return [f.path for f in sorted(files, key=lambda f: -f.score)]

    body = "\n\nThe comparison prints the wrong message for byte strings. " * 12
    assert ranked("Confusing assertion message with byte strings" + body)[0] == "src/util.py"
    assert set(ranked("The changelog entry for 5.0 is wrong" + body)[:2]) == {"AUTHORS", "CHANGELOG.rst"}


def test_an_issue_weighs_a_page_past_fixes_translated_as_a_translation() -> None:
    """A docs fix touches the English page and its translations: for an issue the
    translations rank below the page they copy."""
    from tributary.engine.servers.tasks import weigh_roles
    from tributary.engine.tasks.model import FileScore

    files = [FileScore("docs/es/docs/yield.md", 1.2), FileScore("docs/en/docs/yield.md", 1.0)]
    body = "\n\nThe page on dependencies with yield says the exit code runs before the response. " * 12
    weigh_roles("Wrong order of exit code in the yield docs" + body, files)
    assert files[0].score < files[1].score


def test_a_question_weighs_the_translations_of_a_listed_page_down() -> None:
    from tributary.engine.servers.tasks import weigh_incidental
    from tributary.engine.tasks.model import FileScore

    def scores(question: str) -> list[float]:
        files = [FileScore("docs/zh/docs/yield.md", 1.0), FileScore("docs/en/docs/yield.md", 1.0)]
        weigh_incidental(question, files)
        return [f.score for f in files]

    translation, original = scores("dependencies with yield")
    assert translation < original == 1.0
    assert scores("依赖项 yield") == [1.0, 1.0]  # asked in the translation's script


def test_a_question_weighs_files_touched_on_the_way_down() -> None:
    """"progress bar" in click: the history's files put `.pre-commit-config.yaml` (forty
    autoupdate commits) and two workflows among the first ten."""
    from tributary.engine.servers.tasks import weigh_incidental
    from tributary.engine.tasks.model import FileScore

    def scores(question: str) -> dict[str, float]:
        files = [FileScore(path, 1.0) for path in (
            ".pre-commit-config.yaml", ".github/workflows/tests.yaml", "CHANGES.md", "package-lock.json",
            "src/click/termui.py", "tests/test_termui.py", "docs/utils.md")]
        weigh_incidental(question, files)
        return {f.path: f.score for f in files}

    weighed = scores("progress bar")
    assert all(weighed[path] < 1.0 for path in (".pre-commit-config.yaml", ".github/workflows/tests.yaml",
                                                "CHANGES.md", "package-lock.json"))
    assert weighed["src/click/termui.py"] == weighed["tests/test_termui.py"] == weighed["docs/utils.md"] == 1.0
    assert scores("which workflow runs the tests on CI")[".github/workflows/tests.yaml"] == 1.0


def test_a_translation_is_weighed_down_when_the_repository_holds_its_original() -> None:
    """The translation commits list the translated page alone; the repository's files say
    the English page is there."""
    from tributary.engine.servers.tasks import weigh_incidental
    from tributary.engine.tasks.model import FileScore

    files = [FileScore("docs/ja/docs/yield.md", 1.0), FileScore("fastapi/routing.py", 0.9)]
    weigh_incidental("dependencies with yield", files, {"docs/en/docs/yield.md"}.__contains__)
    assert files[0].score < files[1].score
