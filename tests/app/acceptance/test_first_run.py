"""A first run from an empty TRIBUTARY_HOME: the app says what to do and offers it —
import the servers another MCP client already has, save with Ctrl+S, search them; a
server whose command is missing says so and stays stopped."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.app.acceptance.conftest import SIZES, running_shell, until
from tests.fakes import FAKE_SERVER
from tributary.engine.model import SourceStatus


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_runner: Any) -> Path:
    """An empty TRIBUTARY_HOME, and a user home where Claude Desktop has two servers."""
    home = tmp_path / "tributary"
    monkeypatch.setenv("TRIBUTARY_HOME", str(home))
    user = tmp_path / "user"
    claude = user / ".config/Claude/claude_desktop_config.json"
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps({"mcpServers": {
        "notes": {"command": sys.executable, "args": [str(FAKE_SERVER), "--name", "notes"]},
        "broken": {"command": "tributary-no-such-command"},
    }}), encoding="utf-8")
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.chdir(tmp_path)
    return home


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_first_run_leads_to_a_first_answer(
        qtbot: Any, empty_home: Path, size: tuple[int, int], tmp_path: Path) -> None:
    async with running_shell(None, size, tmp_path) as shell:
        window = shell.window
        page = window.search
        await until(lambda: page.empty.state == "first-run", what="first-run state")
        # The empty state is in the layout and visible, and offers the next steps.
        assert page.results.currentWidget() is page.empty and page.empty.isVisible()
        assert page.empty.add_button.isVisible()
        assert page.empty.import_button.isVisible() and "Claude Desktop" in page.empty.import_button.text()
        # Searching with nothing to ask says why, and still offers the way out.
        QTest.keyClicks(page.query, "where is the cache")
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda: page.controller.final, what="search ended")
        assert page.empty.state == "first-run" and "no source to ask" in page.empty.body.text()
        # The keyboard reaches "Import": focus it, press Space.
        page.empty.import_button.setFocus()
        QTest.keyClick(page.empty.import_button, Qt.Key.Key_Space)
        editor = shell.editor
        assert window.pages.currentWidget().isAncestorOf(editor)
        assert set(editor.draft.servers) >= {"notes", "broken"}  # type: ignore[union-attr]
        assert editor.save_button.isEnabled()
        QTest.keyClick(QApplication.focusWidget() or editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: "notes" in shell.engine.config.servers, what="saved and applied")  # type: ignore[union-attr]
        assert editor.draft is not None and editor.draft.path is not None and editor.draft.path.is_file()
        # Back to searching: the window's Ctrl+L, a question, the imported server answers.
        QTest.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
        assert QApplication.focusWidget() is page.query
        await until(lambda: page.empty.state != "first-run", what="no longer first run")
        # Started now, as the engine does on launch (a cold Python server on a loaded
        # machine may need longer than its 3 s timeout on first use).
        engine = shell.engine
        assert engine is not None
        engine.warm_up()
        await until(lambda: any(s.name == "notes" and str(s.status) == "ready" for s in engine.server_states()),
                    timeout=60, what="notes server ready")
        page.query.selectAll()
        QTest.keyClicks(page.query, "cache")
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda: page.controller.final and page.model.rowCount() > 0, what="answers")
        response = page.model.response
        assert response is not None
        reports = {r.name: r for r in response.sources}
        assert reports["notes"].status == SourceStatus.OK
        assert reports["broken"].status == SourceStatus.ERROR
        assert reports["broken"].error == "command not found: tributary-no-such-command"
        states = {s.name: s for s in shell.engine.server_states()}  # type: ignore[union-attr]
        assert states["broken"].restarts == 0 and str(states["broken"].status) == "stopped"


@pytest.mark.asyncio
async def test_indexes_page_empty_state_is_compact(qtbot: Any, empty_home: Path, tmp_path: Path) -> None:
    async with running_shell(None, (1024, 640), tmp_path) as shell:
        page = shell.indexes
        shell.window.show_page(page)
        await until(lambda: page.empty.isVisible() and not page.table.isVisible(), what="empty indexes")
        bottom = page.empty.mapTo(page, page.empty.rect().bottomLeft()).y()
        assert bottom < page.height() // 2, "the empty state sits at the top, not spread down the page"
        assert page.add_button.isVisible()


@pytest.mark.asyncio
async def test_a_new_repository_answers_once_its_keyword_tier_is_written(
        qtbot: Any, empty_home: Path, tmp_path: Path) -> None:
    """Add a repository on a first run: the search page says it is being indexed (not
    "add a repository"), and the repository answers from its keyword tier, through the
    real worker and the real built-in server, without waiting for the rest."""
    from tests.app.acceptance.conftest import make_repo

    repo = make_repo(tmp_path / "project")
    async with running_shell(None, (1024, 640), tmp_path) as shell:
        page = shell.window.search
        await until(lambda: page.empty.state == "first-run", what="first-run state")
        page.empty.add_button.click()  # the folder dialog opens over the search page
        from PySide6.QtWidgets import QFileDialog

        dialog = shell.indexes.findChild(QFileDialog)
        assert dialog is not None and dialog.isVisible()
        dialog.fileSelected.emit(str(repo))
        dialog.close()
        assert shell.window.pages.currentWidget().isAncestorOf(page)  # still searching
        assert QApplication.focusWidget() is page.query  # typing goes to the question
        assert page.empty.state == "indexing" and "project" in page.empty.title.text()
        assert not page.empty.add_button.isVisible()
        await until(lambda: page.empty.state != "indexing", timeout=300, what="keyword tier written")
        assert "files" in shell.engine.effective_config.servers  # type: ignore[union-attr]
        QTest.keyClicks(page.query, "retry exponential backoff")
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda: page.controller.final, timeout=300, what="search ended")
        response = page.model.response
        assert response is not None and response.error is None
        reports = {r.name: r for r in response.sources}
        assert reports["files"].status == SourceStatus.OK and reports["files"].hits
        assert any(h.path == "engine/retry.py" for h in response.hits)
        # The vectors go on in the background; closing the shell stops the worker.
