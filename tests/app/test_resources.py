"""The app finds its icons and style sheet from a source tree and from a wheel's share/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from tributary.app import theme


def test_a_source_tree_wins_and_an_installed_share_dir_is_the_fallback(tmp_path: Path) -> None:
    tree, share = tmp_path / "resources", tmp_path / "prefix" / "share" / "tributary"
    assert theme.resources_dir(tree, share) == share  # a wheel: no source tree beside the code
    (tree / "styles").mkdir(parents=True)
    (tree / "styles" / "app.qss").write_text("QWidget {}", encoding="utf-8")
    assert theme.resources_dir(tree, share) == tree


def test_every_icon_the_app_asks_for_exists() -> None:
    names = {p.stem for p in theme.ICONS.glob("*.svg")}
    used = set()
    for source in Path(theme.__file__).parent.rglob("*.py"):
        text = source.read_text(encoding="utf-8")
        for chunk in text.split('icon("')[1:]:
            used.add(chunk.split('"', 1)[0])
    assert used and used <= names, sorted(used - names)


def test_a_disabled_button_greys_its_icon_and_label() -> None:
    """Disabled, a button's icon and text take the palette's disabled colour: with the
    muted one they looked like a flat button that works."""
    from PySide6.QtGui import QColor, QIcon

    icon = theme.icon("copy")
    image = icon.pixmap(32, 32, QIcon.Mode.Disabled).toImage()
    inked = {image.pixelColor(x, y).name() for x in range(32) for y in range(32) if image.pixelColor(x, y).alpha() == 255}
    assert inked == {QColor(theme.LIGHT["disabled"]).name()}
    sheet = theme.style_sheet(theme.LIGHT)
    assert f"QPushButton:disabled, QToolButton#Action:disabled {{ color: {theme.LIGHT['disabled']};" in sheet


def test_a_disabled_list_greys_its_rows() -> None:
    """A disabled form's check list (the rule form's *Ask*, no rule picked) looked as live
    as the enabled one: the list's own text colour outranked the disabled palette."""
    sheet = theme.style_sheet(theme.LIGHT)
    assert f"QListWidget:disabled {{ color: {theme.LIGHT['disabled']};" in sheet


def test_a_focused_check_box_shows_whether_it_is_checked(qtbot: Any) -> None:
    """A check box reached from the keyboard drew an empty box whatever its state (the
    focus ring styled its indicator, and a styled indicator draws no check mark), so
    Space seemed to do nothing, or the opposite of what it did."""
    from PySide6.QtWidgets import QCheckBox, QVBoxLayout, QWidget

    window = QWidget()
    box = QCheckBox("Fold duplicates")
    QVBoxLayout(window).addWidget(box)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    box.setChecked(True)
    checked = box.grab().toImage()
    box.setChecked(False)
    unchecked = box.grab().toImage()
    assert checked != unchecked


def test_a_focused_pane_shows_its_ring_on_every_edge(qtbot: Any) -> None:
    """A scroll area's focus ring (the Insights page, the result's detail) showed on one
    or two edges: a border that appears only with focus is drawn under the pane."""
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

    from tributary.app.layouts import scrolled_down

    window = QWidget()
    area = scrolled_down(QLabel("Insights\n" * 40))
    area.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    QVBoxLayout(window).addWidget(area)
    window.resize(300, 200)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    area.setFocus()
    qtbot.waitUntil(area.hasFocus)
    image = area.grab().toImage()
    ring = QColor(theme.LIGHT["accent"]).name()
    width, height = image.width(), image.height()
    edges = {"left": (0, height // 2), "top": (width // 2, 0), "right": (width - 1, height // 2),
             "bottom": (width // 2, height - 1)}
    assert {edge: image.pixelColor(*at).name() for edge, at in edges.items()} == dict.fromkeys(edges, ring)


def test_a_focused_button_draws_one_ring() -> None:
    """Fusion drew its dotted focus frame around a focused button's label, inside the
    ring the style sheet draws: two rings on "Open in editor"."""
    sheet = theme.style_sheet(theme.LIGHT)
    assert "QPushButton, QToolButton { outline: none; }" in sheet
    assert "outline: none; }" in sheet.split("QCheckBox, QRadioButton {", 1)[1].split("\n", 1)[0]
