"""Request hints on the search page: what the user already knows.

A toggle in the controls row ("Hints", "Hints (2)" when two are set) shows or hides
one compact row of fields (two in a narrow window): related files (comma-separated, or picked with "…"),
related issues, language and framework. The engine boosts hits that match them and
shows the boost as the "hints" part of a hit's score breakdown.

Hints belong to the question they were given for: the page clears them (and says so)
when the next question shares no word with it (``related``).

Edits are debounced here and announced once per actual change (``changed``), so the
page re-runs the current query through the controller's ``set_options`` path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from tributary.app import theme
from tributary.app.combo_box import ComboBox
from tributary.app.open_file import index_roots
from tributary.engine.model import Hints

ONE_ROW_WIDTH = 880  # narrower, and the fields wrap into two rows
DEBOUNCE_MS = 300  # hints are typed in full words; don't re-run on every keystroke
LANGUAGES = ["python", "javascript", "typescript", "go", "rust", "java", "kotlin", "c", "cpp",
             "csharp", "ruby", "php", "swift", "scala", "shell", "markdown"]
_SPLIT = re.compile(r"[,;\n]+")
_ISSUE_SPLIT = re.compile(r"[,;\s]+")


def parse_list(text: str, *, issues: bool = False) -> list[str]:
    """Comma-separated entries (issues: also space-separated), trimmed, de-duplicated."""
    parts = (_ISSUE_SPLIT if issues else _SPLIT).split(text)
    return list(dict.fromkeys(p.strip() for p in parts if p.strip()))


def count_hints(hints: Hints) -> int:
    """How many of the four hints are set (for the toggle's label)."""
    return sum(bool(x) for x in (hints.related_files, hints.related_issues, hints.language,
                                 hints.framework))


def related(a: str, b: str) -> bool:
    """Whether two questions share a word of three letters or more (case-insensitive)."""
    words = re.compile(r"\w{3,}")
    return bool({w.lower() for w in words.findall(a)} & {w.lower() for w in words.findall(b)})


def same_hints(a: Hints, b: Hints) -> bool:
    return (a.related_files, a.related_issues, a.language, a.framework) == (
        b.related_files, b.related_issues, b.language, b.framework)


class HintsToggle(QToolButton):
    """The controls-row button that shows the hints row and counts the active hints."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Action")
        self.setCheckable(True)
        self.setIcon(theme.icon("hint"))
        self.setIconSize(QSize(14, 14))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setToolTip("Tell the search what you already know: related files, issues, "
                        "language, framework (Ctrl+H)")
        self.set_count(0)

    def set_count(self, count: int) -> None:
        self.setText(f"Hints ({count})" if count else "Hints")
        # Active hints change every ranking: make that visible even when collapsed.
        c = theme.colours()
        self.setStyleSheet(
            f"QToolButton {{ background: {c['accent_soft']}; color: {c['accent_text']};"
            f" border-color: {c['accent']}; }}" if count else "")


def repositories_folder() -> str:
    """Where picking related files starts: the indexed repository, or the folder that
    holds every indexed repository ("" when there is none, or they share only ``/``)."""
    roots = [str(root) for root in index_roots().values()]
    if not roots:
        return ""
    folder = os.path.commonpath(roots)
    return "" if folder == os.path.dirname(folder) else folder


class HintsBar(QWidget):
    """The row of hint fields; ``hints()`` reads them, ``changed`` fires after edits."""

    changed = Signal(object)  # Hints

    def __init__(self, parent: QWidget | None = None, debounce_ms: int = DEBOUNCE_MS) -> None:
        super().__init__(parent)
        self.toggle = HintsToggle()
        self.toggle.toggled.connect(self.setVisible)
        self.files = QLineEdit()
        self.files.setPlaceholderText("src/app.py, tests/test_app.py")
        self.files.setToolTip("Related files, comma-separated: hits in or next to them rank higher")
        self.pick = QToolButton()
        self.pick.setObjectName("Action")
        self.pick.setText("…")
        self.pick.setToolTip("Pick related files")
        self.pick.setStyleSheet("QToolButton { padding: 5px 7px; } QToolButton:focus { padding: 4px 6px; }")
        self.pick.clicked.connect(self.pick_files)
        self.issues = QLineEdit()
        self.issues.setPlaceholderText("#123, 456")
        self.issues.setToolTip("Related issues: hits that mention them rank higher")
        self.language = ComboBox()
        self.language.setEditable(True)
        self.language.addItem("")
        self.language.addItems(LANGUAGES)
        # "Prefer": a hint ranks, where the filters row's Language keeps only that language.
        self.language.setToolTip("Prefer this language: its hits rank higher (the Language filter "
                                 "above keeps only it)")
        line = self.language.lineEdit()
        if line is not None:
            line.setPlaceholderText("any language")
        self.framework = QLineEdit()
        self.framework.setPlaceholderText("e.g. pytest, django")
        self.framework.setToolTip("Hits that mention this framework rank higher")
        self.clear_button = QToolButton()
        self.clear_button.setObjectName("Action")
        self.clear_button.setText("Clear")
        self.clear_button.setToolTip("Remove every hint")
        self.clear_button.clicked.connect(self.clear)

        # Two halves side by side; below each other in a narrow window, where one row
        # would leave each field a few letters wide.
        self._layout = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(6)
        halves = (
            (("Files", (self.files, self.pick), 4), ("Issues", (self.issues,), 2)),
            (("Prefer", (self.language,), 0), ("Framework", (self.framework,), 2)),
        )
        for number, fields in enumerate(halves):
            half = QHBoxLayout()
            half.setSpacing(6)
            for caption, widgets, stretch in fields:
                label = QLabel(caption)
                label.setObjectName("Muted")
                half.addWidget(label)
                for i, widget in enumerate(widgets):
                    half.addWidget(widget, stretch if i == 0 else 0)
            if number:
                half.addWidget(self.clear_button)
            self._layout.addLayout(half, 1)
        self.language.setMinimumWidth(90)
        self.language.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

        self._last = Hints()
        self._pick_folder = ""  # where the last related file was picked
        # The folder of the result selected on the page, if it is a file here ("" if not).
        self.selection_folder: Callable[[], str] = lambda: ""
        self._timer = QTimer(self, singleShot=True, interval=debounce_ms)
        self._timer.timeout.connect(self._emit_if_changed)
        for edit in (self.files, self.issues, self.framework):
            edit.textEdited.connect(lambda _: self._timer.start())
            edit.editingFinished.connect(self._emit_if_changed)  # Enter / leaving: at once
        self.language.currentTextChanged.connect(lambda _: self._timer.start())
        self.setVisible(False)

    @property
    def rows(self) -> int:
        """1 when the fields stand in one row, 2 when the window is too narrow for it."""
        return 2 if self._layout.direction() is QBoxLayout.Direction.TopToBottom else 1

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        wanted = (QBoxLayout.Direction.TopToBottom if event.size().width() < ONE_ROW_WIDTH
                  else QBoxLayout.Direction.LeftToRight)
        if self._layout.direction() is not wanted:
            self._layout.setDirection(wanted)

    def hints(self) -> Hints:
        return Hints(
            related_files=parse_list(self.files.text()),
            related_issues=parse_list(self.issues.text(), issues=True),
            language=self.language.currentText().strip().lower() or None,
            framework=self.framework.text().strip() or None,
        )

    def set_hints(self, hints: Hints) -> None:
        """Fill the fields (and announce the change, as an edit would)."""
        self.files.setText(", ".join(hints.related_files))
        self.issues.setText(", ".join(hints.related_issues))
        self.language.setCurrentText(hints.language or "")
        self.framework.setText(hints.framework or "")
        self._emit_if_changed()

    def clear(self) -> None:
        self.set_hints(Hints())

    def reset_quietly(self) -> None:
        """Empty the fields without announcing it (the caller sets the options itself)."""
        for edit in (self.files, self.issues, self.framework):
            edit.clear()
        self.language.blockSignals(True)
        self.language.setCurrentText("")
        self.language.blockSignals(False)
        self._timer.stop()
        self._last = Hints()
        self.toggle.set_count(0)

    def add_files(self, paths: list[str]) -> None:
        if paths:
            self._pick_folder = str(Path(paths[-1]).parent)  # the picker opens there next time
        current = parse_list(self.files.text())
        self.files.setText(", ".join(dict.fromkeys([*current, *paths])))
        self._emit_if_changed()

    def pick_files(self) -> None:
        # open() + a signal, never exec(): no nested event loop under qasync.
        dialog = QFileDialog(self, "Related files")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        folder = self._pick_folder or self.selection_folder() or repositories_folder()
        if folder:
            dialog.setDirectory(folder)
        dialog.filesSelected.connect(self.add_files)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _emit_if_changed(self) -> None:
        self._timer.stop()
        hints = self.hints()
        self.toggle.set_count(count_hints(hints))
        if not same_hints(hints, self._last):
            self._last = hints
            self.changed.emit(hints)
