"""The app's combo box: a drop-down list that shows every item whole.

Qt sizes a combo's list from the combo's own width and ten rows, so a narrow combo
(a filter or hint beside others) cut its longest items and hid most of a longer
list behind a scroll bar. Every combo box the app creates is a :class:`ComboBox`; like
the app's spin boxes it takes the mouse wheel only once it has the focus.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QStyle, QWidget

from tributary.app.spin_box import wheel_only_when_focused

POPUP_ROWS = 20  # rows a drop-down list shows before it scrolls
ITEM_MARGINS = 16  # px: an item's text margins and the view's padding, both sides


class ComboBox(QComboBox):
    """A :class:`QComboBox` whose list is at least as wide as its widest item and shows
    up to :data:`POPUP_ROWS` rows; fitted each time it opens, so items added later
    count too."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMaxVisibleItems(POPUP_ROWS)
        wheel_only_when_focused(self)

    def showPopup(self) -> None:
        fit_popup(self)
        super().showPopup()
        show_every_row(self)


def popup_width(combo: QComboBox) -> int:
    """How wide ``combo``'s list must be to show its widest item whole (with its icon,
    the text margins, the frame and, when the list scrolls, the scroll bar)."""
    view = combo.view()
    metrics = view.fontMetrics()
    widest = max((metrics.horizontalAdvance(combo.itemText(i)) for i in range(combo.count())), default=0)
    has_icon = any(not combo.itemIcon(i).isNull() for i in range(combo.count()))
    icon = combo.iconSize().width() + 4 if has_icon else 0
    style = view.style()
    scrolls = combo.count() > combo.maxVisibleItems()
    scroll_bar = style.pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, view) if scrolls else 0
    return widest + icon + ITEM_MARGINS + scroll_bar + 2 * view.frameWidth()


def fit_popup(combo: QComboBox) -> None:
    """Make ``combo``'s list wide enough for its widest item (never narrower than the
    combo itself, as Qt already keeps it)."""
    combo.view().setMinimumWidth(popup_width(combo))


def show_every_row(combo: QComboBox) -> None:
    """Make an open list that holds all its rows tall enough to show them all.

    Qt sizes the list before the style sheet's frames count in some layouts, so a short
    list opened a few pixels short: its scroll arrows came up, took the space of a row
    and hid it. A list longer than :data:`POPUP_ROWS` scrolls, as it should.
    """
    view = combo.view()
    bar = view.verticalScrollBar()
    if combo.count() > combo.maxVisibleItems() or bar.maximum() <= bar.minimum():
        return
    container = view.parentWidget()
    if container is None:
        return
    for child in container.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
        if child is not view:
            child.hide()  # the scroll arrows: shown again by Qt if the list still scrolls
    layout = container.layout()
    if layout is not None:
        layout.activate()
    model = combo.model()
    rows = sum(view.visualRect(model.index(i, combo.modelColumn())).height() for i in range(combo.count()))
    grow = rows - view.viewport().height()
    if grow > 0:
        rect = container.geometry().adjusted(0, 0, 0, grow)
        screen = combo.screen().availableGeometry()
        if rect.bottom() > screen.bottom():
            rect.moveBottom(screen.bottom())
        container.setGeometry(rect)
    view.scrollToTop()
