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


def regrid(grid: QGridLayout, widgets: Sequence[QWidget], columns: int) -> None:
    """``widgets`` in ``grid`` row by row, ``columns`` to a row."""
    for index, widget in enumerate(widgets):
        grid.removeWidget(widget)
        grid.addWidget(widget, index // columns, index % columns)
