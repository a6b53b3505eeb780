"""A hit's score breakdown: one horizontal bar per ``ScoreParts`` part, painted by hand."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from tributary.app import theme
from tributary.engine.model import ScoreParts

ROW = 20
LABEL_W = 110
VALUE_W = 64
PART_COLOURS = {
    "rrf": "#3b6fe0", "keyword": "#2bb3a3", "freshness": "#d9822b",
    "reputation": "#9b59b6", "length_penalty": "#e0457b", "length": "#e0457b",
    "source_weight": "#4caf50", "agreement": "#607d8b", "hints": "#c0a020", "hint": "#c0a020",
    "defines": "#7cb342", "focus": "#7e57c2", "lead": "#00897b", "votes": "#5c6bc0", "rank": "#3b6fe0",
    "cascade_tier": "#8d6e63", "role": "#c62828",
}
# What each part means, in words that fit the label column; the tooltip keeps the names.
PART_LABELS = {
    "rrf": "fused rank", "hint": "your hint", "hints": "your hint", "defines": "defines name",
    "focus": "file focus", "lead": "code's first", "same_file": "file repeat", "agreement": "agreement",
    "votes": "votes", "rank": "best rank", "cascade_tier": "cascade tier",
    "freshness": "freshness", "length_penalty": "length", "source_weight": "source weight",
    "role": "file's role",
}


def part_label(name: str) -> str:
    """``rrf:files`` -> ``files rank``; ``focus`` -> ``file focus``; unknown names as written."""
    kind, _, source = name.partition(":")
    if source:
        return f"{source} {'rank' if kind == 'rrf' else 'score'}"
    return PART_LABELS.get(name, name.replace("_", " "))


def _tip_name(name: str) -> str:
    label = part_label(name)
    return label if label == name else f"{label} ({name})"


def part_colour(name: str) -> str:
    """The bar's colour: for a source's fused rank, the source's own (its badges'
    colour), so two sources' bars tell apart; else the part's."""
    source = name.partition(":")[2]
    if source:
        return theme.source_colour_hex(source)
    return PART_COLOURS.get(name, "#3b6fe0")


class ScoreChart(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._parts: ScoreParts | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumHeight(ROW + 8)
        # Never narrower than a name, a short bar and the figure: the figures are the point.
        self.setMinimumWidth(LABEL_W + 40 + VALUE_W + 8)

    def set_parts(self, parts: ScoreParts | None) -> None:
        self._parts = parts
        rows = len(parts.parts) + 1 if parts else 1
        self.setFixedHeight(rows * ROW + 8)
        tip = ""
        if parts:
            tip = "\n".join(
                _tip_name(name) + f": {value:+.4f}"
                + (f"  (raw {parts.raw[name]:.3f})" if name in parts.raw else "")
                for name, value in parts.parts.items()
            ) + f"\ncombine: {parts.combine}, total {parts.total:.4f}"
        self.setToolTip(tip)
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(320, self.minimumHeight())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = theme.colour("text")
        muted = theme.colour("muted")
        parts = self._parts
        if not parts or not parts.parts:
            painter.setPen(muted)
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignLeft, "No score breakdown")
            return
        biggest = max(abs(v) for v in parts.parts.values()) or 1.0
        bar_w = max(40, self.width() - LABEL_W - VALUE_W - 8)
        y = 4
        for name, value in sorted(parts.parts.items(), key=lambda kv: -abs(kv[1])):
            painter.setPen(text)
            painter.drawText(
                QRectF(0, y, LABEL_W - 6, ROW),
                Qt.AlignmentFlag.AlignVCenter,
                painter.fontMetrics().elidedText(part_label(name), Qt.TextElideMode.ElideRight, LABEL_W - 6),
            )
            track = QRectF(LABEL_W, y + 5, bar_w, ROW - 10)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(theme.colour("hover"))
            painter.drawRoundedRect(track, 4, 4)
            colour = QColor(part_colour(name))
            if value < 0:
                colour = theme.colour("danger")
            painter.setBrush(colour)
            painter.drawRoundedRect(QRectF(track.x(), track.y(), bar_w * abs(value) / biggest, track.height()), 4, 4)
            painter.setPen(muted)
            painter.drawText(
                QRectF(LABEL_W + bar_w + 6, y, VALUE_W, ROW),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                f"{value:+.4f}",
            )
            y += ROW
        painter.setPen(text)
        font = painter.font()
        font.setBold(True)
        painter.setFont(font)
        painter.drawText(QRectF(0, y, LABEL_W, ROW), Qt.AlignmentFlag.AlignVCenter, "total")
        painter.drawText(
            QRectF(LABEL_W, y, bar_w + VALUE_W + 6, ROW),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
            f"{parts.total:.4f}  ({parts.combine})",
        )
