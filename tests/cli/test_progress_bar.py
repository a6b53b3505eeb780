"""The CLI's progress line: no bar before the file count is known, then a bar with ETA."""

from __future__ import annotations

import io

from engine.cli.progress import ProgressBar


def _line(done: int, total: int, eta_s: float | None = None) -> str:
    stream = io.StringIO()
    ProgressBar("indexing proj", stream=stream, width=10).update(done, total, "5 chunks", eta_s)
    return stream.getvalue().strip()


def test_no_full_bar_while_the_files_are_still_being_found() -> None:
    assert _line(0, 0) == "indexing proj: finding files…"


def test_the_bar_fills_with_the_files_done_and_shows_the_eta_once_known() -> None:
    assert _line(3, 10) == "indexing proj [###.......] 3/10 files, 5 chunks"
    assert _line(5, 10, 12.4) == "indexing proj [#####.....] 5/10 files, 5 chunks, ETA 12s"
