"""The per-source status strip: one chip per source with status, hits and latency.

Beside this query's figures a chip shows what the server usually takes (the
engine's running estimate, ``ServerState.latency_ms``) — while a source is still
pending that says how long to expect, and after a slow answer whether it was
unusual — and whether the server was restarted lately (crashed, or killed
because it stopped answering). Clicking a chip opens that server's stderr log
(a non-modal window). The formatting helpers here are shared with the config
editor's servers list.

However many sources there are, the chips stay one compact row that never widens
the window: it scrolls sideways with the mouse wheel, with the arrows at its ends
(shown when some chips are out of view), and to a chip that takes the keyboard focus.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap, QResizeEvent, QWheelEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tributary.app import safe_text, theme
from tributary.app.elided import FittingLabel
from tributary.engine.model import (
    ANSWERED,
    NOT_ASKED,
    NOT_STARTING,
    SourceReport,
    SourceStatus,
    hits_said,
    semantic_ready,
)

if TYPE_CHECKING:  # (tributary.engine.sources pulls in the MCP SDK: not at the GUI's start)
    from tributary.engine.api import ServerState

_DOTS: dict[str, QIcon] = {}
RECENT_RESTART_S = 600.0  # a chip says "restarted" this long after it happened
SUMMARY_SHARE = 0.25  # of the strip's width, at most, for the query's figures
NO_TOOL = "no search-like tool"  # how the engine's reason for a source with no search tool begins
TAKES_NO_QUERY = "its tool takes no query"  # ... and for one whose only tool ignores the question
# ... and for the setting a source needs before it can be asked, with the chip's words
SETUP_NEEDED = (("no read-only search tool", "no read-only tool"), ("configured tool ", "tool not offered"))
# "search_files needs `path` (required); …", or for a tool the config names, "tool
# 'git_log' requires ['repo_path']; give them under `arguments`"
NEEDS_ARGUMENTS = re.compile(r"^(?:\S{1,200} needs `|tool '[^'\n]{1,200}' requires \[)")

StateSource = Callable[[], "Iterable[ServerState]"]  # the engine's server states


def typical_latency(ms: float | None) -> str | None:
    """``~85 ms`` / ``~2.4 s``: the estimate is rough, so two significant figures."""
    if ms is None:
        return None
    if ms >= 1000:
        return f"~{ms / 1000:.1f} s"
    if ms >= 100:
        return f"~{round(ms, -1):.0f} ms"
    return f"~{max(ms, 1):.0f} ms"


def restart_note(state: ServerState) -> str | None:
    """``restarted 2× · last at 12:03:41: no answer for 9 s …`` (None if it never was)."""
    if not state.restarts:
        return None
    text = f"restarted {state.restarts}×"
    at = state.restarted_at
    if at is not None:
        text += f" · last at {time.strftime('%H:%M:%S', time.localtime(at))}"
    reason = state.restart_reason or state.last_error
    if reason:
        # "restarted: no answer …" reads twice after "restarted 2×".
        text += ": " + _strip_prefix(str(reason), ("restarted: ", "reconnected: "))
    return text


def restarted_lately(state: ServerState, now: float | None = None) -> bool:
    at = state.restarted_at
    return at is not None and (now if now is not None else time.time()) - at < RECENT_RESTART_S


def _strip_prefix(text: str, prefixes: tuple[str, ...]) -> str:
    for prefix in prefixes:
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def status_dot(status: str) -> QIcon:
    """A small coloured dot per status (drawn once, then reused on every update)."""
    cached = _DOTS.get(status)
    if cached is not None:
        return cached
    pixmap = QPixmap(12, 12)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(theme.STATUS_COLOURS.get(status, "#9aa3b2")))
    painter.drawEllipse(1, 1, 10, 10)
    painter.end()
    _DOTS[status] = QIcon(pixmap)
    return _DOTS[status]


WAITING_NAMED = 3  # sources named in "waiting for …"; more are counted


def waiting_text(reports: list[SourceReport]) -> str:
    """``waiting for git, docs…``: the sources a running search still waits on, by name
    (a slow or dead one is what holds the answer back)."""
    pending = [r.name for r in reports if r.status == "pending"]
    if not pending:
        return "finishing…"
    named = ", ".join(pending[:WAITING_NAMED])
    more = f" and {len(pending) - WAITING_NAMED} more" if len(pending) > WAITING_NAMED else ""
    return f"waiting for {named}{more}…"


def has_no_search_tool(report: SourceReport) -> bool:
    """Not asked because its tools offer nothing to search with (the engine's reason,
    given as the report's detail before the server is started, as its error after)."""
    reason = report.detail or report.error or ""
    return report.status == SourceStatus.SKIPPED and reason.startswith((NO_TOOL, TAKES_NO_QUERY))


def setup_needed(reason: str) -> str | None:
    """The chip's words for a source left out until a setting is made (the reason, with
    the setting to make, is in the tooltip), or None."""
    for start, words in SETUP_NEEDED:
        if reason.startswith(start):
            return words
    return "needs arguments" if NEEDS_ARGUMENTS.match(reason) else None


def degraded_said(report: SourceReport) -> str:
    """What a chip adds for an answer its source called weaker than usual: the share of
    meaning-based search it had while an index's vectors are being made, or that it
    answered on keywords alone (no model)."""
    share = semantic_ready(report.warnings)
    return " · keyword only" if share is None else f" · semantic {share} %"


def _chip_group(report: SourceReport) -> int:
    if report.status == SourceStatus.PENDING or (report.status in ANSWERED and report.hits):
        return 0  # what the answer is made of, or may yet be
    if report.status in (SourceStatus.ERROR, SourceStatus.TIMEOUT, SourceStatus.CIRCUIT_OPEN):
        return 1  # what needs a look
    return 2 if report.status in ANSWERED else 3  # asked and found nothing; not asked


def chip_order(reports: Iterable[SourceReport]) -> list[SourceReport]:
    """The chips' order: sources that brought hits (or are still asked), then those that
    failed, then those that found nothing, then those not asked; the engine's order within
    each. On a narrow window the row scrolls, so what is in view first is what counts."""
    return sorted(reports, key=_chip_group)


def chip_text(report: SourceReport, state: ServerState | None = None) -> str:
    status = SourceStatus(report.status)
    latency = f" · {report.latency_ms:.0f} ms" if report.latency_ms is not None else ""
    restarted = " · restarted" if state is not None and restarted_lately(state) else ""
    if status in ANSWERED:
        cached = " · cached" if status == SourceStatus.CACHED else ""
        hits = hits_said(report.hits)
        partial = degraded_said(report) if report.degraded else ""
        return f"{report.name} {hits}{partial}{latency}{cached}{restarted}"
    if status == SourceStatus.PENDING:
        typical = typical_latency(state.latency_ms if state is not None else None)
        return f"{report.name} … {typical}" if typical else f"{report.name} …"
    if has_no_search_tool(report):
        return f"{report.name} · no search tool"
    if status == SourceStatus.SKIPPED and (setup := setup_needed(report.detail or report.error or "")):
        return f"{report.name} · {setup}"
    if status == SourceStatus.ERROR and (report.error or "").startswith(NOT_STARTING):
        # Its start keeps failing and it was not waited on: no latency, and "restarted"
        # would say it ran again.
        return f"{report.name} · not starting"
    label = {"circuit_open": "circuit open", "skipped": "not asked"}.get(status.value, status.value)
    if status in NOT_ASKED:
        latency = ""
    return f"{report.name} · {label}{latency}{restarted}"


def chip_tooltip(report: SourceReport, state: ServerState | None = None) -> str:
    lines = [f"{report.name}: {report.status}"]
    typical = typical_latency(state.latency_ms if state is not None else None)
    if report.latency_ms is not None:
        lines.append(f"latency {report.latency_ms:.0f} ms" + (f" (typically {typical})" if typical else ""))
        if report.startup_ms:
            lines.append(f"of which {report.startup_ms:.0f} ms waiting for the server to start")
    elif typical:
        lines.append(f"typically answers in {typical}")
    if state is not None and (note := restart_note(state)):
        lines.append(note)
    lines.append(f"{hits_said(report.hits)}, {report.tokens} tokens, weight {report.weight:g}")
    if report.tool:
        lines.append(f"tool {report.tool}")
    if report.detail:
        lines.append(report.detail)
    lines.extend(w for w in report.warnings if w not in (report.detail or ""))
    if report.error:
        lines.append("error: " + report.error)
    lines.append("Click for this server's log")
    return safe_text.tooltip("\n".join(lines))  # errors are a server's words: never markup


class SourceStrip(QWidget):
    log_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, states: StateSource | None = None) -> None:
        super().__init__(parent)
        self._states = states
        # The chips scroll sideways inside the strip: however many sources there are,
        # they never widen the window (its minimum width would grow with each one).
        self.row = QWidget()
        self.row.setObjectName("SourceRow")
        self._layout = QHBoxLayout(self.row)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self._layout.addStretch()
        self.chip_area = QScrollArea()
        self.chip_area.setObjectName("SourceScroll")
        self.chip_area.setWidget(self.row)
        self.chip_area.setWidgetResizable(True)
        self.chip_area.setFrameShape(QFrame.Shape.NoFrame)
        # The chips take the focus, not the area around them: before a first query it is
        # an empty box that Tab would otherwise stop on.
        self.chip_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.chip_area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # No bar: the wheel and the arrows scroll (a bar would take a row's height).
        self.chip_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.chip_area.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.chip_area.viewport().installEventFilter(self)
        bar = self.chip_area.horizontalScrollBar()
        bar.rangeChanged.connect(lambda *_: self._show_arrows())
        bar.valueChanged.connect(lambda *_: self._show_arrows())
        self.left_arrow = self._arrow(Qt.ArrowType.LeftArrow, -1, "Earlier sources")
        self.right_arrow = self._arrow(Qt.ArrowType.RightArrow, 1, "More sources")
        # The query's figures: whole when there is room, elided (whole in the tooltip) when
        # there is not; they never widen the window nor crowd the chips out.
        self.summary = FittingLabel()
        self.summary.setObjectName("Muted")
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        outer.addWidget(self.left_arrow)
        outer.addWidget(self.chip_area, 1)
        outer.addWidget(self.right_arrow)
        outer.addSpacing(6)
        outer.addWidget(self.summary)
        self.chips: dict[str, QToolButton] = {}
        self._fit_height()
        self._show_arrows()

    def _arrow(self, kind: Qt.ArrowType, direction: int, tip: str) -> QToolButton:
        arrow = QToolButton()
        arrow.setArrowType(kind)
        arrow.setAutoRaise(True)
        arrow.setToolTip(tip)
        arrow.setAutoRepeat(True)
        arrow.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the chips themselves take the focus
        arrow.clicked.connect(lambda: self.scroll_chips(direction))
        policy = arrow.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # the chips do not shift as the arrows come and go
        arrow.setSizePolicy(policy)
        return arrow

    def _fit_height(self) -> None:
        """Room for one row of chips (the same with any number of sources, so the
        results below do not jump as sources come and go)."""
        probe = QToolButton()
        probe.setObjectName("SourceChip")
        probe.setText("source")
        probe.setIconSize(QSize(10, 10))
        probe.ensurePolished()
        chip = max(probe.sizeHint().height(), 22)
        self.chip_area.setFixedHeight(chip + 2)
        probe.deleteLater()

    def scroll_chips(self, direction: int) -> None:
        """Scroll the chips about two thirds of the visible row (-1 back, 1 on)."""
        bar = self.chip_area.horizontalScrollBar()
        step = max(60, self.chip_area.viewport().width() * 2 // 3)
        bar.setValue(bar.value() + direction * step)

    def _show_arrows(self) -> None:
        bar = self.chip_area.horizontalScrollBar()
        overflowing = bar.maximum() > 0
        self.left_arrow.setVisible(overflowing)
        self.right_arrow.setVisible(overflowing)
        self.left_arrow.setEnabled(bar.value() > bar.minimum())
        self.right_arrow.setEnabled(bar.value() < bar.maximum())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.chip_area.viewport() and isinstance(event, QWheelEvent):
            delta = event.angleDelta()
            steps = delta.x() if abs(delta.x()) > abs(delta.y()) else delta.y()
            if steps:  # the wheel's usual down (negative) scrolls on, as a page would
                bar = self.chip_area.horizontalScrollBar()
                bar.setValue(bar.value() - steps)
            return True
        if event.type() == QEvent.Type.FocusIn and isinstance(watched, QToolButton):
            self.chip_area.ensureWidgetVisible(watched, 8, 0)  # Tab reaches a chip out of view
        return False

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.summary.setMaximumWidth(max(120, int(event.size().width() * SUMMARY_SHARE)))

    def _server_states(self) -> dict[str, ServerState]:
        if self._states is None:
            return {}
        try:
            return {s.name: s for s in self._states()}
        except Exception:  # the engine may be closing; the chips still show the query's figures
            return {}

    def set_reports(self, reports: list[SourceReport], summary: str = "") -> None:
        reports = chip_order(reports)
        names = [r.name for r in reports]
        states = self._server_states() if reports else {}
        kept = [name for name in self.chips if name in names]
        if names[:len(kept)] != kept:
            # Moved chips are made anew in the row's order: Tab follows the order widgets
            # were made in, and a chip moved in the layout would keep its old place there.
            kept = []
        focused = next((n for n, c in self.chips.items() if c.hasFocus()), None)
        for name in list(self.chips):
            if name not in kept:
                gone = self.chips.pop(name)
                self._layout.removeWidget(gone)
                gone.deleteLater()
        for position, report in enumerate(reports):
            chip = self.chips.get(report.name)
            if chip is None:
                chip = self._chip(report.name)
                self._layout.insertWidget(position, chip)
                if report.name == focused:
                    chip.setFocus(Qt.FocusReason.OtherFocusReason)
            status = str(report.status)
            if chip.property("status") != status:
                chip.setProperty("status", status)
                chip.setIcon(status_dot(status))
            state = states.get(report.name)
            chip.setText(chip_text(report, state))
            chip.setToolTip(chip_tooltip(report, state))
        self.summary.set_full_text(summary)

    def _chip(self, name: str) -> QToolButton:
        chip = QToolButton()
        chip.setObjectName("SourceChip")
        chip.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        chip.setIconSize(QSize(10, 10))
        chip.setCursor(Qt.CursorShape.PointingHandCursor)
        chip.clicked.connect(lambda _=False, n=name: self.log_requested.emit(n))
        chip.installEventFilter(self)
        self.chips[name] = chip
        return chip


class LogWindow(QDialog):
    """A server's captured stderr, refreshable; non-modal."""

    def __init__(self, name: str, lines: Callable[[], list[str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{name} — server log")
        self.resize(720, 420)
        self._lines = lines
        layout = QVBoxLayout(self)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)  # long lines wrap, never cut
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        refresh = buttons.addButton("Refresh", QDialogButtonBox.ButtonRole.ActionRole)
        refresh.clicked.connect(self.refresh)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
        self.refresh()

    def refresh(self) -> None:
        lines = self._lines()
        self.text.setPlainText(safe_text.block("\n".join(lines)) if lines else "(nothing on stderr yet)")
        bar = self.text.verticalScrollBar()
        bar.setValue(bar.maximum())
