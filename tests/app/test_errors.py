"""Uncaught exceptions reach the log and a non-modal dialog (never a nested loop)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from tributary.app import errors


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


def test_a_tributary_error_shows_its_message_not_a_crash(qtbot: Any, caplog: pytest.LogCaptureFixture) -> None:
    from tributary.engine.config.errors import ConfigError, ConfigIssue

    error = ConfigError([ConfigIssue(file="config.yaml", line=3, key_path="servers.git", message="no command")])
    with caplog.at_level(logging.ERROR, logger="tributary.app"):
        errors._excepthook(type(error), error, None)
    assert "uncaught exception" not in caplog.text and "no command" in caplog.text
    boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
    box = boxes[-1]
    assert box.windowTitle() == "Tributary could not do that"
    assert "ConfigError" not in box.text() and "no command" in box.text()
    box.close()
