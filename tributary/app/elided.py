"""Labels that fit the width they get: one line, elided, the whole text as tooltip."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """One line of plain text, elided to the width it has (re-elided as that changes);
    the whole text is its tooltip. It never asks for more width than it gets."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.full_text = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def set_full_text(self, text: str) -> None:
        self.full_text = text
        self._elide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self.full_text, Qt.TextElideMode.ElideRight, max(1, self.width()))
        self.setText(shown)
        self.setToolTip(self.full_text if shown != self.full_text else "")


class FittingLabel(ElidedLabel):
    """An :class:`ElidedLabel` that asks for its whole text's width when there is room
    (a summary beside other widgets) but never needs more than ``min_width``."""

    def __init__(self, parent: QWidget | None = None, min_width: int = 60) -> None:
        super().__init__(parent)
        self._min_width = min_width
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        width = self.fontMetrics().horizontalAdvance(self.full_text) + 4
        return QSize(width, hint.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self._min_width, super().minimumSizeHint().height())

    def set_full_text(self, text: str) -> None:
        super().set_full_text(text)
        self.updateGeometry()
