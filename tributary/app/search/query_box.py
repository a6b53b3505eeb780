"""The query line: keyboard-first, with recent queries on Up/Down and a completer.

A recent query that starts with what is typed is offered inline, its rest selected;
Right or End takes it, and Enter searches what was typed (as a shell's suggestions do):
typing a short question that began a pasted issue must not ask the whole issue again."""

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
        self._offer: str | None = None  # the recent query the completer offers for the typed text
        completer.highlighted.connect(self._offered)
        self.textEdited.connect(self._typed)

    def _offered(self, completion: str) -> None:
        self._offer = completion

    def _typed(self, _text: str) -> None:
        self._offer = None  # (the completer's offer for this text follows the edit)

    def typed_text(self) -> str:
        """The text without a completion still on offer (its selected rest)."""
        offer = self._offer
        offered = offer is not None and self.hasSelectedText() and self.text().casefold() == offer.casefold()
        start = self.selectionStart()
        if offered and start + len(self.selectedText()) == len(self.text()):
            return self.text()[:start]
        return self.text()

    def remember(self, query: str) -> None:
        self.recent.add(query)
        self._model.setStringList(self.recent.items)
        self._cursor = -1

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            typed = self.typed_text()
            if typed != self.text():
                self.setText(typed)  # the offer declined: the box shows what is asked
            self.submitted.emit(typed)
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
