"""The per-source status strip: one chip per source with status, hits and latency.

Clicking a chip opens that server's stderr log (a non-modal window).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app import safe_text, theme
from engine.model import SourceReport, SourceStatus

_DOTS: dict[str, QIcon] = {}


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


def chip_text(report: SourceReport) -> str:
    status = SourceStatus(report.status)
    latency = f" · {report.latency_ms:.0f} ms" if report.latency_ms is not None else ""
    if status in (SourceStatus.OK, SourceStatus.CACHED):
        cached = " · cached" if status == SourceStatus.CACHED else ""
        return f"{report.name}  {report.hits} hits{latency}{cached}"
    if status == SourceStatus.PENDING:
        return f"{report.name}  …"
    label = {"circuit_open": "circuit open"}.get(status.value, status.value)
    return f"{report.name}  {label}{latency}"


def chip_tooltip(report: SourceReport) -> str:
    lines = [f"{report.name}: {report.status}"]
    if report.latency_ms is not None:
        lines.append(f"latency {report.latency_ms:.0f} ms")
    lines.append(f"{report.hits} hits, {report.tokens} tokens, weight {report.weight:g}")
    if report.tool:
        lines.append(f"tool {report.tool}")
    if report.detail:
        lines.append(report.detail)
    if report.error:
        lines.append("error: " + report.error)
    lines.append("Click for this server's log")
    return safe_text.tooltip("\n".join(lines))  # errors are a server's words: never markup


class SourceStrip(QWidget):
    log_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(6)
        self.summary = QLabel()
        self.summary.setObjectName("Muted")
        self._layout.addStretch()
        self._layout.addWidget(self.summary)
        self.chips: dict[str, QToolButton] = {}

    def set_reports(self, reports: list[SourceReport], summary: str = "") -> None:
        names = [r.name for r in reports]
        for name in list(self.chips):
            if name not in names:
                self.chips.pop(name).deleteLater()
        reorder = list(self.chips) != names
        for position, report in enumerate(reports):
            chip = self.chips.get(report.name)
            if chip is None:
                chip = QToolButton()
                chip.setObjectName("SourceChip")
                chip.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
                chip.setIconSize(QSize(10, 10))
                chip.setCursor(Qt.CursorShape.PointingHandCursor)
                chip.clicked.connect(lambda _=False, n=report.name: self.log_requested.emit(n))
                self.chips[report.name] = chip
            if reorder:
                self._layout.insertWidget(position, chip)
            status = str(report.status)
            if chip.property("status") != status:
                chip.setProperty("status", status)
                chip.setIcon(status_dot(status))
            chip.setText(chip_text(report))
            chip.setToolTip(chip_tooltip(report))
        if reorder:
            self.chips = {name: self.chips[name] for name in names}
        self.summary.setText(summary)


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
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
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
