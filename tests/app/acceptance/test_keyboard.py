"""Keyboard-first, without the mouse: ask, move to the results, open in the editor at
the line, copy the snippet, come back, type on; a new question starts at its #1;
filters as controls and as query syntax; the quick popup."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.app.acceptance.conftest import SIZES, running_shell, until
from tributary.app import open_file


def fake_editor(tmp_path: Path) -> tuple[Path, Path]:
    """A script standing in for VS Code: it records the arguments it was started with."""
    log = tmp_path / "editor-args.txt"
    script = tmp_path / "code"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{log}"\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, log


def press(widget: Any, key: Qt.Key, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    QTest.keyClick(widget, key, modifiers)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_search_open_copy_and_back_from_the_keyboard(
        qtbot: Any, engine12: Any, indexed: Path, size: tuple[int, int], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _script, log = fake_editor(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    open_file.save_editor_command("code")
    try:
        async with running_shell(engine12, size, tmp_path) as shell:
            window = shell.window
            page = window.search
            # Clicking "Search" in the sidebar hands the keyboard to the query box.
            window.sidebar.setFocus()
            window.sidebar.clicked.emit(window.sidebar.model().index(0, 0))
            assert QApplication.focusWidget() is page.query
            QTest.keyClicks(page.query, "cache key lang:python source:files")
            press(page.query, Qt.Key.Key_Return)
            await until(lambda: page.controller.final and page.model.rowCount() > 0, what="code hits")
            response = page.model.response
            assert response is not None and response.request.query == "cache key"
            assert {h.source for h in response.hits} == {"files"}
            assert all((h.path or "").endswith(".py") for h in response.hits)
            # The filter controls show what the query says.
            assert page.filters.languages.text() == "python"
            assert page.filters.source_button.text() == "files"
            # Hit #1 is selected; Down moves to the results; Enter opens it at its line.
            assert page.tree.currentIndex().row() == 0
            press(page.query, Qt.Key.Key_Down)
            assert QApplication.focusWidget() is page.tree
            hit = page.current_hit()
            assert hit is not None
            press(page.tree, Qt.Key.Key_Return)
            await until(lambda: log.exists() and log.read_text(encoding="utf-8").count("\n") >= 2,
                        what="the editor started")
            args = log.read_text(encoding="utf-8").split()
            assert args[0] == "-g"
            path, line = args[1].rsplit(":", 1)
            assert Path(path).is_absolute() and Path(path).is_file()
            assert Path(path) == indexed / (hit.path or "")
            assert int(line) == (hit.start_line or 1)
            # Ctrl+C copies the snippet; Esc goes back to the query; typing goes there too.
            QGuiApplication.clipboard().setText("")
            press(page.tree, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
            assert QGuiApplication.clipboard().text() == hit.content
            press(page.tree, Qt.Key.Key_Escape)
            assert QApplication.focusWidget() is page.query
            press(page.query, Qt.Key.Key_Down)
            QTest.keyClicks(page.tree, "x")
            assert QApplication.focusWidget() is page.query
            assert page.query.text().endswith("x")
            # A new question: hit #1 of the new answer, not the old selection.
            press(page.query, Qt.Key.Key_Down)
            press(page.tree, Qt.Key.Key_Down)
            assert page.tree.currentIndex().row() == 1 or page.model.rowCount() == 1
            press(page.tree, Qt.Key.Key_Escape)
            page.query.selectAll()
            QTest.keyClicks(page.query, "retry backoff")
            press(page.query, Qt.Key.Key_Return)
            await until(lambda: page.controller.final and page.model.response is not None
                        and page.model.response.request.query == "retry backoff", what="new answer")
            assert page.tree.currentIndex().row() == 0
            assert page.detail.hit is not None and page.detail.hit.id == page.model.response.hits[0].id
            # A filter control rewrites the query's syntax and searches again.
            page.filters.paths.setFocus()
            QTest.keyClicks(page.filters.paths, "-tests/")
            assert "-path:tests/" in page.query.text()
            await until(lambda: page.controller.final and page.model.response is not None
                        and "tests/" in page.model.response.request.filters.exclude_paths, what="filtered")
            assert all(not (h.path or "").startswith("tests/") for h in page.model.response.hits)
    finally:
        open_file.save_editor_command("")


@pytest.mark.asyncio
async def test_popup_picks_copies_and_copies_all(qtbot: Any, engine12: Any, tmp_path: Path) -> None:
    async with running_shell(engine12, (1024, 640), tmp_path) as shell:
        press(shell.window, Qt.Key.Key_Space,
              Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        popup = shell.popup
        await until(popup.isVisible, what="popup shown")
        QTest.keyClicks(popup.query, "retry")
        await until(lambda: popup.controller.final and popup.results.count() > 1, what="popup results")
        press(popup.query, Qt.Key.Key_Down)
        press(popup.query, Qt.Key.Key_Down)
        hit = popup.selected_hit()
        assert hit is not None and popup.results.currentRow() == 1
        press(popup.query, Qt.Key.Key_Return)
        assert hit.content in QGuiApplication.clipboard().text()
        assert not popup.isVisible()
        popup.popup()
        press(popup.query, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        response = popup.controller.response
        assert response is not None and response.context is not None
        assert QGuiApplication.clipboard().text() == response.context.text
