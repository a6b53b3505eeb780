"""Every drop-down list the app shows is wide enough for its widest item and long
enough to show a short list without a scroll bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtTest import QTest
from PySide6.QtWidgets import QComboBox, QVBoxLayout, QWidget

from tests.app.fakes import FakeEngine
from tests.app.test_config_editor import sample_config
from tributary.app.combo_box import POPUP_ROWS, ComboBox
from tributary.app.config_editor.editor import ConfigEditor
from tributary.app.recent_queries import RecentQueries
from tributary.app.search.page import SearchPage


def _check_popups(top: QWidget) -> int:
    combos = top.findChildren(QComboBox)
    for combo in combos:
        combo.window().show()
        combo.showPopup()
        QTest.qWait(50)  # the list's layout and scrollers settle after it shows
        view = combo.view()
        try:
            metrics = view.fontMetrics()
            texts = [combo.itemText(i) for i in range(combo.count())]
            widest = max(metrics.horizontalAdvance(text) for text in texts)
            assert view.viewport().width() >= widest + 8, (texts, view.viewport().width(), widest)
            rows = min(combo.count(), POPUP_ROWS)
            assert view.viewport().height() >= rows * view.sizeHintForRow(0), (texts, combo.maxVisibleItems())
            assert combo.count() > POPUP_ROWS or view.verticalScrollBar().maximum() == 0, (texts, view.viewport().height(), view.sizeHintForRow(0))
        finally:
            combo.hidePopup()
    return len(combos)


def test_every_combo_of_the_config_editor_opens_a_list_that_fits(qtbot: Any, tmp_path: Path) -> None:
    config = sample_config(tmp_path)
    engine = FakeEngine(config=config)
    editor = ConfigEditor(lambda: engine)
    qtbot.addWidget(editor)
    editor.load(config)
    editor.resize(828, 600)
    editor.show()
    assert _check_popups(editor) >= 7


def test_every_combo_of_the_search_page_opens_a_list_that_fits(qtbot: Any) -> None:
    page = SearchPage(lambda: FakeEngine(), RecentQueries(None))
    qtbot.addWidget(page)
    page.resize(828, 600)
    page.show()
    page.hints.setVisible(True)  # the Prefer language list: 17 languages
    assert _check_popups(page) >= 4


def test_a_narrow_combo_opens_a_list_as_wide_as_its_longest_item(qtbot: Any) -> None:
    holder = QWidget()
    qtbot.addWidget(holder)
    combo = ComboBox(holder)
    combo.addItems(["a", "an item far longer than the combo is wide", *(f"item {n}" for n in range(30))])
    combo.setFixedWidth(60)
    holder.show()
    combo.showPopup()
    view = combo.view()
    widest = view.fontMetrics().horizontalAdvance("an item far longer than the combo is wide")
    assert view.minimumWidth() >= widest and view.viewport().width() >= widest
    assert view.viewport().height() >= POPUP_ROWS * view.sizeHintForRow(0)
    combo.hidePopup()


def test_a_short_list_opens_with_every_row_and_no_scroll_arrows(qtbot: Any) -> None:
    """Qt sized such a list a few pixels short in a plain layout: its scroll arrows came up
    and hid a row (the server editor's query modes showed two of three)."""
    holder = QWidget()
    qtbot.addWidget(holder)
    layout = QVBoxLayout(holder)
    combo = ComboBox()
    combo.addItems(["the whole question", "its content words", "a file-name glob of them"])
    layout.addWidget(combo)
    holder.resize(500, 300)
    holder.show()
    QTest.qWait(100)
    combo.showPopup()
    QTest.qWait(300)  # the list's layout and scroll arrows settle after it shows
    view = combo.view()
    assert view.verticalScrollBar().maximum() == 0
    assert view.viewport().height() >= 3 * view.sizeHintForRow(0)
    combo.hidePopup()
