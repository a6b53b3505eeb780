"""Feedback from the search page (detail buttons, context menu, shortcuts) reaches the
engine for every contributing source, marks the row, and the insights page's
reputation table follows; resetting works per source and for all (confirmed)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from tests.app.fakes import FakeEngine
from tributary.app.insights import InsightsPage, read_insights
from tributary.app.recent_queries import RecentQueries
from tributary.app.reputation import REPUTATION, USEFUL, VALUE_ROLE
from tributary.app.search.page import SearchPage
from tributary.app.search.results_model import RATING_ROLE, TITLE
from tributary.app.shell import Shell


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def searched_page(qtbot: Any, engine: FakeEngine, query: str = "fixture scope") -> SearchPage:
    page = SearchPage(lambda: engine, RecentQueries(None))
    qtbot.addWidget(page)
    page.resize(1100, 700)
    page.show()
    page.search(query)
    await until(lambda: page.controller.final and page.detail.hit is not None)
    return page


@pytest.mark.asyncio
async def test_useful_button_credits_every_source_of_the_fused_hit(qtbot: Any) -> None:
    engine = FakeEngine(sources=["files", "tasks", "git"])
    page = await searched_page(qtbot, engine)
    messages: list[str] = []
    page.message.connect(messages.append)
    recorded: list[dict[str, float]] = []
    page.feedback_recorded.connect(recorded.append)
    top = page.model.index(0, 0)
    kept = page.model.hit_at(top)
    assert kept is not None and page.model.rowCount(top) == 2  # tasks' and git's copies folded in
    assert page.detail.useful_button.isEnabled() and "Ctrl+Up" in page.detail.useful_button.toolTip()

    page.detail.useful_button.click()
    await until(lambda: bool(recorded))
    credited = {(source, useful, query) for _, source, useful, query in engine.feedback_events}
    assert credited == {(s, True, "fixture scope") for s in ("files", "tasks", "git")}
    hit_ids = {source: hit_id for hit_id, source, _, _ in engine.feedback_events}
    assert hit_ids["files"] == kept.id and hit_ids["tasks"] != kept.id  # each source's own copy
    assert recorded[-1] == pytest.approx({"files": 0.6, "tasks": 0.6, "git": 0.6})
    assert messages[-1].startswith("Marked useful: files reputation 0.60")
    # The row is marked (icon + role), and so are the detail pane's buttons.
    assert top.data(RATING_ROLE) is True  # the row's roles are on its first cell
    assert top.siblingAtColumn(TITLE).data(Qt.ItemDataRole.DecorationRole) is not None
    assert "You marked this useful" in page.model.tooltip(top)
    assert page.detail.useful_button.isChecked() and not page.detail.not_useful_button.isChecked()


@pytest.mark.asyncio
async def test_a_folded_copy_credits_only_its_own_source(qtbot: Any) -> None:
    engine = FakeEngine(sources=["files", "tasks", "git"])
    page = await searched_page(qtbot, engine)
    child = page.model.index(0, 0, page.model.index(0, 0))
    member_hit = page.model.hit_at(child)
    assert member_hit is not None
    page.tree.setCurrentIndex(child)
    page.detail.not_useful_button.click()
    await until(lambda: bool(engine.feedback_events))
    await asyncio.sleep(0.05)
    assert engine.feedback_events == [(member_hit.id, member_hit.source, False, "fixture scope")]
    assert page.model.rating(member_hit.id) is False
    assert page.detail.not_useful_button.isChecked()


@pytest.mark.asyncio
async def test_context_menu_and_shortcut_actions(qtbot: Any) -> None:
    engine = FakeEngine(sources=["files"])  # one source: no groups
    page = await searched_page(qtbot, engine)
    second = page.model.index(1, 0)
    menu = page.context_menu_at(page.tree.visualRect(second).center())
    assert menu is not None and page.tree.currentIndex().row() == 1
    actions = {a.text(): a for a in menu.actions() if a.text()}
    assert {"Useful", "Not useful", "Copy location"} <= set(actions)
    assert actions["Useful"].shortcut().toString() == "Ctrl+Up"
    assert actions["Not useful"].shortcut().toString() == "Ctrl+Down"
    actions["Not useful"].trigger()
    menu.deleteLater()
    hit = page.model.hit_at(second)
    assert hit is not None
    await until(lambda: page.model.rating(hit.id) is False)
    assert engine.feedback_events == [(hit.id, "files", False, "fixture scope")]
    # The shortcut's action rates the current row; changing one's mind is recorded too.
    page.useful_action.trigger()
    await until(lambda: page.model.rating(hit.id) is True)
    assert [e[2] for e in engine.feedback_events] == [False, True]


@pytest.mark.asyncio
async def test_feedback_failure_is_reported_not_marked(qtbot: Any) -> None:
    engine = FakeEngine(sources=["files"], persistent=False)
    page = await searched_page(qtbot, engine)
    messages: list[str] = []
    page.message.connect(messages.append)
    page.feedback(True)
    await until(lambda: any("Feedback not recorded" in m for m in messages))
    hit = page.model.hit_at(page.model.index(0, 0))
    assert hit is not None and page.model.rating(hit.id) is None
    assert not page.detail.useful_button.isChecked()


def _reputation(panel: Any, source: str) -> tuple[float, str]:
    row = next(i for i, r in enumerate(panel.rows) if r.source == source)
    return panel.table.item(row, REPUTATION).data(VALUE_ROLE), panel.table.item(row, USEFUL).text()


@pytest.mark.asyncio
async def test_reputation_table_follows_feedback_in_the_shell(qtbot: Any) -> None:
    engine = FakeEngine(sources=["files", "tasks"])

    async def factory(_: Path | None) -> Any:
        return engine

    shell = Shell(engine_factory=factory, single_instance=False, recent_queries=RecentQueries(None))
    try:
        shell.start(show=False)
        await until(lambda: shell.engine is engine)
        panel = shell.insights.reputation
        await until(lambda: len(panel.rows) == 2)
        assert _reputation(panel, "files") == (0.5, "0")
        assert not panel.reset_all_button.isEnabled()  # nothing to forget yet
        page = shell.window.search
        page.search("fixture scope")
        await until(lambda: page.controller.final and page.detail.hit is not None)
        page.feedback(True)
        await until(lambda: _reputation(panel, "files")[1] == "1")
        assert _reputation(panel, "files")[0] == pytest.approx(0.6)
        assert _reputation(panel, "tasks")[0] == pytest.approx(0.6)  # agreed on the top hit
        assert panel.reset_all_button.isEnabled()
    finally:
        await shell.shutdown()


@pytest.mark.asyncio
async def test_reset_one_source_and_all_after_confirming(qtbot: Any, tmp_path: Path) -> None:
    engine = FakeEngine(sources=["files", "tasks"])
    for source in ("files", "files", "tasks"):
        engine.feedback_events.append(("h", source, source == "files", "q"))
    page = InsightsPage(lambda: read_insights(tmp_path / "none.sqlite"), engine=lambda: engine)
    qtbot.addWidget(page)
    panel = page.reputation
    await panel.refresh()
    assert _reputation(panel, "files") == (pytest.approx(4 / 6), "2")
    assert panel.table.item(0, 4).text() == "never"  # fake: no time for seeded events

    button = panel.reset_button("files")
    assert button is not None and button.isEnabled()
    button.click()
    await until(lambda: _reputation(panel, "files") == (0.5, "0"))
    assert [e[1] for e in engine.feedback_events] == ["tasks"]

    # Reset all asks first: Cancel keeps everything, Reset forgets it.
    panel.reset_all_button.click()
    box = panel.confirm_box
    assert box is not None and box.isVisible()
    box.button(QMessageBox.StandardButton.Cancel).click()
    await asyncio.sleep(0.05)
    assert len(engine.feedback_events) == 1
    panel.reset_all_button.click()
    box = panel.confirm_box
    assert box is not None
    box.button(QMessageBox.StandardButton.Reset).click()
    await until(lambda: not engine.feedback_events and not panel.reset_all_button.isEnabled())
    assert all(row.reputation == 0.5 for row in panel.rows)


@pytest.mark.asyncio
async def test_keyboard_shortcuts_rate_the_current_row(qtbot: Any) -> None:
    engine = FakeEngine(sources=["files"])
    page = await searched_page(qtbot, engine)
    page.activateWindow()
    page.tree.setFocus()
    page.tree.setCurrentIndex(page.model.index(1, 0))
    hit = page.model.hit_at(page.model.index(1, 0))
    assert hit is not None
    QTest.keyClick(page.tree, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
    await until(lambda: page.model.rating(hit.id) is False)
    assert page.tree.currentIndex().row() == 1  # the shortcut rated, it did not move
    QTest.keyClick(page.tree, Qt.Key.Key_Up, Qt.KeyboardModifier.ControlModifier)
    await until(lambda: page.model.rating(hit.id) is True)
    assert [(e[0], e[2]) for e in engine.feedback_events] == [(hit.id, False), (hit.id, True)]
    assert page.detail.useful_button.isChecked()
