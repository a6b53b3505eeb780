"""The assembled-context preview: the text an LLM would get, its token count, copy.

The preview shows the text through ``tributary.app.safe_text.block`` (controls visible, very
long lines cut); "Copy" copies the context itself, unchanged.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tributary.app import safe_text, theme
from tributary.app.combo_box import ComboBox
from tributary.app.spin_box import SpinBox
from tributary.engine.model import AssembledContext, ContextFormat


class _ContextText(QPlainTextEdit):
    """The context's text: it asks for no more than its minimum and takes the height
    left. At its usual preferred height the pane, in a scroll area and short on a
    1,024 x 640 screen, scrolled the summary and the copy button out of view."""

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.minimumHeight())


class ContextPreview(QWidget):
    format_changed = Signal(object)  # ContextFormat
    budget_changed = Signal(int)
    copied = Signal(int)  # tokens

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context: AssembledContext | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        controls = QFormLayout()
        controls.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.format = ComboBox()
        for fmt in ContextFormat:
            self.format.addItem(fmt.value, fmt)
        self.format.setCurrentIndex(self.format.findData(ContextFormat.MARKDOWN))
        self.format.currentIndexChanged.connect(lambda _: self.format_changed.emit(self.format.currentData()))
        self.budget = SpinBox()
        self.budget.setRange(500, 200_000)
        self.budget.setSingleStep(500)
        self.budget.setValue(8000)
        self.budget.setSuffix(" tokens")
        self.budget.setKeyboardTracking(False)
        self.budget.valueChanged.connect(self.budget_changed.emit)
        theme.fit_text(self.format, [self.format.itemText(i) for i in range(self.format.count())])
        theme.fit_text(self.budget, [f"{self.budget.maximum()}{self.budget.suffix()}"])
        self.copy_button = QPushButton(theme.icon("copy", "#ffffff"), "Copy context")
        self.copy_button.setObjectName("Primary")
        self.copy_button.clicked.connect(self.copy)
        # Two rows: side by side they need ~400 px, and the pane is 340 on a 1,024 px screen.
        controls.addRow("Format", self.format)
        controls.addRow("Budget", self.budget)
        self.usage = QProgressBar()
        self.usage.setTextVisible(False)
        self.usage.setFixedHeight(8)
        self.tokens = QLabel()
        self.tokens.setObjectName("Muted")
        self.tokens.setWordWrap(True)
        self.text = _ContextText()
        self.text.setReadOnly(True)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(mono)
        self.text.setMinimumHeight(self.text.fontMetrics().lineSpacing() * 4 + 12)
        layout.addLayout(controls)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.usage)
        # The summary takes the whole width and the button a row of its own: beside it, on
        # a 1,024 px screen, the summary wrapped to four lines and pushed the button out.
        layout.addWidget(self.tokens)
        footer = QHBoxLayout()
        footer.addStretch(1)
        footer.addWidget(self.copy_button)
        layout.addLayout(footer)
        self.set_context(None)

    def set_context(self, context: AssembledContext | None, waiting: str = "") -> None:
        """Show ``context``; ``waiting`` (``waiting for git…``) marks it as assembled from
        the sources that have answered so far, while others are still asked."""
        self.context = context
        self.copy_button.setEnabled(bool(context and context.text))
        so_far = f" · so far, {waiting}" if waiting else ""
        if context is None:
            self.text.setPlainText("")
            self.tokens.setText(f"No context yet{' · ' + waiting if waiting else ''}")
            self.usage.setValue(0)
            return
        self.text.setPlainText(safe_text.block(context.text))
        percent = round(100 * context.utilisation)
        dropped = f" · {context.dropped} dropped to fit" if context.dropped else ""
        reserved = self.budget.value() - context.budget
        kept_back = f", {reserved:,} of the budget kept for the prompt" if reserved > 0 else ""
        self.tokens.setText(
            f"{context.token_count:,} of {context.budget:,} tokens ({percent} %{kept_back}) · "
            f"{len(context.chunks)} chunks · {context.format.value}{dropped}{so_far}"
        )
        self.usage.setRange(0, 100)
        self.usage.setValue(min(100, percent))

    def copy(self) -> None:
        if self.context is None:
            return
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(self.context.text)
        self.copied.emit(self.context.token_count)
