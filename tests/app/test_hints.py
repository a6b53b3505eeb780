"""The hints row on the search page: values reach ``request.hints`` and re-run the query."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.app.fakes import FakeEngine
from tributary.app.recent_queries import RecentQueries
from tributary.app.search.hints import count_hints, parse_list
from tributary.app.search.page import SearchPage
from tributary.engine.model import Hints


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


def make_page(qtbot: Any, engine: FakeEngine) -> SearchPage:
    page = SearchPage(lambda: engine, RecentQueries(None))
    qtbot.addWidget(page)
    page.resize(1100, 700)
    page.show()
    return page


def test_lists_are_split_trimmed_and_deduplicated() -> None:
    assert parse_list(" src/a.py, tests/test_a.py,,src/a.py ; b.py") == [
        "src/a.py", "tests/test_a.py", "b.py"]
    assert parse_list("#12, 34 #56", issues=True) == ["#12", "34", "#56"]
    assert parse_list("  ") == []
    assert count_hints(Hints(related_files=["a"], language="go")) == 2
    assert count_hints(Hints()) == 0


@pytest.mark.asyncio
async def test_hints_reach_the_request_and_rerun_the_query(qtbot: Any) -> None:
    engine = FakeEngine(sources=["files", "tasks"])
    page = make_page(qtbot, engine)
    assert not page.hints.isVisible() and page.hints.toggle.text() == "Hints"
    page.search("fixture scope")
    await until(lambda: page.controller.final)
    assert engine.requests[-1].hints.is_empty()

    page.hints.toggle.click()  # expands the row
    assert page.hints.isVisible()
    page.hints.files.setFocus()
    QTest.keyClicks(page.hints.files, "src/conftest.py, tests/test_fixtures.py")
    QTest.keyClick(page.hints.files, Qt.Key.Key_Return)  # Enter applies at once
    await until(lambda: len(engine.requests) == 2 and page.controller.final)
    hints = engine.requests[-1].hints
    assert engine.requests[-1].query == "fixture scope"
    assert hints.related_files == ["src/conftest.py", "tests/test_fixtures.py"]
    assert page.hints.toggle.text() == "Hints (1)"

    # The language combo and the framework field (debounced) re-run it again.
    page.hints.language.setCurrentText("python")
    QTest.keyClicks(page.hints.framework, "pytest")
    QTest.keyClicks(page.hints.issues, "#123, 456")
    await until(lambda: (h := engine.requests[-1].hints).framework == "pytest"
                and h.related_issues == ["#123", "456"] and page.controller.final)
    hints = engine.requests[-1].hints
    assert hints.language == "python" and hints.related_files == ["src/conftest.py", "tests/test_fixtures.py"]
    assert page.hints.toggle.text() == "Hints (4)"
    count = len(engine.requests)

    # Collapsing keeps the hints (the toggle says so); an unchanged value does not re-run.
    page.hints.toggle.click()
    assert not page.hints.isVisible() and page.hints.toggle.text() == "Hints (4)"
    page.hints.set_hints(page.hints.hints())
    await asyncio.sleep(0.4)
    assert len(engine.requests) == count

    page.hints.clear()
    await until(lambda: len(engine.requests) == count + 1 and page.controller.final)
    assert engine.requests[-1].hints.is_empty()
    assert page.hints.toggle.text() == "Hints"


@pytest.mark.asyncio
async def test_hints_set_before_a_query_apply_to_it_without_searching_early(qtbot: Any) -> None:
    engine = FakeEngine(sources=["files"])
    page = make_page(qtbot, engine)
    page.hints.set_hints(Hints(language="rust", framework="tokio"))
    await asyncio.sleep(0.35)
    assert engine.requests == []  # nothing typed yet: nothing to re-run
    page.search("spawn a task")
    await until(lambda: page.controller.final)
    assert (engine.requests[-1].hints.language, engine.requests[-1].hints.framework) == ("rust", "tokio")


@pytest.mark.asyncio
async def test_hints_clear_with_a_word_when_the_next_question_is_unrelated(qtbot: Any) -> None:
    engine = FakeEngine()
    page = make_page(qtbot, engine)
    messages: list[str] = []
    page.message.connect(messages.append)
    page.query.setText("fixture scope")
    page.hints.toggle.setChecked(True)
    page.hints.set_hints(Hints(language="python", framework="pytest"))
    page.search("fixture scope")
    await until(lambda: bool(engine.requests) and engine.requests[-1].hints.language == "python")
    # A related question keeps them.
    page.search("fixture scope session")
    await until(lambda: engine.requests[-1].query == "fixture scope session")
    assert engine.requests[-1].hints.framework == "pytest"
    # An unrelated one drops them, and says so.
    page.search("database migrations")
    await until(lambda: engine.requests[-1].query == "database migrations")
    assert engine.requests[-1].hints.is_empty()
    assert page.hints.toggle.text() == "Hints"
    assert any("Hints cleared" in m for m in messages)


def test_the_hint_language_is_not_a_second_language_field(qtbot: Any) -> None:
    """The filters row has a Language filter; the hint beside it reads as a preference."""
    from PySide6.QtWidgets import QLabel

    from tributary.app.search.hints import HintsBar

    bar = HintsBar()
    qtbot.addWidget(bar)
    captions = [label.text() for label in bar.findChildren(QLabel)]
    assert "Language" not in captions and "Prefer" in captions
    assert "Prefer" in bar.language.toolTip()


def test_picking_related_files_starts_in_the_indexed_repositories(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
) -> None:
    """Not in the home folder: beside the selected result's file, else in the one
    repository or the folder holding several; after a pick, where the last file was."""
    from PySide6.QtWidgets import QFileDialog

    from tributary.app.search import hints as hints_module

    roots = {"app": tmp_path / "src" / "app"}
    monkeypatch.setattr(hints_module, "index_roots", lambda: roots)
    assert hints_module.repositories_folder() == str(tmp_path / "src" / "app")
    roots["lib"] = tmp_path / "src" / "lib"
    assert hints_module.repositories_folder() == str(tmp_path / "src")
    roots.clear()
    assert hints_module.repositories_folder() == ""
    roots["app"] = tmp_path
    (tmp_path / "pkg").mkdir()
    bar = hints_module.HintsBar()
    qtbot.addWidget(bar)
    opened: list[str] = []
    monkeypatch.setattr(QFileDialog, "open", lambda self: opened.append(self.directory().absolutePath()))
    bar.pick_files()
    (tmp_path / "docs").mkdir()
    bar.selection_folder = lambda: str(tmp_path / "docs")
    bar.pick_files()
    bar.add_files([str(tmp_path / "pkg" / "mod.py")])
    bar.pick_files()
    assert opened == [str(tmp_path), str(tmp_path / "docs"), str(tmp_path / "pkg")]
    assert bar.files.text() == str(tmp_path / "pkg" / "mod.py")


def test_repositories_sharing_only_the_root_leave_the_picker_where_it_opens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pathlib import Path

    from tributary.app.search import hints as hints_module

    monkeypatch.setattr(hints_module, "index_roots", lambda: {"a": Path("/srv/a"), "b": Path("/home/b")})
    assert hints_module.repositories_folder() == ""
