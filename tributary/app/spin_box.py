"""The app's spin boxes: a mouse wheel scrolls the form they are in, not their value.

Qt gives a spin box (and a combo box) every wheel event over it, and the focus with
it, so scrolling a long form changed whichever field passed under the pointer: a
server's timeout fell from 3 s to 0.1 s on the way down. These take the wheel only
once they have the keyboard focus (a click or Tab), and pass it to the form before.
Every spin box the app creates is a :class:`SpinBox` or :class:`DoubleSpinBox`.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QDoubleSpinBox, QSpinBox, QWidget


class _WheelWhenFocused(QObject):
    """Leaves a wheel event over an unfocused field to its parent: ignored and not
    delivered, Qt hands it on up to the scroll area, which scrolls."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel and isinstance(watched, QWidget) and not watched.hasFocus():
            event.ignore()
            return True
        return False


_FILTER: _WheelWhenFocused | None = None


def wheel_only_when_focused(widget: QWidget) -> None:
    """``widget`` takes the wheel once it has the focus, and never takes the focus from it."""
    global _FILTER
    if _FILTER is None:
        _FILTER = _WheelWhenFocused()
    widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    widget.installEventFilter(_FILTER)


class SpinBox(QSpinBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        wheel_only_when_focused(self)


class DoubleSpinBox(QDoubleSpinBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        wheel_only_when_focused(self)
