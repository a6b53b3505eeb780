"""Uncaught exceptions reach the log and a non-modal dialog (never a nested loop)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from app import errors


def test_uncaught_exception_opens_a_non_modal_dialog(qtbot: Any, caplog: pytest.LogCaptureFixture) -> None:
    try:
        raise ValueError("something broke")
    except ValueError as exc:
        with caplog.at_level(logging.ERROR, logger="tributary.app"):
            errors._excepthook(type(exc), exc, exc.__traceback__)
    assert "uncaught exception" in caplog.text and "something broke" in caplog.text
    boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
    assert boxes, "no error dialog shown"
    box = boxes[-1]
    assert "ValueError: something broke" in box.text()
    assert "Traceback" in box.detailedText()
    box.close()
