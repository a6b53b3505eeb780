"""Hostile hits render as inert plain text: control characters, ANSI escapes, carriage
returns, bidi overrides, a 1 MB single line and HTML-looking content, in the results
tree, tooltips, the detail pane, the context preview and the tray popup."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel

from tributary.app import safe_text
from tributary.app.recent_queries import RecentQueries
from tributary.app.search.context_preview import ContextPreview
from tributary.app.search.detail import DetailPane
from tributary.app.search.page import SearchPage
from tributary.app.search.results_model import LOCATION, TITLE, ResultsModel
from tributary.app.search.source_strip import SourceStrip
from tributary.app.tray import QuickPopup
from tributary.engine.model import (
    AssembledContext,
    ContextChunk,
    ContextFormat,
    Hit,
    SearchRequest,
    SearchResponse,
    SearchUpdate,
    SourceReport,
    SourceStatus,
)

RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
HUGE = "A" * 1_000_000  # a single 1 MB line
HOSTILE_TITLE = "<script>alert('x')</script><b>bold</b> \x1b[31mred\x1b[0m\x00nul\rcr \u202etxt.exe"
HOSTILE_CONTENT = (
    "<b>not bold</b>\n<script>document.write(1)</script>\n"
    "colour: \x1b[1;31mALERT\x1b[0m\n"
    "nul:\x00 bell:\x07 cr:\rover\n"
    "access = \"user\u202e \u2066// admin\u2069 \u2066\"\n"
    + HUGE + "\nlast line\n"
)


def hostile_hits() -> list[Hit]:
    return [
        Hit(id="h1", source="files", tool="search", title=HOSTILE_TITLE, content=HOSTILE_CONTENT,
            path="src/<i>evil</i>\x1b[2J\u202e.py", start_line=1, end_line=3, score=0.9),
        Hit(id="h2", source="files", tool="search", title=HUGE, content="short", score=0.5,
            uri="https://example.com/" + "p" * 5000),
    ]


def hostile_response() -> SearchResponse:
    hits = hostile_hits()
    context_text = "\n\n".join(f"## {h.location}\n{h.content}" for h in hits)
    chunks = [ContextChunk(h.id, h.source, h.location, h.score, h.content, 10) for h in hits]
    return SearchResponse(
        request=SearchRequest("hostile"), hits=hits,
        sources=[SourceReport(name="files", status=SourceStatus.OK, hits=2),
                 SourceReport(name="web", status=SourceStatus.ERROR,
                              error="<h1>502</h1><img src=x onerror=alert(1)> \x1b[31mbad gateway")],
        context=AssembledContext(context_text, chunks, 20, ContextFormat.MARKDOWN, 7000))


def assert_inert_rich_text(tip: str) -> None:
    """A tooltip shows its text literally: escaped markup inside our own wrapper."""
    assert tip.startswith("<qt>")
    body = re.sub(r"^<qt><p style='white-space:pre-wrap'>|</p></qt>$", "", tip)
    assert "<" not in body and ">" not in body
    assert not RAW.search(body)


def test_safe_text_helpers() -> None:
    line = safe_text.one_line(HOSTILE_TITLE)
    assert not RAW.search(line) and "\x1b" not in line and "[31m" not in line
    assert "<script>" in line  # shown as the literal characters it is
    assert safe_text.one_line(HUGE) == "A" * (safe_text.LINE_LIMIT - 1) + "…"
    shown = safe_text.block(HOSTILE_CONTENT)
    assert not RAW.search(shown)
    assert "␀" in shown and "␇" in shown and "⟨U+202E⟩" in shown and "ALERT" in shown
    assert max(len(line) for line in shown.split("\n")) < safe_text.BLOCK_LINE_LIMIT + 60
    assert "more characters on this line" in shown
    assert_inert_rich_text(safe_text.tooltip(HOSTILE_CONTENT))
    assert "&lt;script&gt;" in safe_text.tooltip(HOSTILE_CONTENT)


def test_results_tree_cells_and_tooltips(qtmodeltester: Any) -> None:
    model = ResultsModel()
    model.set_response(hostile_response())
    qtmodeltester.check(model)
    for row in range(model.rowCount()):
        for column in range(model.columnCount()):
            text = model.index(row, column).data(Qt.ItemDataRole.DisplayRole)
            assert not RAW.search(text) and len(text) <= safe_text.LINE_LIMIT
        assert_inert_rich_text(model.tooltip(model.index(row, TITLE)))
    assert model.index(0, TITLE).data().startswith("<script>alert('x')</script><b>bold</b> red nul cr")
    assert model.index(1, TITLE).data().endswith("…")
    assert model.index(1, LOCATION).data().endswith("…")


def test_detail_pane_is_plain_text_and_cut(qtbot: Any) -> None:
    pane = DetailPane()
    qtbot.addWidget(pane)
    pane.resize(600, 500)
    pane.show()
    hit = hostile_hits()[0]
    pane.show_hit(hit)
    for label in pane.findChildren(QLabel):
        assert label.textFormat() == Qt.TextFormat.PlainText or not label.text() or label.text() in (
            "Score breakdown",)
    assert not RAW.search(pane.title.text()) and "<script>" in pane.title.text()
    assert not RAW.search(pane.location.text())
    document = pane.content.document()
    blocks = [document.findBlockByNumber(i).text() for i in range(document.blockCount())]
    assert max(len(b) for b in blocks) < safe_text.BLOCK_LINE_LIMIT + 60
    text = pane.content.toPlainText()
    assert not RAW.search(text)
    assert "<b>not bold</b>" in text and "last line" in text  # markup shown, not rendered
    pane.grab()  # lays out and paints the cut text


def test_context_preview_shows_safe_text_but_copies_the_original(qtbot: Any) -> None:
    preview = ContextPreview()
    qtbot.addWidget(preview)
    response = hostile_response()
    preview.set_context(response.context)
    text = preview.text.toPlainText()
    assert not RAW.search(text)
    assert max(len(line) for line in text.split("\n")) < safe_text.BLOCK_LINE_LIMIT + 60
    copied: list[int] = []
    preview.copied.connect(copied.append)
    preview.copy()
    assert response.context is not None
    assert QGuiApplication.clipboard().text() == response.context.text  # unchanged data
    assert copied == [20]


def test_source_chip_tooltip_escapes_server_errors(qtbot: Any) -> None:
    strip = SourceStrip()
    qtbot.addWidget(strip)
    strip.set_reports(hostile_response().sources)
    tip = strip.chips["web"].toolTip()
    assert_inert_rich_text(tip)
    assert "&lt;img src=x onerror=alert(1)&gt;" in tip


@pytest.mark.asyncio
async def test_search_page_and_popup_render_hostile_hits(qtbot: Any) -> None:
    page = SearchPage(lambda: None, RecentQueries(None))
    qtbot.addWidget(page)
    page.resize(1100, 700)
    page.show()
    response = hostile_response()
    page.controller.response = response
    page._updated(SearchUpdate(response, final=True))
    page.tree.setCurrentIndex(page.model.index(0, 0, QModelIndex()))
    assert page.detail.hit is not None and page.detail.hit.id == "h1"
    page.tabs.setCurrentIndex(1)  # the context preview gets its text when shown
    assert not RAW.search(page.context.text.toPlainText())
    page.grab()

    popup = QuickPopup(lambda: None)
    qtbot.addWidget(popup)
    popup._updated(SearchUpdate(response, final=True))
    item = popup.results.item(0)
    title, where = item.text().split("\n")
    assert not RAW.search(title) and len(title) <= 120
    assert not RAW.search(where)
    assert_inert_rich_text(item.toolTip())
    assert len(popup.results.item(1).text()) < 400


@given(st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]) | st.just("\n"),
               max_size=300))
def test_block_keeps_ordinary_text_unchanged(text: str) -> None:
    assert safe_text.block(text, line_limit=400) == text


@given(st.text(max_size=300))
def test_block_and_one_line_never_emit_raw_controls(text: str) -> None:
    assert not RAW.search(safe_text.block(text, line_limit=50))
    line = safe_text.one_line(text, 40)
    assert not RAW.search(line) and "\n" not in line and len(line) <= 40
