"""Fixtures for the GUI tests: offscreen Qt, a qasync loop, fail on Qt warnings.

Async tests run on a qasync loop (pytest-asyncio's loop-factory hook) and poll with
``await asyncio.sleep`` — never ``qtbot.waitUntil``, which starves the loop.
"""

from __future__ import annotations

import gc
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from tributary.app import background, theme
from tributary.app.loop import AppEventLoop

HERE = Path(__file__).parent
# Qt messages the offscreen platform itself emits (it cannot raise windows or
# propagate size hints); anything else fails the test.
IGNORED = ("This plugin does not support propagateSizeHints", "This plugin does not support raise()",
           "This plugin does not support grabbing the keyboard")  # an open drop-down list


def pytest_asyncio_loop_factories(config: Any, item: Any) -> dict[str, Callable[[], Any]]:
    return {"qasync": lambda: AppEventLoop(QApplication.instance() or QApplication([]))}


@pytest.fixture(scope="session", autouse=True)
def themed_app() -> QApplication:
    """One QApplication with the product's style (styling it again per test re-polishes
    every widget still alive, which gets slow)."""
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    theme.apply(app, dark=False)
    # As the app itself runs (tributary.app.main): a window closed by one test must not
    # quit the event loop a later test runs on.
    app.setQuitOnLastWindowClosed(False)
    return app


@pytest.fixture(autouse=True)
def garbage_freed_on_the_gui_thread() -> Iterator[None]:
    """As the app runs (``tributary.app.gc_guard``): no automatic collection during a
    test, where a worker thread's allocations could free a Qt object of an earlier
    test's garbage on that thread ("Timers cannot be stopped from another thread",
    seen under load); the test's garbage is collected here, on the GUI thread."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        if enabled:
            gc.enable()


@pytest.fixture(autouse=True)
def qt_warnings_fail(themed_app: QApplication) -> Iterator[list[str]]:
    """Record every Qt warning during a test and fail the test if there was one."""
    seen: list[str] = []

    def handler(kind: QtMsgType, context: Any, message: str) -> None:
        if kind != QtMsgType.QtDebugMsg and kind != QtMsgType.QtInfoMsg and not message.startswith(IGNORED):
            seen.append(f"{kind.name}: {message}")

    previous = qInstallMessageHandler(handler)
    try:
        yield seen
    finally:
        qInstallMessageHandler(previous)
    assert not seen, "unexpected Qt warnings:\n" + "\n".join(seen)


@pytest.fixture(autouse=True)
def fresh_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[background.TaskRunner]:
    """Each test gets its own task runner and a private TRIBUTARY_HOME."""
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    runner = background.TaskRunner()
    background.set_runner(runner)
    yield runner
    runner.cancel_all()
    background.set_runner(None)
