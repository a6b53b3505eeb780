"""The tray icon and the quick-query popup.

The popup is a frameless window: type, see the top results as sources answer; ↑/↓
select a result, Enter copies it (or, with none selected, the assembled context: the
footer says which), Shift+Enter opens it in the editor, Ctrl+Enter copies the whole
context; Esc hides. Without a system tray (bare X servers, some Wayland desktops) the
app says so and keeps working as a window; the popup stays reachable from a shortcut
and ``tributary toggle``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QRect, QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from tributary.app import safe_text, theme
from tributary.app.open_file import local_file, open_in_editor
from tributary.app.search.controller import SearchController
from tributary.app.search.source_strip import waiting_text
from tributary.engine.api import EngineLike
from tributary.engine.model import (
    ANSWERED,
    Hit,
    SearchResponse,
    SearchUpdate,
    repository_of,
    several_repositories,
)

TOP_RESULTS = 8


class _PopupQuery(QLineEdit):
    enter = Signal()
    enter_all = Signal()  # Ctrl+Enter: the whole context
    enter_open = Signal()  # Shift+Enter: open the selected hit
    escape = Signal()
    step = Signal(int)  # Up/Down: move the selection in the results

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            if mods & Qt.KeyboardModifier.ControlModifier:
                self.enter_all.emit()
            elif mods & Qt.KeyboardModifier.ShiftModifier:
                self.enter_open.emit()
            else:
                self.enter.emit()
        elif key == Qt.Key.Key_Escape:
            self.escape.emit()
        elif key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            self.step.emit(-1 if key == Qt.Key.Key_Up else 1)
        else:
            super().keyPressEvent(event)


POPUP_SIZE = QSize(640, 470)
POPUP_MARGIN = 8  # px kept free around the popup on a screen too small for it


def popup_geometry(area: QRect, size: QSize) -> QRect:
    """Where the popup goes on a screen whose available area is ``area``: centred, a
    fifth of the way down, shrunk and moved up as needed to stay whole inside it (a
    small or scaled screen would otherwise hide its footer below the edge)."""
    width = min(size.width(), area.width() - 2 * POPUP_MARGIN)
    height = min(size.height(), area.height() - 2 * POPUP_MARGIN)
    x = area.center().x() - width // 2
    y = area.top() + area.height() // 5
    y = min(y, area.bottom() + 1 - POPUP_MARGIN - height)
    return QRect(max(x, area.left() + POPUP_MARGIN), max(y, area.top() + POPUP_MARGIN), width, height)


class QuickPopup(QWidget):
    copied = Signal(int)  # tokens copied

    def __init__(self, engine: Callable[[], EngineLike | None], parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Tool | Qt.WindowType.FramelessWindowHint
                         | Qt.WindowType.WindowStaysOnTopHint)
        self.setObjectName("QuickPopup")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setWindowTitle("Tributary quick query")
        self.resize(POPUP_SIZE)
        self.controller = SearchController(engine, key="quick", parent=self)
        self._copy_when_done = False
        self._chosen: int | None = None  # the row picked with ↑/↓ (kept across live updates)
        self._shown_query = ""
        self._summary = ""  # the status line's first line: what answered
        self.query = _PopupQuery()
        self.query.setObjectName("QueryBox")
        self.query.setPlaceholderText("Quick query — ↑↓ pick · Enter copies · Ctrl+Enter copies all context · Esc closes")
        self.query.addAction(theme.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.results = QListWidget()
        self.results.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        # A long title is elided where the popup ends: no scrolling sideways from the keys.
        self.results.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.results.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.status = QLabel("Type to search every source")
        self.status.setObjectName("Hint")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 10)
        layout.addWidget(self.query)
        layout.addWidget(self.results, 1)
        layout.addWidget(self.status)
        self.query.textEdited.connect(self._edited)
        self.query.enter.connect(self.accept)
        self.query.enter_all.connect(self.accept_all)
        self.query.enter_open.connect(self.open_selected)
        self.results.itemDoubleClicked.connect(lambda _: self.open_selected())
        self.query.escape.connect(self.hide)
        self.query.step.connect(self._step)
        self.controller.updated.connect(self._updated)
        self.controller.finished.connect(self._finished)
        self.controller.failed.connect(self.status.setText)
        self.controller.waiting.connect(self.status.setText)
        self.controller.cleared.connect(self._clear)

    def _edited(self, text: str) -> None:
        """Another question: a copy asked for the last one is not made of this one."""
        self._copy_when_done = False
        self.controller.schedule(text)

    def popup(self) -> None:
        screen = self.screen() if self.isVisible() else QGuiApplication.primaryScreen()
        if screen is not None:
            self.setGeometry(popup_geometry(screen.availableGeometry(), POPUP_SIZE))
        self.show()
        self.raise_()
        self.activateWindow()
        self.query.setFocus()
        self.query.selectAll()

    def toggle(self) -> None:
        if self.isVisible():
            self.hide()
        else:
            self.popup()

    def selected_hit(self) -> Hit | None:
        response = self.controller.response
        row = self.results.currentRow()
        if self._chosen is None or response is None or not 0 <= row < min(len(response.hits), TOP_RESULTS):
            return None
        return response.hits[row]

    def accept(self) -> None:
        """Enter: copy the selected hit; none selected, the context of what is typed."""
        hit = self.selected_hit()
        if hit is not None and self.controller.query == self.query.text().strip():
            header = f"{hit.location}\n" if hit.location else ""
            QGuiApplication.clipboard().setText(header + hit.content)
            self.copied.emit(hit.tokens or 0)
            self.hide()
            return
        self.accept_all()

    def open_selected(self) -> None:
        """Shift+Enter (or a double click): open the selected hit's file at its line."""
        hit = self.selected_hit()
        path = local_file(hit) if hit is not None else None
        if path is None:
            self.status.setText("Select a result that is a file (↑/↓), then Shift+Enter opens it")
            return
        problem = open_in_editor(path, hit.start_line if hit is not None else None)
        if problem:
            self.status.setText(problem)
        else:
            self.hide()

    def accept_all(self) -> None:
        """Ctrl+Enter: copy the context of what is typed (searching first if needed)."""
        text = self.query.text().strip()
        if not text:
            return
        response = self.controller.response if self.controller.query == text else None
        if response is not None and (self.controller.final or self._copy_when_done):
            # Done, or asked a second time while a slow source is still out: what is there.
            self._copy(response)
            return
        self._copy_when_done = True
        if self.controller.query != text or self.controller.final:
            self.controller.submit(text)  # (a search of this text already running is waited for)
        self._show_status()

    def _copy(self, response: SearchResponse) -> None:
        self._copy_when_done = False
        if response.context is None:
            self.status.setText("No context to copy")
            return
        QGuiApplication.clipboard().setText(response.context.text)
        self.copied.emit(response.context.token_count)
        self.hide()

    def _step(self, step: int) -> None:
        count = self.results.count()
        if count:
            row = max(0, min(count - 1, self.results.currentRow() + step))
            self.results.setCurrentRow(row)
            self._chosen = row
            self._show_status()

    def _updated(self, update: SearchUpdate) -> None:
        response = update.response
        if self.controller.response is not None and update.response.request.query != self._shown_query:
            self._chosen = None  # another question: nothing picked yet
        self._shown_query = update.response.request.query
        self.results.clear()
        agreeing = {group.kept.id: group.sources for group in response.groups}
        shown = response.hits[:TOP_RESULTS]
        several = several_repositories(shown)  # then each row says whose it is
        for hit in shown:
            where = safe_text.one_line(hit.location, 100) if hit.path or hit.uri else ""
            if where and several and (repo := repository_of(hit)) is not None:
                where += f" in {safe_text.one_line(repo, 60)}"
            where += " · " if where else ""
            sources = ", ".join(agreeing.get(hit.id) or [hit.source])  # every source that found it
            item = QListWidgetItem(f"{safe_text.one_line(hit.headline, 120)}\n{where}{safe_text.one_line(sources, 80)}")
            item.setToolTip(safe_text.tooltip(hit.content, 2000))
            self.results.addItem(item)
        if self._chosen is not None and self.results.count():
            self.results.setCurrentRow(min(self._chosen, self.results.count() - 1))
        answered = sum(1 for s in response.sources if s.status in ANSWERED)
        asked = sum(1 for s in response.sources if s.status != "skipped")
        tokens = response.context.token_count if response.context else 0
        state = "" if update.final else f" · {waiting_text(response.sources)}"
        self._summary = f"{len(response.hits)} results from {answered}/{asked} sources · {tokens:,} tokens of context{state}"
        self._show_status()

    def _show_status(self) -> None:
        """What answered, and what the keys do now: Enter copies the picked result, or
        the whole context while none is picked."""
        if self._copy_when_done:
            keys = "Copies the context when every source has answered · Enter again copies it now · Esc"
        elif self._chosen is None:
            keys = "↑↓ pick a result · Enter copies all the context · Esc closes"
        else:
            keys = "Enter copies this result · Shift+Enter opens it · Ctrl+Enter copies all the context · Esc"
        self.status.setText(f"{self._summary}\n{keys}")

    def _finished(self, response: SearchResponse) -> None:
        if self._copy_when_done:
            self._copy(response)

    def _clear(self) -> None:
        self._chosen = None
        self._summary = ""
        self.results.clear()
        self.status.setText("Type to search every source")


class TrayController(QObject):
    """The tray icon and its menu; ``available`` False means: no tray on this desktop."""

    show_window = Signal()
    quick_query = Signal()
    settings = Signal()
    quit = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.available = QSystemTrayIcon.isSystemTrayAvailable()
        self.icon: QSystemTrayIcon | None = None
        self.menu = QMenu()
        self.menu.addAction(theme.icon("search"), "Show window", self.show_window.emit)
        self.menu.addAction(theme.icon("bolt"), "Quick query", self.quick_query.emit)
        self.menu.addAction(theme.icon("settings"), "Settings", self.settings.emit)
        self.menu.addSeparator()
        self.menu.addAction("Quit Tributary", self.quit.emit)
        if self.available:
            self.icon = QSystemTrayIcon(theme.app_icon(), self)
            self.icon.setToolTip("Tributary")
            self.icon.setContextMenu(self.menu)
            self.icon.activated.connect(self._activated)
            self.icon.show()

    def notify(self, text: str) -> None:
        if self.icon is not None:
            self.icon.showMessage("Tributary", text, theme.app_icon(), 2500)

    def hide(self) -> None:
        if self.icon is not None:
            self.icon.hide()

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.quick_query.emit()
        elif reason == QSystemTrayIcon.ActivationReason.DoubleClick:
            self.show_window.emit()
