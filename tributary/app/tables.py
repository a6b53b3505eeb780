"""The app's row tables, usable from the keyboard.

A ``QTableWidget`` takes Tab to walk its cells, so Tab into the Indexes table needed
seven presses per repository to leave it again, and the buttons above it were reached
only by walking back. And Tab into a table made its first row current without selecting
it: Down then selected the second row, and with one repository nothing could be chosen
(Re-index, Remove and Watch stayed disabled). Here Tab leaves the table, the arrows
move in it, and the row the focus lands on is selected.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QTableWidget


class _SelectOnFocus(QObject):
    """Selects the current row (the first, when none is) of a table that gains the
    focus with nothing selected."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FocusIn and isinstance(watched, QTableWidget):
            table = watched
            if table.rowCount() and not table.selectionModel().hasSelection():
                row = table.currentRow() if table.currentRow() >= 0 else 0
                table.selectRow(row)
        return False


def keyboard_rows(table: QTableWidget) -> QTableWidget:
    """``table`` with Tab leaving it and the focused row selected; returns it."""
    table.setTabKeyNavigation(False)
    table.installEventFilter(_SelectOnFocus(table))  # (parented: lives as long as the table)
    return table
