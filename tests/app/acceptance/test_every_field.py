"""Every text field of every page accepts typing (and nothing raises meanwhile); the
rule tester routes as the engine does; the editor keeps its place as messages come."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractSpinBox, QLineEdit, QPlainTextEdit, QTabWidget, QWidget

from tests.app.acceptance.conftest import SIZES, running_shell, until


def text_of(widget: QLineEdit | QPlainTextEdit) -> str:
    return widget.text() if isinstance(widget, QLineEdit) else widget.toPlainText()


def _is_spin_box_part(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    return isinstance(parent, QAbstractSpinBox) or (parent is not None and parent.inherits("QComboBox"))


def fields(page: QWidget) -> list[QLineEdit | QPlainTextEdit]:
    found = [w for w in page.findChildren(QLineEdit) if not _is_spin_box_part(w)]
    return [*found, *page.findChildren(QPlainTextEdit)]


async def type_into_every_field(page: QWidget, typed: set[int]) -> None:
    """Type into every field shown on ``page``, tab by tab."""
    await asyncio.sleep(0.05)  # rows just added are shown by a queued call
    tab_widgets = page.findChildren(QTabWidget) or [None]
    for tabs in tab_widgets:
        for index in range(tabs.count() if tabs is not None else 1):
            if tabs is not None:
                tabs.setCurrentIndex(index)
                await asyncio.sleep(0.02)
            for field in fields(page):
                if field.isReadOnly():
                    typed.add(id(field))  # output panes (logs, context): read-only on purpose
                    continue
                if id(field) in typed or not field.isVisible() or not field.isEnabled():
                    continue
                field.setFocus()
                before = text_of(field)
                if isinstance(field, QLineEdit):
                    field.end(False)
                QTest.keyClicks(field, "ab")
                assert text_of(field) != before, f"typing changed nothing in {field.objectName() or field}"
                typed.add(id(field))


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_text_field_of_every_page_accepts_typing(
        qtbot: Any, engine12: Any, size: tuple[int, int], tmp_path: Path) -> None:
    async with running_shell(engine12, size, tmp_path) as shell:
        window = shell.window
        search = window.search
        QTest.keyClick(window, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)  # the hints row
        assert search.hints.isVisible()
        editor = shell.editor
        await until(lambda: editor.draft is not None, what="editor loaded")
        window.show_page(editor)
        editor.show_tab(editor.servers)
        editor.rules.add_rule()
        indexes = shell.indexes
        insights = shell.insights
        typed: set[int] = set()
        servers = editor.servers
        for page in (search, editor, indexes, insights):
            window.show_page(page)
            if page is editor:
                # Environment variables have fields once a row is added: type into them
                # (this raised on every keystroke once).
                editor.tabs.setCurrentWidget(servers)
                servers.env._add.click()
                await type_into_every_field(servers, typed)
                # The http transport's fields, then back.
                servers.transport.setCurrentText("http")
                servers.headers._add.click()
                await type_into_every_field(servers, typed)
                servers.transport.setCurrentText("stdio")
            await type_into_every_field(page, typed)
        await asyncio.sleep(0.05)  # rows replaced meanwhile are deleted
        every = [f for page in (search, editor, indexes, insights) for f in fields(page)]
        missed = [f for f in every if id(f) not in typed and f.isEnabled()]
        assert not missed, f"fields never shown or typed into: {[m.objectName() or m.placeholderText() for m in missed]}"
        assert len(typed) >= 20
        # Typing left unsaved edits, nothing more: revert them.
        editor.revert()
        await until(lambda: not editor.dirty, what="reverted")
        assert (window.width(), window.height()) == size


@pytest.mark.asyncio
async def test_rule_tester_routes_as_the_engine_does(qtbot: Any, engine12: Any, tmp_path: Path) -> None:
    async with running_shell(engine12, (1024, 640), tmp_path) as shell:
        editor = shell.editor
        await until(lambda: editor.draft is not None, what="editor loaded")
        shell.window.show_page(editor)
        editor.show_tab(editor.rules)
        query = "why was the cache key changed"
        editor.rules.sample.setFocus()
        QTest.keyClicks(editor.rules.sample, query)
        await until(lambda: "Asked:" in editor.rules.verdict.text(), what="rule tester verdict")
        asked = next(line for line in editor.rules.verdict.text().splitlines() if line.startswith("Asked:"))
        decision = shell.engine.route(query)  # type: ignore[union-attr]
        assert asked.split("   ")[0] == "Asked: " + ", ".join(decision.servers)
        assert "files" in decision.servers and "unknown server" not in editor.rules.verdict.text()


@pytest.mark.asyncio
async def test_editor_form_does_not_jump_as_errors_come_and_go(qtbot: Any, engine12: Any, tmp_path: Path) -> None:
    async with running_shell(engine12, (1024, 640), tmp_path) as shell:
        editor = shell.editor
        await until(lambda: editor.draft is not None, what="editor loaded")
        shell.window.show_page(editor)
        servers = editor.servers
        command_y = servers.command.mapTo(servers.form_widget, servers.command.rect().topLeft()).y()
        servers.name.setFocus()
        servers.name.selectAll()
        QTest.keyClick(servers.name, Qt.Key.Key_Backspace)  # "A server needs a name."
        assert servers.name_error.isVisible()
        assert servers.command.mapTo(servers.form_widget, servers.command.rect().topLeft()).y() == command_y
        QTest.keyClicks(servers.name, "renamed")
        assert not servers.name_error.isVisible()
        assert servers.command.mapTo(servers.form_widget, servers.command.rect().topLeft()).y() == command_y
        editor.revert()
