"""The search page end to end with the engine double: typing, live results, strip,
detail, context preview, and that an older query never shows over a newer one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest

from tests.app import fakes
from tests.app.fakes import FakeEngine, by_query, fixed
from tributary.app.recent_queries import RecentQueries
from tributary.app.search.page import SearchPage
from tributary.app.search.results_model import SCORE


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


def make_page(qtbot: object, engine: FakeEngine) -> SearchPage:
    page = SearchPage(lambda: engine, RecentQueries(None))
    qtbot.addWidget(page)  # type: ignore[attr-defined]
    page.resize(1100, 700)
    page.show()
    return page


@pytest.mark.asyncio
async def test_typing_streams_results_into_the_view(qtbot: object) -> None:
    engine = FakeEngine(sources=["files", "tasks", "git"],
                        delay=lambda s, q: {"files": 0.01, "tasks": 0.08, "git": 0.16}[s],
                        failing={"git": "timed out"})
    page = make_page(qtbot, engine)
    QTest.keyClicks(page.query, "fixture")
    await until(lambda: page.model.rowCount() == 3)  # first source in, others pending
    assert page.controller.final is False
    await until(lambda: page.controller.final)
    await asyncio.sleep(0.05)
    assert engine.started == ["fixture"]
    assert page.model.rowCount() == 5
    chips = page.strip.chips
    assert set(chips) == {"files", "tasks", "git"}
    assert "3 hits" in chips["files"].text() and "error" in chips["git"].text()
    assert "timed out" in chips["git"].toolTip()
    assert "conceptual query" in page.strip.summary.full_text  # the query's class is shown
    # The kept hit carries the folded duplicate as a child row with its reason.
    top = page.model.index(0, 0)
    assert page.model.rowCount(top) == 1
    assert page.model.index(0, SCORE, top).data() == "same text"
    # The first result is selected and shown in the detail pane.
    assert page.detail.hit is not None and page.detail.hit.id == page.model.hit_at(top).id
    assert page.detail.chart.toolTip().startswith("fused rank (rrf)")


@pytest.mark.asyncio
async def test_stale_query_never_shows_over_newer_one(qtbot: object) -> None:
    engine = FakeEngine(sources=["a", "b"], delay=by_query({"slow old": 0.25, "fast new": 0.02}))
    page = make_page(qtbot, engine)
    shown: list[str] = []
    page.controller.updated.connect(lambda u: shown.append(u.response.request.query))
    page.search("slow old")
    await asyncio.sleep(0.05)
    page.search("fast new")
    await until(lambda: page.controller.final)
    await asyncio.sleep(0.35)
    assert set(shown) == {"fast new"}
    response = page.model.response
    assert response is not None and response.request.query == "fast new"
    assert all("fast new" in page.model.hit_at(page.model.index(r, 0)).title
               for r in range(page.model.rowCount()))


@pytest.mark.asyncio
async def test_context_preview_counts_tokens_and_copies(qtbot: object) -> None:
    engine = FakeEngine(delay=fixed(0.0))
    page = make_page(qtbot, engine)
    page.search("tmp_path")
    await until(lambda: page.controller.final)
    page.tabs.setCurrentWidget(page.context_scroll)
    response = page.controller.response
    assert response is not None and response.context is not None
    assert page.context.text.toPlainText() == response.context.text
    assert f"{response.context.token_count:,} of {response.context.budget:,} tokens" in page.context.tokens.text()
    reserved = page.context.budget.value() - response.context.budget
    assert reserved > 0 and f"{reserved:,} of the budget kept for the prompt" in page.context.tokens.text()
    QGuiApplication.clipboard().setText("")
    QTest.keyClick(page, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert QGuiApplication.clipboard().text() == response.context.text
    # Changing the format re-runs the query with the new format.
    page.context.format.setCurrentIndex(page.context.format.findText("xml"))
    await until(lambda: page.controller.final and page.controller.response.request.format == "xml")
    # The preview follows each update in an event-loop slice of its own.
    await until(lambda: page.context.text.toPlainText().startswith("<chunk"))


@pytest.mark.asyncio
async def test_the_copy_button_and_summary_are_in_view_on_a_short_screen(qtbot: object) -> None:
    """At 1,024 x 640 the summary wrapped to four lines beside the button and the text
    kept its preferred height, so the pane scrolled and cut the button in half."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QApplication

    engine = FakeEngine(delay=fixed(0.0))
    page = make_page(qtbot, engine)
    page.resize(790, 570)  # the search page's share of a 1,024 x 640 window
    page.search("tmp_path")
    await until(lambda: page.controller.final)
    page.tabs.setCurrentWidget(page.context_scroll)
    for _ in range(3):
        QApplication.processEvents()
    viewport = page.context_scroll.viewport()
    for widget in (page.context.copy_button, page.context.tokens):
        bottom = widget.mapTo(viewport, QPoint(0, widget.height())).y()
        assert 0 < bottom <= viewport.height(), widget
    assert page.context_scroll.verticalScrollBar().maximum() == 0
    assert page.context.text.height() >= page.context.text.minimumHeight()


@pytest.mark.asyncio
async def test_context_of_the_sources_that_answered_shows_while_one_hangs(qtbot: object) -> None:
    engine = FakeEngine(sources=["files", "slowpoke"], delay=lambda s, q: {"files": 0.0, "slowpoke": 3600.0}[s])
    page = make_page(qtbot, engine)
    page.tabs.setCurrentWidget(page.context_scroll)
    page.search("fixture")
    await until(lambda: "waiting for slowpoke" in page.context.tokens.text())  # (cancelled when the test ends)
    assert "so far" in page.context.tokens.text()
    assert "files" in page.context.text.toPlainText() and page.context.copy_button.isEnabled()
    assert not page.controller.final


@pytest.mark.asyncio
async def test_controls_shape_the_request(qtbot: object) -> None:
    engine = FakeEngine(delay=fixed(0.0))
    page = make_page(qtbot, engine)
    page.strategy.setCurrentIndex(page.strategy.findData("composite"))
    page.limit.setValue(250)  # clamped to the allowed range
    page.search("q")
    await until(lambda: page.controller.final)
    request = page.controller.response.request
    assert request.strategy == "composite" and request.top_k == 100


@pytest.mark.asyncio
async def test_history_and_keyboard(qtbot: object) -> None:
    engine = FakeEngine(delay=fixed(0.0))
    page = make_page(qtbot, engine)
    for text in ("first query", "second query"):
        page.query.setText(text)
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda t=text: page.controller.final and page.controller.query == t)
    page.query.clear()
    QTest.keyClick(page.query, Qt.Key.Key_Up)
    assert page.query.text() == "second query"
    QTest.keyClick(page.query, Qt.Key.Key_Up)
    assert page.query.text() == "first query"
    QTest.keyClick(page.query, Qt.Key.Key_Escape)
    assert page.query.text() == "" and page.model.rowCount() == 0


@pytest.mark.asyncio
async def test_clicking_a_source_chip_opens_its_log(qtbot: object) -> None:
    engine = FakeEngine(sources=["files", "git"], failing={"git": "crashed"})
    page = make_page(qtbot, engine)
    page.search("q")
    await until(lambda: page.controller.final)
    page.strip.chips["git"].click()
    window = page._logs["git"]
    assert window.isVisible() and window.windowTitle() == "git — server log"
    assert window.text.toPlainText() == "[git] starting\n[git] ready"
    window.close()


@pytest.mark.asyncio
async def test_a_new_query_starts_with_its_groups_folded(qtbot: object, monkeypatch: pytest.MonkeyPatch) -> None:
    # Both queries get the same hits back, as a real index does for related questions.
    same = fakes.make_hits
    monkeypatch.setattr(fakes, "make_hits", lambda source, query: same(source, "fixture"))
    engine = FakeEngine(sources=["files", "tasks"])
    page = make_page(qtbot, engine)
    page.search("fixture")
    await until(lambda: page.controller.final and page.model.rowCount(page.model.index(0, 0)) == 1)
    kept = page.model.hit_at(page.model.index(0, 0))
    page.tree.expand(page.model.index(0, 0))
    page.search("fixture scope")
    await until(lambda: page.controller.final and page.model.response is not None
                and page.model.response.request.query == "fixture scope")
    row = page.model.row_of(kept.id)  # the same hit, now the answer to another question
    assert row.isValid() and page.model.rowCount(row) == 1
    assert not page.tree.isExpanded(row)


@pytest.mark.asyncio
async def test_live_updates_keep_selection_and_expansion_and_refresh_the_detail(qtbot: object) -> None:
    engine = FakeEngine(sources=["files", "tasks", "git"],
                        delay=lambda s, q: {"files": 0.01, "tasks": 0.1, "git": 0.6}[s])
    page = make_page(qtbot, engine)
    page.search("fixture")
    await until(lambda: page.model.rowCount() == 5)  # files and tasks in: their copies folded
    assert not page.controller.final
    top = page.model.index(0, 0)
    kept = page.model.hit_at(top)
    assert kept is not None and page.model.rowCount(top) == 1
    page.tree.expand(top)
    page.tree.setCurrentIndex(top)
    # The detail follows in its own slice: on a loaded machine, a moment later.
    await until(lambda: "Agreed by" in page.detail.group.text() and "tasks" in page.detail.group.text())
    await until(lambda: page.controller.final)
    await until(lambda: "git" in page.detail.group.text())  # the detail follows in its own slice
    row = page.model.row_of(kept.id)
    assert row.isValid() and page.tree.isExpanded(row) and page.model.rowCount(row) == 2
    assert page.model.hit_at(page.tree.currentIndex()).id == kept.id
    assert page.detail.hit is page.model.hit_at(row)  # the newest copy of the hit, not the first


@pytest.mark.asyncio
async def test_no_confident_result_is_said_instead_of_listing_noise(qtbot: object) -> None:
    engine = FakeEngine(sources=["files", "tasks"])
    page = make_page(qtbot, engine)
    page.search(f"{fakes.WEAK_PREFIX} frobnicator")
    await until(lambda: page.controller.final and page.empty.state == "not-confident")
    assert page.results.currentWidget() is page.empty
    assert "No confident results" in page.empty.title.text()
    assert page.empty.weak_button.isVisible() and str(page.model.rowCount()) in page.empty.weak_button.text()
    assert page.detail.hit is None  # none of the hidden results is shown beside the message
    page.query.setFocus()
    QTest.keyClick(page.query, Qt.Key.Key_Down)  # from the keyboard: ↓ reaches the button
    assert page.empty.weak_button.hasFocus()
    QTest.keyClick(page.empty.weak_button, Qt.Key.Key_Return)
    assert page.results.currentWidget() is page.tree
    assert page.detail.hit is not None and page.detail.hit.id == page.model.hit_at(page.tree.currentIndex()).id
    page.search("fixture")  # a real question lists its results at once
    await until(lambda: page.controller.final and page.model.response is not None
                and page.model.response.request.query == "fixture")
    await asyncio.sleep(0.05)
    assert page.results.currentWidget() is page.tree


def test_a_long_summary_never_widens_the_strip(qtbot: object) -> None:
    from tributary.app.search.source_strip import SourceStrip

    strip = SourceStrip()
    qtbot.addWidget(strip)  # type: ignore[attr-defined]
    before = strip.minimumSizeHint().width()
    strip.set_reports([], "30 results · 11/12 sources · conceptual query · " + "a note " * 60)
    assert strip.minimumSizeHint().width() <= before + 80
    strip.resize(400, strip.sizeHint().height())
    assert strip.summary.text() != strip.summary.full_text  # elided, whole in the tooltip
    assert strip.summary.toolTip() == strip.summary.full_text


@pytest.mark.asyncio
async def test_paths_stay_listed_in_a_1024_by_640_window(qtbot: object) -> None:
    """On a 1,024 × 640 screen the window's results still show where each hit is (the
    badges give way first: the detail pane names the sources)."""
    from tributary.app.search.results_model import LOCATION, SOURCES
    from tributary.app.window import MainWindow

    engine = FakeEngine(sources=["files", "tasks", "git"])
    window = MainWindow(lambda: engine, RecentQueries(None))
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    window.resize(1024, 610)  # the screen less a title bar
    window.show()
    page = window.search
    page.search("fixture")
    await until(lambda: page.controller.final and page.model.rowCount() > 0)
    await asyncio.sleep(0.05)
    header = page.tree.header()
    assert not header.isSectionHidden(LOCATION)
    assert header.sectionSize(LOCATION) >= 110
    assert header.isSectionHidden(SOURCES)
    window.resize(1366, 740)
    await asyncio.sleep(0.05)
    assert not header.isSectionHidden(LOCATION) and not header.isSectionHidden(SOURCES)


@pytest.mark.asyncio
async def test_a_search_in_flight_says_it_is_asking(qtbot: object) -> None:
    """Before the first source answers, the results area says what is being asked, not
    "type a question"; the results replace it as they come."""
    engine = FakeEngine(sources=["files", "tasks"], delay=fixed(0.5))
    page = make_page(qtbot, engine)
    page.search("fixture")
    assert page.empty.state == "asking" and "fixture" in page.empty.title.text()
    assert page.results.currentWidget() is page.empty
    await until(lambda: page.model.rowCount() > 0, timeout=120)  # (a deadline only for a failing run)
    await asyncio.sleep(0.05)
    assert page.results.currentWidget() is page.tree


def test_alt_and_a_digit_opens_that_page_from_the_keyboard(qtbot: object) -> None:
    """Alt+1 … Alt+9 open the sidebar's pages in order (Ctrl+1 / Ctrl+2 are the search
    page's tabs) and hand the page the keyboard; the entry's tooltip names its key."""
    from PySide6.QtGui import QShortcut
    from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

    from tributary.app.window import MainWindow

    window = MainWindow(lambda: FakeEngine(sources=["files"]), RecentQueries(None))
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    other = QWidget()
    QVBoxLayout(other).addWidget(field := QLineEdit())
    window.add_page("Indexes", "search", other)
    window.resize(1366, 740)
    window.show()
    keys = {s.key().toString(): s for s in window.findChildren(QShortcut) if s.parent() is window}
    assert {"Alt+1", "Alt+2"} <= set(keys) and "Alt+3" not in keys
    keys["Alt+2"].activated.emit()  # (offscreen, the window is never active for a key press)
    assert window.pages.currentWidget() is other and window.sidebar.currentRow() == 1
    assert window.focusWidget() is field  # the page has the keyboard
    keys["Alt+1"].activated.emit()
    assert window.pages.currentWidget() is window.search and window.focusWidget() is window.search.query
    assert window.sidebar.item(1).toolTip() == "Alt+2"
    window.set_compact(True)
    assert window.sidebar.item(1).toolTip() == "Indexes (Alt+2)"


def test_enter_presses_the_focused_button_as_space_does(qtbot: object) -> None:
    """A keyboard user tabs to *Add a repository…* and presses Enter: the button is
    pressed (Qt's buttons take Enter only in dialogs); Enter in a field presses none."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QLineEdit, QPushButton, QVBoxLayout, QWidget

    from tributary.app.window import MainWindow

    window = MainWindow(lambda: FakeEngine(sources=["files"]), RecentQueries(None))
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    other = QWidget()
    layout = QVBoxLayout(other)
    layout.addWidget(field := QLineEdit())
    layout.addWidget(button := QPushButton("Add repository…"))
    window.add_page("Indexes", "search", other)
    window.resize(1366, 740)
    window.show()
    window.open_page(1)
    pressed: list[bool] = []
    button.clicked.connect(lambda: pressed.append(True))
    requested: list[bool] = []
    window.search.add_repository_requested.connect(lambda: requested.append(True))
    QTest.keyClick(field, Qt.Key.Key_Return)
    assert pressed == []
    button.setFocus()
    QTest.keyClick(button, Qt.Key.Key_Return)
    QTest.keyClick(button, Qt.Key.Key_Enter)
    assert pressed == [True, True]
    window.open_page(0)
    window.search.empty.show_first_run()
    window.search.empty.add_button.setFocus()
    QTest.keyClick(window.search.empty.add_button, Qt.Key.Key_Return)
    assert requested == [True]


@pytest.mark.asyncio
async def test_enter_searches_what_was_typed_not_the_recent_query_offered(qtbot: object) -> None:
    """A recent query is offered inline as one types; Enter asks what was typed, and
    End takes the offer first."""
    engine = FakeEngine(delay=fixed(0.0))
    page = make_page(qtbot, engine)
    issue = "dependencies with yield: exit code runs before the background tasks finish"
    page.query.setText(issue)
    QTest.keyClick(page.query, Qt.Key.Key_Return)
    await until(lambda: page.controller.final and page.controller.query == issue)
    page.query.clear()
    QTest.keyClicks(page.query, "dependencies with yield")
    assert page.query.text() == issue and page.query.hasSelectedText()  # offered inline
    QTest.keyClick(page.query, Qt.Key.Key_Return)
    await until(lambda: page.controller.final and page.controller.query == "dependencies with yield")
    assert page.query.text() == "dependencies with yield"
    page.query.clear()
    QTest.keyClicks(page.query, "dependencies with yield: exit")  # only the issue starts so
    QTest.keyClick(page.query, Qt.Key.Key_End)
    QTest.keyClick(page.query, Qt.Key.Key_Return)
    await until(lambda: page.controller.final and page.controller.query == issue)


@pytest.mark.asyncio
async def test_a_filter_control_keeps_a_pasted_issues_lines(qtbot: object) -> None:
    """Choosing a source rewrote the query as its words and filters, and the words were
    joined into one line: a pasted issue lost its title and code blocks and was read as
    another question."""
    from tributary.engine.model import SearchFilters
    from tributary.engine.query.syntax import parse_query

    engine = FakeEngine(sources=["files", "tasks"], delay=fixed(0.0))
    page = make_page(qtbot, engine)
    issue = ("Exception after yield is swallowed\n\n```python\ndef get_db():\n    yield db\n```\n"
             "See `solve_dependencies`.")
    page.query.setText(issue)
    QTest.keyClick(page.query, Qt.Key.Key_Return)
    await until(lambda: page.controller.final and page.controller.query == issue)
    page.filters.changed.emit(SearchFilters(sources=["files"]))
    assert page.query.text() == issue + " source:files"
    await until(lambda: page.controller.final and page.controller.query == page.query.text())
    assert parse_query(page.query.text()).text == issue
