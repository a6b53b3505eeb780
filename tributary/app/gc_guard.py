"""Cyclic garbage is collected on the GUI thread only.

CPython runs a cycle collection in whichever thread happens to allocate when the
thresholds are crossed. In the app that is often the engine thread, and a cycle
that holds a Qt wrapper (a lambda connected to a widget, a QPixmap in a cache
entry) then runs its C++ destructor there — off the GUI thread, racing the GUI's
own use of fonts, pixmaps and text layouts: a segfault in Qt, sooner or later.
So automatic collection is switched off and a GUI-thread timer does the same work
(each generation collected when its own threshold is crossed, as CPython would).
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 500


class GuiThreadCollector(QObject):
    """Collect garbage from a timer on the thread that owns this object (the GUI's)."""

    def __init__(self, interval_ms: int = INTERVAL_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def check(self) -> int:
        """Collect the oldest generation whose threshold is crossed; return how many
        objects were unreachable."""
        counts = gc.get_count()
        for generation in (2, 1, 0):
            if counts[generation] > self.thresholds[generation]:
                return gc.collect(generation)
        return 0

    def stop(self) -> None:
        self.timer.stop()
        gc.enable()


_collector: GuiThreadCollector | None = None


def install() -> GuiThreadCollector:
    """Start collecting on this (the GUI) thread only; idempotent."""
    global _collector
    if _collector is None:
        _collector = GuiThreadCollector()
    return _collector
