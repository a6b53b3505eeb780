"""The CLI's progress line: no bar before the file count is known, then a bar with ETA."""

from __future__ import annotations

import io

from tributary.engine.cli.progress import ProgressBar


def _line(done: int, total: int, eta_s: float | None = None) -> str:
    stream = io.StringIO()
    ProgressBar("indexing proj", stream=stream, width=10).update(done, total, "5 chunks", eta_s)
    return stream.getvalue().strip()


def test_no_full_bar_while_the_files_are_still_being_found() -> None:
    assert _line(0, 0) == "indexing proj: finding files…"


def test_the_bar_fills_with_the_files_done_and_shows_the_eta_once_known() -> None:
    assert _line(3, 10) == "indexing proj [###.......] 3/10 files, 5 chunks"
    assert _line(5, 10, 12.4) == "indexing proj [#####.....] 5/10 files, 5 chunks, ETA 12s"


def test_indexing_shows_a_chunking_bar_then_an_embedding_bar() -> None:
    from tributary.engine.cli.progress import index_progress
    from tributary.engine.index.progress import IndexProgress

    stream = io.StringIO()
    show = index_progress("proj", stream)
    show(IndexProgress("scan", 0, 0, 0, 0, 0.0, None))
    show(IndexProgress("chunk", 4, 4, 40, 0, 100.0, None))
    show(IndexProgress("keyword", 4, 4, 40, 0, 100.0, None))  # before the model loads
    show(IndexProgress("embed", 4, 4, 40, 8, 20.0, None, None, 8, 40))
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("chunking proj [") and "4/4 files, 40 chunks" in lines[0]
    assert lines[1].startswith("chunking proj: 40 chunks in ") and "keyword and symbol search ready" in lines[1]
    assert lines[2].startswith("embedding proj [") and "8/40 chunks, 20 chunks/s" in lines[2]
    assert len(lines) == 3


def test_nothing_to_embed_shows_no_embedding_bar() -> None:
    from tributary.engine.cli.progress import index_progress
    from tributary.engine.index.progress import IndexProgress

    stream = io.StringIO()
    show = index_progress("proj", stream)
    show(IndexProgress("embed", 0, 0, 0, 0, 0.0, None, None, 40, 40))
    show(IndexProgress("done", 0, 0, 0, 0, 0.0, 0.0))
    assert stream.getvalue() == ""
