"""A repository is indexed as a whole: ``tributary index`` and the app's index worker
bring its code and its git history up to date together, and remove both."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.index.index_helpers import HashingEmbedder, make_repo
from tests.index.test_watch_cli import _wait
from tests.tasks.task_helpers import HashEmbedder, commit, git
from tributary.app import index_worker
from tributary.engine.cache import open_response_cache
from tributary.engine.cli.main import main
from tributary.engine.config.load import load_config
from tributary.engine.index import embed, manager
from tributary.engine.index.manager import index_path_for, list_indexes
from tributary.engine.index.progress import IndexStats
from tributary.engine.model import Hit, SearchRequest, SearchResponse, SourceReport, SourceStatus
from tributary.engine.repos import builtins
from tributary.engine.repos import manage as repos
from tributary.engine.tasks.api import task_stats, tasks_db_path
from tributary.engine.tasks.sources import GitError


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh Tributary home, with small stand-ins for the embedding models."""
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(manager, "load_code_embedder", lambda: HashingEmbedder())
    monkeypatch.setattr(embed, "load_default_embedder", lambda: HashEmbedder())
    return tmp_path / "home"


@pytest.fixture
def git_checkout(tmp_path: Path) -> Path:
    """The index tests' repository, committed in two steps."""
    root = make_repo(tmp_path / "checkout")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Import the service", date="2024-01-01T10:00:00+00:00")
    commit(root, {"src/billing.py": "def invoice_total(lines):\n    return sum(lines)\n"},
           "Add invoice totals", "2024-02-01T10:00:00+00:00")
    return root


def test_index_add_imports_the_history_and_remove_deletes_both(
    home: Path, git_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", "add", str(git_checkout)]) == 0
    assert "checkout: history: 2 new commits" in capsys.readouterr().err
    assert task_stats(git_checkout).tasks == 2
    assert builtins.available_builtins() == ["files", "tasks"]  # both servers now serve it

    assert main(["index", "status", str(git_checkout)]) == 0
    assert "history: 2 tasks touching" in capsys.readouterr().out
    assert [(info.root, info.tasks) for info in repos.list_repositories()] == [(git_checkout.resolve(), 2)]
    assert main(["index", "list"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:5] == ["repository", "files", "chunks", "tasks", "updated"]
    assert row.split()[3] == "2"

    assert main(["index", "update"]) == 0
    assert "checkout: history: up to date" in capsys.readouterr().err
    commit(git_checkout, {"src/billing.py": "def invoice_total(lines):\n    return round(sum(lines), 2)\n"},
           "Round invoice totals", "2024-03-01T10:00:00+00:00")
    assert main(["index", "update", str(git_checkout)]) == 0
    assert "checkout: history: 1 new commit in" in capsys.readouterr().err
    assert task_stats(git_checkout).tasks == 3

    assert main(["index", "remove", str(git_checkout)]) == 0
    assert list_indexes() == []
    assert not tasks_db_path(git_checkout).exists() and not index_path_for(git_checkout).exists()
    assert builtins.available_builtins() == []  # neither server serves a removed repository
    assert main(["index", "remove", str(git_checkout)]) == 1


def test_no_history_and_folders_without_git_index_the_code_only(
    home: Path, git_checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", "add", "--no-history", str(git_checkout)]) == 0
    assert "history" not in capsys.readouterr().err
    assert not tasks_db_path(git_checkout).exists()

    plain = make_repo(tmp_path / "plain")
    assert main(["index", "add", str(plain)]) == 0
    assert "plain: history: not a git work tree (code only)" in capsys.readouterr().err
    assert not tasks_db_path(plain).exists()
    assert builtins.available_builtins() == ["files"]
    assert {info.root.name: info.tasks for info in repos.list_repositories()} == {"checkout": 0, "plain": 0}


def test_a_failing_history_is_reported_and_the_code_index_kept(
    home: Path, git_checkout: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise GitError("git log failed: fatal: bad object HEAD")

    monkeypatch.setattr(repos, "import_git_history", broken)
    update = repos.update_history(git_checkout)
    assert update.failed and update.stats is None
    assert update.summary() == "history: not imported: git log failed: fatal: bad object HEAD"
    assert main(["index", "add", str(git_checkout)]) == 0  # the code is indexed all the same
    assert "history: not imported: git log failed" in capsys.readouterr().err
    assert [info.root for info in list_indexes()] == [git_checkout.resolve()]


def test_the_app_worker_reports_code_then_history(
    home: Path, git_checkout: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(os, "nice", lambda increment: 0)  # (not this test process's priority)
    assert index_worker.main([str(git_checkout)]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [event["event"] for event in events]
    # Words first (the code's keyword tier, then the history's commits), then vectors.
    ready = kinds.index("history-ready")
    assert kinds[ready - 1] == "history" and set(kinds[: ready - 1]) == {"progress"}
    # (the embedding's progress lines are thinned out: its "done" line always comes)
    assert "done" in [event.get("phase") for event in events[ready:] if event["event"] == "progress"]
    assert kinds[-2:] == ["history-embed", "done"]
    assert events[-2]["done"] == events[-2]["total"] == 2
    assert events[-1]["files_total"] > 0 and events[-1]["chunks_embedded"] == events[-1]["chunks_total"]
    assert events[-1]["history"].startswith("history: 2 new commits in ")
    assert task_stats(git_checkout).tasks == 2


def test_the_app_worker_announces_no_history_for_a_folder_outside_git(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plain folder has no past tasks: the app must not be told its history can be
    searched (it said so, with "not a git work tree" in brackets)."""
    monkeypatch.setattr(os, "nice", lambda increment: 0)
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "mod.py").write_text("def answer():\n    return 42\n", encoding="utf-8")
    assert index_worker.main([str(folder)]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert "history-ready" not in [event["event"] for event in events]
    assert events[-1]["event"] == "done" and events[-1]["history"] == "history: not a git work tree (code only)"


def test_a_folder_outside_git_is_listed_without_a_history(
    home: Path, tmp_path: Path, git_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "mod.py").write_text("def answer():\n    return 42\n", encoding="utf-8")
    assert main(["index", "add", str(folder)]) == 0
    assert main(["index", "add", str(git_checkout)]) == 0
    listed = {info.root: info for info in repos.list_repositories()}
    assert not listed[folder.resolve()].history and listed[git_checkout.resolve()].history
    capsys.readouterr()
    assert main(["index", "list"]) == 0
    rows = {line.split()[-1]: line.split() for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows[str(folder.resolve())][3] == "-"  # (the columns: name, files, chunks, tasks)
    assert rows[str(git_checkout.resolve())][3] == "2"


def test_a_history_being_made_is_listed_with_no_tasks_yet(home: Path, git_checkout: Path) -> None:
    """The app lists its repositories while the worker creates a history file, before
    its tables exist: that listing failed with "no such table"."""
    assert main(["index", "add", "--no-history", str(git_checkout)]) == 0
    tasks_db_path(git_checkout).parent.mkdir(parents=True, exist_ok=True)
    tasks_db_path(git_checkout).touch()  # an empty SQLite database: no tables yet
    assert [(info.root, info.tasks) for info in repos.list_repositories()] == [(git_checkout.resolve(), 0)]


def test_index_changes_drop_the_cached_answers_that_drew_on_the_repository(
    home: Path, git_checkout: Path
) -> None:
    """A search cached before ``index update`` (or ``remove``) must not be replayed after
    it: the shared cache is told, whichever process changed the index."""
    config = load_config()
    request = SearchRequest(query="invoice totals")
    answer = SearchResponse(
        request=request,
        hits=[Hit(id="h1", source="files", tool="search_code", title="t", content="old body")],
        sources=[SourceReport("files", SourceStatus.OK, 5.0, 1)],
    )

    async def cache_answer() -> None:
        cache = open_response_cache(config)
        try:
            assert await cache.put_response(request, answer)
        finally:
            await cache.close()

    async def cached() -> bool:
        cache = open_response_cache(config)
        try:
            return await cache.get_response(request) is not None
        finally:
            await cache.close()

    assert main(["index", "add", str(git_checkout)]) == 0
    for command in (["index", "update", str(git_checkout)], ["index", "remove", str(git_checkout)]):
        asyncio.run(cache_answer())
        assert asyncio.run(cached())
        assert main(command) == 0
        assert not asyncio.run(cached()), command


@contextlib.contextmanager
def _watching(root: Path, index_dir: Path) -> Iterator[tuple[list[int], list[IndexStats]]]:
    """``root`` watched in a thread, its history brought up to date at each commit: the
    tasks each update added, and the index passes, as they come."""
    calls: list[int] = []
    updates: list[IndexStats] = []
    stop = threading.Event()

    def on_git_change() -> None:
        calls.append(repos.update_history(root).stats.added)  # type: ignore[union-attr]

    thread = threading.Thread(target=manager.watch_repository, args=(root,), daemon=True, kwargs={
        "embedder": HashingEmbedder(), "index_dir": index_dir, "stop_event": stop,
        "on_update": updates.append, "on_git_change": on_git_change, "debounce_ms": 50})
    thread.start()
    try:
        _wait(lambda: len(updates) >= 1)  # the first pass
        repos.update_history(root)
        yield calls, updates
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_the_watcher_sees_new_commits(home: Path, git_checkout: Path, tmp_path: Path) -> None:
    """A commit changes no file of the work tree, only git's: the watcher says so, and
    the history can be brought up to date."""
    with _watching(git_checkout, tmp_path / "ix") as (calls, updates):
        git(git_checkout, "commit", "-q", "--allow-empty", "-m", "Document the billing rules",
            date="2024-04-01T10:00:00+00:00")
        _wait(lambda: 1 in calls)
        assert task_stats(git_checkout).tasks == 3
        assert len(updates) == 1  # no file of the repository changed


def test_a_folder_of_a_repository_sees_new_commits_to_it(home: Path, git_checkout: Path, tmp_path: Path) -> None:
    """A folder below the work tree's top has no ``.git`` of its own: the watcher watches
    the work tree's, and the folder's history gains the commits that change it."""
    folder = git_checkout / "src"
    with _watching(folder, tmp_path / "ix") as (calls, _):
        before = task_stats(folder).tasks
        commit(git_checkout, {"src/refunds.py": "def refund(x):\n    return -x\n"}, "Add refunds",
               "2024-04-01T10:00:00+00:00")
        _wait(lambda: 1 in calls)
        assert task_stats(folder).tasks == before + 1


def test_a_submodule_is_not_watched_through_its_superproject(tmp_path: Path) -> None:
    """A folder whose own ``.git`` is a file (a submodule, a linked work tree) has heads of
    its own: the enclosing repository's ``.git`` is not the one that says they moved."""
    outer = tmp_path / "outer"
    (outer / ".git").mkdir(parents=True)
    inner = outer / "vendor" / "lib"
    inner.mkdir(parents=True)
    (inner / ".git").write_text("gitdir: ../../.git/modules/lib\n", encoding="utf-8")
    assert manager._git_dir(inner) == inner / ".git"
    assert manager._git_dir(inner / "src") == inner / ".git"
    assert manager._git_dir(outer / "vendor") == outer / ".git"


def test_index_status_says_how_far_the_vectors_are(
    home: Path, git_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Keyword search answers before the vectors are made: status says which half is
    ready, as the app's Indexes page does."""
    manager.index_repository(git_checkout, embed=False)
    assert main(["index", "status", str(git_checkout)]) == 0
    chunks = next(line for line in capsys.readouterr().out.splitlines() if "chunks:" in line)
    assert "(0 embedded: semantic index 0 % ready; keyword and symbol search cover every file; no pass runs: " in chunks
    manager.embed_repository(git_checkout)
    assert main(["index", "status", str(git_checkout)]) == 0
    assert "(every one embedded: meaning-based search covers them all)" in capsys.readouterr().out
