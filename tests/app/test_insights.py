"""The insights page reads the engine's query log: cards, per-source chart, recent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.app.fakes import build_response
from tributary.app.insights import InsightsPage, column_widths, figures_text, read_insights
from tributary.engine.insights.store import QueryLog
from tributary.engine.model import SearchRequest, SourceReport, SourceStatus


@pytest.mark.asyncio
async def test_insights_show_recorded_queries(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    store = QueryLog.open(path)
    for i, query in enumerate(("fixture scope", "parametrize ids")):
        reports = [SourceReport(name="files", status=SourceStatus.OK, latency_ms=40.0 + i, hits=3),
                   SourceReport(name="tasks", status=SourceStatus.TIMEOUT, latency_ms=3000.0)]
        store.record(build_response(SearchRequest(query=query), ["files"], reports))
    store.close()
    page = InsightsPage(lambda: read_insights(path))
    qtbot.addWidget(page)
    await page.refresh()
    assert page.values["queries"].text() == "2"
    assert page.table.rowCount() == 2
    queries = {page.table.item(r, 1).text() for r in range(2)}
    assert queries == {"fixture scope", "parametrize ids"}
    assert "tasks 3,000 ms" in page.table.item(0, 5).text()
    assert [row[0] for row in page.chart._rows] == ["tasks", "files"]  # slowest first


@pytest.mark.asyncio
async def test_empty_history(qtbot: Any, tmp_path: Path) -> None:
    page = InsightsPage(lambda: read_insights(tmp_path / "none.sqlite"))
    qtbot.addWidget(page)
    await page.refresh()
    assert page.values["queries"].text() == "0" and page.table.rowCount() == 0


def test_a_sources_figures_count_one_call_in_the_singular() -> None:
    assert figures_text(635.4, 640.0, 6085, 1) == "635 / 640 ms · 6,085 tok · 1 call"
    assert figures_text(12.0, 40.0, 900, 5).endswith("· 5 calls")


def test_a_source_that_never_answered_shows_no_latency_but_its_failures() -> None:
    assert figures_text(None, None, 0, 8, failed=8) == "no answer · 0 tok · 8 calls, all failed"
    assert figures_text(100.0, 900.0, 40, 6, failed=2) == "100 / 900 ms · 40 tok · 6 calls, 2 failed"
    assert figures_text(None, None, 0, 0) == "not asked"


@pytest.mark.asyncio
async def test_a_removed_source_is_marked_and_listed_last(qtbot: Any, tmp_path: Path) -> None:
    """A server taken out of the configuration keeps its calls in the log; the chart
    still shows them, after the configured sources and marked removed."""
    from tests.app.fakes import FakeEngine

    path = tmp_path / "history.sqlite"
    store = QueryLog.open(path)
    reports = [SourceReport(name="files", status=SourceStatus.OK, latency_ms=40.0, hits=3),
               SourceReport(name="pygit", status=SourceStatus.OK, latency_ms=900.0, hits=1)]
    store.record(build_response(SearchRequest(query="fixture scope"), ["files"], reports))
    store.close()
    engine = FakeEngine(sources=["files", "tasks"])
    page = InsightsPage(lambda: read_insights(path), engine=lambda: engine)
    qtbot.addWidget(page)
    await page.refresh()
    assert [row[0] for row in page.chart._rows] == ["files", "pygit"]  # slower, but removed
    assert figures_text(900.0, 900.0, 10, 1, removed=True) == "removed · 900 / 900 ms · 10 tok · 1 call"
    assert figures_text(None, None, 0, 0, removed=True) == "removed · not asked"


def test_long_figures_take_width_from_the_bars_not_past_the_edge() -> None:
    """At a large scale factor "… · 7 calls, all failed" is wider than the figures'
    usual column: the bars give it room, down to their minimum; past that it is elided."""
    assert column_widths(900, 120, 250, 200) == (518, 250)  # fits: the usual column
    assert column_widths(900, 120, 250, 400) == (364, 404)  # the bars give way
    bars, value = column_widths(600, 120, 250, 700)
    assert bars == 60 and 120 + bars + value + 12 == 600  # no wider than the chart
    assert column_widths(300, 120, 250, 700) == (60, 250)  # a tiny window: never below the usual
