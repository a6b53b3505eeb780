"""Small layout helpers the pages share: a pane that scrolls down when short, and a grid
whose widgets are laid out again in another number of columns."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QScrollArea, QWidget


def scrolled_down(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless scroll area that follows its width and scrolls only
    down: a short window scrolls the pane instead of cutting it or growing."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


class Reflow:
    """``widgets`` in ``grid`` row by row, laid out again when the number of columns
    changes (a page narrower than one row of them)."""

    def __init__(self, grid: QGridLayout, widgets: Sequence[QWidget], columns: int) -> None:
        self.grid = grid
        self.widgets = list(widgets)
        self.columns = 0
        self.arrange(columns)

    def arrange(self, columns: int) -> None:
        if columns == self.columns:
            return
        self.columns = columns
        for index, widget in enumerate(self.widgets):
            self.grid.removeWidget(widget)
            self.grid.addWidget(widget, index // columns, index % columns)
