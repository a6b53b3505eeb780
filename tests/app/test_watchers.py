"""Live watchers: a real ``tributary.app.index_worker --watch`` process keeps an index up to date
and tells the engine; the Watch button starts and stops one and saves the choice in
the config; the shell starts the watchers the config names."""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6
import yaml
from PySide6.QtCore import QObject

from tests.app.fakes import FakeEngine
from tests.app.test_indexes import FakeRepos, until
from tests.index.index_helpers import make_repo
from tributary.app import watchers as watchers_module
from tributary.app.background import runner
from tributary.app.indexes import IndexPage
from tributary.app.shell import Shell
from tributary.app.watchers import RepoWatchers, with_watch
from tributary.engine.config.schema import Config, RepoConfig
from tributary.engine.index.manager import index_path_for
from tributary.engine.index.store import SqliteStore

# A watcher as tributary.app.index_worker --watch behaves: an update after its first pass, then
# nothing until its stdin closes.
WATCHER = r"""
import json, sys
print(json.dumps({"event": "update", "files_total": 3, "files_indexed": 3}), flush=True)
sys.stdin.read()
"""


@pytest.fixture(autouse=True)
def collected() -> Iterator[None]:
    """Collect each test's garbage in this thread: its finished event loop (and the Qt
    timers qasync keeps in it) would otherwise be freed by whatever thread next runs the
    collector — a ``to_thread`` worker, say — and Qt warns about timers stopped there."""
    yield
    gc.collect()


@pytest.fixture
def owner() -> Iterator[QObject]:
    """A parent for the watchers a test makes, deleted in this thread when it ends (a
    parentless QObject is deleted by whichever thread's garbage collection finds it)."""
    parent = QObject()
    yield parent
    shiboken6.delete(parent)


def scripted(path: Path) -> list[str]:
    return [sys.executable, "-c", WATCHER]


def indexed_paths(repo: Path) -> set[str]:
    store = SqliteStore(index_path_for(repo), readonly=True)
    try:
        return set(store.file_states())
    finally:
        store.close()


@pytest.mark.asyncio
async def test_a_watcher_process_applies_edits_and_tells_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, owner: QObject
) -> None:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    repo = make_repo(tmp_path / "repo").resolve()
    engine = FakeEngine()
    watchers = RepoWatchers(lambda: engine, parent=owner)
    updates: list[str] = []
    watchers.updated.connect(updates.append)
    watchers.start(repo)
    try:
        await until(lambda: len(updates) >= 1, timeout=120)  # the first pass
        assert "src/new_feature.py" not in indexed_paths(repo)
        (repo / "src/new_feature.py").write_text("def brand_new_feature():\n    return 42\n")
        await until(lambda: "src/new_feature.py" in indexed_paths(repo), timeout=60)
        await until(lambda: len(updates) >= 2 and len(engine.changed_repositories) >= 2)
        assert set(updates) == {str(repo)} and set(engine.changed_repositories) == {repo}
    finally:
        task = watchers.stop(repo)
        assert task is not None
        await asyncio.gather(task, return_exceptions=True)
    assert not watchers.watching(repo)


@pytest.mark.asyncio
async def test_watch_is_saved_in_the_config_and_undone(tmp_path: Path, owner: QObject) -> None:
    config_file = tmp_path / "config.yaml"
    engine = FakeEngine()
    engine.config.path = config_file
    watchers = RepoWatchers(lambda: engine, command=scripted, parent=owner)
    repo = tmp_path / "repo"
    repo.mkdir()
    await watchers.set_watch(repo, True)
    try:
        assert watchers.watching(repo)
        saved = yaml.safe_load(config_file.read_text())
        assert saved["repos"] == [{"path": str(repo.resolve()), "watch": True}]
        assert engine.config.repos == [RepoConfig(path=str(repo.resolve()), watch=True)]
        await watchers.set_watch(repo, False)
        assert not watchers.watching(repo)
        assert yaml.safe_load(config_file.read_text())["repos"] == [{"path": str(repo.resolve())}]
    finally:
        if (task := watchers.stop(repo)) is not None:
            await asyncio.gather(task, return_exceptions=True)


def test_with_watch_changes_the_entry_of_that_folder_only(tmp_path: Path) -> None:
    config = Config(repos=[RepoConfig(path=str(tmp_path / "a"), name="a", exclude=["*.log"]),
                           RepoConfig(path=str(tmp_path / "b"))])
    updated = with_watch(config, tmp_path / "a" / ".." / "a", True)
    assert [(r.path, r.name, r.exclude, r.watch) for r in updated.repos] == [
        (str(tmp_path / "a"), "a", ["*.log"], True), (str(tmp_path / "b"), None, [], False)]
    assert not config.repos[0].watch  # a copy: the engine's own config is not touched
    added = with_watch(config, tmp_path / "c", True)
    assert added.repos[-1] == RepoConfig(path=str((tmp_path / "c").resolve()), watch=True)


@pytest.mark.asyncio
async def test_the_watch_button_starts_and_stops_a_watcher(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, owner: QObject
) -> None:
    repo, _, engine, _, page = await page_of_one_repository(qtbot, tmp_path, monkeypatch, owner)
    assert page.table.item(0, 6).text() == "off"
    assert not page.watch_button.isEnabled()  # nothing selected
    page.table.selectRow(0)
    assert page.watch_button.isEnabled() and not page.watch_button.isChecked()
    page.toggle_watch_selected()
    await until(lambda: page.table.item(0, 6).text() == "on")
    assert page.watch_button.isChecked() and page.watch_button.text() == "Watching"
    # Re-index and Remove stay offered: they pause or stop the watcher themselves.
    assert page.reindex_button.isEnabled() and page.remove_button.isEnabled()
    await until(lambda: engine.changed_repositories == [repo])  # its first update
    assert [i.row() for i in page.table.selectionModel().selectedRows()] == [0]  # kept by the refresh
    page.toggle_watch_selected()
    await until(lambda: page.table.item(0, 6).text() == "off")
    assert not page.watchers.paths() and engine.config.repos[0].watch is False
    await runner().wait_idle()  # the watcher has exited and been reaped, not left to the loop's end


@pytest.mark.asyncio
async def test_the_shell_starts_the_watchers_the_config_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watchers_module, "watch_command", scripted)
    watched, other = tmp_path / "watched", tmp_path / "other"
    engine = FakeEngine()
    engine.config.repos = [RepoConfig(path=str(watched), watch=True), RepoConfig(path=str(other))]

    async def factory(path: Path | None) -> FakeEngine:
        return engine

    shell = Shell(engine_factory=factory, single_instance=False)
    try:
        shell.start(show=False)
        await until(lambda: shell.engine is not None and shell.watchers.paths() == [str(watched.resolve())])
        await until(lambda: engine.changed_repositories == [watched.resolve()])
    finally:
        await shell.shutdown()  # stops the watcher with everything else (no process is left)
    assert shell.watchers.paths() == []


async def page_of_one_repository(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, owner: QObject, **page_options: Any
) -> tuple[Path, FakeRepos, FakeEngine, RepoWatchers, IndexPage]:
    """An index page listing one repository, not watched yet, with scripted watchers."""
    repo = (tmp_path / "repo").resolve()
    repo.mkdir()
    fake = FakeRepos()
    fake.entries[str(repo)] = type("Info", (), {"root": repo, "files": 3, "chunks": 9, "tasks": 0,
                                                "updated_at": None, "exists": True})()
    monkeypatch.setattr("tributary.app.indexes.repos", lambda: fake)
    engine = FakeEngine()
    engine.config.path = tmp_path / "config.yaml"
    watchers = RepoWatchers(lambda: engine, command=scripted, parent=owner)
    page = IndexPage(lambda: engine, watchers=watchers, **page_options)
    qtbot.addWidget(page)
    await page.refresh()
    return repo, fake, engine, watchers, page


async def watched_repository(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, owner: QObject, **page_options: Any
) -> tuple[Path, FakeRepos, FakeEngine, RepoWatchers, IndexPage]:
    """An index page whose one repository is selected and watched."""
    found = await page_of_one_repository(qtbot, tmp_path, monkeypatch, owner, **page_options)
    page = found[-1]
    page.table.selectRow(0)
    page.toggle_watch_selected()
    await until(lambda: page.table.item(0, 6).text() == "on")
    return found


@pytest.mark.asyncio
async def test_reindexing_a_watched_repository_pauses_its_watcher(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, owner: QObject
) -> None:
    """The watcher is its index's one writer: a re-index stops it, indexes, and watches
    again, and the config still says to watch."""
    from tests.app.test_indexes import WORKER

    gate = tmp_path / "gate"
    repo, _, engine, watchers, page = await watched_repository(
        qtbot, tmp_path, monkeypatch, owner, worker=lambda path: [sys.executable, "-c", WORKER, str(gate)])
    stopped: list[str] = []
    watchers.stopped.connect(lambda key, why: stopped.append(key))
    page.reindex_selected()
    await until(lambda: str(repo) in page._running)
    assert stopped == [str(repo)] and not watchers.watching(repo)  # paused while it indexes
    for name in ("keyword-gate", "gate", "history-gate", "done-gate"):
        (tmp_path / name).touch()
    await until(lambda: watchers.watching(repo) and not page._running)
    assert engine.config.repos[0].watch is True
    page.toggle_watch_selected()
    await until(lambda: not watchers.paths())
    await runner().wait_idle()


@pytest.mark.asyncio
async def test_removing_a_watched_repository_stops_watching_it_for_good(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, owner: QObject
) -> None:
    repo, fake, engine, watchers, page = await watched_repository(qtbot, tmp_path, monkeypatch, owner)
    page.remove_selected()
    box = page.confirm_box
    assert box is not None and "stops watching it first" in box.informativeText()
    delete = next(b for b in box.buttons() if b.text() == "Delete index")
    delete.click()
    await until(lambda: fake.removed == [repo])
    assert not watchers.paths()
    # Not watched on the next start either, or its watcher would index it again.
    assert yaml.safe_load(engine.config.path.read_text())["repos"] == [{"path": str(repo)}]
    await runner().wait_idle()
