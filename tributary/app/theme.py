"""Look and feel: a light/dark palette, the style sheet and the SVG icons.

The style sheet lives in ``resources/styles/app.qss`` with ``@token`` colours so one
file serves both schemes; icons are stroke SVGs drawn in ``currentColor`` and tinted
here, so they follow the palette too.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QSpinBox,
    QStyle,
    QStyleOptionComboBox,
    QStyleOptionSpinBox,
)

SOURCE_RESOURCES = Path(__file__).resolve().parents[2] / "resources"
INSTALLED_RESOURCES = Path(sys.prefix) / "share" / "tributary"


def resources_dir(source_tree: Path = SOURCE_RESOURCES, installed: Path = INSTALLED_RESOURCES) -> Path:
    """``resources/`` of a source checkout (or editable install), else where a wheel put
    them (pyproject's data-files: ``<prefix>/share/tributary``)."""
    return source_tree if (source_tree / "styles" / "app.qss").is_file() else installed


RESOURCES = resources_dir()
ICONS = RESOURCES / "icons"
STYLES = RESOURCES / "styles"

LIGHT: dict[str, str] = {
    "bg": "#f6f7f9", "sidebar": "#eef0f4", "panel": "#ffffff", "alt": "#f9fafb",
    "field": "#ffffff", "button": "#ffffff", "hover": "#e8ebf1", "pressed": "#dde2ea",
    "border": "#d9dde5", "text": "#1d2330", "muted": "#6b7280",
    "disabled": "#a3a9b4",
    "accent": "#3b6fe0", "accent_hover": "#2f5fcc", "accent_soft": "#dce6fb", "accent_text": "#1d3f8f",
    "danger": "#c93a3a", "danger_soft": "#fdecec", "ok": "#1f8a5b", "warn": "#d99a1e", "warn_soft": "#fdf5e4",
}
DARK: dict[str, str] = {
    "bg": "#16181d", "sidebar": "#1b1e24", "panel": "#1f2229", "alt": "#23262e",
    "field": "#262a32", "button": "#2a2e37", "hover": "#2f343e", "pressed": "#363b46",
    "border": "#343944", "text": "#e6e9ef", "muted": "#9aa3b2",
    "disabled": "#5c6370",
    "accent": "#5b8cff", "accent_hover": "#6d99ff", "accent_soft": "#2a3a5e", "accent_text": "#cfdcff",
    "danger": "#ff6b6b", "danger_soft": "#3a2226", "ok": "#4cc38a", "warn": "#e0b24a", "warn_soft": "#3a3222",
}

# Source colours (badges, charts), readable on both schemes: the built-in sources' own,
# then one each for the other sources in the config's order (``set_source_order``), so
# that no two of the first eight share one; a name the config does not list takes the
# next in turn.
BUILTIN_SOURCE_COLOURS = {"files": "#3b6fe0", "tasks": "#26a69a"}
SOURCE_COLOURS = ("#ef6c00", "#8e24aa", "#e0457b", "#43a047", "#c0a020", "#6d4c41", "#607d8b", "#c62828")
_source_colours: dict[str, str] = {}

STATUS_COLOURS = {
    "ok": "#2e9e6a", "cached": "#2bb3a3", "pending": "#9aa3b2", "timeout": "#d99a1e",
    "error": "#d64545", "skipped": "#9aa3b2", "circuit_open": "#b0563a",
}

_current: dict[str, str] = LIGHT


def is_dark() -> bool:
    """Follow the desktop's colour scheme when Qt knows it, else the window colour."""
    hints = QGuiApplication.styleHints()
    scheme = hints.colorScheme() if hints is not None else Qt.ColorScheme.Unknown
    if scheme != Qt.ColorScheme.Unknown:
        return scheme == Qt.ColorScheme.Dark
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


def colours() -> dict[str, str]:
    return _current


def colour(name: str) -> QColor:
    return QColor(_current[name])


def set_source_order(names: Iterable[str]) -> None:
    """Give the configured sources their colours, in the config's order."""
    others = [name for name in dict.fromkeys(names) if name not in BUILTIN_SOURCE_COLOURS]
    _source_colours.clear()
    _source_colours.update((name, SOURCE_COLOURS[i % len(SOURCE_COLOURS)]) for i, name in enumerate(others))


def source_colour_hex(name: str) -> str:
    """The colour of source ``name`` as ``#rrggbb``: the same in every view."""
    colour = BUILTIN_SOURCE_COLOURS.get(name) or _source_colours.get(name)
    if colour is None:
        colour = _source_colours[name] = SOURCE_COLOURS[len(_source_colours) % len(SOURCE_COLOURS)]
    return colour


def source_colour(name: str) -> QColor:
    return QColor(source_colour_hex(name))


def style_sheet(palette: dict[str, str]) -> str:
    text = (STYLES / "app.qss").read_text(encoding="utf-8")
    # Longest names first so "@accent_soft" is not eaten by "@accent".
    names = sorted(palette, key=len, reverse=True)
    pattern = re.compile("@(" + "|".join(map(re.escape, names)) + r")\b")
    text = pattern.sub(lambda m: palette[m.group(1)], text)
    return text.replace("@icons", ICONS.as_posix())


def apply(app: QApplication, dark: bool | None = None) -> None:
    """Install the Fusion style, a matching QPalette and the style sheet."""
    global _current
    _current = DARK if (is_dark() if dark is None else dark) else LIGHT
    app.setStyle("Fusion")
    pal = QPalette()
    pal.setColor(QPalette.ColorRole.Window, QColor(_current["bg"]))
    pal.setColor(QPalette.ColorRole.Base, QColor(_current["panel"]))
    pal.setColor(QPalette.ColorRole.AlternateBase, QColor(_current["alt"]))
    pal.setColor(QPalette.ColorRole.Text, QColor(_current["text"]))
    pal.setColor(QPalette.ColorRole.WindowText, QColor(_current["text"]))
    pal.setColor(QPalette.ColorRole.Button, QColor(_current["button"]))
    pal.setColor(QPalette.ColorRole.ButtonText, QColor(_current["text"]))
    pal.setColor(QPalette.ColorRole.Highlight, QColor(_current["accent"]))
    pal.setColor(QPalette.ColorRole.PlaceholderText, QColor(_current["muted"]))
    pal.setColor(QPalette.ColorRole.ToolTipBase, QColor(_current["panel"]))
    pal.setColor(QPalette.ColorRole.ToolTipText, QColor(_current["text"]))
    app.setPalette(pal)
    app.setStyleSheet(style_sheet(_current))
    icon.cache_clear()


@cache
def icon(name: str, tint: str | None = None) -> QIcon:
    """An icon from ``resources/icons/<name>.svg``, strokes tinted to the palette; on a
    disabled control its strokes take the palette's disabled colour, as the label does."""
    svg = (ICONS / f"{name}.svg").read_text(encoding="utf-8")
    result = QIcon()
    for mode, colour in ((QIcon.Mode.Normal, tint or _current["text"]), (QIcon.Mode.Disabled, _current["disabled"])):
        renderer = QSvgRenderer(QByteArray(svg.replace("currentColor", colour).encode("utf-8")))
        for size in (16, 24, 32, 64):
            pixmap = QPixmap(size, size)
            pixmap.fill(Qt.GlobalColor.transparent)
            painter = QPainter(pixmap)
            renderer.render(painter, QRectF(0, 0, size, size))
            painter.end()
            result.addPixmap(pixmap, mode)
    return result


def app_icon() -> QIcon:
    return icon("tributary")


def fit_text(widget: QComboBox | QSpinBox, texts: Iterable[str]) -> None:
    """Keep ``widget`` wide enough to show the widest of ``texts`` in its own font.

    Qt's size hints leave the style sheet's padding out, so a squeezed row cut
    "markdown" to "markdc": the room the style takes around the text field is asked of
    the style itself."""
    probe = QRect(0, 0, 400, max(widget.height(), 24))
    if isinstance(widget, QComboBox):
        combo = QStyleOptionComboBox()
        widget.initStyleOption(combo)
        combo.rect = probe
        field = widget.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, combo, QStyle.SubControl.SC_ComboBoxEditField, widget
        )
    else:
        spin = QStyleOptionSpinBox()
        widget.initStyleOption(spin)
        spin.rect = probe
        field = widget.style().subControlRect(
            QStyle.ComplexControl.CC_SpinBox, spin, QStyle.SubControl.SC_SpinBoxEditField, widget
        )
    metrics = widget.fontMetrics()
    widest = max((metrics.horizontalAdvance(text) for text in texts), default=0)
    widget.setMinimumWidth(widest + probe.width() - field.width() + 8)  # + the text's margins
