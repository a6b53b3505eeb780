"""The source chips with many sources: one compact row that scrolls (wheel, arrows,
keyboard focus), the query's figures never crowding the chips out, and sources that
cannot be searched said so on their chip."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from mcp import types
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from tributary.app.search.page import _summary
from tributary.app.search.source_strip import (
    SourceStrip,
    chip_order,
    chip_text,
    chip_tooltip,
    waiting_text,
)
from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SearchRequest, SearchResponse, SourceReport, SourceStatus
from tributary.engine.sources.tools import ToolSelectionError, select_tool

NAMES = ["memory", "filesystem", "git", "everything", "time", "fetch", "dead-hang", "wiki", "tickets",
         "slack-archive-search", "confluence", "context7", "runbooks", "adr", "files", "tasks"]
SUMMARY = "30 results · 10/14 sources · howto query · dedup 21 % · 5949 ms"


def reports() -> list[SourceReport]:
    return [SourceReport(name=n, status=SourceStatus.OK, hits=3, latency_ms=120.0) for n in NAMES]


def make_strip(qtbot: Any, width: int) -> SourceStrip:
    strip = SourceStrip()
    qtbot.addWidget(strip)
    strip.resize(width, strip.sizeHint().height())
    strip.show()
    strip.set_reports(reports(), SUMMARY)
    settle()
    return strip


def settle() -> None:
    for _ in range(3):  # layout requests, then the scroll area's resize of its row
        QApplication.processEvents()


def wheel(strip: SourceStrip, dy: int) -> None:
    viewport = strip.chip_area.viewport()
    centre = QPointF(viewport.rect().center())
    event = QWheelEvent(centre, QPointF(viewport.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, dy),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewport, event)


def test_the_chips_keep_most_of_the_row(qtbot: Any) -> None:
    """The query's figures take at most a share of the row; the chips the rest."""
    for width in (700, 1050):  # the strip at a 1,024 and a 1,366 px wide window
        strip = make_strip(qtbot, width)
        assert strip.chip_area.width() >= width * 0.55
        assert strip.summary.toolTip() in ("", SUMMARY)


def test_the_wheel_and_the_arrows_scroll_the_chips(qtbot: Any) -> None:
    strip = make_strip(qtbot, 700)
    bar = strip.chip_area.horizontalScrollBar()
    assert bar.maximum() > 0 and bar.value() == 0
    assert strip.right_arrow.isVisible() and strip.left_arrow.isVisible()
    assert strip.right_arrow.isEnabled() and not strip.left_arrow.isEnabled()
    wheel(strip, -120)  # the wheel turned down: on to the later chips
    assert bar.value() > 0
    wheel(strip, 240)
    assert bar.value() == 0
    strip.right_arrow.click()
    assert bar.value() > 0 and strip.left_arrow.isEnabled()
    strip.left_arrow.click()
    assert bar.value() == 0


def test_a_chip_taking_the_focus_is_scrolled_into_view(qtbot: Any) -> None:
    strip = make_strip(qtbot, 700)
    strip.activateWindow()
    last = strip.chips[NAMES[-1]]
    last.setFocus(Qt.FocusReason.TabFocusReason)
    settle()
    viewport = strip.chip_area.viewport()
    left = last.mapTo(viewport, QPoint(0, 0)).x()
    assert left >= 0 and left + last.width() <= viewport.width()


def test_tab_stops_on_the_chips_and_never_on_the_row_around_them(qtbot: Any) -> None:
    """Before a first query the strip is empty: Tab passes it by; after one, Tab goes
    from chip to chip."""
    strip = SourceStrip()
    qtbot.addWidget(strip)
    strip.resize(900, strip.sizeHint().height())
    strip.show()
    assert not strip.chip_area.focusPolicy() & Qt.FocusPolicy.TabFocus
    strip.set_reports(reports()[:3], "6 results")
    settle()
    first = strip.chips[NAMES[0]]
    assert first.nextInFocusChain() is strip.chips[NAMES[1]]


def test_the_sources_that_brought_hits_lead_the_row_and_tab_follows_it(qtbot: Any) -> None:
    """On a narrow window only the first chips are in view: those whose hits make the
    answer (or that are still asked) come first, then failures, then sources that found
    nothing, then those not asked, each group in the engine's order."""
    said = [
        SourceReport(name="fs", status=SourceStatus.OK, hits=0),
        SourceReport(name="time", status=SourceStatus.SKIPPED, detail="no search-like tool"),
        SourceReport(name="dead", status=SourceStatus.TIMEOUT),
        SourceReport(name="ripgrep", status=SourceStatus.OK, hits=40),
        SourceReport(name="files", status=SourceStatus.PENDING),
        SourceReport(name="tasks", status=SourceStatus.CACHED, hits=12),
    ]
    assert [r.name for r in chip_order(said)] == ["ripgrep", "files", "tasks", "dead", "fs", "time"]
    strip = SourceStrip()
    qtbot.addWidget(strip)
    strip.resize(700, strip.sizeHint().height())
    strip.show()
    strip.set_reports(said[:3], "asking…")  # first as the engine lists them, then with answers
    strip.set_reports(said, "30 results")
    settle()
    row = [strip._layout.itemAt(i).widget() for i in range(len(said))]
    assert row == [strip.chips[n] for n in ("ripgrep", "files", "tasks", "dead", "fs", "time")]
    assert all(a.nextInFocusChain() is b for a, b in itertools.pairwise(row))
    assert strip.chip_area.horizontalScrollBar().value() == 0


def test_few_sources_need_no_arrows(qtbot: Any) -> None:
    strip = SourceStrip()
    qtbot.addWidget(strip)
    strip.resize(900, strip.sizeHint().height())
    strip.show()
    strip.set_reports(reports()[:2], "6 results")
    settle()
    assert not strip.right_arrow.isVisible() and not strip.left_arrow.isVisible()


def test_a_source_with_no_search_tool_says_so_on_its_chip() -> None:
    report = SourceReport(name="time", status=SourceStatus.SKIPPED,
                          detail="no search-like tool with a string query argument; tools seen: get_current_time")
    assert chip_text(report) == "time · no search tool"
    routed = SourceReport(name="wiki", status=SourceStatus.SKIPPED, detail="not in the fallback")
    assert chip_text(routed) == "wiki · not asked"


def test_a_source_found_to_take_no_query_once_started_says_so_without_its_start_time() -> None:
    from tributary.engine.sources.tools import TAKES_NO_QUERY

    started = SourceReport(name="git", status=SourceStatus.SKIPPED, latency_ms=4022.0,
                           error=f"{TAKES_NO_QUERY}, so it is not asked for searches (tools seen: git_status)")
    assert chip_text(started) == "git · no search tool"
    waited = SourceReport(name="wiki", status=SourceStatus.SKIPPED, latency_ms=3100.0, detail="not routed")
    assert chip_text(waited) == "wiki · not asked"
    tripped = SourceReport(name="dead", status=SourceStatus.CIRCUIT_OPEN, latency_ms=0.0)
    assert chip_text(tripped) == "dead · circuit open"


def test_a_source_that_needs_a_setting_says_so_on_its_chip() -> None:
    """Left out until a setting is made: the chip says which kind, the tooltip the fix."""
    from tributary.engine.sources.tools import NO_READ_ONLY

    needs = SourceReport(name="filesystem", status=SourceStatus.SKIPPED, latency_ms=4944.0,
                         error="search_files needs `path` (required); set `arguments: {path: …}` "
                               "and `tool: search_files`")
    assert chip_text(needs) == "filesystem · needs arguments"
    assert "set `arguments: {path: …}`" in chip_tooltip(needs)
    unsafe = SourceReport(name="everything", status=SourceStatus.SKIPPED,
                          detail=f"{NO_READ_ONLY} (passed over: simulate-research-query: not marked readOnlyHint)")
    assert chip_text(unsafe) == "everything · no read-only tool"
    missing = SourceReport(name="db", status=SourceStatus.SKIPPED,
                           detail="configured tool 'find' not offered; tools seen: query")
    assert chip_text(missing) == "db · tool not offered"
    git_log = types.Tool(name="git_log", input_schema={"type": "object", "properties": {
        "repo_path": {"type": "string"}}, "required": ["repo_path"]})
    with pytest.raises(ToolSelectionError) as named:  # the engine's own words for a named tool
        select_tool(ServerConfig(name="git", command="x", tool="git_log"), [git_log])
    lacking = SourceReport(name="git", status=SourceStatus.SKIPPED, detail=str(named.value))
    assert chip_text(lacking) == "git · needs arguments"
    failed = SourceReport(name="db", status=SourceStatus.ERROR, error="search_files needs `path` (required)")
    assert chip_text(failed) == "db · error"


@pytest.mark.asyncio
async def test_a_server_whose_start_keeps_failing_says_so_on_its_chip() -> None:
    """A search does not wait on a server whose last start failed; its chip said
    "error · 0 ms · restarted", as if it had run and answered badly."""
    from tests.sources.helpers import stdio_config
    from tributary.engine.sources import SourcePool

    pool = SourcePool([stdio_config("git", "--mode", "crash-start", timeout=30.0)])
    try:
        first = await pool.call("git", "redirects", top_k=2, timeout=60)
        again = await pool.call("git", "redirects", top_k=2, timeout=60)
    finally:
        await pool.aclose()
    assert first.status is SourceStatus.ERROR and again.status is SourceStatus.ERROR
    report = SourceReport(name="git", status=again.status, latency_ms=0.1, error=again.error)
    assert chip_text(report) == "git · not starting"
    assert "exited" in chip_tooltip(report)


def test_the_summary_counts_the_sources_asked_and_names_the_ones_awaited() -> None:
    sources = [SourceReport(name="files", status=SourceStatus.OK, hits=3),
               SourceReport(name="git", status=SourceStatus.PENDING),
               SourceReport(name="dead", status=SourceStatus.PENDING)]
    sources += [SourceReport(name=f"other{i}", status=SourceStatus.SKIPPED, detail="not in the fallback")
                for i in range(11)]
    response = SearchResponse(request=SearchRequest(query="retry"), sources=sources)
    running = _summary(response, final=False)
    assert running.startswith("waiting for git, dead…")
    assert "1/3 sources" in running
    assert waiting_text(sources[:1]) == "finishing…"
    many = [SourceReport(name=f"s{i}", status=SourceStatus.PENDING) for i in range(5)]
    assert waiting_text(many) == "waiting for s0, s1, s2 and 2 more…"


def test_a_partly_semantic_answer_says_so_on_its_chip_and_in_the_empty_state(qtbot: Any) -> None:
    from tributary.app.search.empty_state import EmptyState

    warning = ("files: semantic index 40 % ready (400/1000 chunks embedded); "
               "keyword and symbol search cover every file")
    report = SourceReport(name="files", status=SourceStatus.OK, hits=12, latency_ms=80.0,
                          warnings=[warning], degraded=True)
    assert chip_text(report) == "files 12 hits · semantic 40 % · 80 ms"
    assert "semantic index 40 % ready" in chip_tooltip(report)
    empty = EmptyState()
    qtbot.addWidget(empty)
    empty.show_not_confident("where is fusion", 12, [warning])
    assert "leans on keywords" in empty.body.text() and "40 % ready" in empty.body.text()


def test_a_chip_says_keyword_only_when_no_meaning_based_search_ran() -> None:
    history = ("pytest: meaning-based matches of its history 7 % ready (900 of 13,110 past "
               "tasks embedded); keyword search covers every one")
    code = "files: semantic index 60 % ready (600/1000 chunks embedded); keyword and symbol search cover every file"
    loading = "embedding model still loading: keyword search only for now"

    def chip(*warnings: str) -> str:
        return chip_text(SourceReport(name="s", status=SourceStatus.OK, hits=3, warnings=list(warnings), degraded=True))

    assert chip(history) == "s 3 hits · semantic 7 %"
    assert chip(code, history) == "s 3 hits · semantic 7 %"  # the least share of the indexes asked
    assert chip(loading, code) == "s 3 hits · keyword only"
    assert chip() == "s 3 hits · keyword only"  # a server that called its answer weaker, saying no more
