"""The Indexes page with a repository: no column cut, and re-indexing shows its
progress at the top of the page, where the button that started it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.app.acceptance.conftest import running_shell, until


@pytest.mark.asyncio
async def test_columns_fit_and_progress_shows_at_the_top(
        qtbot: Any, engine12: Any, indexed: Path, tmp_path: Path) -> None:
    async with running_shell(engine12, (1024, 640), tmp_path) as shell:
        page = shell.indexes
        shell.window.show_page(page)
        await until(lambda: page.table.rowCount() == 1 and page.table.isVisible(), what="the index listed")
        header = page.table.horizontalHeader()
        for column in range(1, page.table.columnCount()):
            needed = max(page.table.sizeHintForColumn(column), header.sectionSizeHint(column))
            assert header.sectionSize(column) >= needed, f"column {column} is cut"
        assert (shell.window.width(), shell.window.height()) == (1024, 640)
        task = page.index(indexed)
        assert task is not None
        assert page.progress.isVisible()
        progress_y = page.progress.mapTo(page, page.progress.rect().topLeft()).y()
        table_y = page.table.mapTo(page, page.table.rect().topLeft()).y()
        assert progress_y < table_y
        # However long the path it names, the progress line never widens the window.
        page.progress_label.set_full_text(f"Indexing {'/a-very-long-folder-name' * 30}: 6/6 files")
        await until(lambda: page.progress_label.text().endswith("…"), what="elided")
        assert shell.window.minimumSizeHint().width() <= 1024
        await task
        await until(lambda: not page.progress.isVisible(), what="indexing done")
        assert (shell.window.width(), shell.window.height()) == (1024, 640)
