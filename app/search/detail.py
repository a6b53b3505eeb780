"""The detail pane: a hit's content highlighted, where it is, why it scores, its duplicates,
and the "Useful" / "Not useful" buttons that teach the ranking which sources to trust.

Hit text is untrusted: it is shown through ``app.safe_text`` in plain-text widgets only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app import safe_text, theme
from app.open_file import local_file, open_in_editor, reveal  # absolute paths, editor line syntax
from app.search.highlighter import CodeHighlighter, language_for
from app.search.score_chart import ScoreChart
from engine.model import DedupGroup, GroupMember, Hit

MAX_SHOWN = safe_text.BLOCK_LIMIT  # characters; hit content is untrusted and may be huge
USEFUL_KEYS = QKeySequence("Ctrl+Up")
NOT_USEFUL_KEYS = QKeySequence("Ctrl+Down")


def shortcut_text(keys: QKeySequence) -> str:
    return keys.toString(QKeySequence.SequenceFormat.NativeText)


class DetailPane(QWidget):
    feedback_requested = Signal(bool)  # useful?

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hit: Hit | None = None
        self.rating: bool | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(6)
        self.title = QLabel("Select a result to see it here")
        self.title.setObjectName("SectionTitle")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.location = QLabel()
        self.location.setObjectName("Muted")
        self.location.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.location.setTextFormat(Qt.TextFormat.PlainText)
        self.location.setWordWrap(True)
        buttons = QHBoxLayout()
        self.open_button = QPushButton(theme.icon("open"), "Open in editor")
        self.reveal_button = QPushButton(theme.icon("folder"), "Reveal")
        self.open_button.clicked.connect(self._open)
        self.reveal_button.clicked.connect(self._reveal)
        self.useful_button = QPushButton(theme.icon("thumb-up"), "Useful")
        self.useful_button.setToolTip(
            f"This result helped: trust its sources more ({shortcut_text(USEFUL_KEYS)})")
        self.not_useful_button = QPushButton(theme.icon("thumb-down"), "Not useful")
        self.not_useful_button.setToolTip(
            f"This result did not help: trust its sources less ({shortcut_text(NOT_USEFUL_KEYS)})")
        for button, useful in ((self.useful_button, True), (self.not_useful_button, False)):
            button.setCheckable(True)
            button.clicked.connect(lambda _=False, u=useful: self._feedback(u))
        self.useful_button.setStyleSheet(_rated_style("ok"))
        self.not_useful_button.setStyleSheet(_rated_style("danger"))
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.reveal_button)
        buttons.addStretch()
        self.chart = ScoreChart()
        self.group = QLabel()
        self.group.setObjectName("Muted")
        self.group.setWordWrap(True)
        self.group.setTextFormat(Qt.TextFormat.PlainText)
        self.content = QPlainTextEdit()
        self.content.setReadOnly(True)
        self.content.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.content.setFont(mono)
        self.highlighter = CodeHighlighter(self.content.document())
        breakdown = QLabel("Score breakdown")
        breakdown.setObjectName("Hint")
        # Rating sits with the score it will change: it moves the sources' reputation.
        rate = QHBoxLayout()
        rate.setSpacing(6)
        rate.addWidget(breakdown)
        rate.addStretch()
        rate.addWidget(self.useful_button)
        rate.addWidget(self.not_useful_button)
        layout.addWidget(self.title)
        layout.addWidget(self.location)
        layout.addLayout(buttons)
        layout.addWidget(self.content, 1)
        layout.addLayout(rate)
        layout.addWidget(self.chart)
        layout.addWidget(self.group)
        self.show_hit(None)

    def show_hit(self, hit: Hit | None, group: DedupGroup | None = None,
                 member: GroupMember | None = None) -> None:
        previous, self.hit = self.hit, hit
        has_file = hit is not None and local_file(hit) is not None
        self.open_button.setEnabled(has_file)
        self.reveal_button.setEnabled(has_file)
        self.useful_button.setEnabled(hit is not None)
        self.not_useful_button.setEnabled(hit is not None)
        if previous is None or hit is None or previous.id != hit.id:
            self.set_rating(None)
        if hit is None:
            self.title.setText("Select a result to see it here")
            self.location.setText("")
            self.content.setPlainText("")
            self.chart.set_parts(None)
            self.group.setText("")
            return
        same = previous is not None and previous.id == hit.id and previous.content == hit.content
        self.chart.set_parts(hit.parts)
        self.group.setText(_group_text(group, member))
        if same:  # a live update of the same hit: keep the text (and the scroll position)
            return
        self.title.setText(safe_text.one_line(hit.title, 300) or "(untitled)")
        where = safe_text.one_line(hit.location, 400) if hit.path or hit.uri else ""
        origin = f"{safe_text.one_line(hit.source)} / {safe_text.one_line(hit.tool)}"
        self.location.setText(f"{where}    ·    {origin}" if where else origin)
        # Long lines are cut for display: a megabyte line would stall the text layout.
        text = safe_text.block(hit.content, limit=MAX_SHOWN)
        language = language_for(hit.path, text)
        self.highlighter.set_language(language)
        # Code keeps its lines; prose (task descriptions, notes, docs) wraps.
        self.content.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap if language
                                     else QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.content.setPlainText(text)

    def set_rating(self, useful: bool | None) -> None:
        """Show how the user rated the current hit (None: not rated)."""
        self.rating = useful
        self.useful_button.setChecked(useful is True)
        self.not_useful_button.setChecked(useful is False)

    def _feedback(self, useful: bool) -> None:
        # The buttons reflect the recorded rating, not the click: set_rating follows.
        self.useful_button.setChecked(self.rating is True)
        self.not_useful_button.setChecked(self.rating is False)
        if self.hit is not None:
            self.feedback_requested.emit(useful)

    def _open(self) -> None:
        if self.hit and (path := local_file(self.hit)):
            open_in_editor(path, self.hit.start_line)

    def _reveal(self) -> None:
        if self.hit and (path := local_file(self.hit)):
            reveal(path)


def _rated_style(colour: str) -> str:
    """A checked (rated) feedback button is tinted; the app style sheet has no :checked."""
    c = theme.colours()
    return (f"QPushButton {{ padding: 3px 10px; }}"
            f"QPushButton:checked {{ background: {c[colour]}; color: white; border-color: {c[colour]}; }}")


def _group_text(group: DedupGroup | None, member: GroupMember | None) -> str:
    if member is not None:
        return f"Folded duplicate: {member.reason.value}, similarity {member.similarity:.2f}."
    if group is None or not group.members:
        return ""
    lines = [f"Agreed by {group.agreement} sources ({', '.join(group.sources)}); folded:"]
    lines += [
        f"  • {m.hit.source}: {safe_text.one_line(m.hit.location, 120)} — {m.reason.value} {m.similarity:.2f}"
        for m in group.members[:20]
    ]
    if len(group.members) > 20:
        lines.append(f"  … and {len(group.members) - 20} more")
    return "\n".join(lines)
