"""Paints the "Sources" column as coloured badges, one per agreeing source.

The badges of one set of sources are drawn once into a cached pixmap: a repaint of the
results tree then costs a ``drawPixmap`` per row instead of a rounded rectangle and
text layout per badge, which kept the GUI thread busy for milliseconds on every
streamed update (bench/gui_latency.py).
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPixmap
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from app import theme
from app.search.results_model import SOURCES_ROLE

PAD_X = 7
GAP = 4
CACHE_LIMIT = 256  # distinct (sources, size, scale, theme) pixmaps kept


class SourceBadgeDelegate(QStyledItemDelegate):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pixmaps: dict[tuple[object, ...], QPixmap] = {}

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        sources = index.data(SOURCES_ROLE) or []
        style = option.widget.style() if option.widget else None
        if style is not None:
            # Background and selection as usual, without the text.
            opt = QStyleOptionViewItem(option)
            self.initStyleOption(opt, index)
            opt.text = ""
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, option.widget)
        if not sources:
            return
        ratio = painter.device().devicePixelRatioF() if painter.device() else 1.0
        pixmap = self._badges(tuple(sources), option.font, option.rect.width(), option.rect.height(), ratio)
        painter.drawPixmap(QPointF(option.rect.x(), option.rect.y()), pixmap)

    def _badges(self, sources: tuple[str, ...], base: QFont, width: int, height: int, ratio: float) -> QPixmap:
        key = (sources, base.key(), width, height, ratio, theme.colours()["text"])
        cached = self._pixmaps.get(key)
        if cached is not None:
            return cached
        if len(self._pixmaps) >= CACHE_LIMIT:
            self._pixmaps.clear()
        pixmap = QPixmap(max(1, round(width * ratio)), max(1, round(height * ratio)))
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        try:
            _draw_badges(painter, sources, QFont(base), width, height)
        finally:
            painter.end()
        self._pixmaps[key] = pixmap
        return pixmap

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        sources = index.data(SOURCES_ROLE) or []
        metrics = QFontMetrics(option.font)
        width = sum(metrics.horizontalAdvance(s) + 2 * PAD_X + GAP for s in sources) + 8
        return QSize(width, metrics.height() + 10)


def _draw_badges(painter: QPainter, sources: tuple[str, ...], font: QFont, width: int, height: int) -> None:
    """Rounded, tinted name badges left to right, as many as fit in ``width``."""
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    font.setPointSizeF(max(7.0, font.pointSizeF() - 1))
    painter.setFont(font)
    metrics = QFontMetrics(font)
    badge_h = metrics.height() + 4
    x = 4.0
    y = (height - badge_h) / 2
    for name in sources:
        badge_w = metrics.horizontalAdvance(name) + 2 * PAD_X
        if x + badge_w > width - 1:
            break
        colour = theme.source_colour(name)
        fill = QColor(colour)
        fill.setAlpha(40)
        rect = QRectF(x, y, badge_w, badge_h)
        painter.setPen(colour)
        painter.setBrush(fill)
        painter.drawRoundedRect(rect, badge_h / 2, badge_h / 2)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, name)
        x += badge_w + GAP
