"""Garbage is collected on the GUI thread, never on the engine's."""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QObject

from tributary.app.gc_guard import GuiThreadCollector


class _Cycle:
    def __init__(self, freed_on: list[str]) -> None:
        self.me = self
        self.freed_on = freed_on
        self.qt = QObject()

    def __del__(self) -> None:
        self.freed_on.append(threading.current_thread().name)


def test_cycles_are_freed_by_the_gui_threads_timer_not_by_another_thread() -> None:
    collector = GuiThreadCollector(interval_ms=60_000)
    freed_on: list[str] = []
    try:
        assert not gc.isenabled()
        _Cycle(freed_on)

        def churn() -> None:  # allocations that would trigger an automatic collection
            junk = [[i] for i in range(50_000)]
            del junk

        worker = threading.Thread(target=churn, name="engine-like")
        worker.start()
        worker.join()
        assert freed_on == []
        collector.thresholds = (0, 0, 0)
        assert collector.check() > 0
        assert freed_on == [threading.current_thread().name]
    finally:
        collector.stop()
    assert gc.isenabled()
