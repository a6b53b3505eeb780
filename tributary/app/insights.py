"""The insights page: recent queries, per-source latency and tokens, cache and dedup rates,
and each source's feedback-driven reputation (resettable).

Reads the engine's local query log (``tributary.engine.insights.store``) in a worker thread;
reputation comes through the engine facade (``tributary.app.reputation``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tributary.app import safe_text, theme
from tributary.app.background import describe_error, off_the_gui, run_async
from tributary.app.layouts import Reflow, scrolled_down
from tributary.app.reputation import ReputationPanel
from tributary.app.tables import keyboard_rows
from tributary.engine.api import EngineLike

RECENT = 50


if TYPE_CHECKING:  # the store is imported when first read, off the start-up path
    from tributary.engine.api import QueryLogEntry, QueryLogSummary


def figures_text(p50: float | None, p95: float | None, tokens: int, calls: int, failed: int = 0,
                 removed: bool = False) -> str:
    """A source's row beside its latency bar: ``635 / 640 ms · 6,085 tok · 1 call``; a
    source that never answered has no latency to show (``no answer · 8 calls, all
    failed``), one never asked says so rather than ``0 / 0 ms``, and one taken out of
    the configuration says that first (``removed · 30 / 43 ms · …``)."""
    if removed:
        return "removed · " + figures_text(p50, p95, tokens, calls, failed)
    if not calls:
        return "not asked"
    latency = f"{p50:,.0f} / {p95:,.0f} ms" if p50 is not None and p95 is not None else "no answer"
    counted = f"{calls} call{'' if calls == 1 else 's'}"
    if failed:
        counted += ", all failed" if failed >= calls else f", {failed} failed"
    return f"{latency} · {tokens:,} tok · {counted}"


@dataclass(slots=True)
class Snapshot:
    summary: QueryLogSummary
    recent: list[QueryLogEntry]


def read_insights(path: Path | None = None, recent: int = RECENT) -> Snapshot:
    from tributary.engine.api import QueryLog

    store = QueryLog.open(path)
    try:
        return Snapshot(store.summary(), store.recent(recent))
    finally:
        store.close()


def column_widths(total: int, label_w: int, value_w: int, widest_text: int) -> tuple[int, int]:
    """The bars' and the figures' widths in a chart ``total`` wide: the figures take the
    width their widest text needs (a large font, "all failed") where the bars keep 60
    px; text that still does not fit is elided rather than cut."""
    bars_min, gaps = 60, 12
    value = max(value_w, widest_text + 4)
    value = min(value, max(value_w, total - label_w - bars_min - gaps))
    return max(bars_min, total - label_w - value - gaps), value


class SourceChart(QWidget):
    """Per source: p50 and p95 latency as bars, tokens contributed as text."""

    ROW = 24
    LABEL_W = 120
    VALUE_W = 250

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[tuple[str, float | None, float | None, int, int, int]] = []
        self._removed: set[str] = set()
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self.ROW + 8)

    def set_sources(self, sources: dict[str, Any], configured: Collection[str] | None = None) -> None:
        """``sources``' figures, slowest first; with ``configured`` (the servers the
        engine runs now), the ones no longer configured follow, marked removed: their
        calls are still in the log, but no search asks them."""
        gone = set() if configured is None else set(sources) - set(configured)
        self._removed = gone
        self._rows = [
            (name, s.p50_ms, s.p95_ms, s.tokens, s.calls, s.errors + s.timeouts)
            for name, s in sorted(sources.items(), key=lambda kv: (kv[0] in gone, -(kv[1].p95_ms or 0.0)))
        ]
        self.setFixedHeight(max(1, len(self._rows)) * self.ROW + 8)
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(480, self.height())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if not self._rows:
            painter.setPen(theme.colour("muted"))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignLeft, "No source calls recorded yet")
            return
        biggest = max(r[2] or 0.0 for r in self._rows) or 1.0
        metrics = painter.fontMetrics()
        texts = [figures_text(p50, p95, tokens, calls, failed, name in self._removed)
                 for name, p50, p95, tokens, calls, failed in self._rows]
        bar_w, value_w = column_widths(self.width(), self.LABEL_W, self.VALUE_W,
                                       max(metrics.horizontalAdvance(t) for t in texts))
        elide = Qt.TextElideMode.ElideRight
        y = 4
        for (name, p50, p95, *_), text in zip(self._rows, texts, strict=True):
            removed = name in self._removed
            painter.setPen(theme.colour("muted" if removed else "text"))
            painter.drawText(QRectF(0, y, self.LABEL_W - 6, self.ROW), Qt.AlignmentFlag.AlignVCenter,
                             metrics.elidedText(name, elide, self.LABEL_W - 6))
            colour = theme.colour("muted") if removed else theme.source_colour(name)
            faded = QColor(colour)
            faded.setAlpha(70)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(faded)
            painter.drawRoundedRect(QRectF(self.LABEL_W, y + 5, bar_w * (p95 or 0.0) / biggest, self.ROW - 10), 4, 4)
            painter.setBrush(colour)
            painter.drawRoundedRect(QRectF(self.LABEL_W, y + 5, bar_w * (p50 or 0.0) / biggest, self.ROW - 10), 4, 4)
            painter.setPen(theme.colour("muted"))
            painter.drawText(
                QRectF(self.LABEL_W + bar_w + 8, y, value_w, self.ROW), Qt.AlignmentFlag.AlignVCenter,
                metrics.elidedText(text, elide, int(value_w)))
            y += self.ROW


CARD_ROW_MARGINS = 48  # px: the page's margins and the scroll bar beside the cards' row


def _card(title: str) -> tuple[QFrame, QLabel]:
    frame = QFrame()
    frame.setObjectName("Card")
    layout = QVBoxLayout(frame)
    layout.setContentsMargins(14, 10, 14, 10)
    caption = QLabel(title)
    caption.setObjectName("Hint")
    value = QLabel("—")
    value.setObjectName("SectionTitle")
    layout.addWidget(caption)
    layout.addWidget(value)
    return frame, value


class InsightsPage(QWidget):
    message = Signal(str)

    def __init__(self, reader: Callable[[], Snapshot] = read_insights,
                 engine: Callable[[], EngineLike | None] = lambda: None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._reader = reader
        self._engine = engine
        self.reputation = ReputationPanel(engine)
        self.reputation.message.connect(self.message.emit)
        title = QLabel("Insights")
        title.setObjectName("SectionTitle")
        refresh = QPushButton(theme.icon("refresh"), "Refresh")
        refresh.clicked.connect(self.refresh)
        head = QHBoxLayout()
        head.addWidget(title)
        head.addStretch()
        head.addWidget(refresh)
        cards = QGridLayout()
        self.values: dict[str, QLabel] = {}
        frames: list[QFrame] = []
        for key, caption in (
            ("queries", "Queries"), ("latency", "Latency p50 / p95"), ("cache", "Cache hit rate"),
            ("dedup", "Duplicates folded"), ("budget", "Budget used"),
        ):
            frame, value = _card(caption)
            self.values[key] = value
            frames.append(frame)
        self.cards = Reflow(cards, frames, len(frames))  # one row, or rows of three when narrow
        chart_title = QLabel("Sources — latency p50 (solid) and p95 (light)")
        chart_title.setObjectName("Muted")
        self.chart = SourceChart()
        self.table = QTableWidget(0, 6)
        self.table.setHorizontalHeaderLabels(["When", "Query", "Time", "Results", "Tokens", "Sources"])
        self.table.verticalHeader().setVisible(False)
        keyboard_rows(self.table)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        # The page scrolls rather than asking for its full height: with many sources the
        # chart and the reputation table alone are taller than a laptop screen.
        content = QWidget()
        scroll = scrolled_down(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.table.setMinimumHeight(160)
        layout = QVBoxLayout(content)
        layout.setContentsMargins(16, 14, 16, 10)
        layout.addLayout(head)
        layout.addLayout(cards)
        layout.addWidget(chart_title)
        layout.addWidget(self.chart)
        layout.addSpacing(6)
        layout.addWidget(self.reputation)
        layout.addSpacing(6)
        recent = QLabel("Recent queries")
        recent.setObjectName("SectionTitle")
        layout.addWidget(recent)
        layout.addWidget(self.table, 1)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        frames = self.cards.widgets
        spacing = max(self.cards.grid.spacing(), 0)
        needed = sum(f.minimumSizeHint().width() + spacing for f in frames) + CARD_ROW_MARGINS
        self.cards.arrange(len(frames) if event.size().width() >= needed else 3)

    def refresh(self) -> asyncio.Task[Any]:
        self.reputation.refresh()
        return run_async(off_the_gui(self._reader), label="Reading the query log", key="insights",
                         quiet=True, on_success=self.show_snapshot,
                         on_error=lambda e: self.message.emit(f"Could not read the query log: {describe_error(e)}"))

    def show_snapshot(self, snapshot: Snapshot) -> None:
        s = snapshot.summary
        latency = f"{s.p50_ms:,.0f} / {s.p95_ms:,.0f} ms" if s.p50_ms is not None and s.p95_ms is not None else "—"
        self.values["queries"].setText(f"{s.queries:,}" + (f"  ({s.failed} failed)" if s.failed else ""))
        self.values["latency"].setText(latency)
        self.values["cache"].setText(f"{100 * s.cache_hit_rate:.0f} %" if s.cache_lookups else "—")
        self.values["dedup"].setText(f"{100 * s.mean_dedup_rate:.0f} %" if s.queries else "—")
        self.values["budget"].setText(f"{100 * s.mean_utilisation:.0f} %" if s.queries else "—")
        engine = self._engine()
        self.chart.set_sources(s.sources, None if engine is None else engine.effective_config.servers)
        self.table.setRowCount(len(snapshot.recent))
        for row, entry in enumerate(snapshot.recent):
            sources = ", ".join(
                f"{c.source} {c.latency_ms:,.0f} ms" if c.latency_ms is not None else f"{c.source} {c.status}"
                for c in entry.sources)
            query = safe_text.one_line(entry.query, 200) if entry.query else "(redacted)"
            values = [entry.time.strftime("%H:%M:%S"), query, f"{entry.total_ms:,.0f} ms",
                      str(entry.hits), f"{entry.tokens_total:,}", sources]
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                if column in (1, 5):
                    item.setToolTip(safe_text.tooltip(value))
                self.table.setItem(row, column, item)
