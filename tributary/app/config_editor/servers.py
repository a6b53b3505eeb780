"""The servers tab: add, edit, remove, enable; test a connection; see its log; import.

The list shows each server's running state as the engine reports it (refreshed
every few seconds while the tab is visible): a status dot, its typical latency
right-aligned ("~85 ms"), and in the tooltip and the line above the test button
what happened to it (pid, uptime, restarts and why, an open circuit breaker).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import yaml
from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QSize,
    QStringListModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFontMetrics, QHelpEvent, QHideEvent, QPainter, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QCompleter,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from tributary.app import safe_text, theme
from tributary.app.background import describe_error, run_async
from tributary.app.combo_box import ComboBox
from tributary.app.config_editor import backend
from tributary.app.config_editor.fields import KeyValueEditor, error_label, set_invalid, with_error
from tributary.app.search.source_strip import (
    LogWindow,
    restart_note,
    setup_needed,
    status_dot,
    typical_latency,
)
from tributary.app.spin_box import DoubleSpinBox
from tributary.engine.api import (
    ClientConfig,
    EngineLike,
    already_configured,
    counted,
    discover_client_configs,
    known_settings,
    merge_imported,
    twin_of,
)
from tributary.engine.config.schema import Config, QueryMode, ServerConfig
from tributary.engine.model import hits_said

if TYPE_CHECKING:  # (tributary.engine.sources pulls in the MCP SDK: not at the GUI's start)
    from tributary.engine.api import ServerState, ServerTest

LATENCY_ROLE = Qt.ItemDataRole.UserRole + 1  # the right-aligned note in the servers list
BUILTIN_NOTE = ("Built in: Tributary's own server over the repositories on the Indexes page. "
                "Its weight and timeout, and whether searches ask it, are yours to set.")
NAME_CHARS = 20  # a server name this long shows whole in the list at 1,024 px
QUERY_MODE_CHARS = 14  # the Query mode choice's width, in characters
STATE_REFRESH_MS = 2000
QUERY_MODE_LABELS: dict[str, str] = {
    # The default sends a grep tool a regex (tributary.engine.sources.tools): say so here.
    "full": "whole (grep: a regex)",
    "keywords": "each of its words",
    "glob": "a file-name glob of them",
    "pattern": "a regex of its names (grep)",
}
BUILTIN_WHOLE_LABEL = "the whole question"
# Narrower than this (a tiled or scaled-up window), the list gives the form room:
# at most this share of the width, its names eliding in the middle.
NARROW_WIDTH = 700
NARROW_LIST_SHARE = 0.35
# A server's lifecycle (ServerState.status) in the colours of the source chips.
_STATUS_DOT = {"ready": "ok", "starting": "pending", "idle": "pending",
               "backoff": "error", "stopped": "skipped", "disabled": "skipped"}


def describe_state(state: ServerState) -> str:
    """One line on a server's running state: ``running · pid 4242 · up 3 min · ~85 ms
    typical · asks search(query, top_k=top_k) [auto-detected]``."""
    status = str(state.status)
    parts = [{"ready": "running", "idle": "not started yet (starts on first use)",
              "backoff": "down, restarting"}.get(status, status)]
    if status == "backoff" and state.retry_in_s is not None:
        parts[0] += f" in {state.retry_in_s:.1f} s"
    if state.pid:
        parts.append(f"pid {state.pid}")
    if state.uptime_s is not None:
        parts.append(f"up {_duration(state.uptime_s)}")
    typical = typical_latency(state.latency_ms)
    if typical:
        parts.append(f"{typical} typical")
    if str(state.breaker.state) != "closed":
        parts.append(f"circuit open after {state.breaker.consecutive_failures} failures")
    note = restart_note(state)
    if note:
        parts.append(note)
    elif state.last_error:
        parts.append(f"last error: {state.last_error}")
    if cannot_search(state):
        parts.append(f"not asked in searches: {state.tool_error}")
    elif status == "ready" and state.tool:  # what a search sends it, mode included
        parts.append(f"asks {state.tool}")
    return " · ".join(parts)


def trouble(state: ServerState) -> str | None:
    """A few words for the list on a server that is failing to run (its Status line and
    tooltip say the whole reason), or None: ``no command`` (not found), ``not starting`` for
    one that never finishes its start, or that waits to start again having never answered
    (its import fails). (One down and restarting after it answered keeps its red dot and
    its typical latency: it will again.)"""
    status = str(state.status)
    error = str(state.last_error or state.restart_reason or "")
    if status == "stopped" and error:
        return "no command" if error.startswith("command not found") else "failed to start"
    if status == "starting" and state.restarts and error:
        return "not starting"
    if status == "backoff" and state.restarts and error and state.latency_ms is None:
        return "not starting"
    return None


def cannot_search(state: ServerState) -> bool:
    """Up, but none of its tools is one a search may call: searches skip it."""
    return state.tool is None and bool(state.tool_error)


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class LatencyDelegate(QStyledItemDelegate):
    """Draws the item as usual, with a muted note on the right (its latency, or why it
    is not asked) and, when the two do not fit, the note's words past a latency's width
    elided first, then the name in the middle (``github-…-prod``: the start and end of
    a name are what tell servers apart); the tooltip then leads with the whole name."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is None:
            super().paint(painter, option, index)
            return
        note = str(index.data(LATENCY_ROLE) or "")
        text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
        opt.text, note = fitted(opt, text_rect.width(), note)
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        if not note:
            return
        painter.save()
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        painter.setPen(opt.palette.highlightedText().color() if selected
                       else theme.colour("muted"))
        painter.drawText(text_rect.adjusted(0, 0, -4, 0),
                         int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), note)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        """As high as usual, and no wider than the list: a long name elides rather than
        widening every row past the list (behind a horizontal scroll bar)."""
        return QSize(0, super().sizeHint(option, index).height())

    def helpEvent(self, event: QHelpEvent, view: QAbstractItemView, option: QStyleOptionViewItem,
                  index: QModelIndex | QPersistentModelIndex) -> bool:
        if event.type() == QEvent.Type.ToolTip and self.name_elided(option, index):
            QToolTip.showText(event.globalPos(), name_tooltip(index), view, view.visualRect(index))
            return True
        return super().helpEvent(event, view, option, index)

    def name_elided(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> bool:
        """Whether the item's name is shown cut in ``option``'s rectangle."""
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is None:
            return False
        text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
        return shown_name(opt, text_rect.width(), str(index.data(LATENCY_ROLE) or "")) != opt.text


def name_tooltip(index: QModelIndex | QPersistentModelIndex) -> str:
    """The item's tooltip led by its whole name (the tooltip may be rich text already)."""
    name = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
    tip = str(index.data(Qt.ItemDataRole.ToolTipRole) or "")
    if tip.startswith("<qt>") and tip.endswith("</qt>"):
        return safe_text.tooltip(name).removesuffix("</qt>") + tip.removeprefix("<qt>")
    return safe_text.tooltip(f"{name}\n{tip}" if tip else name)


NOTE_GAP = 12  # pixels between the name and its note
NOTE_FLOOR = "~8,888 ms"  # a note this wide stays whole; a longer one gives way to the name


def fitted(opt: QStyleOptionViewItem, width: int, note: str) -> tuple[str, str]:
    """The item's name and ``note`` as they fit in ``width`` pixels side by side. The
    name is what tells the rows apart, so a note wider than a latency ("no read-only
    tool") is elided at its end to leave the name whole; a name that does not fit even
    so is elided in the middle."""
    metrics = opt.fontMetrics
    if not note:
        return _middle(opt.text, metrics, width - 4), ""
    note_width = metrics.horizontalAdvance(note)
    floor = min(note_width, metrics.horizontalAdvance(NOTE_FLOOR))
    name = _middle(opt.text, metrics, width - NOTE_GAP - floor)
    room = width - NOTE_GAP - metrics.horizontalAdvance(name)
    return name, note if note_width <= room else metrics.elidedText(note, Qt.TextElideMode.ElideRight, max(0, room))


def shown_name(opt: QStyleOptionViewItem, width: int, note: str) -> str:
    """The item's name as it fits in ``width`` pixels beside ``note`` (``fitted``)."""
    return fitted(opt, width, note)[0]


def _middle(text: str, metrics: QFontMetrics, width: int) -> str:
    """``text`` whole if it fits in ``width`` pixels, else elided in the middle."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    return metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, max(0, width))


def server_list_width(view: QListWidget) -> int:
    """A servers list width that shows a name of :data:`NAME_CHARS` characters whole
    beside its check box, status dot and latency note."""
    metrics = view.fontMetrics()
    style = view.style()
    check = style.pixelMetric(QStyle.PixelMetric.PM_IndicatorWidth, None, view)
    icon = view.iconSize().width() if view.iconSize().isValid() else 16
    name = metrics.horizontalAdvance("m" * 4 + "x" * (NAME_CHARS - 4))  # ~20 common characters
    note = metrics.horizontalAdvance("~850 ms") + 12
    scroll_bar = style.pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, view)
    return check + icon + name + note + scroll_bar + 2 * view.frameWidth() + 24  # item spacing and padding


def format_tool_arguments(arguments: Mapping[str, Any]) -> str:
    """A server's fixed tool arguments on one line, as YAML's flow style writes them."""
    if not arguments:
        return ""
    return str(yaml.safe_dump(dict(arguments), default_flow_style=True, sort_keys=False, width=10**6)).strip()


def parse_tool_arguments(text: str) -> dict[str, Any]:
    """The mapping typed as a server's fixed tool arguments (``{path: /srv/docs}``, the
    braces optional); ValueError says what is wrong with it."""
    text = text.strip()
    if not text:
        return {}
    if not text.startswith(("{", "[")):
        text = "{" + text + "}"
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or "not YAML"
        mark = getattr(exc, "problem_mark", None)
        where = f" at character {mark.column + 1}" if mark is not None else ""
        raise ValueError(f"{problem}{where}") from None
    if not isinstance(value, dict) or not all(isinstance(key, str) and key for key in value):
        raise ValueError("write a mapping of names to values, such as {path: /srv/docs}")
    try:
        json.dumps(value)
    except (TypeError, ValueError):  # a date, say, which YAML reads as one: a tool gets JSON
        raise ValueError("values must be text, numbers, true/false, lists or mappings "
                         "(quote a date: '2024-01-31')") from None
    return value


def unique_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name}-{n}" in taken:
        n += 1
    return f"{name}-{n}"


class ServersPage(QWidget):
    changed = Signal()
    message = Signal(str)

    def __init__(self, engine: Callable[[], EngineLike | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._engine = engine
        self.config: Config | None = None
        self.current: ServerConfig | None = None
        self._form_for: str | None = None  # the server whose form was last shown
        # Tributary's own servers (``builtin``), as the engine runs them: listed after the
        # config's servers; their weight, timeout and on/off are kept as a tuning entry.
        self._builtins: dict[str, ServerConfig] = {}
        self._editing_builtin = False
        self._loading = False
        self._logs: dict[str, LogWindow] = {}
        # Per server being edited (by identity): the search settings this form filled in
        # for a known package, kept in step with its command until the user changes them.
        self._filled: dict[int, tuple[str | None, dict[str, Any], str, float]] = {}

        self.list = QListWidget()
        self.list.setItemDelegate(LatencyDelegate(self.list))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # names elide instead
        self.list.currentTextChanged.connect(self._select)
        self.list.itemChanged.connect(self._enabled_toggled)
        add = QPushButton(theme.icon("add"), "Add")
        add.clicked.connect(self.add_server)
        self.remove_button = QPushButton(theme.icon("remove"), "Remove")
        self.remove_button.clicked.connect(self.remove_server)
        self.import_button = QPushButton(theme.icon("import"), "Import…")
        self.import_menu = QMenu(self)
        self.import_menu.aboutToShow.connect(self._fill_import_menu)
        self.import_button.setMenu(self.import_menu)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.list, 1)
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(self.remove_button)
        left_layout.addLayout(row)
        left_layout.addWidget(self.import_button)

        self.name = QLineEdit()
        self.name_error = error_label()
        self.transport = ComboBox()
        self.transport.addItems(["stdio", "http", "sse"])
        self.command = QLineEdit()
        self.command.setPlaceholderText("e.g. uvx, npx, python")
        self.args = QLineEdit()
        self.args.setPlaceholderText("arguments, shell-quoted")
        self.args_error = error_label()
        self.cwd = QLineEdit()
        self.cwd.setPlaceholderText("working directory (optional)")
        self.url = QLineEdit()
        self.url.setPlaceholderText("https://…/mcp")
        self.env = KeyValueEditor(secret=True)
        self.headers = KeyValueEditor(secret=True, noun="header")
        self.timeout = DoubleSpinBox()
        self.timeout.setRange(0.1, 300.0)
        self.timeout.setSuffix(" s")
        self.timeout.setDecimals(1)
        self.weight = DoubleSpinBox()
        self.weight.setRange(0.0, 10.0)
        self.weight.setSingleStep(0.1)
        self.tool = QLineEdit()
        self.tool.setPlaceholderText("auto-detect (a read-only search/query/find tool)")
        # The tools the server offers (from its running state or a test), offered as the
        # name is typed: a name typed wrong leaves the server out of every search.
        self._tool_names = QStringListModel(self)
        self._tested_tools: dict[str, list[str]] = {}  # by server name, for one not running yet
        tool_completer = QCompleter(self._tool_names, self.tool)
        tool_completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        tool_completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.tool.setCompleter(tool_completer)
        self.query_argument = QLineEdit()
        self.query_argument.setPlaceholderText("auto-detect")
        self.query_mode = ComboBox()
        for mode in get_args(QueryMode):
            self.query_mode.addItem(QUERY_MODE_LABELS[mode], mode)
        # Sized by a short text, not its longest item: at 1,024 px and 150 % that item
        # made the form wider than its pane, which then scrolled sideways. The open list
        # still shows every item whole (ComboBox).
        self.query_mode.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.query_mode.setMinimumContentsLength(QUERY_MODE_CHARS)
        self.query_mode.setToolTip(
            "What the tool is sent: the whole question (or, for a tool that says its query "
            "is a regex, a regular expression of its names); each of its longest words in turn, "
            "for a tool that matches its query as one substring (server-memory); a file-name glob of "
            "them, for a tool that matches names (server-filesystem's search_files); or a "
            "regular expression for any of its names, for a grep tool")
        self.tool_arguments = QLineEdit()
        self.tool_arguments.setPlaceholderText("fixed arguments, e.g. {path: /srv/docs}")
        self.tool_arguments.setToolTip(
            "Arguments sent with every search besides the query, as a YAML mapping: what a "
            "tool requires that is not the question (a folder, a project, a limit)")
        self.tool_arguments_error = error_label()
        self.description = QLineEdit()
        self.builtin_note = QLabel(BUILTIN_NOTE)
        self.builtin_note.setObjectName("Muted")
        self.builtin_note.setWordWrap(True)
        self.builtin_note.setVisible(False)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        # A row too wide for a narrow pane (a tiled window, 150 % scaling) puts its label
        # above its field, rather than making the whole form scroll sideways.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow("Name", with_error(self.name, self.name_error))
        form.addRow("Transport", self.transport)
        form.addRow("Command", self.command)
        self.args_box = with_error(self.args, self.args_error)
        form.addRow("Arguments", self.args_box)
        form.addRow("Working dir", self.cwd)
        form.addRow("URL", self.url)
        form.addRow("Environment", self.env)
        form.addRow("Headers", self.headers)
        self.keyring_button = QPushButton(theme.icon("lock"), "Move secrets to keyring")
        self.keyring_button.setToolTip(
            "Store the literal tokens and keys above in the OS keyring and keep only "
            "${keyring:NAME} references in the config")
        self.keyring_button.clicked.connect(self.move_secrets)
        form.addRow("Secrets", self.keyring_button)
        self.sign_in_button = QPushButton(theme.icon("lock"), "Sign in")
        self.sign_in_button.setToolTip("Sign in to this server in the browser (OAuth); "
                                       "the session is kept in the OS keyring")
        self.sign_in_button.clicked.connect(self.sign_in)
        self.sign_out_button = QPushButton("Sign out")
        self.sign_out_button.clicked.connect(self.sign_out)
        self.sign_in_state = QLabel()
        self.sign_in_state.setObjectName("Muted")
        sign_in_row = QHBoxLayout()
        sign_in_row.setContentsMargins(0, 0, 0, 0)
        sign_in_row.addWidget(self.sign_in_button)
        sign_in_row.addWidget(self.sign_out_button)
        sign_in_row.addWidget(self.sign_in_state, 1)
        self.sign_in_box = QWidget()
        self.sign_in_box.setLayout(sign_in_row)
        form.addRow("Sign-in", self.sign_in_box)
        form.addRow("Timeout", self.timeout)
        form.addRow("Weight", self.weight)
        form.addRow("Tool", self.tool)
        form.addRow("Query argument", self.query_argument)
        form.addRow("Query mode", self.query_mode)
        form.addRow("Tool arguments", with_error(self.tool_arguments, self.tool_arguments_error))
        form.addRow("Description", self.description)
        self._form = form

        self.test_button = QPushButton(theme.icon("play"), "Test connection")
        self.test_button.clicked.connect(self.test_connection)
        self.log_button = QPushButton(theme.icon("terminal"), "Server log")
        self.log_button.clicked.connect(self.show_log)
        self.test_result = QLabel("Test the connection to list the server's tools, run a probe query and time it.")
        self.test_result.setObjectName("Muted")
        self.test_result.setWordWrap(True)
        self.test_result.setTextFormat(Qt.TextFormat.PlainText)
        self.test_details = QPlainTextEdit()
        self.test_details.setReadOnly(True)
        self.test_details.setMaximumHeight(150)
        self.test_details.setVisible(False)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.log_button)
        test_row.addStretch()
        self.state_label = QLabel()
        self.state_label.setObjectName("Muted")
        self.state_label.setWordWrap(True)
        self.state_label.setTextFormat(Qt.TextFormat.PlainText)  # errors are a server's words
        self._states: dict[str, ServerState] = {}
        self._state_timer = QTimer(self, interval=STATE_REFRESH_MS)
        self._state_timer.timeout.connect(self.refresh_states)

        form_widget = QWidget()
        form_layout = QVBoxLayout(form_widget)
        form_layout.addWidget(self.builtin_note)
        form_layout.addLayout(form)
        form_layout.addWidget(self.state_label)
        form_layout.addLayout(test_row)
        form_layout.addWidget(self.test_result)
        form_layout.addWidget(self.test_details)
        form_layout.addStretch()
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(form_widget)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.form_scroll = scroll
        self.form_widget = form_widget

        splitter = self._splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(scroll)
        splitter.setSizes([220, 600])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(splitter)

        self.name.textEdited.connect(self._rename)
        self.transport.currentTextChanged.connect(self._edited)
        self.query_mode.currentIndexChanged.connect(self._edited)
        self.args.textEdited.connect(self._edited)
        for edit in (self.command, self.cwd, self.url, self.tool, self.query_argument, self.tool_arguments,
                     self.description):
            edit.textEdited.connect(self._edited)
        # A name picked from the completions is set, not typed: no textEdited of its own
        # (and the field sets it in a slot of its own, connected only while it has focus).
        tool_completer.activated.connect(self._tool_picked)
        self.env.changed.connect(self._edited)
        self.headers.changed.connect(self._edited)
        self.timeout.valueChanged.connect(self._edited)
        self.weight.valueChanged.connect(self._edited)

    # -- loading ------------------------------------------------------------------------

    def load(self, config: Config) -> None:
        self.config = config
        self._filled.clear()
        self._fill_list()
        if self.list.count():
            self.list.setCurrentRow(0)
        else:
            self._select("")

    def _fill_list(self, select: str | None = None) -> None:
        assert self.config is not None
        self._loading = True
        self.list.clear()
        self._builtins = self._running_builtins()
        listed = [*(s for n, s in self.config.servers.items() if not self._is_builtin(n)),
                  *(self.config.servers.get(n) or s for n, s in self._builtins.items())]
        for server in listed:
            item = QListWidgetItem(server.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if server.enabled else Qt.CheckState.Unchecked)
            item.setToolTip("Checked: enabled")
            self.list.addItem(item)
        self._loading = False
        self.refresh_states()
        if select is not None:
            matches = self.list.findItems(select, Qt.MatchFlag.MatchExactly)
            if matches:
                self.list.setCurrentItem(matches[0])

    def _running_builtins(self) -> dict[str, ServerConfig]:
        """The built-in servers the engine runs (one per kind while a repository is
        indexed), as it runs them: the config's tuning applied."""
        engine = self._engine()
        try:
            effective = engine.effective_config if engine is not None else None
        except Exception:  # the engine may be closing
            return {}
        return {n: s for n, s in effective.servers.items() if s.builtin} if effective is not None else {}

    def _is_builtin(self, name: str) -> bool:
        """Whether ``name`` is a built-in server the config at most tunes (no command of
        its own in the config)."""
        if name not in self._builtins or self.config is None:
            return False
        entry = self.config.servers.get(name)
        return entry is None or (entry.builtin == name and entry.tunes_builtin)

    def _tuning(self, name: str) -> ServerConfig:
        """The config's entry tuning built-in ``name``, made on the first change."""
        assert self.config is not None
        entry = self.config.servers.get(name)
        if entry is None:
            running = self._builtins[name]
            entry = ServerConfig(name=name, builtin=running.builtin, timeout=running.timeout,
                                 weight=running.weight, enabled=running.enabled, command=None)
            self.config.servers[name] = entry
        return entry

    def _select(self, name: str) -> None:
        if self._loading or self.config is None:
            return
        self._editing_builtin = self._is_builtin(name)
        if self._editing_builtin:
            tuned = self.config.servers.get(name) or self._builtins[name]
            self.current = dataclasses.replace(self._builtins[name], timeout=tuned.timeout,
                                               weight=tuned.weight, enabled=tuned.enabled)
        else:
            self.current = self.config.servers.get(name)
        self.form_widget.setEnabled(self.current is not None)
        self.remove_button.setEnabled(self.current is not None and not self._editing_builtin)
        self._builtin_form(self._editing_builtin)
        server = self.current or ServerConfig(name="")
        self._loading = True
        self.name.setText(server.name)
        set_invalid(self.name, None, self.name_error)
        self.transport.setCurrentText(server.transport)
        self.command.setText(server.command or "")
        self.args.setText(shlex.join(server.args))
        set_invalid(self.args, None, self.args_error)
        self.cwd.setText(server.cwd or "")
        self.url.setText(server.url or "")
        self.env.set_values(server.env)
        self.headers.set_values(server.headers)
        self.timeout.setValue(server.timeout)
        self.weight.setValue(server.weight)
        self.tool.setText(server.tool or "")
        self.query_argument.setText(server.query_argument or "")
        self.query_mode.setCurrentIndex(max(0, self.query_mode.findData(server.query_mode)))
        self.tool_arguments.setText(format_tool_arguments(server.arguments))
        set_invalid(self.tool_arguments, None, self.tool_arguments_error)
        self.description.setText(server.description)
        self._loading = False
        self._transport_rows(server.transport)
        self._refresh_sign_in()
        self.test_details.setVisible(False)
        self.test_result.setText("Test the connection to list the server's tools, run a probe query and time it.")
        self._show_state()
        if name != self._form_for:  # another server's form opens at its top (a reload keeps the place)
            self._form_for = name
            self.form_scroll.verticalScrollBar().setValue(0)

    # -- running state ------------------------------------------------------------------

    def refresh_states(self) -> None:
        """Ask the engine how its servers are doing and show it in the list."""
        engine = self._engine()
        try:
            states = list(engine.server_states()) if engine is not None else []
        except Exception:  # the engine may be closing: keep what is shown
            return
        self._states = {s.name: s for s in states}
        self._loading = True  # item changes must not read as the user's edits
        try:
            for row in range(self.list.count()):
                item = self.list.item(row)
                self._show_item_state(item, self._states.get(item.text()))
        finally:
            self._loading = False
        self._show_state()

    def _show_item_state(self, item: QListWidgetItem, state: ServerState | None) -> None:
        if state is None:
            item.setIcon(status_dot("skipped"))
            item.setData(LATENCY_ROLE, "")
            item.setToolTip("Checked: enabled\nNot running in the engine (new or unsaved)")
            return
        if cannot_search(state):  # running fine, yet of no use to a search: said in the list
            item.setIcon(status_dot("timeout"))
            item.setData(LATENCY_ROLE, setup_needed(state.tool_error or "") or "no search tool")
        elif (words := trouble(state)) is not None:
            item.setIcon(status_dot("error"))
            item.setData(LATENCY_ROLE, words)
        else:
            item.setIcon(status_dot(_STATUS_DOT.get(str(state.status), "pending")))
            item.setData(LATENCY_ROLE, typical_latency(state.latency_ms) or "")
        item.setToolTip(safe_text.tooltip(f"Checked: enabled\n{describe_state(state)}"))

    def _show_state(self) -> None:
        state = self._states.get(self.current.name) if self.current is not None else None
        tested = self._tested_tools.get(self.current.name, []) if self.current is not None else []
        self._offer_tools(list(state.sendable) if state is not None and state.tools else tested)
        self.state_label.setVisible(self.current is not None)
        text = (f"Status: {describe_state(state)}" if state is not None
                else "Not running in the engine yet: save to start it with the new settings.")
        twin = twin_of(self.config, self.current) if self.config is not None and self.current is not None else None
        if twin is not None:
            text += (f"\nThe same server as “{twin}”, asked with the same tool: both answer every search, "
                     "and their hits count as two sources agreeing.")
        self.state_label.setText(text)

    def _tool_picked(self, name: str) -> None:
        self.tool.setText(name)
        self._edited()

    def _offer_tools(self, names: list[str]) -> None:
        """Complete the Tool field with these names (sorted): the server's tools a search
        may be sent, none that its marks, name or description say writes (``git_commit``,
        ``create_directory``), since every search sends the named tool its text."""
        ordered = sorted(names)
        if ordered != self._tool_names.stringList():
            self._tool_names.setStringList(ordered)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.list.ensurePolished()  # the style sheet's font, which the width is measured in
        self._fit_list()
        self.refresh_states()
        self._state_timer.start()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_list()

    def _fit_list(self) -> None:
        """The list wide enough for common names, but never most of a narrow page."""
        least = server_list_width(self.list)
        if self.width() < NARROW_WIDTH:
            least = min(least, int(self.width() * NARROW_LIST_SHARE))
        if least == self.list.minimumWidth():
            return
        self.list.setMinimumWidth(least)
        sizes = self._splitter.sizes()
        if len(sizes) == 2 and sizes[0] > least and self.width() < NARROW_WIDTH:
            self._splitter.setSizes([least, sum(sizes) - least])

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._state_timer.stop()

    def _transport_rows(self, transport: str) -> None:
        stdio = transport == "stdio"
        for widget in (self.command, self.args_box, self.cwd, self.env):
            self._form.setRowVisible(widget, stdio)
        for widget in (self.url, self.headers, self.sign_in_box):
            self._form.setRowVisible(widget, not stdio)

    def _builtin_form(self, builtin: bool) -> None:
        """A built-in server's form: its weight and timeout are the user's, the rest is
        how Tributary runs it, shown and not editable."""
        self.builtin_note.setVisible(builtin)
        # Only a tool of another server can be a grep tool that is sent a regex.
        whole = self.query_mode.findData("full")
        self.query_mode.setItemText(whole, BUILTIN_WHOLE_LABEL if builtin else QUERY_MODE_LABELS["full"])
        for field in (self.name, self.transport, self.command, self.args, self.cwd, self.url, self.env,
                      self.headers, self.keyring_button, self.sign_in_box, self.tool, self.query_argument,
                      self.query_mode, self.tool_arguments, self.description):
            field.setEnabled(not builtin)

    # -- editing ------------------------------------------------------------------------

    def _edited(self, *_: Any) -> None:
        if self._loading or self.current is None:
            return
        server = self.current
        if self._editing_builtin:
            tuning = self._tuning(server.name)
            tuning.timeout = server.timeout = self.timeout.value()
            tuning.weight = server.weight = self.weight.value()
            self.changed.emit()
            return
        chosen = self.transport.currentText()
        server.transport = "http" if chosen == "http" else "sse" if chosen == "sse" else "stdio"
        self._transport_rows(server.transport)
        program = (server.command, list(server.args))
        server.command = self.command.text().strip() or None
        try:
            server.args = shlex.split(self.args.text())
            set_invalid(self.args, None, self.args_error)
        except ValueError as exc:
            # Keep what was typed; the server keeps its last valid arguments meanwhile.
            set_invalid(self.args, f"Arguments: {exc}", self.args_error)
        server.cwd = self.cwd.text().strip() or None
        server.url = self.url.text().strip() or None
        server.env = self.env.values()
        server.headers = self.headers.values()
        server.timeout = self.timeout.value()
        server.weight = self.weight.value()
        server.tool = self.tool.text().strip() or None
        server.query_argument = self.query_argument.text().strip() or None
        server.query_mode = self.query_mode.currentData()
        try:
            server.arguments = parse_tool_arguments(self.tool_arguments.text())
            set_invalid(self.tool_arguments, None, self.tool_arguments_error)
        except ValueError as exc:  # kept as typed; the last valid mapping stays meanwhile
            set_invalid(self.tool_arguments, f"Tool arguments: {exc}", self.tool_arguments_error)
        server.description = self.description.text()
        if (server.command, server.args) != program:
            self._known_search(server)
        self.changed.emit()

    def _known_search(self, server: ServerConfig) -> None:
        """A package known to search otherwise than by question (server-filesystem by
        file-name glob in its first folder, server-memory by words, mcp-ripgrep by regex
        at a quarter of the weight), typed into a form whose search settings are
        untouched, gets them as an import sets them, shown in the form; any other choice
        is the user's to make."""
        now = (server.tool, server.arguments, server.query_mode, server.weight)
        untouched: tuple[str | None, dict[str, Any], str, float] = (None, {}, "full", 1.0)
        filled = self._filled.get(id(server))  # what this form set while the command was typed
        if server.transport != "stdio" or server.query_argument or now not in (untouched, filled):
            return
        known = known_settings(server.command, server.args) if server.command else {}
        server.tool = known.get("tool")
        server.arguments = known.get("arguments", {})
        server.query_mode = known.get("query_mode", "full")
        server.weight = known.get("weight", 1.0)
        self._filled[id(server)] = (server.tool, server.arguments, server.query_mode, server.weight)
        self._loading = True
        try:
            self.tool.setText(server.tool or "")
            self.query_mode.setCurrentIndex(max(0, self.query_mode.findData(server.query_mode)))
            self.tool_arguments.setText(format_tool_arguments(server.arguments))
            self.weight.setValue(server.weight)
        finally:
            self._loading = False

    def has_field_errors(self) -> bool:
        return bool(self.name.property("invalid") or self.args.property("invalid")
                    or self.tool_arguments.property("invalid"))

    def _rename(self, text: str) -> None:
        if self._loading or self.current is None or self.config is None:
            return
        new = text.strip()
        old = self.current.name
        if new == old:
            set_invalid(self.name, None, self.name_error)
            return
        if not new:
            set_invalid(self.name, "A server needs a name.", self.name_error)
        elif new in self.config.servers:
            set_invalid(self.name, f"“{new}” is already the name of another server.", self.name_error)
        else:
            set_invalid(self.name, None, self.name_error)
            rename_server(self.config, old, new)
            item = self.list.currentItem()
            if item is not None:
                self._loading = True
                item.setText(new)
                self._loading = False
        self.changed.emit()

    def _enabled_toggled(self, item: QListWidgetItem) -> None:
        if self._loading or self.config is None:
            return
        name = item.text()
        server = self._tuning(name) if self._is_builtin(name) else self.config.servers.get(name)
        if server is not None:
            server.enabled = item.checkState() == Qt.CheckState.Checked
            if self.current is not None and self.current.name == name:
                self.current.enabled = server.enabled
            self.changed.emit()

    def add_server(self) -> None:
        if self.config is None:
            return
        name = unique_name("new-server", set(self.config.servers))
        self.config.servers[name] = ServerConfig(name=name, command="")
        self._fill_list(select=name)
        self.name.setFocus()
        self.name.selectAll()
        self.changed.emit()

    def remove_server(self) -> None:
        if self.config is None or self.current is None or self._editing_builtin:
            return
        name = self.current.name
        del self.config.servers[name]
        for rule in self.config.routing.rules:
            rule.servers = [s for s in rule.servers if s != name]
        self._fill_list()
        if self.list.count():
            self.list.setCurrentRow(0)
        else:
            self._select("")
        self.changed.emit()
        self.message.emit(f"Removed {name} (save to apply)")

    # -- import -------------------------------------------------------------------------

    def _fill_import_menu(self) -> None:
        self.import_menu.clear()
        for found in discover_client_configs(workspace=Path.cwd()):
            count = counted(len(found.servers), "server") if not found.error else f"unreadable: {found.error}"
            action = self.import_menu.addAction(f"{found.label}: {found.path} ({count})",
                                                functools.partial(self.import_client, found))
            action.setEnabled(bool(found.servers))
        if self.import_menu.isEmpty():
            action = self.import_menu.addAction("No MCP client config found on this machine")
            action.setEnabled(False)
        self.import_menu.addSeparator()
        self.import_menu.addAction("Choose a file…", self._choose_import_file)

    def import_found(self) -> int:
        """Import the servers of every MCP client config found on this machine (Claude
        Desktop, Claude Code, Cursor, VS Code, Windsurf, Zed, Codex, Continue)."""
        found = [c for c in discover_client_configs(workspace=Path.cwd()) if c.servers]
        if not found:
            self.message.emit("No MCP client config with servers was found on this machine")
            return 0
        return sum(self.import_client(config) for config in found)

    def import_client(self, found: ClientConfig) -> int:
        """Add the servers of one client's config found on this machine (already read
        and converted, whatever the client's format), as ``tributary config import``
        does: one configured the same way already is left out, a name clash renamed.
        Returns how many were added."""
        if self.config is None or not found.servers:
            return 0
        config = self.config
        new = [s for s in found.servers if not already_configured(config, s)]
        merged = merge_imported(config, new)
        added = [name for name in merged.servers if name not in config.servers]
        config.servers.update({name: merged.servers[name] for name in added})
        self._fill_list(select=added[0] if added else None)
        if added:
            self.changed.emit()
        notes = f" — {counted(len(found.warnings), 'warning')}: {found.warnings[0]}" if found.warnings else ""
        self.message.emit(f"Imported {counted(len(added), 'server')} from {found.label}: "
                          f"{', '.join(added) or 'none new'}{notes}")
        return len(added)

    def _choose_import_file(self) -> None:
        dialog = QFileDialog(self, "Import MCP servers", str(Path.home()), "MCP configs (*.json)")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(lambda p: self.import_file(Path(p)))
        dialog.open()  # not exec(): no nested event loop under qasync

    def import_file(self, path: Path) -> int:
        """Add the ``mcpServers`` of a client config; returns how many were added."""
        if self.config is None:
            return 0
        try:
            imported = backend.import_mcp_servers(path)  # (merge_imported names clashes)
        except Exception as exc:
            self.message.emit(f"Could not import {path}: {backend.describe(exc)}")
            return 0
        merged = merge_imported(self.config, imported.servers)  # (one already here is not added twice)
        added = [name for name in merged.servers if name not in self.config.servers]
        self.config.servers.update({name: merged.servers[name] for name in added})
        self._fill_list(select=added[0] if added else None)
        if added:
            self.changed.emit()
        warnings = f" — {counted(len(imported.warnings), 'warning')}: {imported.warnings[0]}" if imported.warnings else ""
        listed = f"{', '.join(added)} (save to apply)" if added else "none new"
        self.message.emit(f"Imported {counted(len(added), 'server')} from {path.name}: {listed}{warnings}")
        return len(added)

    # -- secrets ------------------------------------------------------------------------

    def move_secrets(self) -> None:
        if self.current is None:
            return
        server = copy.deepcopy(self.current)
        self.keyring_button.setEnabled(False)
        run_async(backend.move_secrets_to_keyring(server), label=f"Moving {server.name}'s secrets",
                  on_success=functools.partial(self._secrets_moved, server.name),
                  on_error=self._secrets_not_moved)

    def show_secrets_of(self, name: str) -> None:
        """Show ``name``'s env and headers again if it is the server being edited (its
        secrets were replaced by keyring references)."""
        server = self.config.servers.get(name) if self.config is not None else None
        if server is not None and self.current is server:
            self._loading = True
            self.env.set_values(server.env)
            self.headers.set_values(server.headers)
            self._loading = False

    def _secrets_moved(self, name: str, result: tuple[ServerConfig, list[str], str | None]) -> None:
        self.keyring_button.setEnabled(True)
        converted, names, notice = result
        server = self.config.servers.get(name) if self.config is not None else None
        if not names or server is None:
            self.message.emit(f"{name}: no literal secrets to move")
            return
        server.env, server.headers = dict(converted.env), dict(converted.headers)
        if self.current is server:
            self._loading = True
            self.env.set_values(server.env)
            self.headers.set_values(server.headers)
            self._loading = False
        self.changed.emit()
        note = f" — {notice}" if notice else ""
        self.message.emit(f"Moved {', '.join(names)} to the keyring (save to apply){note}")

    def _secrets_not_moved(self, error: BaseException) -> None:
        self.keyring_button.setEnabled(True)
        self.message.emit(f"Could not move the secrets: {describe_error(error)}")

    # -- sign-in (OAuth) ----------------------------------------------------------------

    def _refresh_sign_in(self) -> None:
        server = self.current
        if server is None or server.transport == "stdio" or not server.url:
            self.sign_in_state.setText("")
            return
        run_async(backend.signed_in(copy.deepcopy(server)), label="Reading the sign-in", quiet=True,
                  on_success=functools.partial(self._show_sign_in, server.name))

    def _show_sign_in(self, name: str, signed: bool) -> None:
        if self.current is None or self.current.name != name:
            return
        self.sign_in_state.setText("Signed in" if signed else "Not signed in")
        self.sign_out_button.setEnabled(signed)

    def sign_in(self) -> None:
        if self.current is None or not self.current.url:
            return
        server = copy.deepcopy(self.current)
        self.sign_in_button.setEnabled(False)
        self.sign_in_state.setText("Waiting for the browser…")
        run_async(backend.sign_in(server), label=f"Signing in to {server.name}",
                  on_success=lambda _: self._signed(server, True),
                  on_error=functools.partial(self._sign_in_failed, server.name))

    def sign_out(self) -> None:
        if self.current is None:
            return
        server = copy.deepcopy(self.current)
        run_async(backend.sign_out(server), label=f"Signing out of {server.name}",
                  on_success=lambda _: self._signed(server, False),
                  on_error=functools.partial(self._sign_in_failed, server.name))

    def _signed(self, server: ServerConfig, signed: bool) -> None:
        self.sign_in_button.setEnabled(True)
        self._show_sign_in(server.name, signed)
        self.message.emit(f"Signed in to {server.name}" if signed else f"Signed out of {server.name}")
        if signed:
            self.test_connection()

    def _sign_in_failed(self, name: str, error: BaseException) -> None:
        self.sign_in_button.setEnabled(True)
        if self.current is not None and self.current.name == name:
            self.sign_in_state.setText("Not signed in")
        self.message.emit(f"Sign-in to {name} failed: {describe_error(error)}")

    # -- test and log -------------------------------------------------------------------

    def test_connection(self) -> None:
        engine = self._engine()
        if engine is None or self.current is None:
            self.test_result.setText("The engine is not running yet.")
            return
        server = copy.deepcopy(self.current)
        self.test_result.setText(f"Testing {server.name}…")
        self.test_details.setVisible(False)
        run_async(engine.test_server(server), label=f"Testing {server.name}",
                  on_success=self._tested, on_error=self._test_failed)

    def _tested(self, result: ServerTest) -> None:
        tools = result.tools
        if tools:
            self._tested_tools[result.name] = [t.name for t in tools if t.sendable]
            self._show_state()
        hits = result.probe_hits
        latency = result.latency_ms
        if result.ok:
            self.test_result.setObjectName("Ok")
            took = f" in {latency:.0f} ms" if latency is not None else ""
            self.test_result.setText(f"Connected{took}: {counted(len(tools), 'tool')}, probe query returned {hits_said(len(hits))}.")
        else:
            self.test_result.setObjectName("Error")
            self.test_result.setText(f"Failed: {result.error or 'unknown error'}")
        self.test_result.style().polish(self.test_result)
        lines = ["Tools:"] + [f"  • {t.name} — {t.description}".rstrip(" —") for t in tools]
        lines += ["", "Probe results:"] + [
            f"  {i + 1}. {safe_text.one_line(h.title, 120)} ({safe_text.one_line(h.location, 120)})"
            for i, h in enumerate(hits[:10])]
        self.test_details.setPlainText(safe_text.block("\n".join(lines)))
        self.test_details.setVisible(True)
        self._show_test_result()

    def _show_test_result(self) -> None:
        """Scroll the form so the test's outcome is in view (it sits below the form, most
        often below the fold), once the layout has made room for it."""
        QTimer.singleShot(0, self._scroll_to_test_result)

    def _scroll_to_test_result(self) -> None:
        layout = self.form_widget.layout()
        if layout is not None:
            layout.activate()  # the form's new height, before the scroll area is told of it
        self.form_widget.resize(self.form_widget.width(),
                                max(self.form_widget.height(), self.form_widget.sizeHint().height()))
        shown = self.test_details if self.test_details.isVisible() else self.test_result
        # (Not ensureWidgetVisible: for a text view that shows its cursor, the top line.)
        top = shown.mapTo(self.form_widget, QPoint(0, 0)).y()
        bar = self.form_scroll.verticalScrollBar()
        bottom_in_view = top + shown.height() + 8 - self.form_scroll.viewport().height()
        bar.setValue(min(max(bar.value(), bottom_in_view), top - 8))  # its top wins if both can't be

    def _test_failed(self, error: BaseException) -> None:
        self.test_result.setObjectName("Error")
        self.test_result.setText(f"Failed: {describe_error(error)}")
        self.test_result.style().polish(self.test_result)
        self._show_test_result()

    def show_log(self) -> None:
        engine = self._engine()
        if engine is None or self.current is None:
            return
        name = self.current.name
        window = self._logs.get(name) or LogWindow(name, lambda: engine.stderr_lines(name), self)
        self._logs[name] = window
        window.refresh()
        window.show()


def rename_server(config: Config, old: str, new: str) -> None:
    """Rename keeping the order of servers, and follow the rename in routing rules."""
    config.servers = {(new if k == old else k): v for k, v in config.servers.items()}
    config.servers[new].name = new
    for rule in config.routing.rules:
        rule.servers = [new if s == old else s for s in rule.servers]
    if config.routing.fallback:
        config.routing.fallback = [new if s == old else s for s in config.routing.fallback]
