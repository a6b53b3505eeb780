"""A mouse wheel over a form scrolls the form: it changes a spin box's or a combo box's
value only once that field has the focus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QWidget

from tests.app.fakes import FakeEngine
from tests.app.test_config_editor import sample_config
from tributary.app.config_editor.editor import ConfigEditor
from tributary.app.recent_queries import RecentQueries
from tributary.app.search.page import SearchPage


def _wheel(widget: QWidget, steps: int = -3) -> bool:
    """``steps`` notches of the wheel over ``widget`` (negative: down, towards the end);
    whether the widget kept the event (else a real one goes on to its parent, the form;
    Qt does not pass on one sent by a test)."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, 120 * steps), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)
    return event.isAccepted()


def _value(widget: QWidget) -> object:
    return widget.currentText() if isinstance(widget, QComboBox) else widget.text()  # type: ignore[attr-defined]


def test_the_wheel_over_the_server_form_scrolls_it_and_changes_nothing(qtbot: Any, tmp_path: Path) -> None:
    config = sample_config(tmp_path)
    editor = ConfigEditor(lambda: FakeEngine(config=config))
    qtbot.addWidget(editor)
    editor.load(config)
    editor.resize(600, 360)  # short: the form scrolls
    editor.show()
    servers = editor.servers
    servers.list.setCurrentRow(0)
    servers.list.setFocus()
    assert servers.form_scroll.verticalScrollBar().maximum() > 0
    fields = [w for w in servers.form_widget.findChildren(QWidget) if isinstance(w, (QAbstractSpinBox, QComboBox))]
    assert len(fields) >= 3
    before = {id(w): _value(w) for w in fields}
    kept = [field for field in fields if _wheel(field)]
    assert kept == []  # each passed the wheel on to the form
    assert {id(w): _value(w) for w in fields} == before
    assert not any(w.hasFocus() for w in fields)
    assert not editor.dirty


def test_a_focused_box_still_takes_the_wheel(qtbot: Any) -> None:
    page = SearchPage(lambda: FakeEngine(), RecentQueries(None))
    qtbot.addWidget(page)
    page.show()
    page.activateWindow()
    _wheel(page.limit, steps=1)
    assert page.limit.value() == 30
    page.limit.setFocus()
    qtbot.waitUntil(page.limit.hasFocus)
    assert _wheel(page.limit, steps=1)
    assert page.limit.value() == 31
