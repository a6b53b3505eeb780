"""The detail pane: a hit's content highlighted, where it is, why it scores, its duplicates."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from urllib.parse import unquote, urlparse

from PySide6.QtCore import QProcess, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QFont, QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app import theme
from app.search.highlighter import CodeHighlighter, language_for
from app.search.score_chart import ScoreChart
from engine.model import DedupGroup, GroupMember, Hit

EDITOR_ENV = "TRIBUTARY_EDITOR"  # e.g. "code -g {path}:{line}"; else the desktop's default app
MAX_SHOWN = 200_000  # characters; hit content is untrusted and may be huge


def local_file(hit: Hit) -> Path | None:
    """The hit's file on this machine, if it names one."""
    if hit.path:
        path = Path(hit.path)
        if not path.is_absolute():
            root = hit.metadata.get("root") or hit.metadata.get("repo")
            if isinstance(root, str):
                path = Path(root) / path
        return path
    if hit.uri and hit.uri.startswith("file://"):
        return Path(unquote(urlparse(hit.uri).path))
    return None


def open_in_editor(path: Path, line: int | None) -> bool:
    command = os.environ.get(EDITOR_ENV)
    if command:
        args = [a.format(path=str(path), line=line or 1) for a in shlex.split(command)]
        return bool(QProcess.startDetached(args[0], args[1:])[0])
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


def reveal(path: Path) -> bool:
    folder = path if path.is_dir() else path.parent
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


class DetailPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hit: Hit | None = None
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
        layout.addWidget(self.title)
        layout.addWidget(self.location)
        layout.addLayout(buttons)
        layout.addWidget(self.content, 1)
        layout.addWidget(breakdown)
        layout.addWidget(self.chart)
        layout.addWidget(self.group)
        self.show_hit(None)

    def show_hit(self, hit: Hit | None, group: DedupGroup | None = None,
                 member: GroupMember | None = None) -> None:
        previous, self.hit = self.hit, hit
        has_file = hit is not None and local_file(hit) is not None
        self.open_button.setEnabled(has_file)
        self.reveal_button.setEnabled(has_file)
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
        self.title.setText(hit.title)
        where = hit.location if hit.path or hit.uri else ""
        self.location.setText(f"{where}    ·    {hit.source} / {hit.tool}" if where else f"{hit.source} / {hit.tool}")
        text = hit.content if len(hit.content) <= MAX_SHOWN else hit.content[:MAX_SHOWN] + "\n… (cut)"
        language = language_for(hit.path, text)
        self.highlighter.set_language(language)
        # Code keeps its lines; prose (task descriptions, notes, docs) wraps.
        self.content.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap if language
                                     else QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.content.setPlainText(text)

    def _open(self) -> None:
        if self.hit and (path := local_file(self.hit)):
            open_in_editor(path, self.hit.start_line)

    def _reveal(self) -> None:
        if self.hit and (path := local_file(self.hit)):
            reveal(path)


def _group_text(group: DedupGroup | None, member: GroupMember | None) -> str:
    if member is not None:
        return f"Folded duplicate: {member.reason.value}, similarity {member.similarity:.2f}."
    if group is None or not group.members:
        return ""
    lines = [f"Agreed by {group.agreement} sources ({', '.join(group.sources)}); folded:"]
    lines += [
        f"  • {m.hit.source}: {m.hit.location} — {m.reason.value} {m.similarity:.2f}"
        for m in group.members
    ]
    return "\n".join(lines)
