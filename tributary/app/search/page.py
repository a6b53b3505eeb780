"""The search page: query, controls, hints, source status strip, results tree, detail,
context — and feedback: "Useful" / "Not useful" on a hit (detail pane buttons, the
results' context menu, Ctrl+Up / Ctrl+Down) credits every source that returned it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QSplitter,
    QStackedWidget,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from tributary.app import safe_text, theme
from tributary.app.background import describe_error, run_async
from tributary.app.combo_box import ComboBox
from tributary.app.elided import elide_path, is_path
from tributary.app.layouts import scrolled_down
from tributary.app.open_file import local_file, open_in_editor, reveal
from tributary.app.recent_queries import RecentQueries
from tributary.app.search.badges import badges_height
from tributary.app.search.context_preview import ContextPreview
from tributary.app.search.controller import SearchController
from tributary.app.search.detail import (
    NOT_USEFUL_KEYS,
    USEFUL_KEYS,
    DetailPane,
    commits_listed_first,
    ranking_note,
)
from tributary.app.search.empty_state import EmptyState
from tributary.app.search.filters_bar import FiltersBar
from tributary.app.search.hints import HintsBar, count_hints, related
from tributary.app.search.query_box import QueryBox
from tributary.app.search.results_model import (
    BADGE_PADDING,
    HIT_ROLE,
    LOCATION,
    MEMBER_ROLE,
    RANK,
    SCORE,
    SOURCES,
    TITLE,
    ResultsModel,
    RowToolTips,
)
from tributary.app.search.source_strip import LogWindow, SourceStrip, waiting_text
from tributary.app.spin_box import SpinBox
from tributary.engine.api import EngineLike, format_filters, is_task_question, parse_query
from tributary.engine.config.schema import TOP_K_MAX, TOP_K_MIN
from tributary.engine.model import (
    ANSWERED,
    FUSION_STRATEGIES,
    ContextFormat,
    DedupGroup,
    Hints,
    Hit,
    SearchResponse,
    SearchUpdate,
    SourceReport,
    TaskType,
)

if TYPE_CHECKING:  # (tributary.engine.sources pulls in the MCP SDK: not at the GUI's start)
    from tributary.engine.api import ServerState

RENDER_MS = 40
SOURCES_MIN = 100  # px: the Sources column shows at least one whole badge
TITLE_MIN = 160  # px: the result's name keeps at least this
LOCATION_MIN = 110  # px: a narrower location column is hidden rather than shown as "src…-39"
LIST_MIN_WIDTH = 260  # px: the results' list beside the detail pane
DETAIL_MIN_WIDTH = 300  # px: the detail and context tabs
BADGE_ICON_SPAN = 4096  # px: wider than any Sources column
BADGE_RELAYOUT_MS = 60
STRATEGIES: list[tuple[str, str | None]] = [
    ("Default", None), *(("RRF" if s == "rrf" else s.capitalize(), s) for s in FUSION_STRATEGIES)]


class SearchPage(QWidget):
    message = Signal(str)  # for the status bar
    feedback_recorded = Signal(object)  # {source: new reputation}
    add_repository_requested = Signal()  # the empty state's next steps
    import_servers_requested = Signal()
    add_server_requested = Signal()

    def __init__(self, engine: Callable[[], EngineLike | None], recent_queries: RecentQueries,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._engine = engine
        self.controller = SearchController(engine, key="search", parent=self)
        self.model = ResultsModel(self)
        self._selected_id: str | None = None
        self._logs: dict[str, LogWindow] = {}
        self._indexing: list[str] = []  # repositories being indexed, not yet searchable

        self.query = QueryBox(recent_queries)
        self.query.setPlaceholderText("Ask every source at once…   (Enter to search now, ↑ for history)")
        self.query.addAction(theme.icon("search"), self.query.ActionPosition.LeadingPosition)
        self.query.textEdited.connect(self._query_edited)
        self.query.submitted.connect(self._submit)
        self.query.escape.connect(self._escape)
        self.query.down_from_end.connect(self._focus_results)

        controls = QHBoxLayout()
        self.strategy = ComboBox()
        for label, value in STRATEGIES:
            self.strategy.addItem(label, value)
        self.strategy.currentIndexChanged.connect(
            lambda _: self.controller.set_options(strategy=self.strategy.currentData()))
        self.limit = SpinBox()
        self.limit.setRange(TOP_K_MIN, TOP_K_MAX)
        self.limit.setValue(30)
        self.limit.setKeyboardTracking(False)
        self.limit.valueChanged.connect(lambda v: self.controller.set_options(top_k=v))
        self.task_type = ComboBox()
        for task in TaskType:
            self.task_type.addItem(task.value.capitalize(), task)
        self.task_type.setCurrentIndex(self.task_type.findData(TaskType.IMPLEMENTATION))
        self.task_type.currentIndexChanged.connect(
            lambda _: self.controller.set_options(task_type=self.task_type.currentData()))
        self.strategy.setToolTip(
            "How the sources' rankings are fused into one: Default is the config's; RRF merges by rank; "
            "Weighted by each source's weight; Composite by keyword match, freshness and reputation; "
            "Cascade asks the best source first; Vote keeps what several sources agree on")
        self.limit.setToolTip("How many results to keep after fusing and folding duplicates "
                              f"({TOP_K_MIN}–{TOP_K_MAX})")
        self.task_type.setToolTip("What the context is for: it sets how the token budget is shared "
                                  "between code, history and docs")
        for label, widget in (("Strategy", self.strategy), ("Top", self.limit), ("Task", self.task_type)):
            caption = QLabel(label)
            caption.setObjectName("Muted")
            caption.setToolTip(widget.toolTip())
            caption.setBuddy(widget)
            controls.addWidget(caption)
            controls.addWidget(widget)
            controls.addSpacing(10)
        self.hints = HintsBar()
        self.hints.selection_folder = self._selected_folder
        self.hints.changed.connect(self._hints_changed)
        self._hints_for = ""  # the question the hints were given for
        controls.addStretch()

        self.filters = FiltersBar(self._source_names)
        self.filters.changed.connect(self._filters_changed)
        # The hints' toggle ends the filters' row: each row then fits half a laptop screen.
        filter_row = QHBoxLayout()
        filter_row.setSpacing(6)
        filter_row.addWidget(self.filters, 1)
        filter_row.addWidget(self.hints.toggle)

        self.strip = SourceStrip(states=self._server_states)
        self.strip.log_requested.connect(self.show_log)

        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.viewport().installEventFilter(RowToolTips(self.tree))
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setRootIsDecorated(True)
        header = self.tree.header()
        header.setStretchLastSection(False)
        # Fixed widths: ResizeToContents would measure every row on every live update.
        header.setSectionResizeMode(RANK, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(TITLE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(LOCATION, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(SOURCES, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(SCORE, QHeaderView.ResizeMode.Fixed)
        header.setMinimumSectionSize(36)
        header.resizeSection(RANK, 48)
        header.resizeSection(SCORE, 64)
        # Location and Sources follow the view's width (``fit_columns``); paths elide
        # their folders first, so the file name stays readable.
        self.tree.setItemDelegateForColumn(LOCATION, PathElide(self.tree))
        self.tree.setItemDelegateForColumn(TITLE, TitleElide(self.tree))
        # The source badges are drawn to the column's width (whole badges only); a
        # drag of the column edge redraws them once it pauses.
        self._badge_timer = QTimer(self, singleShot=True, interval=BADGE_RELAYOUT_MS)
        self._badge_timer.timeout.connect(self._layout_badges)
        header.sectionResized.connect(self._section_resized)
        self.tree.installEventFilter(self)
        self.tree.viewport().installEventFilter(self)
        self._layout_badges()
        self.tree.selectionModel().currentRowChanged.connect(self._current_changed)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)

        self.detail = DetailPane()
        self.detail.feedback_requested.connect(self.feedback)
        # One action per judgement, shared by the shortcut and the context menu.
        self.useful_action = self._feedback_action("Useful", "thumb-up", USEFUL_KEYS, True)
        self.not_useful_action = self._feedback_action("Not useful", "thumb-down", NOT_USEFUL_KEYS, False)
        self.context = ContextPreview()
        self.context.format_changed.connect(lambda f: self.controller.set_options(format=ContextFormat(f)))
        self.context.budget_changed.connect(lambda v: self.controller.set_options(max_tokens=v))
        self.context.budget.setToolTip(
            "Tokens for the whole prompt. The context gets this minus the reserve kept for the "
            "question and the answer (1,000 tokens by default), which is why the bar reads “of …” less.")
        self.context.copied.connect(lambda n: self.message.emit(f"Copied {n:,} tokens of context"))
        self.tabs = QTabWidget()
        # In a scroll area: however tall an answer's detail is (a long breakdown, many
        # folded duplicates), it scrolls inside the pane instead of growing the window.
        self.detail_scroll = scrolled_down(self.detail)
        self.tabs.addTab(self.detail_scroll, "Detail")
        # Scrolled too when the window is short, rather than setting the window's height.
        self.context_scroll = scrolled_down(self.context)
        self.tabs.addTab(self.context_scroll, "Context")

        self.empty = EmptyState()
        self.empty.add_repository.connect(self.add_repository_requested.emit)
        self.empty.import_servers.connect(self.import_servers_requested.emit)
        self.empty.add_server.connect(self.add_server_requested.emit)
        self.empty.example.connect(self.search)
        self.empty.show_weak.connect(self._show_weak_matches)
        self._weak_shown_for: str | None = None  # the query whose weak matches the user asked to see

        splitter = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        self.results = QStackedWidget()
        self.results.addWidget(self.empty)
        self.results.addWidget(self.tree)
        left_layout.addWidget(self.results)
        splitter.addWidget(left)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        # Small enough minimums that the window fits half a 1,366 px screen (or a 1,024 px
        # one scaled by 1.5) beside the sidebar's icons.
        left.setMinimumWidth(LIST_MIN_WIDTH)
        self.tabs.setMinimumWidth(DETAIL_MIN_WIDTH)  # the detail pane's buttons in one row
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([660, 430])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 10)
        layout.setSpacing(10)
        layout.addWidget(self.query)
        layout.addLayout(controls)
        layout.addLayout(filter_row)  # a row of its own: the window stays narrow
        layout.addWidget(self.hints)
        layout.addWidget(self.strip)
        layout.addWidget(splitter, 1)

        # Sources answer in bursts: render at most every RENDER_MS (the final at once),
        # so ten sources answering together cost one redraw, not ten.
        self._pending: SearchUpdate | None = None
        self._engine_mendable = False  # the engine's problem (the controller's) is its config file
        self._render_timer = QTimer(self, singleShot=True, interval=RENDER_MS)
        self._render_timer.timeout.connect(self._render_pending)
        # The detail pane (it highlights code) and then the context preview (it lays
        # out thousands of lines) follow a live update each in an event-loop slice of
        # its own, after the tree and the strip, so no one slice holds the loop long.
        self._detail_timer = QTimer(self, singleShot=True, interval=0)
        self._detail_timer.timeout.connect(self._sync_detail)
        self._context_waiting = ""  # what the shown context still waits for
        self._context_timer = QTimer(self, singleShot=True, interval=0)
        self._context_timer.timeout.connect(self._sync_context)
        self.tabs.currentChanged.connect(lambda _: self._sync_context())
        self.controller.started.connect(self._started)
        self.controller.updated.connect(self._queue)
        self.controller.finished.connect(self._finished)
        self.controller.failed.connect(self.message.emit)
        self.controller.waiting.connect(self.message.emit)
        self.controller.cleared.connect(self._clear)
        self.detail.open_button.clicked.disconnect()
        self.detail.open_button.clicked.connect(self.open_current)
        self.detail.reveal_button.clicked.disconnect()
        self.detail.reveal_button.clicked.connect(self.reveal_current)
        self._auto_selected = False  # the selection is ours (hit #1), not the user's
        self._selecting = False
        self.refresh_empty_state()
        QShortcut(QKeySequence("Ctrl+Shift+C"), self, self.context.copy)
        QShortcut(QKeySequence("Ctrl+1"), self, lambda: self.tabs.setCurrentIndex(0))
        QShortcut(QKeySequence("Ctrl+2"), self, lambda: self.tabs.setCurrentIndex(1))
        QShortcut(QKeySequence("Ctrl+H"), self, self.hints.toggle.toggle)

    def _feedback_action(self, text: str, icon: str, keys: QKeySequence, useful: bool) -> QAction:
        action = QAction(theme.icon(icon), text, self)
        action.setShortcut(keys)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.setToolTip(f"{text} ({keys.toString(QKeySequence.SequenceFormat.NativeText)})")
        action.triggered.connect(lambda: self.feedback(useful))
        self.addAction(action)
        return action
    # -- actions ------------------------------------------------------------------------

    def focus_query(self) -> None:
        self.query.setFocus()
        self.query.selectAll()

    def _query_edited(self, text: str) -> None:
        """Typing: the filter words set the filter controls; the search is scheduled."""
        self.filters.show_filters(parse_query(text).filters)
        self._forget_unrelated_hints(text)
        self.controller.schedule(text)

    def _hints_changed(self, hints: Any) -> None:
        self._hints_for = parse_query(self.query.text()).text
        self.controller.set_options(hints=hints)

    def _forget_unrelated_hints(self, text: str) -> None:
        """Hints given for one question do not silently steer an unrelated one: when the
        new question shares no word with theirs, they are cleared, and the status bar says so."""
        words = parse_query(text).text
        if not self._hints_for:
            self._hints_for = words if count_hints(self.controller.options.hints) else ""
            return
        if not count_hints(self.controller.options.hints) or related(words, self._hints_for):
            return
        if len(words) < 3:
            return  # still typing the first word
        previous, self._hints_for = self._hints_for, ""
        self.hints.reset_quietly()
        self.controller.options = replace(self.controller.options, hints=Hints())
        self.message.emit(f"Hints cleared: they were for “{previous}” (Ctrl+H to set new ones)")

    def _filters_changed(self, filters: Any) -> None:
        """A filter control changed: rewrite the query's filter words and search again."""
        words = parse_query(self.query.text()).text
        text = " ".join(part for part in (words, format_filters(filters)) if part)
        self.query.setText(text)
        if words:
            self.controller.submit(text)

    def _source_names(self) -> list[str]:
        engine = self._engine()
        if engine is None:
            return []
        config = engine.effective_config
        return [name for name, server in config.servers.items() if server.enabled]

    def note_indexing(self, paths: list[str]) -> None:
        """The repositories being indexed that cannot be searched yet (the Indexes page
        says when that changes)."""
        self._indexing = list(paths)
        self.refresh_empty_state()

    def set_engine_problem(self, reason: str | None, *, mendable: bool = False) -> None:
        """Why the engine did not start (None once it has): the results area says so
        instead of "starting", and so does a search typed meanwhile."""
        self._engine_mendable = mendable
        self.controller.engine_problem = reason
        self.refresh_empty_state()

    def refresh_empty_state(self, reason: str = "") -> None:
        """What the results area says when there is nothing to list, and the next step."""
        engine = self._engine()
        response = self.model.response
        if self.model.rowCount():
            if (response is not None and self.controller.final and not response.confident
                    and self._weak_shown_for != response.request.query):
                partial = [w for r in response.sources if r.degraded for w in r.warnings]
                self.empty.show_not_confident(response.request.query, self.model.rowCount(), partial)
                self.results.setCurrentWidget(self.empty)
                self.detail.show_hit(None)  # no listed result: the detail shows none of the hidden ones
            else:
                self.results.setCurrentWidget(self.tree)
            return
        if engine is not None and not self._source_names():
            if self._indexing:
                self.empty.show_indexing(self._indexing)
            else:
                self.empty.show_first_run(reason)
        elif response is not None and self.controller.final and not response.error:
            route = response.route
            self.empty.show_no_results(response.request.query, not response.request.filters.is_empty(),
                                       route.matched_rules, route.servers, response.notes)
        elif reason:
            self.empty.show_problem(reason)
        elif engine is not None and self.controller.query and not self.controller.final:
            self.empty.show_asking(self.controller.query)
        elif engine is None and self.controller.engine_problem is not None:
            self.empty.show_engine_problem(self.controller.engine_problem, mendable=self._engine_mendable)
        else:
            self.empty.show_ready(starting=engine is None)
        self.results.setCurrentWidget(self.empty)

    # -- the selected hit ---------------------------------------------------------------

    def current_hit(self) -> Hit | None:
        index = self.tree.currentIndex()
        return self.model.hit_at(index.siblingAtColumn(0)) if index.isValid() else None

    def open_current(self) -> None:
        """Open the selected hit's file in the editor at its first line."""
        hit = self.current_hit()
        if hit is None:
            self.message.emit("Select a result to open it")
            return
        path = local_file(hit)
        if path is None:
            self.message.emit(f"“{safe_text.one_line(hit.title, 80)}” is not a file on this machine")
            return
        problem = open_in_editor(path, hit.start_line)
        self.message.emit(problem or f"Opened {path}" + (f":{hit.start_line}" if hit.start_line else ""))

    def _selected_folder(self) -> str:
        """The folder of the selected result's file, where related files likely are."""
        hit = self.current_hit()
        path = local_file(hit) if hit is not None else None
        return str(path.parent) if path is not None and path.parent.is_dir() else ""

    def reveal_current(self) -> None:
        hit = self.current_hit()
        path = local_file(hit) if hit is not None else None
        if path is None:
            self.message.emit("The selected result is not a file on this machine")
            return
        self.message.emit(reveal(path) or f"Showing {path.parent}")

    def copy_current(self) -> None:
        """Copy the selected hit's snippet (its text as the sources returned it)."""
        hit = self.current_hit()
        if hit is None:
            return
        QGuiApplication.clipboard().setText(hit.content)
        where = f" ({safe_text.one_line(hit.location, 80)})" if hit.location else ""
        self.message.emit(f"Copied the snippet{where}")

    def fit_columns(self) -> None:
        """Share the view's width: the result's name keeps the most room; location and
        sources take a share of what is left, within bounds; rank and score stay narrow."""
        header = self.tree.header()
        width = self.tree.viewport().width()
        fixed = header.sectionSize(RANK) + header.sectionSize(SCORE)
        free = max(0, width - fixed)
        sources = max(SOURCES_MIN, min(150, int(free * 0.16)))  # room for one whole badge
        sources = max(64, min(sources, free - TITLE_MIN))  # very narrow: the name before badges
        location = max(80, min(420, int(free * 0.38)))
        if free - sources - location < TITLE_MIN:  # narrow: the name first
            location = free - sources - TITLE_MIN
        # Narrow: the badges go before the paths (the detail pane names the sources, and
        # a path is what tells two results apart); narrower still, the location goes too
        # (the detail pane and the row's tooltip still show it) and the name gets its room.
        hide_sources = location < LOCATION_MIN
        if hide_sources:  # the name still keeps at least as much room as the path
            location = min(420, free - TITLE_MIN, free // 2)
        header.setSectionHidden(SOURCES, hide_sources)
        header.setSectionHidden(LOCATION, location < LOCATION_MIN)
        self.model.set_names_files(location < LOCATION_MIN)
        for column, size in ((SOURCES, sources), (LOCATION, max(location, LOCATION_MIN))):
            if header.sectionSize(column) != size:
                header.resizeSection(column, size)

    def search(self, text: str) -> None:
        """Run ``text`` now, as if typed and Enter pressed."""
        self.query.setText(text)
        self._submit(text)

    def _submit(self, text: str) -> None:
        self._forget_unrelated_hints(text)
        if text.strip():
            self.query.remember(text)
            self.controller.submit(text)

    def _results_key(self, event: QKeyEvent) -> bool:
        """Keys on the results: Enter opens, Ctrl+C copies, Esc and typing go to the query."""
        key, mods = event.key(), event.modifiers()
        plain = not (mods & ~(Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.KeypadModifier))
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and plain:
            self.open_current()
            return True
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_current()
            return True
        if key == Qt.Key.Key_Escape:
            self.query.setFocus()
            return True
        text = event.text()
        if plain and text and text.isprintable() and not text.isspace():
            self.query.setFocus()
            self.query.end(False)
            self.query.insert(text)
            self._query_edited(self.query.text())
            return True
        if key == Qt.Key.Key_Backspace and plain:
            self.query.setFocus()
            self.query.end(False)
            self.query.backspace()
            self._query_edited(self.query.text())
            return True
        return False

    def _escape(self) -> None:
        if self.query.text():
            self.query.clear()
            self.controller.schedule("")

    def _focus_results(self) -> None:
        if self._weak_hidden():  # no confident result: ↓ reaches the button, Enter shows them
            self.empty.weak_button.setFocus()
        elif self.model.rowCount():
            self.tree.setFocus()
            if not self.tree.currentIndex().isValid():
                self.tree.setCurrentIndex(self.model.index(0, 0))

    def _server_states(self) -> list[ServerState]:
        """The engine's server states (typical latency, restarts) for the source chips."""
        engine = self._engine()
        return list(engine.server_states()) if engine is not None else []

    def show_log(self, name: str) -> None:
        engine = self._engine()
        if engine is None:
            return
        window = self._logs.get(name)
        if window is None:
            window = LogWindow(name, lambda: engine.stderr_lines(name), self)
            self._logs[name] = window
        window.refresh()
        window.show()
        window.raise_()

    # -- feedback -----------------------------------------------------------------------

    def feedback_target(self, index: QModelIndex | None = None) -> tuple[Hit, DedupGroup | None] | None:
        """The hit a judgement is about and, for a fused row, its dedup group (whose
        every source is credited); a folded child row stands for its own source only."""
        index = self.tree.currentIndex() if index is None else index
        hit = self.model.hit_at(index.siblingAtColumn(0)) if index.isValid() else None
        if hit is None:
            return None
        if index.siblingAtColumn(0).data(MEMBER_ROLE) is not None:
            return hit, None
        response = self.model.response
        return hit, response.group_of(hit.id) if response else None

    def feedback(self, useful: bool) -> None:
        """Record that the current result was useful (or not) for the current query."""
        target = self.feedback_target()
        engine = self._engine()
        if target is None:
            self.message.emit("Select a result to rate it")
            return
        if engine is None:
            self.message.emit("The engine is still starting — try again in a moment.")
            return
        hit, group = target
        response = self.model.response
        query = response.request.query if response else self.controller.query
        run_async(engine.feedback(hit, useful, query, group=group),
                  label="Recording feedback",
                  on_success=functools.partial(self._feedback_recorded, hit.id, useful),
                  on_error=lambda e: self.message.emit(f"Feedback not recorded — {describe_error(e)}"))

    def _feedback_recorded(self, hit_id: str, useful: bool, reputations: dict[str, float]) -> None:
        self.model.set_rating(hit_id, useful)
        if self.detail.hit is not None and self.detail.hit.id == hit_id:
            self.detail.set_rating(useful)
        standings = ", ".join(f"{source} reputation {value:.2f}" for source, value in reputations.items())
        self.message.emit(f"Marked {'useful' if useful else 'not useful'}: {standings}")
        self.feedback_recorded.emit(reputations)

    def _context_menu(self, pos: QPoint) -> None:
        menu = self.context_menu_at(pos)
        if menu is not None:
            menu.popup(self.tree.viewport().mapToGlobal(pos))

    def context_menu_at(self, pos: QPoint) -> QMenu | None:
        """The results' context menu for the row at ``pos`` (made current), not shown."""
        index = self.tree.indexAt(pos)
        hit = self.model.hit_at(index.siblingAtColumn(0)) if index.isValid() else None
        if hit is None:
            return None
        self.tree.setCurrentIndex(index)
        menu = QMenu(self)
        menu.addAction(self.useful_action)
        menu.addAction(self.not_useful_action)
        menu.addSeparator()
        copy = menu.addAction(theme.icon("copy"), "Copy location")
        copy.triggered.connect(lambda: QGuiApplication.clipboard().setText(hit.location))
        copy_snippet = menu.addAction(theme.icon("copy"), "Copy snippet")
        copy_snippet.setShortcut(QKeySequence.StandardKey.Copy)
        copy_snippet.triggered.connect(self.copy_current)
        if local_file(hit) is not None:
            opener = menu.addAction(theme.icon("open"), "Open in editor")
            opener.setShortcut(QKeySequence(Qt.Key.Key_Return))
            opener.triggered.connect(self.open_current)
            revealer = menu.addAction(theme.icon("folder"), "Reveal in file manager")
            revealer.triggered.connect(self.reveal_current)
        menu.aboutToHide.connect(menu.deleteLater)
        return menu

    # -- rendering ----------------------------------------------------------------------

    def _started(self, query: str) -> None:
        engine = self._engine()
        pending: list[SourceReport] = []
        if engine is not None:
            try:
                pending = [SourceReport(name=s) for s in engine.route(query).servers]
            except Exception:  # routing preview only; the search reports the real error
                pending = []
        self.strip.set_reports(pending, "asking…")
        self.refresh_empty_state()

    def _queue(self, update: SearchUpdate) -> None:
        self._pending = update
        if update.final:
            self._render_timer.stop()
            self._render_pending()
        elif not self._render_timer.isActive():
            self._render_timer.start()

    def _render_pending(self) -> None:
        update, self._pending = self._pending, None
        if update is not None and self.controller.is_current_response(update.response):
            self._updated(update)

    def _sync_context(self) -> None:
        """The context text is set only while its tab shows (it can be long). While
        sources are still asked it is the context of those that have answered."""
        if self.tabs.currentWidget() is not self.context_scroll:
            return
        response = self.model.response
        context = response.context if response else None
        waiting = waiting_text(response.sources) if response and not self.controller.final else ""
        if self.context.context is not context or self._context_waiting != waiting:
            self._context_waiting = waiting
            self.context.set_context(context, waiting)

    def _updated(self, update: SearchUpdate) -> None:
        response = update.response
        new_question = self.model.response is None or self.model.asks_anew(response)
        if new_question:
            # A new question starts at its own hit #1, not at the last question's pick.
            self._selected_id = None
            self._auto_selected = True
        # Rows are updated in place: selection and expanded rows stay with their hits.
        self.model.set_response(response)
        if new_question:
            # A new question starts folded: a row that came back (its hit, or one of its
            # group's) would otherwise stay open from the last question.
            self.tree.collapseAll()
        if self._auto_selected:
            self._select_first()  # #1 of the ranking as it stands, until the user picks
        self._restore_selection()
        if self.model.rowCount():
            self.results.setCurrentWidget(self.tree)
        self.strip.set_reports(response.sources, _summary(response, update.final))
        self._detail_timer.start()

    def _finished(self, response: SearchResponse) -> None:
        if response.error:
            self.message.emit(f"No source answered: {response.error}")
        if self._auto_selected and self.model.rowCount():
            self._select_first()  # the final ranking's #1, while the user has not chosen
        self.refresh_empty_state(response.error or "")

    def _weak_hidden(self) -> bool:
        """The results are hidden behind "No confident results": the detail shows none."""
        return self.results.currentWidget() is self.empty and self.empty.state == "not-confident"

    def _show_weak_matches(self) -> None:
        response = self.model.response
        self._weak_shown_for = response.request.query if response is not None else None
        self.results.setCurrentWidget(self.tree)
        self.tree.setFocus()
        self._sync_detail()

    def _sync_detail(self) -> None:
        """Show the current row's newest hit and group; once the stream has ended,
        select the first result if nothing is selected."""
        self._context_timer.start()  # started from here, it runs in the next slice
        current = self.tree.currentIndex()
        if current.isValid():
            self._current_changed(current, QModelIndex())
        elif self.model.rowCount():
            self._select_first()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.tree.ensurePolished()  # the style sheet's font, which the badges are drawn in
        self._layout_badges()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.tree and event.type() == QEvent.Type.FontChange:
            self._badge_timer.start()
        elif watched is self.tree.viewport() and event.type() == QEvent.Type.Resize:
            self.fit_columns()  # the viewport: its width also changes as a scroll bar comes
        elif watched is self.tree and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            self._auto_selected = False  # the user moves: their pick stays from now on
            return self._results_key(event)
        elif watched is self.tree.viewport() and event.type() == QEvent.Type.MouseButtonPress:
            self._auto_selected = False
        return False

    def _section_resized(self, column: int, _old: int, _new: int) -> None:
        if column == SOURCES:
            self._badge_timer.start()

    def _layout_badges(self) -> None:
        width = self.tree.header().sectionSize(SOURCES) - BADGE_PADDING
        font = self.tree.font()
        # Decorations are shown at most this size: room for the widest badges.
        self.tree.setIconSize(QSize(BADGE_ICON_SPAN, badges_height(font)))
        self.model.set_badge_layout(font, max(1, width))

    def _select_first(self) -> None:
        """Make hit #1 current (without taking the focus from the query box)."""
        first = self.model.index(0, 0)
        if not first.isValid() or self.tree.currentIndex() == first:
            return
        self._selecting = True
        try:
            self.tree.selectionModel().setCurrentIndex(
                first, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        finally:
            self._selecting = False

    def _clear(self) -> None:
        self._pending = None
        self._auto_selected = False
        self.model.set_response(None)
        self.refresh_empty_state()
        self.strip.set_reports([], "")
        self._context_waiting = ""
        self.context.set_context(None)
        self.detail.show_hit(None)

    def _restore_selection(self) -> None:
        """Select the last selected hit again if its row came back (after a new query
        that dropped it, for instance); a row that stayed keeps its selection."""
        if self._selected_id is None or self.tree.currentIndex().isValid():
            return
        index = self.model.row_of(self._selected_id)
        if index.isValid():
            self.tree.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        hit = self.model.hit_at(current)
        if hit is None or self._weak_hidden():
            return
        member = current.siblingAtColumn(0).data(MEMBER_ROLE)
        if member is None:
            self._selected_id = hit.id
        response = self.model.response
        group = response.group_of(hit.id) if response and member is None else None
        shown = current.siblingAtColumn(0).data(HIT_ROLE)
        self.detail.show_hit(shown, group, member,
                             query=response.request.query if response else self.controller.query,
                             order_note=ranking_note(shown, response) if member is None else "")
        self.detail.set_rating(self.model.rating(hit.id))


def _summary(response: SearchResponse, final: bool) -> str:
    m = response.metrics
    answered = sum(1 for s in response.sources if s.status in ANSWERED)
    asked = sum(1 for s in response.sources if s.status != "skipped")  # not the ones routing left out
    text = f"{len(response.hits)} results · {answered}/{asked} sources"
    if commits_listed_first(response):  # the list is not in score order: say so where it shows
        text = f"{len(response.hits)} results, commits first · {answered}/{asked} sources"
    if is_task_question(response.request.query):  # routed by its class, but read as a task
        text += " · task"
    elif response.route.query_class:
        text += f" · {response.route.query_class} query"
    if m.raw_hits:
        text += f" · dedup {100 * m.dedup_rate:.0f} %"

    if final:
        text += f" · {m.total_ms:.0f} ms"
        if not response.confident:  # the closest matches are still listed, but said to be weak
            text += " · no confident results" if response.hits else ""
        text += "".join(f" · {note}" for note in response.notes)
    else:  # first: the end of a long summary is what elides
        text = f"{waiting_text(response.sources)} · {text}"
    return text


PATH_TEXT_MARGIN = 12  # px the style keeps around an item's text (its padding and margins)


class PathElide(QStyledItemDelegate):
    """Elides its column's paths folders first, so the file name stays readable:
    ``tributary/…/base.py:12-40`` (see ``elide_path``)."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        width = option.rect.width() - PATH_TEXT_MARGIN
        if width > 0 and option.text and self.elides(option.text):
            option.text = elide_path(option.text, option.fontMetrics, width)
        option.textElideMode = Qt.TextElideMode.ElideRight  # (what little may still not fit)

    def elides(self, text: str) -> bool:
        """Whether ``text`` is elided folders first (every text of this column)."""
        return True


class TitleElide(PathElide):
    """Elides a title that is a path (a file-finding server's result) as ``PathElide``
    does, so its file name stays readable; other titles on the right."""

    def elides(self, text: str) -> bool:
        return is_path(text)
