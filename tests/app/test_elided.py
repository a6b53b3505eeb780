"""Paths elide their folders first: the file name is what tells results apart."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication

from tributary.app.elided import elide_path


def metrics() -> QFontMetrics:
    return QFontMetrics(QApplication.font())


def test_the_file_name_outlasts_the_folders(qtbot: Any) -> None:
    fm = metrics()
    text = "tributary/engine/config/schema.py:84-88"
    assert elide_path(text, fm, 10_000) == text
    name_width = fm.horizontalAdvance("…/schema.py:84-88")
    for width in range(name_width, fm.horizontalAdvance(text)):
        shown = elide_path(text, fm, width)
        assert shown.endswith("/schema.py:84-88"), (width, shown)
        assert fm.horizontalAdvance(shown) <= width
    assert elide_path(text, fm, fm.horizontalAdvance("tributary/…/schema.py:84-88")) == "tributary/…/schema.py:84-88"


def test_text_that_is_no_path_elides_on_the_right(qtbot: Any) -> None:
    fm = metrics()
    shown = elide_path("commit 0421abc · 2026-10-01 · Ada", fm, 90)
    assert shown.startswith("commit") and shown.endswith("…")
    tiny = elide_path("src/pkg/module.py:1", fm, 30)
    assert fm.horizontalAdvance(tiny) <= 30


def drawn(qtbot: Any, delegate_class: Any, texts: list[str], width: int) -> list[str]:
    """The text ``delegate_class`` draws for each cell of a one-row view ``width`` wide."""
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QStandardItem, QStandardItemModel
    from PySide6.QtWidgets import QStyleOptionViewItem, QTreeView

    view = QTreeView()
    qtbot.addWidget(view)
    model = QStandardItemModel()
    model.appendRow([QStandardItem(text) for text in texts])
    view.setModel(model)
    shown = []
    for column in range(len(texts)):
        option = QStyleOptionViewItem()
        option.initFrom(view)
        option.rect = QRect(0, 0, width, 24)
        delegate_class(view).initStyleOption(option, model.index(0, column))
        shown.append(option.text)
    return shown


def test_the_location_column_shows_the_file_name(qtbot: Any) -> None:
    """The results' Location column draws paths folders-first elided."""
    from tributary.app.search.page import PathElide

    (shown,) = drawn(qtbot, PathElide, ["src/slack-archive-search/mod_1.py:11-19"], 130)
    assert shown.endswith("/mod_1.py:11-19"), shown


def test_a_title_that_is_a_path_keeps_its_file_name(qtbot: Any) -> None:
    """server-filesystem's results are named by their whole path: the list showed
    ``/tmp/click/src/click/…`` for three different files."""
    from tributary.app.elided import TitleLabel, is_path
    from tributary.app.search.page import TitleElide

    assert is_path("/tmp/click/src/click/_termui_impl.py") and is_path("src/a.py")
    assert not is_path("Utilities > Showing Progress Bars") and not is_path("I/O errors on close")
    path, title = drawn(qtbot, TitleElide, ["/tmp/click/src/click/_termui_impl.py",
                                            "a title that is long enough to be cut on the right"], 170)
    assert path.endswith("/_termui_impl.py"), path
    assert title.startswith("a title")  # the view elides it on the right
    fm = metrics()
    shown = elide_path("/home/ann/src/click/examples/termui/termui.py", fm, fm.horizontalAdvance("…/termui/termui.py"))
    assert shown == "…/termui/termui.py"  # the nearest folder, not /home

    label = TitleLabel()
    qtbot.addWidget(label)
    label.resize(170, 24)
    label.set_full_text("/tmp/click/src/click/_termui_impl.py")
    assert label.text().endswith("/_termui_impl.py") and label.toolTip() == label.full_text
    label.set_full_text("a title that is long enough to be cut on the right")
    assert label.text().startswith("a title") and label.text().endswith("…")
