"""The main window: a sidebar of pages (search, sources & routing, indexes) and a status bar."""

from __future__ import annotations

import functools
from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QResizeEvent,
    QShortcut,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPushButton,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tributary.app import theme
from tributary.app.background import TaskIndicator, runner
from tributary.app.elided import ElidedLabel
from tributary.app.recent_queries import RecentQueries
from tributary.app.search.page import SearchPage
from tributary.engine.api import EngineLike

SIDEBAR_WIDTH = 196
# Icons only: an entry's icon between its style-sheet margins and padding.
COMPACT_SIDEBAR_WIDTH = 60


class MainWindow(QMainWindow):
    close_requested = Signal()  # the shell decides: hide to tray or quit
    quick_query_requested = Signal()

    def __init__(self, engine: Callable[[], EngineLike | None], recent_queries: RecentQueries,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tributary")
        self.setWindowIcon(theme.app_icon())
        self._engine = engine
        self.pages = QStackedWidget()
        self.sidebar = QListWidget()
        self.sidebar.setObjectName("Sidebar")
        self.sidebar.setIconSize(QSize(18, 18))
        self.sidebar.setMinimumWidth(COMPACT_SIDEBAR_WIDTH)
        self.compact = False  # the sidebar shows icons only (a narrow window: tiled, or scaled up)
        self._builders: dict[QWidget, Callable[[], QWidget]] = {}
        self.sidebar.currentRowChanged.connect(self._page_changed)
        # A click (or Enter) on a page's entry hands the keyboard to that page.
        self.sidebar.clicked.connect(lambda _: self.focus_page())
        self.sidebar.activated.connect(lambda _: self.focus_page())

        self.search = SearchPage(engine, recent_queries)
        self.search.message.connect(self.show_message)
        self.add_page("Search", "search", self.search)

        self.brand = brand = QLabel("  Tributary")
        brand.setObjectName("Brand")
        self.side = side = QWidget()
        side.setObjectName("Sidebar")
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 8)
        side_layout.setSpacing(0)
        side_layout.addWidget(brand)
        side_layout.addWidget(self.sidebar, 1)
        self.engine_state = QLabel("Starting engine…")
        self.engine_state.setObjectName("Hint")
        self.engine_state.setContentsMargins(16, 0, 8, 0)
        self.engine_state.setWordWrap(True)
        side_layout.addWidget(self.engine_state)
        self.tray_note = QLabel()
        self.tray_note.setObjectName("Hint")
        self.tray_note.setContentsMargins(16, 4, 8, 0)
        self.tray_note.setWordWrap(True)
        self.tray_note.setVisible(False)
        side_layout.addWidget(self.tray_note)
        # The sidebar gives way first when the window is narrow: down to its icons.
        side.setMinimumWidth(COMPACT_SIDEBAR_WIDTH)
        side.setMaximumWidth(SIDEBAR_WIDTH)

        central = QWidget()
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(side)
        layout.addWidget(self.pages, 1)
        self.setCentralWidget(central)

        self.indicator = TaskIndicator(runner())
        # Messages in a label of their own, elided beside the task indicator (the status
        # bar's own message is drawn across the whole bar, over the indicator).
        self.status_text = ElidedLabel()
        self.statusBar().addWidget(self.status_text, 1)
        # The engine's state, where it stays visible while the sidebar shows icons only.
        self.engine_state_compact = QLabel()
        self.engine_state_compact.setObjectName("Hint")
        self.engine_state_compact.setVisible(False)
        self.statusBar().addPermanentWidget(self.engine_state_compact)
        self.statusBar().addPermanentWidget(self.indicator)
        self._status_timer = QTimer(self, singleShot=True)
        self._status_timer.timeout.connect(lambda: self._set_status(""))
        self.sidebar.setCurrentRow(0)
        # The query box from anywhere in the window (whichever page is shown).
        for keys in ("Ctrl+L", "Ctrl+K", "Ctrl+F"):
            QShortcut(QKeySequence(keys), self, self.focus_search)
        QShortcut(QKeySequence("Ctrl+Q"), self, self.close_requested.emit)
        QShortcut(QKeySequence("Ctrl+Shift+Space"), self, self.quick_query_requested.emit)
        self._fit_to_screen()

    def add_page(self, title: str, icon_name: str, page: QWidget) -> None:
        """A page and its sidebar entry; the first nine are also Alt+1 … Alt+9."""
        row = self.sidebar.count()
        item = QListWidgetItem(theme.icon(icon_name), "" if self.compact else title)
        item.setSizeHint(QSize(0, 38))
        item.setData(Qt.ItemDataRole.AccessibleTextRole, title)
        self.sidebar.addItem(item)
        self.pages.addWidget(page)
        if row < 9:
            QShortcut(QKeySequence(f"Alt+{row + 1}"), self, functools.partial(self.open_page, row))
        item.setToolTip(self._page_tip(row))

    def open_page(self, row: int) -> None:
        """Show the page of sidebar entry ``row`` and give it the keyboard."""
        self.sidebar.setCurrentRow(row)
        self.focus_page()

    def _page_tip(self, row: int) -> str:
        item = self.sidebar.item(row)
        title = item.data(Qt.ItemDataRole.AccessibleTextRole)
        keys = f"Alt+{row + 1}" if row < 9 else ""
        if self.compact:
            return f"{title} ({keys})" if keys else title
        return keys

    def add_lazy_page(self, title: str, icon_name: str, build: Callable[[], QWidget]) -> QWidget:
        """A page built the first time it is shown (keeps start-up to the search page)."""
        holder = QWidget()
        layout = QVBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        self._builders[holder] = build
        self.add_page(title, icon_name, holder)
        return holder

    def fill_page(self, holder: QWidget, page: QWidget) -> None:
        self._builders.pop(holder, None)
        layout = holder.layout()
        if layout is not None and layout.count() == 0:
            layout.addWidget(page)

    def _page_changed(self, row: int) -> None:
        holder = self.pages.widget(row)
        if holder is None:
            return
        build = self._builders.pop(holder, None)
        if build is not None:
            self.fill_page(holder, build())
        self.pages.setCurrentIndex(row)

    def show_page(self, widget: QWidget) -> None:
        index = self.pages.indexOf(widget)
        parent = widget.parentWidget()
        if index < 0 and parent is not None:
            index = self.pages.indexOf(parent)
        self.sidebar.setCurrentRow(index)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        pages = self.pages.minimumSizeHint().width()
        self.set_compact(event.size().width() < SIDEBAR_WIDTH + pages)

    def set_compact(self, compact: bool) -> None:
        """Icons only in the sidebar (names as tooltips, the engine's state in the status
        bar), so a narrow window keeps its room for the page."""
        if compact == self.compact:
            return
        self.compact = compact
        self.side.setMaximumWidth(COMPACT_SIDEBAR_WIDTH if compact else SIDEBAR_WIDTH)
        for row in range(self.sidebar.count()):
            item = self.sidebar.item(row)
            title = item.data(Qt.ItemDataRole.AccessibleTextRole)  # the page's name, always kept
            item.setText("" if compact else title)
            item.setToolTip(self._page_tip(row))
        self.brand.setVisible(not compact)
        self.engine_state.setVisible(not compact)
        self.tray_note.setVisible(not compact and bool(self.tray_note.text()))
        self.engine_state_compact.setVisible(compact)  # its text kept by set_engine_state

    def _fit_to_screen(self) -> None:
        """A first size that fits the screen it opens on (never larger than it)."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        area = screen.availableGeometry() if screen is not None else None
        width, height = 1200, 760
        if area is not None:
            least = self.minimumSizeHint()
            width = min(width, max(least.width(), area.width() - 40), area.width())
            height = min(height, max(least.height(), area.height() - 40), area.height())
        self.resize(width, height)

    def focus_page(self) -> None:
        """Give the keyboard to the page shown: the query box on Search, else the page."""
        page = self.pages.currentWidget()
        if page is self.search:
            self.search.focus_query()
        elif page is not None:
            page.setFocus()
            page.focusNextChild()

    def focus_search(self) -> None:
        self.show_page(self.search)
        self.search.focus_query()

    def show_message(self, text: str, timeout_ms: int = 6000) -> None:
        self._set_status(text)
        self._status_timer.start(max(timeout_ms, 1000 + 40 * len(text)))  # long ones stay longer

    def _set_status(self, text: str) -> None:
        self.status_text.set_full_text(text)

    def message_text(self) -> str:
        """The status message now shown, whole."""
        return self.status_text.full_text

    def set_tray_note(self, text: str) -> None:
        """Say once, where it stays visible, that there is no tray (and what to use)."""
        self.tray_note.setText(text)
        self.tray_note.setVisible(not self.compact)
        self.engine_state_compact.setToolTip(text)

    def set_engine_state(self, text: str) -> None:
        self.engine_state.setText(text)
        self.engine_state_compact.setText(text)

    def bring_to_front(self) -> None:
        self.show()
        self.setWindowState((self.windowState() & ~Qt.WindowState.WindowMinimized) | Qt.WindowState.WindowActive)
        self.raise_()
        self.activateWindow()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter presses the focused button as Space does: Qt's buttons take Enter only in
        dialogs, so a keyboard user's Enter on *Add a repository…* did nothing."""
        button = self.focusWidget()
        if (event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and event.modifiers() == Qt.KeyboardModifier.NoModifier
                and isinstance(button, (QPushButton, QToolButton)) and button.isEnabled()):
            if button.menu() is not None:
                button.showMenu()
            else:
                button.click()
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        event.ignore()
        self.close_requested.emit()
