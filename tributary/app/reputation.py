"""Source reputation on the insights page: what the user's feedback taught the ranking.

One row per source — its reputation (a bounded Beta posterior mean, 0.5 when
unrated) as a bar, the useful / not useful votes behind it and when it was last
rated — with "Reset" per source and "Reset all" (after a confirmation). Reads and
resets go through the engine facade (``EngineLike.reputations`` /
``reset_reputation``), off the GUI thread, via ``run_async``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tributary.app import safe_text, theme
from tributary.app.background import describe_error, run_async
from tributary.app.tables import keyboard_rows
from tributary.engine.api import EngineLike, counted
from tributary.engine.model import ReputationRow

COLUMNS = ("Source", "Reputation", "Useful", "Not useful", "Last feedback", "")
SOURCE, REPUTATION, USEFUL, NOT_USEFUL, LAST, RESET = range(len(COLUMNS))
VALUE_ROLE = Qt.ItemDataRole.UserRole + 1
ROW_H = 34
MAX_VISIBLE_ROWS = 8


class ReputationBar(QStyledItemDelegate):
    """A 0..1 bar with the value, neutral (0.5) marked, so "better or worse than
    unrated" reads at a glance."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        value = index.data(VALUE_ROLE)
        if not isinstance(value, float):
            super().paint(painter, option, index)
            return
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(option.rect).adjusted(8, 0, -8, 0)
        text_w = 40.0
        track = QRectF(rect.x(), rect.center().y() - 4, max(20.0, rect.width() - text_w - 8), 8)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(theme.colour("hover"))
        painter.drawRoundedRect(track, 4, 4)
        shown = round(value, 2)  # colour what the number says: 0.499 after decay is "0.50"
        colour = theme.colour("ok") if shown > 0.5 else theme.colour(
            "danger") if shown < 0.5 else theme.colour("muted")
        painter.setBrush(colour)
        painter.drawRoundedRect(QRectF(track.x(), track.y(), track.width() * value, track.height()), 4, 4)
        painter.setPen(theme.colour("text"))
        middle = track.x() + track.width() / 2
        painter.drawLine(int(middle), int(track.y() - 2), int(middle), int(track.bottom() + 2))
        painter.drawText(QRectF(track.right() + 8, rect.y(), text_w, rect.height()),
                         Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, f"{value:.2f}")
        painter.restore()


def when(moment: datetime | None) -> str:
    if moment is None:
        return "never"
    local = moment.astimezone()
    today = datetime.now(local.tzinfo).date()
    return local.strftime("%H:%M" if local.date() == today else "%Y-%m-%d %H:%M")


class ReputationPanel(QWidget):
    """The per-source reputation table with its reset buttons."""

    message = Signal(str)
    reset_done = Signal(object, int)  # source (None: all), feedback events dropped

    def __init__(self, engine: Callable[[], EngineLike | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._engine = engine
        self.rows: list[ReputationRow] = []
        self.confirm_box: QMessageBox | None = None
        title = QLabel("Source reputation")
        title.setObjectName("SectionTitle")
        note = QLabel("Learned from your Useful / Not useful ratings (Ctrl+Up / Ctrl+Down on a "
                      "result); the weighted and composite strategies trust a source by it.")
        note.setObjectName("Hint")
        note.setWordWrap(True)
        self.reset_all_button = QPushButton(theme.icon("remove"), "Reset all")
        self.reset_all_button.setToolTip("Forget every rating: all sources back to neutral (0.50)")
        self.reset_all_button.clicked.connect(self.confirm_reset_all)
        head = QHBoxLayout()
        head.addWidget(title)
        head.addStretch()
        head.addWidget(self.reset_all_button)
        self.state = QLabel()
        self.state.setObjectName("Muted")
        self.state.setVisible(False)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        keyboard_rows(self.table)
        self.table.verticalHeader().setDefaultSectionSize(ROW_H)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        self.table.setItemDelegateForColumn(REPUTATION, ReputationBar(self.table))
        header = self.table.horizontalHeader()
        # The name and the bar share the width; the counts and the date take what they
        # need, so a narrow window shrinks the bar rather than scrolling sideways.
        header.setSectionResizeMode(SOURCE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(REPUTATION, QHeaderView.ResizeMode.Stretch)
        for column in (USEFUL, NOT_USEFUL, LAST):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(RESET, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(RESET, 84)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(head)
        layout.addWidget(note)
        layout.addWidget(self.state)
        layout.addWidget(self.table)
        self._fit_height()

    # -- reading ------------------------------------------------------------------------

    def refresh(self) -> asyncio.Task[Any] | None:
        engine = self._engine()
        if engine is None:
            self._set_state("Reputation appears once the engine has started.")
            return None
        return run_async(engine.reputation_rows(), label="Reading source reputation", key="reputation",
                         quiet=True, on_success=self.show_rows,
                         on_error=lambda e: self._set_state(f"Could not read reputation: {describe_error(e)}"))

    def show_rows(self, rows: list[ReputationRow]) -> None:
        self.rows = list(rows)
        self.reset_all_button.setEnabled(any(r.useful + r.not_useful for r in self.rows))
        self._set_state("" if self.rows else "No sources yet, or feedback is not kept in this session.")
        self.table.setRowCount(len(self.rows))
        for row, entry in enumerate(self.rows):
            votes = entry.useful + entry.not_useful
            name = QTableWidgetItem(safe_text.one_line(entry.source, 60))
            name.setToolTip(safe_text.tooltip(
                f"{entry.source}: reputation {entry.reputation:.3f} from {counted(votes, 'rating')}"
                if votes else f"{entry.source}: not rated yet (neutral)"))
            bar = QTableWidgetItem()
            bar.setData(VALUE_ROLE, float(entry.reputation))
            cells = [name, bar, _number(entry.useful), _number(entry.not_useful),
                     QTableWidgetItem(when(entry.last_feedback))]
            for column, item in enumerate(cells):
                self.table.setItem(row, column, item)
            self.table.setCellWidget(row, RESET, self._reset_button(entry.source, votes))
        self._fit_height()

    def _reset_button(self, source: str, votes: int) -> QWidget:
        button = QPushButton("Reset")
        button.setStyleSheet("QPushButton { padding: 2px 10px; }")
        button.setEnabled(votes > 0)
        button.setToolTip(safe_text.tooltip(f"Forget the ratings of {source}: back to neutral (0.50)"))
        button.clicked.connect(functools.partial(self.reset, source))
        holder = QWidget()
        layout = QHBoxLayout(holder)
        layout.setContentsMargins(6, 3, 6, 3)
        layout.addWidget(button)
        return holder

    def reset_button(self, source: str) -> QPushButton | None:
        for row, entry in enumerate(self.rows):
            holder = self.table.cellWidget(row, RESET)
            if entry.source == source and holder is not None:
                return holder.findChild(QPushButton)
        return None

    # -- resetting ----------------------------------------------------------------------

    def confirm_reset_all(self) -> None:
        """Ask first (open() and a signal: no nested event loop under qasync)."""
        box = QMessageBox(QMessageBox.Icon.Question, "Reset all reputations?",
                          "Forget every Useful / Not useful rating? All sources go back to "
                          "neutral (0.50). This cannot be undone.",
                          QMessageBox.StandardButton.Reset | QMessageBox.StandardButton.Cancel, self)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda _: self._confirmed(box))
        self.confirm_box = box
        box.open()

    def _confirmed(self, box: QMessageBox) -> None:
        accepted = box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Reset
        self.confirm_box = None
        box.deleteLater()
        if accepted:
            self.reset(None)

    def reset(self, source: str | None) -> asyncio.Task[Any] | None:
        engine = self._engine()
        if engine is None:
            self.message.emit("The engine is still starting — try again in a moment.")
            return None
        whom = "every source" if source is None else source
        return run_async(engine.reset_reputation(source), label=f"Resetting reputation of {whom}",
                         on_success=functools.partial(self._reset_done, source),
                         on_error=lambda e: self.message.emit(f"Reset failed — {describe_error(e)}"))

    def _reset_done(self, source: str | None, dropped: int) -> None:
        whom = "every source" if source is None else source
        self.message.emit(f"Reputation of {whom} reset ({counted(dropped, 'rating')} forgotten)")
        self.reset_done.emit(source, dropped)
        self.refresh()

    # -- layout -------------------------------------------------------------------------

    def _set_state(self, text: str) -> None:
        self.state.setText(text)
        self.state.setVisible(bool(text))

    def _fit_height(self) -> None:
        # Few sources: the table is as tall as its rows (up to a limit), no empty box.
        visible = max(1, min(MAX_VISIBLE_ROWS, self.table.rowCount()))
        header = self.table.horizontalHeader().sizeHint().height()
        self.table.setFixedHeight(header + visible * ROW_H + 2 * self.table.frameWidth() + 2)


def _number(value: int) -> QTableWidgetItem:
    item = QTableWidgetItem(str(value))
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item
