"""The index manager page: indexing in a child process with progress (rate, ETA),
per-repository status, re-index and remove — with a scripted worker and a double of
the engine's repositories (the real indexer is tested by the index suite)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.app.fakes import FakeEngine
from tributary.app import indexes
from tributary.app.indexes import IndexPage, Progress, format_eta

# A worker that behaves like tributary.app.index_worker: JSON progress lines, "history",
# "history-ready", the history's vectors, then "done"; it waits for a file to exist
# before each step so the test can see it mid-way.
WORKER = r"""
import json, sys, time, pathlib
gate = pathlib.Path(sys.argv[1])
def emit(**kw): print(json.dumps(kw), flush=True)
print("a stray line from some library", flush=True)
for done in (1, 2):
    emit(event="progress", phase="index", files_done=done, files_total=4, chunks_done=done * 10,
         chunks_embedded=0, rate=20.0, eta_s=(4 - done) / 2.0)
def wait(gate):
    deadline = time.time() + 10
    while not gate.exists() and time.time() < deadline:
        time.sleep(0.02)
wait(gate.with_name("keyword-gate"))
emit(event="progress", phase="keyword", files_done=4, files_total=4, chunks_done=40,
     chunks_embedded=0, rate=20.0, eta_s=0.0)
wait(gate)
emit(event="history")
wait(gate.with_name("history-gate"))
emit(event="history-ready", history="history: 3 new commits in 0.2 s")
emit(event="history-embed", done=1, total=3, rate=40.0, eta_s=0.05)
wait(gate.with_name("done-gate"))
emit(event="done", files_indexed=4, chunks_total=40, seconds=0.1, history="history: 3 new commits in 0.2 s")
"""
FAILING = "import sys; print('Traceback…', file=sys.stderr); print('NotADirectoryError: not a folder', file=sys.stderr); sys.exit(1)"


@dataclass
class FakeRepos:
    entries: dict[str, Any] = field(default_factory=dict)
    removed: list[Path] = field(default_factory=list)

    def list_repositories(self) -> list[Any]:
        return list(self.entries.values())

    def remove_repository(self, path: Path) -> bool:
        self.removed.append(path)
        return self.entries.pop(str(path), None) is not None


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


@pytest.mark.asyncio
async def test_index_in_child_process_with_progress_then_status(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeRepos()
    monkeypatch.setattr(indexes, "repos", lambda: fake)
    messages: list[str] = []
    unsearchable: list[list[str]] = []
    gate = tmp_path / "gate"
    engine = FakeEngine()
    page = IndexPage(lambda: engine, worker=lambda path: [sys.executable, "-c", WORKER, str(gate)])
    qtbot.addWidget(page)
    page.message.connect(messages.append)
    page.indexing_changed.connect(unsearchable.append)
    await page.refresh()
    assert page.table.rowCount() == 0 and not page.empty.isHidden()
    repo = tmp_path / "repo"
    task = page.index(repo)
    assert task is not None
    assert unsearchable == [[str(repo)]]  # the search page can say it is being indexed
    await until(lambda: page.progress.value() == 2)
    assert page.progress.maximum() == 4
    label = page.progress_label.full_text
    assert "2/4 files" in label and "20.0 chunks/s" in label and "ETA 1 s" in label
    assert page.table.item(0, 1).text() == "indexing 2/4"
    assert page.index(repo) is None  # already running: not started twice
    assert engine.applied == []
    # Once every file is in the keyword index the repository can be asked, long before
    # indexing ends: the engine re-derives its built-in servers at once.
    fake.entries[str(repo)] = SimpleNamespace(root=repo, name="me/repo", files=4, chunks=40, tasks=3,
                                                updated_at=time.time(), exists=True)
    (tmp_path / "keyword-gate").touch()
    await until(lambda: unsearchable == [[str(repo)], []])  # once the engine has it
    assert len(engine.applied) == 1
    assert any("keyword and symbol search ready" in m for m in messages)
    # The row names the repository and counts its code index once it is written, not
    # only when the vectors and the history are done too.
    await until(lambda: [page.table.item(0, c).text() for c in (0, 2, 3)] == ["me/repo", "4", "40"])
    gate.touch()
    await until(lambda: page.table.item(0, 1).text() == "reading history")
    await page.refresh()  # a refill keeps the live status
    assert page.table.item(0, 1).text() == "reading history"
    assert page.progress_label.full_text == f"Reading the git history of {repo}…"
    assert page.progress.maximum() == 0  # busy: no count
    (tmp_path / "history-gate").touch()
    # The history's commits answer by their words at once: the engine adds its server,
    # and the row counts them, while their vectors are made.
    await until(lambda: page.table.item(0, 1).text() == "history 33 % embedded")
    assert "(1/3 past tasks embedded) · 40.0 tasks/s · ETA 0 s" in page.progress_label.full_text
    assert page.progress.maximum() == 3 and page.progress.value() == 1
    assert any("history can be searched by its words (3 new commits in 0.2 s)" in m for m in messages)
    await until(lambda: engine.changed_repositories == [repo, repo] and len(engine.applied) == 2)
    (tmp_path / "done-gate").touch()
    await task
    await until(lambda: page.progress.isHidden() and page.table.item(0, 1).text() == "ready")
    assert f"Indexed {repo}: 4 files, 40 chunks in 0.1 s; history: 3 new commits in 0.2 s" in messages
    # The engine forgets cached answers about the repository and re-derives its built-ins.
    await until(lambda: engine.changed_repositories == [repo] * 3 and len(engine.applied) == 3)
    # Named as `index list` and a query's `repo:` name it; the folder in its tooltip.
    assert [page.table.item(0, c).text() for c in (0, 1, 2, 3, 4)] == ["me/repo", "ready", "4", "40", "3"]
    assert f"me/repo\n{repo}" in page.table.item(0, 0).toolTip()
    page.table.selectRow(0)
    assert page.remove_button.isEnabled() and page.reindex_button.isEnabled()
    page.remove_selected()  # asks first
    box = page.confirm_box
    assert box is not None and box.isVisible() and fake.removed == []
    assert str(repo) in box.text() and "40 chunks from 4 files" in box.informativeText()
    assert "3 commits" in box.informativeText() and "not touched" in box.informativeText()
    QTest.keyClick(box, Qt.Key.Key_Escape)  # Escape cancels: nothing deleted
    await asyncio.sleep(0.05)
    assert fake.removed == [] and page.table.rowCount() == 1
    page.table.selectRow(0)
    page.remove_selected()
    assert page.confirm_box is not None and page.confirm_box.defaultButton().text() == "Cancel"
    delete = next(b for b in page.confirm_box.buttons() if b.text() == "Delete index")
    delete.click()
    await until(lambda: page.table.rowCount() == 0)
    assert fake.removed == [repo]
    await until(lambda: engine.changed_repositories == [repo] * 4 and len(engine.applied) == 4)


@pytest.mark.asyncio
async def test_failed_indexing_is_reported(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexes, "repos", lambda: FakeRepos())
    page = IndexPage(lambda: None, worker=lambda path: [sys.executable, "-c", FAILING])
    qtbot.addWidget(page)
    messages: list[str] = []
    page.message.connect(messages.append)
    task = page.index(tmp_path / "nowhere")
    assert task is not None
    await asyncio.gather(task, return_exceptions=True)
    await until(lambda: bool(messages) and "failed" in messages[-1])
    assert messages[-1].endswith("RuntimeError: NotADirectoryError: not a folder")
    assert page.progress.isHidden()


def test_progress_text_and_eta() -> None:
    progress = Progress.of({"files_done": 50, "files_total": 200, "chunks_done": 900}, time.monotonic() - 10)
    assert progress.rate == pytest.approx(90.0, rel=0.05)
    assert progress.eta_s == pytest.approx(30.0, rel=0.05)
    assert progress.text().startswith("50/200 files · 900 chunks · 9")
    embedding = Progress.of(
        {"phase": "embed", "files_done": 3, "files_total": 3, "vectors_done": 400, "vectors_total": 1000,
         "rate": 50.0, "eta_s": 12.0}, time.monotonic() - 10,
    )  # fmt: skip
    assert embedding.status == "semantic index 40 % ready"
    assert "keyword search ready; semantic index 40 % ready (400/1,000 chunks embedded)" in embedding.text()
    assert format_eta(5) == "5 s" and format_eta(125) == "2 min 05 s" and format_eta(7300) == "2 h 01 min"


@pytest.mark.asyncio
async def test_last_update_follows_a_reindex_that_changed_nothing(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-index that finds no file changed writes none, yet the index was brought up
    to date then (the indexer records the pass in the index): Last update says so."""
    repo = tmp_path / "repo"
    long_ago = time.mktime((2020, 1, 2, 3, 4, 0, 0, 0, -1))
    fake = FakeRepos({str(repo): SimpleNamespace(root=repo, files=4, chunks=40, tasks=3, updated_at=long_ago,
                                                 exists=True)})
    monkeypatch.setattr(indexes, "repos", lambda: fake)
    gate = tmp_path / "gate"
    for name in ("keyword-gate", "gate", "done-gate"):  # (the history's, once the pass is recorded)
        (tmp_path / name).touch()
    page = IndexPage(lambda: None, worker=lambda path: [sys.executable, "-c", WORKER, str(gate)])
    qtbot.addWidget(page)
    await page.refresh()
    assert page.table.item(0, 5).text() == "2020-01-02"
    assert page.table.item(0, 5).toolTip() == "2020-01-02 03:04"
    task = page.index(repo)
    fake.entries[str(repo)].updated_at = time.time()  # the pass the worker's indexer records
    (tmp_path / "history-gate").touch()
    assert task is not None
    await task
    await until(lambda: page.table.item(0, 1).text() == "ready")
    shown = page.table.item(0, 5).toolTip()
    assert shown != "2020-01-02 03:04"
    assert time.mktime(time.strptime(shown, "%Y-%m-%d %H:%M")) > long_ago
    assert page.table.item(0, 5).text() in {shown[-5:], shown[:10]}  # today: the time (else the date)


def test_a_moment_of_today_shows_its_time_and_an_earlier_one_its_date() -> None:
    now = time.mktime((2026, 12, 7, 23, 40, 0, 0, 0, -1))
    assert indexes.short_time(now - 600, now) == "23:30"
    assert indexes.short_time(now - 86_400, now) == "2026-12-06"


@pytest.mark.asyncio
async def test_two_clones_of_one_repository_are_told_apart_by_their_folders(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def entry(root: Path, name: str) -> SimpleNamespace:
        return SimpleNamespace(root=root, name=name, files=1, chunks=2, tasks=0, updated_at=None, exists=True)

    first, second, other = tmp_path / "a" / "click", tmp_path / "b" / "click", tmp_path / "flask"
    fake = FakeRepos({str(first): entry(first, "pallets/click"), str(second): entry(second, "pallets/click"),
                      str(other): entry(other, "pallets/flask")})
    monkeypatch.setattr(indexes, "repos", lambda: fake)
    page = IndexPage(lambda: None)
    qtbot.addWidget(page)
    await page.refresh()
    shown = sorted(page.table.item(row, 0).text() for row in range(page.table.rowCount()))
    assert shown == [f"pallets/click ({first})", f"pallets/click ({second})", "pallets/flask"]
    assert not page.table.wordWrap()  # wrapped at "/", a narrow column showed "pallets/…"


@pytest.mark.asyncio
async def test_a_folder_without_a_history_shows_no_task_count(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder outside git has no history: its Tasks cell says so, not "0" as for a
    history with no commits in it."""
    plain, empty = tmp_path / "plain", tmp_path / "empty"
    fake = FakeRepos({
        str(plain): SimpleNamespace(root=plain, files=1, chunks=2, tasks=0, updated_at=None, exists=True, history=False),
        str(empty): SimpleNamespace(root=empty, files=1, chunks=2, tasks=0, updated_at=None, exists=True, history=True),
    })
    monkeypatch.setattr(indexes, "repos", lambda: fake)
    page = IndexPage(lambda: None)
    qtbot.addWidget(page)
    await page.refresh()
    tasks = {page.table.item(row, 0).data(Qt.ItemDataRole.UserRole): page.table.item(row, 4)
             for row in range(page.table.rowCount())}
    assert tasks[str(plain)].text() == indexes.NO_HISTORY and "not a git work tree" in tasks[str(plain)].toolTip()
    assert tasks[str(empty)].text() == "0" and not tasks[str(empty)].toolTip()


def test_the_worker_steps_down_once_the_keyword_tier_is_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A new repository's keyword tier runs at the normal priority (the person waits for
    it); the process steps down before the model loads and embedding starts."""
    import os
    from types import SimpleNamespace

    from tributary.app import index_worker
    from tributary.engine import api
    from tributary.engine.index.progress import IndexProgress, IndexStats

    niced: list[tuple[str, int]] = []
    monkeypatch.setattr(os, "nice", lambda step: niced.append(("nice", step)) or step)

    def index_repository(root: Path, on_progress: Any, embed: bool) -> IndexStats:
        assert not embed  # the vectors come after the history's words
        for phase in ("scan", "chunk", "keyword", "done"):
            niced.append((phase, 0))
            on_progress(IndexProgress(phase, 1, 1, 1, 0, 1.0, None))
        return IndexStats(root, tmp_path / "x.files.sqlite", files_indexed=1, chunks_total=1)

    def update_history(root: Path, embed: bool) -> Any:
        assert not embed
        niced.append(("history words", 0))
        return SimpleNamespace(stats=object(), summary=lambda: "history: 2 new commits in 0.1 s")

    def embed_repository(root: Path, on_progress: Any) -> IndexStats:
        for phase in ("embed", "embed", "done"):
            niced.append((phase, 0))
            on_progress(IndexProgress(phase, 1, 1, 1, 0, 1.0, None))
        return IndexStats(root, tmp_path / "x.files.sqlite", chunks_embedded=1)

    def embed_history(root: Path, on_progress: Any) -> int:
        niced.append(("history vectors", 0))
        on_progress(0, 2)  # none had its vector
        on_progress(2, 2)
        return 2

    monkeypatch.setattr(api, "index_repository", index_repository)
    monkeypatch.setattr(api, "update_history", update_history)
    monkeypatch.setattr(api, "embed_repository", embed_repository)
    monkeypatch.setattr(api, "embed_history", embed_history)
    assert index_worker.main([str(tmp_path)]) == 0
    order = [name for name, _ in niced]
    assert order == ["scan", "chunk", "keyword", "nice", "done", "history words", "embed", "embed", "done",
                     "history vectors"]
    assert ("nice", index_worker.WORKER_NICENESS) in niced
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [e.get("phase") or e["event"] for e in events]  # (progress lines are thinned out)
    history = next(e for e in events if e["event"] == "history-embed")
    assert history["done"] == history["total"] == 2 and history["rate"] > 0 and history["eta_s"] == 0
    assert [kind for kind in kinds if kind not in ("scan", "chunk", "embed")] == [
        "keyword", "done", "history", "history-ready", "done", "history-embed", "done"]
    final = events[-1]
    assert final["event"] == "done" and final["files_indexed"] == 1 and final["chunks_embedded"] == 1
    assert final["history"] == "history: 2 new commits in 0.1 s"


def test_the_worker_keeps_the_code_index_when_the_history_cannot_be_embedded(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import os
    from types import SimpleNamespace

    from tributary.app import index_worker
    from tributary.engine import api
    from tributary.engine.index.progress import IndexStats

    monkeypatch.setattr(os, "nice", lambda step: step)
    monkeypatch.setattr(api, "index_repository", lambda root, on_progress, embed: IndexStats(root, tmp_path / "x"))
    monkeypatch.setattr(api, "update_history", lambda root, embed: SimpleNamespace(stats=object(), summary=lambda: "history: 2 new commits"))
    monkeypatch.setattr(api, "embed_repository", lambda root, on_progress: IndexStats(root, tmp_path / "x"))

    def embed_history(root: Path, on_progress: Any) -> int:
        raise RuntimeError("model missing")

    monkeypatch.setattr(api, "embed_history", embed_history)
    assert index_worker.main([str(tmp_path)]) == 0
    final = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert final["event"] == "done"
    assert final["history"] == ("history: 2 new commits; its vectors were not made (RuntimeError: model missing), "
                                "so it is searched by its words")


def test_the_add_button_asks_for_a_folder_and_indexes_it(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Clicked, the button opens the folder dialog; the folder chosen there is indexed,
    and nothing else runs (the button's `checked` is not a callback)."""
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(indexes, "repos", FakeRepos)
    page = IndexPage(lambda: None, worker=lambda path: [sys.executable, "-c", FAILING])
    qtbot.addWidget(page)
    chosen: list[Path] = []
    monkeypatch.setattr(page, "index", chosen.append)
    page.add_button.click()
    dialog = page.findChild(QFileDialog)
    assert dialog is not None and dialog.isVisible()
    dialog.fileSelected.emit(str(tmp_path))
    assert chosen == [tmp_path]
    dialog.reject()


@pytest.mark.asyncio
async def test_a_reindex_that_changed_nothing_says_so(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not "0 files": the repository has files, none of which had changed."""
    monkeypatch.setattr(indexes, "repos", lambda: FakeRepos())
    page = IndexPage(lambda: None)
    qtbot.addWidget(page)
    messages: list[str] = []
    page.message.connect(messages.append)
    page._finished("/src/app", {"files_indexed": 0, "chunks_total": 1905, "seconds": 0.1, "history": "history: up to date"})
    page._finished("/src/app", {"files_indexed": 1203, "chunks_total": 14447, "seconds": 61.0})
    page._finished("/src/app", {"files_indexed": 1, "chunks_total": 1905, "seconds": 0.1, "warnings": [
        "bigmod.py: not indexed: 2.2 MB, over the 1.0 MB limit", ".gitignore:3: invalid pattern '[' skipped"]})
    assert messages == ["Indexed /src/app: no file changed, 1,905 chunks in 0.1 s; history: up to date",
                        "Indexed /src/app: 1,203 files, 14,447 chunks in 61.0 s",
                        "Indexed /src/app: 1 file, 1,905 chunks in 0.1 s; bigmod.py: not indexed: 2.2 MB, "
                        "over the 1.0 MB limit (and 1 more)"]


# A worker that finishes an index's vectors (``index_worker --embed``): the chunks', then
# the history's, then "done"; it waits for its gate before ending.
FINISHING = r"""
import json, sys, time, pathlib
gate = pathlib.Path(sys.argv[1])
def emit(**kw): print(json.dumps(kw), flush=True)
emit(event="progress", phase="embed", vectors_done=500, vectors_total=1000, rate=90.0, eta_s=5.5)
deadline = time.time() + 10
while not gate.exists() and time.time() < deadline:
    time.sleep(0.02)
emit(event="done", chunks_embedded=600, chunks_total=1000, seconds=6.0, history="", tasks_embedded=2)
"""


@pytest.mark.asyncio
async def test_an_index_left_half_embedded_is_finished_once_in_the_background(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app quit while it embedded a large repository (or a search's background pass
    was killed): the index stayed "semantic index 40 % ready" at every later start, its
    meaning-based matches partial, with nothing working on it. The page now finishes it
    at once, one repository at a time and never while it indexes another; a watched
    repository is its watcher's to finish."""
    half, whole, watched, history = (tmp_path / name for name in ("half", "whole", "watched", "history"))

    def entry(root: Path, embedded: int, history_embedded: int = 3) -> SimpleNamespace:
        return SimpleNamespace(root=root, files=10, chunks=1000, tasks=3, updated_at=None, exists=True,
                               embedded=embedded, status="ready" if embedded == 1000 else "semantic index 40 % ready",
                               history_embedded=history_embedded)

    fake = FakeRepos({str(whole): entry(whole, 1000), str(watched): entry(watched, 100), str(half): entry(half, 400),
                      str(history): entry(history, 1000, history_embedded=1)})
    monkeypatch.setattr(indexes, "repos", lambda: fake)
    gate = tmp_path / "gate"
    started: list[Path] = []

    def finishing(path: Path) -> list[str]:
        started.append(path)
        return [sys.executable, "-c", FINISHING, str(gate)]

    page = IndexPage(lambda: None, embedder=finishing)
    monkeypatch.setattr(page.watchers, "watching", lambda path: path == str(watched))
    qtbot.addWidget(page)
    messages: list[str] = []
    page.message.connect(messages.append)
    await page.refresh()
    assert started == [half]
    rows = {page.table.item(row, 0).data(Qt.ItemDataRole.UserRole): page.table.item(row, 1).text()
            for row in range(page.table.rowCount())}
    assert rows[str(history)] == "history 33 % embedded" and rows[str(whole)] == "ready"
    await until(lambda: "Finishing the semantic index of" in page.progress_label.full_text
                and "50 % ready" in page.progress_label.full_text)
    assert page.index(half) is None  # one pass at a time: a re-index waits for it
    fake.entries[str(half)] = entry(half, 1000)
    gate.touch()
    await until(lambda: any("semantic index finished" in m for m in messages))
    assert f"{half.name}: semantic index finished (600 chunks and 2 past tasks embedded)" in messages
    await until(lambda: started == [half, history])  # the next one, its history's vectors
    fake.entries[str(history)] = entry(history, 1000)
    await until(lambda: not page.progress.isVisible())
    await page.refresh()
    assert started == [half, history]  # each once a session; the watched one is its watcher's


def test_the_worker_finishes_vectors_only_at_the_lower_priority(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--embed`` indexes nothing: it embeds what waits, code then history, stepped
    down from the start (background work the person is not waiting for)."""
    import os

    from tributary.app import index_worker
    from tributary.engine import api
    from tributary.engine.index.progress import IndexStats

    steps: list[str] = []
    monkeypatch.setattr(os, "nice", lambda step: steps.append("nice"))

    def not_indexed(*_: Any, **__: Any) -> None:
        raise AssertionError("--embed indexed the code")

    monkeypatch.setattr(api, "index_repository", not_indexed)
    monkeypatch.setattr(api, "update_history", not_indexed)

    def embed_repository(root: Path, on_progress: Any) -> IndexStats:
        steps.append("code")
        return IndexStats(root, tmp_path / "x", chunks_embedded=600, chunks_total=1000)

    def embed_history(root: Path, on_progress: Any) -> int:
        steps.append("history")
        return 3

    monkeypatch.setattr(api, "embed_repository", embed_repository)
    monkeypatch.setattr(api, "embed_history", embed_history)
    monkeypatch.setattr(api, "embedding_underway", lambda root: False)
    assert index_worker.main(["--embed", str(tmp_path)]) == 0
    assert steps == ["nice", "code", "history"]
    final = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert final["event"] == "done" and final["chunks_embedded"] == 600 and final["history"] == ""
    assert final["tasks_embedded"] == 3
    # Another process embeds it (`index embed`, a search's pass): nothing is done, and
    # the page is told so rather than "finished".
    monkeypatch.setattr(api, "embedding_underway", lambda root: True)
    steps.clear()
    assert index_worker.main(["--embed", str(tmp_path)]) == 0
    assert steps == ["nice"]
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"event": "done", "elsewhere": True}


@pytest.mark.asyncio
async def test_a_reindex_asked_while_the_app_finishes_vectors_stops_that_pass(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass that finishes a stopped index is the app's idea: it takes none of the
    repository's buttons away, and Re-index (or Watch, or Remove) stops it first."""
    half = tmp_path / "half"
    fake = FakeRepos({str(half): SimpleNamespace(root=half, files=10, chunks=1000, tasks=3, updated_at=None,
                                                 exists=True, embedded=400, status="semantic index 40 % ready")})
    monkeypatch.setattr(indexes, "repos", lambda: fake)
    gate = tmp_path / "gate"
    page = IndexPage(lambda: None, embedder=lambda path: [sys.executable, "-c", FINISHING, str(gate)],
                     worker=lambda path: [sys.executable, "-c", WORKER, str(gate)])
    qtbot.addWidget(page)
    await page.refresh()
    await until(lambda: "50 % ready" in page.progress_label.full_text)
    page.table.selectRow(0)
    assert page.reindex_button.isEnabled() and page.remove_button.isEnabled() and page.watch_button.isEnabled()
    page.reindex_button.click()
    assert "Indexing" in page.progress_label.full_text and str(half) in page._running
    await until(lambda: "Indexing" in page.progress_label.full_text and "files" in page.progress_label.full_text)
    assert not page.reindex_button.isEnabled()  # the person's own pass runs: as before
    for name in ("keyword-gate", "gate", "history-gate", "done-gate"):
        (tmp_path / name).touch()
    await until(lambda: not page._running)


def test_a_running_index_shows_its_whole_status_as_a_tooltip(qtbot: Any, tmp_path: Path) -> None:
    """The Status column is cut at its end in a narrow window: while a repository is
    indexed its progress still reads whole in the tooltip, and the cell is updated in
    place, so a tooltip being read is not taken away by the next progress line."""
    page = IndexPage(lambda: None, worker=lambda path: [sys.executable, "-c", "pass"])
    qtbot.addWidget(page)
    key = str(tmp_path / "repo")
    page._running[key] = Progress(0, 0, 0, None, None)
    page._set_row(key, None)
    first = "keyword search ready; semantic index 40 % ready (400/1,000 chunks embedded)"
    page._show_status(key, first)
    cell = page.table.item(0, indexes.COLUMNS.index("Status"))
    assert cell.text() == first and first in cell.toolTip()
    page._show_status(key, "reading history")
    assert page.table.item(0, indexes.COLUMNS.index("Status")) is cell
    assert cell.text() == "reading history" and "reading history" in cell.toolTip()


@pytest.mark.asyncio
async def test_listing_again_updates_the_same_rows_in_place(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Watchers list the indexes again often: the rows stay the same items (a tooltip
    being read stays up), their text follows the listing, and a new index is a new row."""
    one, two = tmp_path / "one", tmp_path / "two"
    fake = FakeRepos({str(one): SimpleNamespace(root=one, files=4, chunks=40, tasks=3, exists=True)})
    monkeypatch.setattr(indexes, "repos", lambda: fake)
    page = IndexPage(lambda: None, worker=lambda path: [sys.executable, "-c", "pass"])
    qtbot.addWidget(page)
    await page.refresh()
    files = page.table.item(0, indexes.COLUMNS.index("Files"))
    fake.entries[str(one)].files = 5
    await page.refresh()
    assert page.table.item(0, indexes.COLUMNS.index("Files")) is files and files.text() == "5"
    fake.entries[str(two)] = SimpleNamespace(root=two, files=1, chunks=2, tasks=0, exists=True)
    await page.refresh()
    assert page.table.rowCount() == 2
    assert [page.table.item(row, 0).data(Qt.ItemDataRole.UserRole) for row in range(2)] == [str(one), str(two)]
