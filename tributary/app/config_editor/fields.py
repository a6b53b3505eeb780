"""Small editing widgets: a key/value list with masked secrets, a checkable name list."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tributary.app import theme
from tributary.engine.api import is_secret_name


def set_invalid(edit: QLineEdit, error: str | None, label: QLabel | None = None) -> None:
    """Mark a field invalid (red border, inline message) without touching its text."""
    edit.setProperty("invalid", error is not None)
    edit.style().unpolish(edit)
    edit.style().polish(edit)
    edit.setToolTip(error or "")
    if label is not None:
        label.setText(error or "")
        label.setVisible(error is not None)


def error_label() -> QLabel:
    label = QLabel()
    label.setObjectName("Error")
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    # Hidden, it keeps its line: the form does not jump as messages come and go.
    policy = label.sizePolicy()
    policy.setRetainSizeWhenHidden(True)
    label.setSizePolicy(policy)
    label.setVisible(False)
    return label


KEY_MAX_WIDTH_CHARS = 32  # a name field grows with its name up to about this many characters
KEY_MIN_WIDTH_CHARS = 10  # and gives room down to this many in a narrow form


class _KeyEdit(QLineEdit):
    """A name field that asks for its whole name but can give room in a narrow form:
    its size hint fits the name, its minimum a few characters."""

    wanted = 0

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(max(self.wanted, self.minimumSizeHint().width()), hint.height())

    def minimumSizeHint(self) -> QSize:
        least = super().minimumSizeHint()
        metrics = self.fontMetrics()
        return QSize(min(self.wanted, metrics.averageCharWidth() * KEY_MIN_WIDTH_CHARS), least.height())


class _ValueEdit(QLineEdit):
    """A value field that takes the room left beside its name (stretch), asking for
    little of its own, so the name is read whole first."""

    def sizeHint(self) -> QSize:
        return self.minimumSizeHint()

    def minimumSizeHint(self) -> QSize:
        least = super().minimumSizeHint()
        return QSize(self.fontMetrics().averageCharWidth() * KEY_MIN_WIDTH_CHARS, least.height())


class _Row(QWidget):
    changed = Signal()
    removed = Signal(object)

    def __init__(self, key: str, value: str, secret: bool) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.key = _KeyEdit(key)
        self.key.setPlaceholderText("NAME")
        self.key.textChanged.connect(self._fit_key)
        self._fit_key(key)
        self.value = _ValueEdit(value)
        self.value.setPlaceholderText("value or ${VAR}")
        self.reveal = QToolButton()
        self.reveal.setText("Show")
        self.reveal.setCheckable(True)
        self.reveal.toggled.connect(self._echo)
        self._secret = secret
        self._echo(False)
        remove = QToolButton()
        remove.setIcon(theme.icon("remove"))
        remove.setToolTip("Remove")
        remove.clicked.connect(lambda: self.removed.emit(self))
        self.key.textEdited.connect(lambda _: self.changed.emit())
        self.key.textEdited.connect(lambda _: self._echo(self.reveal.isChecked()))
        self.value.textEdited.connect(lambda _: self.changed.emit())
        self.value.textEdited.connect(lambda _: self._echo(self.reveal.isChecked()))
        for field in (self.key, self.value):  # cut short in a narrow form: the start shows
            field.setCursorPosition(0)
        layout.addWidget(self.key)  # its name's width when there is room (_KeyEdit)
        layout.addWidget(self.value, 1)
        layout.addWidget(self.reveal)
        layout.addWidget(remove)

    def _fit_key(self, text: str) -> None:
        """The name field is as wide as its name, up to a limit: a long variable name
        is read whole rather than cut (values may be long too; they keep the rest),
        unless the form is too narrow for both."""
        metrics = self.key.fontMetrics()
        wanted = metrics.horizontalAdvance(text or "NAME") + 3 * metrics.averageCharWidth() + 8
        self.key.wanted = min(wanted, metrics.horizontalAdvance("X" * KEY_MAX_WIDTH_CHARS))
        self.key.updateGeometry()

    def _echo(self, shown: bool) -> None:
        # ${VAR} references reveal nothing; a literal value under a secret-looking key
        # (the engine's rule: TOKEN, API_KEY, Authorization, …) is masked until revealed.
        reference = self.value.text().startswith("${")
        secret = self._secret and is_secret_name(self.key.text())
        self.reveal.setVisible(secret and not reference)
        hide = secret and not shown and not reference
        self.value.setEchoMode(QLineEdit.EchoMode.Password if hide else QLineEdit.EchoMode.Normal)
        self.reveal.setText("Hide" if shown else "Show")


class KeyValueEditor(QWidget):
    """Edits a dict[str, str]; with ``secret`` the values are masked (env, headers).
    ``noun`` names one entry on the add button."""

    changed = Signal()

    def minimumSizeHint(self) -> QSize:
        """Its rows' least width and room for a scroll bar: a form that decides on it
        whether the rows sit beside their label may then grow a vertical scroll bar,
        which would squeeze the names and values below their few characters."""
        least = super().minimumSizeHint()
        extent = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self)
        return QSize(least.width() + extent, least.height())

    def __init__(self, secret: bool = True, parent: QWidget | None = None, *, noun: str = "variable") -> None:
        super().__init__(parent)
        self._secret = secret
        self._rows: list[_Row] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self._add = QPushButton(theme.icon("add"), f"Add {noun}")
        self._add.clicked.connect(lambda: self._append("", "", focus=True))
        self._layout.addWidget(self._add, 0, Qt.AlignmentFlag.AlignLeft)

    def set_values(self, values: dict[str, str]) -> None:
        for row in self._rows:
            row.deleteLater()
        self._rows = []
        for key, value in values.items():
            self._append(key, value)

    def values(self) -> dict[str, str]:
        return {r.key.text().strip(): r.value.text() for r in self._rows if r.key.text().strip()}

    def _append(self, key: str, value: str, focus: bool = False) -> None:
        row = _Row(key, value, self._secret)
        row.changed.connect(self.changed.emit)
        row.removed.connect(self._remove)
        self._rows.append(row)
        self._layout.insertWidget(len(self._rows) - 1, row)
        if focus:
            row.key.setFocus()

    def _remove(self, row: _Row) -> None:
        self._rows.remove(row)
        row.deleteLater()
        self.changed.emit()


class CheckList(QListWidget):
    """A list of names with check boxes (servers a rule asks)."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._loading = False
        self.setObjectName("CheckList")  # padded: the first box clear of the rounded border
        self.itemChanged.connect(lambda _: None if self._loading else self.changed.emit())
        self.setMaximumHeight(130)

    def set_items(self, names: list[str], checked: list[str], notes: Mapping[str, str] | None = None) -> None:
        """The names, those in ``checked`` ticked; a name with a note shows it beside
        the name (``git — no search tool``: a rule may ask it, but it will not answer)."""
        self._loading = True
        self.clear()
        for name in list(dict.fromkeys(names + [c for c in checked if c not in names])):
            note = (notes or {}).get(name)
            item = QListWidgetItem(f"{name} — {note}" if note else name)
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if name in checked else Qt.CheckState.Unchecked)
            self.addItem(item)
        self._loading = False

    def checked(self) -> list[str]:
        return [str(self.item(i).data(Qt.ItemDataRole.UserRole)) for i in range(self.count())
                if self.item(i).checkState() == Qt.CheckState.Checked]


def with_error(field: QWidget, label: QLabel) -> QWidget:
    """A field with its inline error underneath (the error takes no room when hidden)."""
    box = QWidget()
    box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    layout.addWidget(field)
    layout.addWidget(label)
    return box
