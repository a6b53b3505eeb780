"""The app's row tables from the keyboard: Tab enters and leaves them, and the row the
focus lands on is selected."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractItemView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tributary.app import indexes, insights, reputation
from tributary.app.tables import keyboard_rows

_KEPT: list[QWidget] = []  # the windows of the running test (qtbot closes, but does not hold, them)


def _window(qtbot: Any, rows: int) -> tuple[QPushButton, QTableWidget, QPushButton]:
    window = QWidget()
    _KEPT[:] = [window]
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    before, after = QPushButton("Re-index"), QPushButton("Done")
    table = keyboard_rows(QTableWidget(rows, 7))
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    for row in range(rows):
        for column in range(7):
            table.setItem(row, column, QTableWidgetItem(f"{row}.{column}"))
    for widget in (before, table, after):
        layout.addWidget(widget)
    window.show()
    window.activateWindow()
    before.setFocus()
    qtbot.waitUntil(before.hasFocus)
    return before, table, after


def test_tab_selects_the_row_it_lands_on_and_leaves_the_table(qtbot: Any) -> None:
    before, table, after = _window(qtbot, rows=1)
    QTest.keyClick(before, Qt.Key.Key_Tab)
    assert table.hasFocus()
    assert [index.row() for index in table.selectionModel().selectedRows()] == [0]  # one repository: chosen
    QTest.keyClick(table, Qt.Key.Key_Tab)
    assert after.hasFocus()  # not the next of seven cells


def test_down_moves_from_the_selected_first_row(qtbot: Any) -> None:
    before, table, _after = _window(qtbot, rows=3)
    QTest.keyClick(before, Qt.Key.Key_Tab)
    QTest.keyClick(table, Qt.Key.Key_Down)
    assert [index.row() for index in table.selectionModel().selectedRows()] == [1]
    QTest.keyClick(table, Qt.Key.Key_Backtab)
    QTest.keyClick(before, Qt.Key.Key_Tab)
    assert [index.row() for index in table.selectionModel().selectedRows()] == [1]  # kept, not reset


def test_the_apps_tables_are_keyboard_tables() -> None:
    for module in (indexes, insights, reputation):
        assert module.keyboard_rows is keyboard_rows
