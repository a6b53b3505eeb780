"""The "Sources" column's coloured badges, one per agreeing source, as cached pixmaps.

The results model hands a row's badges to the view as its decoration (a ``QIcon``
whose selected look is the same pixmap, so a selected row keeps the sources' colours),
so painting the tree never calls back into Python: a Python delegate or ``data()``
runs once per cell and role on every repaint, and each of those calls may wait for
the GIL while the engine thread fuses (a repaint through Python callbacks took
several times as long as with C++ item data, and longer still while another thread
ran Python: docs/benchmarks.md). The badges of one set of sources are drawn once per
width and then reused.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QGuiApplication, QIcon, QPainter, QPixmap

from tributary.app import theme

PAD_X = 7
GAP = 4
MARGIN = 1  # around the badges inside the pixmap, so antialiased edges are not cut
CACHE_LIMIT = 256  # distinct (sources, width, font, scale) pixmaps kept

_PIXMAPS: dict[tuple[object, ...], QPixmap] = {}


def badge_font(base: QFont) -> QFont:
    """The badges' font: one point smaller than the view's."""
    font = QFont(base)
    font.setPointSizeF(max(7.0, base.pointSizeF() - 1))
    return font


def badges_height(base: QFont) -> int:
    """The height of a badges pixmap: a view's icon size must allow it (see ``badges_icon``)."""
    return QFontMetrics(badge_font(base)).height() + 4 + 2 * MARGIN


def badges_icon(pixmap: QPixmap) -> QIcon:
    """``pixmap`` as an icon that looks the same in a selected row (a style tints the
    selected look it generates). Shown at the pixmap's size when the view's icon size
    is at least that large."""
    icon = QIcon()
    for mode in (QIcon.Mode.Normal, QIcon.Mode.Active, QIcon.Mode.Selected):
        icon.addPixmap(pixmap, mode)
    return icon


def badges_pixmap(sources: tuple[str, ...], base: QFont, width: int) -> QPixmap:
    """Rounded, tinted name badges left to right, as many whole badges as fit in ``width``
    and a ``+N`` for the rest; when not even the first fits, that one elided (``slack-arch…``: the row's tooltip
    names its sources whole) rather than none.

    The pixmap is as wide as the badges drawn (never wider than ``width``) and as
    high as one badge; the view centres it in the cell."""
    ratio = _device_ratio()
    colours = tuple(theme.source_colour_hex(name) for name in sources)
    key = (sources, colours, base.key(), width, ratio, theme.colours()["text"])
    cached = _PIXMAPS.get(key)
    if cached is not None:
        return cached
    if len(_PIXMAPS) >= CACHE_LIMIT:
        _PIXMAPS.clear()
    font = badge_font(base)
    metrics = QFontMetrics(font)
    height = metrics.height() + 4
    badges, named = _laid_out(sources, metrics, width)
    used = max(1, sum(w for _, w in badges) + GAP * max(0, len(badges) - 1) + 2 * MARGIN)
    pixmap = QPixmap(max(1, round(used * ratio)), max(1, round((height + 2 * MARGIN) * ratio)))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setFont(font)
        x = float(MARGIN)
        for number, (label, badge_w) in enumerate(badges):
            colour = theme.source_colour(sources[number]) if number < named else theme.colour("muted")
            fill = QColor(colour)
            fill.setAlpha(40)
            rect = QRectF(x, MARGIN, badge_w, height)
            painter.setPen(colour)
            painter.setBrush(fill)
            painter.drawRoundedRect(rect, height / 2, height / 2)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
            x += badge_w + GAP
    finally:
        painter.end()
    _PIXMAPS[key] = pixmap
    return pixmap


def fitting_badges(sources: tuple[str, ...], metrics: QFontMetrics, width: int) -> list[tuple[str, int]]:
    """The labels and widths of the leading badges that fit in ``width`` (a cut badge
    reads worse), or, when even the first does not, that one with its name elided to
    fit, so a source with a long name still shows (none when not even "…" fits); then
    a ``+N`` for the sources left out when there is room for it."""
    return _laid_out(sources, metrics, width)[0]


def _laid_out(
    sources: tuple[str, ...], metrics: QFontMetrics, width: int
) -> tuple[list[tuple[str, int]], int]:
    """``fitting_badges``, and how many of them are sources' names (the rest is the count)."""
    badges: list[tuple[str, int]] = []
    x = MARGIN
    for name in sources:
        badge_w = metrics.horizontalAdvance(name) + 2 * PAD_X
        if x + badge_w > width - MARGIN:
            break
        badges.append((name, badge_w))
        x += badge_w + GAP
    if sources and not badges:
        room = width - 2 * MARGIN - 2 * PAD_X
        label = metrics.elidedText(sources[0], Qt.TextElideMode.ElideRight, max(0, room))
        if label and room >= metrics.horizontalAdvance(label):
            badges.append((label, metrics.horizontalAdvance(label) + 2 * PAD_X))
    return _with_more(sources, badges, metrics, width)


def _with_more(
    sources: tuple[str, ...], badges: list[tuple[str, int]], metrics: QFontMetrics, width: int
) -> tuple[list[tuple[str, int]], int]:
    """``badges`` ending in a ``+N`` badge for the sources left out, giving up trailing
    badges for its room (never the first: a name says more than a count), and how many
    names are left. Three sources agreeing on a hit showed as one badge, as if one had
    found it."""
    shown = list(badges)
    while 0 < len(shown) < len(sources):
        more = f"+{len(sources) - len(shown)}"
        more_w = metrics.horizontalAdvance(more) + 2 * PAD_X
        used = MARGIN + sum(w for _, w in shown) + GAP * len(shown)
        if used + more_w <= width - MARGIN:
            return [*shown, (more, more_w)], len(shown)
        if len(shown) == 1:
            break
        shown.pop()
    return badges, len(badges)


def _device_ratio() -> float:
    app = QGuiApplication.instance()
    return float(app.devicePixelRatio()) if isinstance(app, QGuiApplication) else 1.0
