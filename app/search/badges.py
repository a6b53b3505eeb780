"""Paints the "Sources" column as coloured badges, one per agreeing source."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from app import theme
from app.search.results_model import SOURCES_ROLE

PAD_X = 7
GAP = 4


class SourceBadgeDelegate(QStyledItemDelegate):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)

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
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = option.font
        font.setPointSizeF(max(7.0, font.pointSizeF() - 1))
        painter.setFont(font)
        metrics = QFontMetrics(font)
        height = metrics.height() + 4
        x = option.rect.x() + 4
        y = option.rect.y() + (option.rect.height() - height) / 2
        for name in sources:
            width = metrics.horizontalAdvance(name) + 2 * PAD_X
            if x + width > option.rect.right():
                break
            colour = theme.source_colour(name)
            fill = QColor(colour)
            fill.setAlpha(40)
            rect = QRectF(x, y, width, height)
            painter.setPen(colour)
            painter.setBrush(fill)
            painter.drawRoundedRect(rect, height / 2, height / 2)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, name)
            x += width + GAP
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        sources = index.data(SOURCES_ROLE) or []
        metrics = QFontMetrics(option.font)
        width = sum(metrics.horizontalAdvance(s) + 2 * PAD_X + GAP for s in sources) + 8
        return QSize(width, metrics.height() + 10)
