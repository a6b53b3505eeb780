"""The app's spin boxes: a mouse wheel scrolls the form they are in, not their value.

Qt gives a spin box (and a combo box) every wheel event over it, and the focus with
it, so scrolling a long form changed whichever field passed under the pointer: a
server's timeout fell from 10 s to 0.1 s on the way down. These take the wheel only
once they have the keyboard focus (a click or Tab), and pass it to the form before.
Every spin box the app creates is a :class:`SpinBox` or :class:`DoubleSpinBox`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QDoubleSpinBox, QSpinBox, QWidget


def wheel_only_when_focused(widget: QWidget) -> None:
    """No focus from the wheel (a click or Tab gives it)."""
    widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


def passes_wheel(widget: QWidget, event: QWheelEvent) -> bool:
    """Whether ``event`` is left to the widget's parent (it then scrolls the form)."""
    if widget.hasFocus():
        return False
    event.ignore()
    return True


class SpinBox(QSpinBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        wheel_only_when_focused(self)

    def wheelEvent(self, event: QWheelEvent) -> None:
        if not passes_wheel(self, event):
            super().wheelEvent(event)


class DoubleSpinBox(QDoubleSpinBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        wheel_only_when_focused(self)

    def wheelEvent(self, event: QWheelEvent) -> None:
        if not passes_wheel(self, event):
            super().wheelEvent(event)
