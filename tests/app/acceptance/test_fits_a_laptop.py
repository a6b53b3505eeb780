"""Twelve sources on a laptop screen: the window fits, never grows, and columns share
the width sensibly."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionComboBox

from tests.app.acceptance.conftest import SIZES, running_shell, until
from tributary.app import theme
from tributary.app.search.results_model import LOCATION, SCORE, SOURCES, TITLE
from tributary.engine.model import ReputationRow


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_twelve_sources_fit_and_the_window_never_resizes_itself(
        qtbot: Any, engine12: Any, size: tuple[int, int], tmp_path: Path) -> None:
    async with running_shell(engine12, size, tmp_path) as shell:
        window = shell.window
        assert len(shell.window.search._source_names()) == 12
        hint = window.minimumSizeHint()
        assert hint.width() <= size[0] and hint.height() <= size[1], f"minimum {hint} > screen {size}"
        assert (window.width(), window.height()) == size
        page = window.search
        QTest.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
        QTest.keyClicks(page.query, "cache key retry")
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda: page.controller.final, what="search finished")
        assert len(page.strip.chips) == 12
        assert page.model.rowCount() > 0
        # The search changed nothing about the window's size, however many chips.
        assert (window.width(), window.height()) == size
        assert window.minimumSizeHint().width() <= size[0]
        # Every section is on screen; the result's name has the most room; the location
        # is neither fixed nor wider than the name.
        header = page.tree.header()
        total = sum(header.sectionSize(c) for c in range(header.count()) if not header.isSectionHidden(c))
        assert total <= page.tree.viewport().width() + 1
        assert header.sectionSize(TITLE) >= 160
        assert header.isSectionHidden(LOCATION) or header.sectionSize(LOCATION) >= 110
        assert header.sectionSize(TITLE) >= header.sectionSize(LOCATION) or size[0] > 1300
        # Narrow, the badges give way before the paths do (the detail pane names the sources).
        assert header.sectionSize(SCORE) > 0
        assert header.isSectionHidden(SOURCES) or header.sectionSize(SOURCES) >= 100
        assert size[0] > 1300 or not header.isSectionHidden(LOCATION)
        # The detail pane and its buttons are inside the window.
        detail = page.detail.open_button
        corner = detail.mapTo(window, detail.rect().bottomRight())
        assert corner.x() <= window.width() and corner.y() <= window.height()
        # A smaller window is accepted too (the user may tile it).
        window.resize(size[0] - 100, size[1] - 60)
        await until(lambda: window.width() == size[0] - 100, what="resized smaller")
        await until(lambda: header.sectionSize(TITLE) >= 120 and header.sectionSize(TITLE) >= header.sectionSize(SOURCES),
                    what="name keeps its room")


@pytest.fixture
def styled(qapp: QApplication) -> Iterator[None]:
    """The app's own style sheet, whose padding Qt's size hints leave out; put back after."""
    style, palette, sheet = qapp.style().name(), qapp.palette(), qapp.styleSheet()
    theme.apply(qapp, dark=False)
    yield
    qapp.setStyleSheet(sheet)
    qapp.setPalette(palette)
    qapp.setStyle(style)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_context_controls_are_whole_in_the_styled_app(
        qtbot: Any, engine12: Any, size: tuple[int, int], tmp_path: Path, styled: None) -> None:
    async with running_shell(engine12, size, tmp_path) as shell:
        page = shell.window.search
        page.tabs.setCurrentWidget(page.context_scroll)
        await asyncio.sleep(0.05)  # a layout pass
        fmt, budget = page.context.format, page.context.budget
        # the format's name is not cut ("markdc"), the budget box ends inside the pane
        option = QStyleOptionComboBox()
        fmt.initStyleOption(option)
        field = fmt.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, fmt)
        assert field.width() >= fmt.fontMetrics().horizontalAdvance("markdown"), field
        right = budget.mapTo(page.context, budget.rect().topRight()).x()
        assert right <= page.context.width(), (right, page.context.width())


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_page_fits_with_twelve_sources(
        qtbot: Any, engine12: Any, size: tuple[int, int], tmp_path: Path) -> None:
    """Insights charts every source and lists every reputation: it scrolls instead of
    growing the window past the screen."""
    async with running_shell(engine12, size, tmp_path) as shell:
        window = shell.window
        page = window.search
        QTest.keyClicks(page.query, "cache key retry")
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda: page.controller.final, what="search finished")
        for other in (shell.editor, shell.indexes, shell.insights, page):
            window.show_page(other)
            if other is shell.insights:
                await shell.insights.refresh()
                # Twenty sources with latency figures: a chart row each.
                figures = SimpleNamespace(p50_ms=12.0, p95_ms=40.0, tokens=900, calls=5, errors=0, timeouts=0)
                shell.insights.chart.set_sources({f"source-{i}": figures for i in range(20)})
            await asyncio.sleep(0.05)  # a layout pass
            hint = window.minimumSizeHint()
            assert hint.width() <= size[0] and hint.height() <= size[1], f"{type(other).__name__}: {hint}"
            assert (window.width(), window.height()) == size, type(other).__name__


HALF_SCREEN = (683, 400)  # half of a 1,366 px screen, or a 1,024 x 640 one at scale 1.5


@pytest.mark.asyncio
async def test_a_half_screen_window_keeps_every_page_whole(
        qtbot: Any, engine12: Any, tmp_path: Path, styled: None) -> None:
    """Tiled to half a laptop screen: the sidebar shows icons only, the pages rearrange
    instead of running off the window's edge, and a wide window gets the names back."""
    async with running_shell(engine12, HALF_SCREEN, tmp_path) as shell:
        window = shell.window
        await until(lambda: window.compact, what="icons-only sidebar")
        assert [window.sidebar.item(row).text() for row in range(window.sidebar.count())] == ["", "", "", ""]
        assert window.sidebar.item(1).toolTip() == "Sources & routing (Alt+2)"
        assert window.engine_state_compact.isVisible() and not window.engine_state.isVisible()
        page = window.search
        QTest.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
        QTest.keyClicks(page.query, "cache key retry")
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda: page.controller.final, what="search finished")
        page.hints.toggle.setChecked(True)  # the tallest and widest the search page gets
        for other in (shell.editor, shell.indexes, shell.insights, page):
            window.show_page(other)
            await asyncio.sleep(0.05)  # a layout pass
            hint = window.minimumSizeHint()
            assert hint.width() <= HALF_SCREEN[0] and hint.height() <= HALF_SCREEN[1], f"{type(other).__name__}: {hint}"
            assert (window.width(), window.height()) == HALF_SCREEN, type(other).__name__
        # The hints wrap into two rows, each field wide enough to read what it holds.
        await until(lambda: page.hints.rows == 2, what="hints in two rows")
        for field in (page.hints.files, page.hints.issues, page.hints.framework):
            assert field.width() >= 150, (field.placeholderText(), field.width())
        # Every control of the search page ends inside the window.
        for widget in (page.filters.paths, page.hints.toggle, page.hints.clear_button, page.task_type,
                       page.detail.open_button):
            corner = widget.mapTo(window, widget.rect().bottomRight())
            assert corner.x() <= window.width(), widget
        # The figures' cards wrap; the ranking groups stand in one column.
        window.show_page(shell.insights)
        await until(lambda: shell.insights.cards.columns == 3, what="cards in rows of three")
        # The reputations: the bar narrows, every column stays in view.
        rated = datetime(2026, 11, 30, 14, 5, tzinfo=UTC)
        shell.insights.reputation.show_rows(
            [ReputationRow(f"a-source-with-a-long-name-{n}", 0.5 + n / 40, 120 + n, 1030 + n, rated) for n in range(12)])
        table = shell.insights.reputation.table
        await asyncio.sleep(0.05)  # a layout pass
        assert table.rowCount() == 12
        assert table.horizontalHeader().length() <= table.viewport().width(), "the reputations scroll sideways"
        window.show_page(shell.editor)
        shell.editor.tabs.setCurrentIndex(2)
        await until(lambda: shell.editor.ranking.groups.columns == 1, what="ranking groups in one column")
        # Wide again: names and the engine's state back in the sidebar, groups side by side.
        window.resize(1200, 700)
        await until(lambda: not window.compact and window.sidebar.item(0).text() == "Search", what="names back")
        assert window.engine_state.isVisible() and not window.engine_state_compact.isVisible()
        window.show_page(page)
        await until(lambda: page.hints.rows == 1, what="hints in one row")
        await until(lambda: shell.editor.ranking.groups.columns == 2, what="ranking groups side by side")
