"""Labels that fit the width they get: one line, elided, the whole text as tooltip.

Paths elide their folders first (``tributary/…/routing.py:12-40``): the file name is
what tells results apart, so it is the last thing to go.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


def elide_path(text: str, metrics: QFontMetrics, width: int) -> str:
    """``text`` fitted to ``width`` pixels. When it starts with a path (``dir/file:12``,
    a URL), whole folders are dropped first, from the last one back, keeping the
    first (``tributary/…/routing.py:12``); of an absolute path, from the first one on,
    keeping the nearest (``…/click/termui.py``). The file name and what follows it go
    only when even ``…/`` and they do not fit (then from the right). Other text is
    elided on the right."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    path, space, rest = text.partition(" ")
    cut = path.rstrip("/").rfind("/") + 1
    if cut <= 0:
        return metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)
    folders, tail = path[:cut].split("/")[:-1], path[cut:] + space + rest
    for keep in range(len(folders) - 1, -1, -1):
        if path.startswith(("/", "~")):  # the nearest folders tell more than /home/ann
            shown = "/".join(["…", *folders[len(folders) - keep:]]) + "/" + tail
        else:
            shown = "/".join([*folders[:keep], "…"]) + "/" + tail
        if metrics.horizontalAdvance(shown) <= width:
            return shown
    return metrics.elidedText("…/" + tail, Qt.TextElideMode.ElideRight, width)


def is_path(text: str) -> bool:
    """Whether ``text`` is a path and nothing else (``src/pkg/mod.py``, ``/srv/a/b``): a
    result a file-finding server named by its path alone."""
    return "/" in text and not any(c.isspace() for c in text)


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


class PathLabel(ElidedLabel):
    """An :class:`ElidedLabel` for text that starts with a path: its folders go first
    (see :func:`elide_path`)."""

    def _elide(self) -> None:
        margins = self.contentsMargins()
        width = max(1, self.width() - margins.left() - margins.right())
        shown = elide_path(self.full_text, self.fontMetrics(), width)
        self.setText(shown)
        self.setToolTip(self.full_text if shown != self.full_text else "")


class TitleLabel(PathLabel):
    """A :class:`PathLabel` for a result's title: a title that is a path (``is_path``)
    elides its folders first (``/home/ann/src/click/…`` told nothing), any other title
    on the right."""

    def _elide(self) -> None:
        if is_path(self.full_text):
            super()._elide()
        else:
            ElidedLabel._elide(self)


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
