"""The quick-query popup's keyboard flow: type, Enter copies the context, Esc hides."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest

from tests.app.fakes import FakeEngine, fixed
from tributary.app.tray import QuickPopup, TrayController


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


def open_popup(qtbot: object, engine: FakeEngine, clipboard: str = "") -> QuickPopup:
    """The popup over ``engine``, shown, with the clipboard holding ``clipboard``."""
    popup = QuickPopup(lambda: engine)
    qtbot.addWidget(popup)  # type: ignore[attr-defined]
    QGuiApplication.clipboard().setText(clipboard)
    popup.popup()
    return popup


@pytest.mark.asyncio
async def test_type_enter_copies_context_and_hides(qtbot: object) -> None:
    engine = FakeEngine(delay=fixed(0.02))
    popup = QuickPopup(lambda: engine)
    qtbot.addWidget(popup)  # type: ignore[attr-defined]
    QGuiApplication.clipboard().setText("")
    copied: list[int] = []
    popup.copied.connect(copied.append)
    popup.popup()
    assert popup.isVisible()
    QTest.keyClicks(popup.query, "fixture")
    await until(lambda: popup.controller.final)
    assert popup.results.count() > 0
    QTest.keyClick(popup.query, Qt.Key.Key_Return)
    response = popup.controller.response
    assert response is not None and response.context is not None
    assert QGuiApplication.clipboard().text() == response.context.text
    assert copied == [response.context.token_count]
    assert not popup.isVisible()


@pytest.mark.asyncio
async def test_arrows_pick_a_hit_enter_copies_it_ctrl_enter_copies_all(qtbot: object) -> None:
    engine = FakeEngine(delay=fixed(0.02))
    popup = QuickPopup(lambda: engine)
    qtbot.addWidget(popup)  # type: ignore[attr-defined]
    popup.popup()
    QTest.keyClicks(popup.query, "fixture")
    await until(lambda: popup.controller.final)
    assert popup.results.count() > 1
    assert "Enter copies all the context" in popup.status.text()  # nothing picked yet
    QTest.keyClick(popup.query, Qt.Key.Key_Down)
    QTest.keyClick(popup.query, Qt.Key.Key_Down)
    assert popup.results.currentRow() == 1
    assert "Enter copies this result" in popup.status.text()
    assert popup.status.text().startswith(f"{len(popup.controller.response.hits)} results")  # type: ignore[union-attr]
    response = popup.controller.response
    assert response is not None and response.context is not None
    second = response.hits[1]
    QTest.keyClick(popup.query, Qt.Key.Key_Return)
    assert second.content in QGuiApplication.clipboard().text()
    assert QGuiApplication.clipboard().text() != response.context.text
    assert not popup.isVisible()
    popup.popup()
    QTest.keyClick(popup.query, Qt.Key.Key_Down)
    QTest.keyClick(popup.query, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == response.context.text


@pytest.mark.asyncio
async def test_enter_before_results_copies_when_search_finishes(qtbot: object) -> None:
    engine = FakeEngine(delay=fixed(0.1))
    popup = open_popup(qtbot, engine)
    popup.query.setText("parametrize")  # pasted: no debounce ran yet
    QTest.keyClick(popup.query, Qt.Key.Key_Enter)
    assert popup.isVisible()
    await until(lambda: not popup.isVisible())
    assert "parametrize" in QGuiApplication.clipboard().text()
    assert engine.started == ["parametrize"]


@pytest.mark.asyncio
async def test_escape_hides_without_copying(qtbot: object) -> None:
    engine = FakeEngine()
    popup = QuickPopup(lambda: engine)
    qtbot.addWidget(popup)  # type: ignore[attr-defined]
    QGuiApplication.clipboard().setText("untouched")
    popup.popup()
    QTest.keyClicks(popup.query, "abc")
    QTest.keyClick(popup.query, Qt.Key.Key_Escape)
    assert not popup.isVisible()
    assert QGuiApplication.clipboard().text() == "untouched"


def test_tray_falls_back_when_unavailable(qtbot: object) -> None:
    tray = TrayController()
    # Offscreen has no system tray: the controller says so and creates no icon.
    assert tray.available is False and tray.icon is None
    actions = [a.text() for a in tray.menu.actions() if a.text()]
    assert actions == ["Show window", "Quick query", "Settings", "Quit Tributary"]


def test_the_popup_stays_whole_on_a_small_or_scaled_screen() -> None:
    """At 1.5× a 1366×768 screen is 910×512 to Qt: the popup is moved up and shrunk
    so its footer stays on the screen."""
    from PySide6.QtCore import QRect

    from tributary.app.tray import POPUP_SIZE, popup_geometry

    for area in (QRect(0, 0, 910, 512), QRect(0, 0, 683, 400), QRect(0, 24, 1366, 744), QRect(1366, 0, 1024, 640)):
        placed = popup_geometry(area, POPUP_SIZE)
        assert area.contains(placed), (area, placed)
        assert placed.width() <= POPUP_SIZE.width() and placed.height() <= POPUP_SIZE.height()
    roomy = popup_geometry(QRect(0, 0, 1920, 1080), POPUP_SIZE)
    assert roomy.size() == POPUP_SIZE and roomy.top() == 1080 // 5


@pytest.mark.asyncio
async def test_the_popup_names_the_sources_it_waits_on(qtbot: object) -> None:
    engine = FakeEngine(sources=["files", "slowpoke"], delay=lambda s, q: {"files": 0.0, "slowpoke": 3600.0}[s])
    popup = QuickPopup(lambda: engine)
    qtbot.addWidget(popup)  # type: ignore[attr-defined]
    popup.popup()
    popup.controller.submit("fixture")
    await until(lambda: "waiting for slowpoke" in popup.status.text())  # (cancelled when the test ends)


@pytest.mark.asyncio
async def test_enter_waits_for_a_slow_source_and_enter_again_copies_what_is_there(qtbot: object) -> None:
    engine = FakeEngine(sources=["files", "slowpoke"], delay=lambda s, q: {"files": 0.0, "slowpoke": 3600.0}[s])
    popup = open_popup(qtbot, engine)
    popup.query.setText("fixture")
    QTest.keyClick(popup.query, Qt.Key.Key_Return)
    await until(lambda: "waiting for slowpoke" in popup.status.text())  # (cancelled when the test ends)
    assert popup.isVisible() and "Enter again copies it now" in popup.status.text()
    QTest.keyClick(popup.query, Qt.Key.Key_Return)
    response = popup.controller.response
    assert response is not None and response.context is not None and not popup.controller.final
    assert QGuiApplication.clipboard().text() == response.context.text
    assert not popup.isVisible()
    assert engine.started == ["fixture"]  # the second Enter did not search again


@pytest.mark.asyncio
async def test_typing_after_enter_cancels_the_copy_it_asked_for(qtbot: object) -> None:
    popup = open_popup(qtbot, FakeEngine(delay=fixed(0.1)), clipboard="untouched")
    popup.query.setText("fixture")
    QTest.keyClick(popup.query, Qt.Key.Key_Return)
    QTest.keyClicks(popup.query, "s scope")
    await until(lambda: popup.controller.final and popup.controller.query == "fixtures scope")
    assert popup.isVisible() and QGuiApplication.clipboard().text() == "untouched"


def test_a_long_title_is_elided_not_scrolled_sideways(qtbot: object) -> None:
    popup = open_popup(qtbot, FakeEngine())
    popup.results.addItem("Custom Request and APIRoute class > " * 20 + "\ndocs/en/custom-request.md:101-109 · files")
    QGuiApplication.processEvents()
    assert not popup.results.horizontalScrollBar().isVisible()
    assert popup.results.textElideMode() == Qt.TextElideMode.ElideRight


@pytest.mark.asyncio
async def test_a_result_names_every_source_that_found_it(qtbot: object) -> None:
    """The popup named only the kept hit's source, where the window's list shows each
    source whose hit was folded into it."""
    engine = FakeEngine(delay=fixed(0.0))
    popup = open_popup(qtbot, engine)
    QTest.keyClicks(popup.query, "fixture")
    await until(lambda: popup.controller.final)
    response = popup.controller.response
    assert response is not None and response.groups
    group = response.groups[0]
    row = [h.id for h in response.hits].index(group.kept.id)
    assert len(group.sources) > 1
    assert popup.results.item(row).text().endswith(" · " + ", ".join(group.sources))


@pytest.mark.asyncio
async def test_rows_of_several_repositories_say_whose_each_is(qtbot: object) -> None:
    """With two repositories indexed, `tests/test_basic.py` alone did not say which."""
    from collections.abc import AsyncIterator

    from tributary.engine.model import SearchRequest, SearchUpdate

    class TwoRepositories(FakeEngine):
        repos: tuple[str, ...] = ("pytest-dev/pytest", "pallets/click")

        async def search_stream(self, request: SearchRequest) -> AsyncIterator[SearchUpdate]:
            async for update in super().search_stream(request):
                for i, hit in enumerate(update.response.hits):
                    hit.metadata["repo"] = self.repos[i % len(self.repos)]
                yield update

    engine = TwoRepositories(delay=fixed(0.0))
    popup = open_popup(qtbot, engine)
    QTest.keyClicks(popup.query, "fixture")
    await until(lambda: popup.controller.final)
    response = popup.controller.response
    assert response is not None and len(response.hits) > 1
    first = popup.results.item(0).text().splitlines()[1]
    assert first.startswith(f"{response.hits[0].location} in pytest-dev/pytest · "), first
    assert " in pallets/click · " in popup.results.item(1).text()

    TwoRepositories.repos = ("pytest-dev/pytest",)  # one repository: rows as before
    QTest.keyClicks(popup.query, "s")
    await until(lambda: popup.controller.final and popup.controller.response is not None
                and popup.controller.response.request.query == "fixtures")
    assert " in pytest-dev/pytest" not in popup.results.item(0).text()
