"""The search page: query, controls, hints, source status strip, results tree, detail,
context — and feedback: "Useful" / "Not useful" on a hit (detail pane buttons, the
results' context menu, Ctrl+Up / Ctrl+Down) credits every source that returned it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPoint,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app import theme
from app.engine_api import EngineLike
from app.history import QueryHistory
from app.search.badges import badges_height
from app.search.context_preview import ContextPreview
from app.search.controller import SearchController
from app.search.detail import NOT_USEFUL_KEYS, USEFUL_KEYS, DetailPane, local_file, open_in_editor
from app.search.hints import HintsBar
from app.search.query_box import QueryBox
from app.search.results_model import (
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
from app.search.source_strip import LogWindow, SourceStrip
from app.tasks import describe_error, run_async
from engine.config.schema import TOP_K_MAX, TOP_K_MIN
from engine.model import (
    ContextFormat,
    DedupGroup,
    Hit,
    SearchResponse,
    SearchUpdate,
    SourceReport,
    TaskType,
)

RENDER_MS = 40
BADGE_ICON_SPAN = 4096  # px: wider than any Sources column
BADGE_RELAYOUT_MS = 60
STRATEGIES = [("Default", None), ("RRF", "rrf"), ("Weighted", "weighted"),
              ("Composite", "composite"), ("Cascade", "cascade"), ("Vote", "vote")]


class SearchPage(QWidget):
    message = Signal(str)  # for the status bar
    feedback_recorded = Signal(object)  # {source: new reputation}

    def __init__(self, engine: Callable[[], EngineLike | None], history: QueryHistory,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._engine = engine
        self.controller = SearchController(engine, key="search", parent=self)
        self.model = ResultsModel(self)
        self._selected_id: str | None = None
        self._logs: dict[str, LogWindow] = {}

        self.query = QueryBox(history)
        self.query.setPlaceholderText("Ask every source at once…   (Enter to search now, ↑ for history)")
        self.query.addAction(theme.icon("search"), self.query.ActionPosition.LeadingPosition)
        self.query.textEdited.connect(self.controller.schedule)
        self.query.submitted.connect(self._submit)
        self.query.escape.connect(self._escape)
        self.query.down_from_end.connect(self._focus_results)

        controls = QHBoxLayout()
        self.strategy = QComboBox()
        for label, value in STRATEGIES:
            self.strategy.addItem(label, value)
        self.strategy.currentIndexChanged.connect(
            lambda _: self.controller.set_options(strategy=self.strategy.currentData()))
        self.limit = QSpinBox()
        self.limit.setRange(TOP_K_MIN, TOP_K_MAX)
        self.limit.setValue(30)
        self.limit.setKeyboardTracking(False)
        self.limit.valueChanged.connect(lambda v: self.controller.set_options(top_k=v))
        self.task_type = QComboBox()
        for task in TaskType:
            self.task_type.addItem(task.value.capitalize(), task)
        self.task_type.setCurrentIndex(self.task_type.findData(TaskType.IMPLEMENTATION))
        self.task_type.currentIndexChanged.connect(
            lambda _: self.controller.set_options(task_type=self.task_type.currentData()))
        for label, widget in (("Strategy", self.strategy), ("Top", self.limit), ("Task", self.task_type)):
            caption = QLabel(label)
            caption.setObjectName("Muted")
            controls.addWidget(caption)
            controls.addWidget(widget)
            controls.addSpacing(10)
        self.hints = HintsBar()
        self.hints.changed.connect(lambda hints: self.controller.set_options(hints=hints))
        controls.addWidget(self.hints.toggle)
        controls.addStretch()

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
        header.setSectionResizeMode(LOCATION, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(SOURCES, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(SCORE, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(RANK, 56)
        header.resizeSection(SCORE, 78)
        header.resizeSection(LOCATION, 190)
        header.resizeSection(SOURCES, 150)
        # The source badges are drawn to the column's width (whole badges only); a
        # drag of the column edge redraws them once it pauses.
        self._badge_timer = QTimer(self, singleShot=True, interval=BADGE_RELAYOUT_MS)
        self._badge_timer.timeout.connect(self._layout_badges)
        header.sectionResized.connect(self._section_resized)
        self.tree.installEventFilter(self)
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
        self.context.copied.connect(lambda n: self.message.emit(f"Copied {n:,} tokens of context"))
        self.tabs = QTabWidget()
        self.tabs.addTab(self.detail, "Detail")
        self.tabs.addTab(self.context, "Context")

        self.empty = QLabel("Type a question. Every source answers at once; results appear as they arrive.")
        self.empty.setObjectName("Muted")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.tree)
        splitter.addWidget(left)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        self.tree.setMinimumWidth(520)
        self.tabs.setMinimumWidth(340)
        splitter.setSizes([660, 430])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 10)
        layout.setSpacing(10)
        layout.addWidget(self.query)
        layout.addLayout(controls)
        layout.addWidget(self.hints)
        layout.addWidget(self.strip)
        layout.addWidget(splitter, 1)

        # Sources answer in bursts: render at most every RENDER_MS (the final at once),
        # so ten sources answering together cost one redraw, not ten.
        self._pending: SearchUpdate | None = None
        self._render_timer = QTimer(self, singleShot=True, interval=RENDER_MS)
        self._render_timer.timeout.connect(self._render_pending)
        # The detail pane (it highlights code) and then the context preview (it lays
        # out thousands of lines) follow a live update each in an event-loop slice of
        # its own, after the tree and the strip, so no one slice holds the loop long.
        self._detail_timer = QTimer(self, singleShot=True, interval=0)
        self._detail_timer.timeout.connect(self._sync_detail)
        self._context_timer = QTimer(self, singleShot=True, interval=0)
        self._context_timer.timeout.connect(self._sync_context)
        self.tabs.currentChanged.connect(lambda _: self._sync_context())
        self.controller.started.connect(self._started)
        self.controller.updated.connect(self._queue)
        self.controller.finished.connect(self._finished)
        self.controller.failed.connect(self.message.emit)
        self.controller.cleared.connect(self._clear)
        QShortcut(QKeySequence("Ctrl+L"), self, self.focus_query)
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

    def search(self, text: str) -> None:
        """Run ``text`` now, as if typed and Enter pressed."""
        self.query.setText(text)
        self._submit(text)

    def _submit(self, text: str) -> None:
        if text.strip():
            self.query.remember(text)
            self.controller.submit(text)

    def _escape(self) -> None:
        if self.query.text():
            self.query.clear()
            self.controller.schedule("")

    def _focus_results(self) -> None:
        if self.model.rowCount():
            self.tree.setFocus()
            if not self.tree.currentIndex().isValid():
                self.tree.setCurrentIndex(self.model.index(0, 0))

    def _server_states(self) -> list[Any]:
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
        path = local_file(hit)
        if path is not None:
            opener = menu.addAction(theme.icon("open"), "Open in editor")
            opener.triggered.connect(lambda: open_in_editor(path, hit.start_line))
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
        """The context text is set only while its tab shows (it can be long)."""
        response = self.model.response
        context = response.context if response else None
        if self.tabs.currentWidget() is self.context and self.context.context is not context:
            self.context.set_context(context)

    def _updated(self, update: SearchUpdate) -> None:
        response = update.response
        new_question = self.model.asks_anew(response)
        # Rows are updated in place: selection and expanded rows stay with their hits.
        self.model.set_response(response)
        if new_question:
            # A new question starts folded: a row that came back (its hit, or one of its
            # group's) would otherwise stay open from the last question.
            self.tree.collapseAll()
        self._restore_selection()
        self.strip.set_reports(response.sources, _summary(response, update.final))
        self._detail_timer.start()

    def _finished(self, response: SearchResponse) -> None:
        if response.error:
            self.message.emit(f"No source answered: {response.error}")

    def _sync_detail(self) -> None:
        """Show the current row's newest hit and group; once the stream has ended,
        select the first result if nothing is selected."""
        self._context_timer.start()  # started from here, it runs in the next slice
        current = self.tree.currentIndex()
        if current.isValid():
            self._current_changed(current, QModelIndex())
        elif self.controller.final and self.model.rowCount():
            self.tree.setCurrentIndex(self.model.index(0, 0))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.tree.ensurePolished()  # the style sheet's font, which the badges are drawn in
        self._layout_badges()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.tree and event.type() == QEvent.Type.FontChange:
            self._badge_timer.start()
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

    def _clear(self) -> None:
        self._pending = None
        self.model.set_response(None)
        self.strip.set_reports([], "")
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
        if hit is None:
            return
        member = current.siblingAtColumn(0).data(MEMBER_ROLE)
        if member is None:
            self._selected_id = hit.id
        response = self.model.response
        group = response.group_of(hit.id) if response and member is None else None
        self.detail.show_hit(current.siblingAtColumn(0).data(HIT_ROLE), group, member,
                             query=response.request.query if response else self.controller.query)
        self.detail.set_rating(self.model.rating(hit.id))


def _summary(response: SearchResponse, final: bool) -> str:
    m = response.metrics
    answered = sum(1 for s in response.sources if s.status in ("ok", "cached"))
    text = f"{len(response.hits)} results · {answered}/{len(response.sources)} sources"
    if response.route.query_class:
        text += f" · {response.route.query_class} query"
    if m.raw_hits:
        text += f" · dedup {100 * m.dedup_rate:.0f} %"
    if final:
        text += f" · {m.total_ms:.0f} ms"
        if not response.confident:  # the closest matches are still listed, but said to be weak
            text += " · no confident results" if response.hits else ""
        text += "".join(f" · {note}" for note in response.notes)
    else:
        text += " · waiting…"
    return text
