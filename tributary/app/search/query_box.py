"""The query line: keyboard-first, with recent queries on Up/Down and a completer."""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QCompleter, QLineEdit, QWidget

from tributary.app.recent_queries import RecentQueries


class QueryBox(QLineEdit):
    submitted = Signal(str)  # Enter
    escape = Signal()
    down_from_end = Signal()  # Down with no recent query to walk: move focus to the results

    def __init__(self, recent: RecentQueries, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("QueryBox")
        self.setClearButtonEnabled(True)
        self.recent = recent
        self._cursor = -1  # position in the recent queries while walking it with Up/Down
        self._model = QStringListModel(recent.items)
        completer = QCompleter(self._model, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setCompletionMode(QCompleter.CompletionMode.InlineCompletion)
        self.setCompleter(completer)

    def remember(self, query: str) -> None:
        self.recent.add(query)
        self._model.setStringList(self.recent.items)
        self._cursor = -1

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.submitted.emit(self.text())
            return
        if key == Qt.Key.Key_Escape:
            self.escape.emit()
            return
        if key == Qt.Key.Key_Up and self.recent.items:
            self._cursor = min(self._cursor + 1, len(self.recent.items) - 1)
            self.setText(self.recent.items[self._cursor])
            return
        if key == Qt.Key.Key_Down:
            if self._cursor > 0:
                self._cursor -= 1
                self.setText(self.recent.items[self._cursor])
            else:
                self._cursor = -1
                self.down_from_end.emit()
            return
        super().keyPressEvent(event)
