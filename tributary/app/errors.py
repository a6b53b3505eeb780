"""Uncaught exceptions (Qt slots and asyncio tasks) go to the log and a non-modal dialog."""

from __future__ import annotations

import asyncio
import logging
import sys
import traceback
from types import TracebackType
from typing import Any

from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from tributary.engine.errors import TributaryError

log = logging.getLogger("tributary.app")

_dialogs: list[QMessageBox] = []  # keep open dialogs alive


def show_error(title: str, text: str, details: str = "", parent: QWidget | None = None) -> QMessageBox | None:
    """A non-modal error dialog (``open()``, never ``exec()``: no nested event loop)."""
    if QApplication.instance() is None:
        return None
    box = QMessageBox(QMessageBox.Icon.Critical, title, text, QMessageBox.StandardButton.Close, parent)
    if details:
        box.setDetailedText(details)
    _dialogs.append(box)
    box.finished.connect(lambda _=0, b=box: _dialogs.remove(b) if b in _dialogs else None)
    box.open()
    return box


def _excepthook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
    if issubclass(kind, KeyboardInterrupt):
        QApplication.quit()
        return
    details = "".join(traceback.format_exception(kind, error, tb))
    if isinstance(error, TributaryError):  # a refusal with its reason, not a bug
        log.error("%s", error)
        show_error("Tributary could not do that", str(error), details)
        return
    log.error("uncaught exception\n%s", details)
    show_error("Tributary hit an unexpected error", f"{kind.__name__}: {error}", details)


def _loop_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    error = context.get("exception")
    if isinstance(error, asyncio.CancelledError):
        return
    message = context.get("message", "asyncio error")
    if error is None:
        log.error("%s", message)
        return
    _excepthook(type(error), error, error.__traceback__)


def install(loop: asyncio.AbstractEventLoop | None = None) -> None:
    sys.excepthook = _excepthook
    if loop is not None:
        loop.set_exception_handler(_loop_handler)
