"""The detail pane: a hit's content highlighted, where it is, why it scores, its duplicates,
and the "Useful" / "Not useful" buttons that teach the ranking which sources to trust.

Code is shown as code: numbered lines, a few of the file's lines around the chunk
(muted) when the file is on this machine and still holds the chunk, the query's words
marked. Prose (docs, notes) wraps and is never coloured as code; a past task reads as
a commit: subject, short hash, author, date, the files it touched, its message.
Hit text is untrusted: it is shown through ``tributary.app.safe_text`` in plain-text widgets only.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from tributary.app import safe_text, theme
from tributary.app.elided import ElidedLabel, PathLabel, TitleLabel
from tributary.app.open_file import (  # absolute paths, editor line syntax
    local_file,
    open_in_editor,
    reveal,
)
from tributary.app.search.highlighter import (
    CodeHighlighter,
    language_for,
    query_terms,
    words_pattern,
)
from tributary.app.search.score_chart import ScoreChart
from tributary.engine.api import commit_line, fold_label, quotes_files, source_views, why_folded
from tributary.engine.model import (
    FILE_KIND,
    LED_BY_ERROR,
    LED_BY_QUOTE,
    LED_BY_TRACEBACK,
    DedupGroup,
    GroupMember,
    Hit,
    SearchResponse,
    is_task,
    repository_of,
)

MAX_SHOWN = safe_text.BLOCK_LIMIT  # characters; hit content is untrusted and may be huge
USEFUL_KEYS = QKeySequence("Ctrl+Up")
NOT_USEFUL_KEYS = QKeySequence("Ctrl+Down")
AROUND = 3  # the file's lines shown before and after a chunk
MAX_FILE_BYTES = 2_000_000  # larger files are not read for the lines around a chunk
MAX_FILES_LISTED = 30


def shortcut_text(keys: QKeySequence) -> str:
    return keys.toString(QKeySequence.SequenceFormat.NativeText)


class DetailPane(QWidget):
    feedback_requested = Signal(bool)  # useful?

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hit: Hit | None = None
        self.query = ""
        self.rating: bool | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(6)
        # One line each, elided to the pane's width (whole in the tooltip): a long title
        # or path must never widen the pane past its edge and push its buttons out.
        self.title = TitleLabel()
        self.title.setObjectName("SectionTitle")
        self.title.set_full_text("Select a result to see it here")
        self.location = PathLabel()
        self.location.setObjectName("Muted")
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
        self.order_note = _wrapping_label()  # why the list is not in score order here, when it is not
        self.order_note.hide()
        self.group = _wrapping_label()
        self.group.setObjectName("Muted")
        self.content = QPlainTextEdit()
        self.content.setReadOnly(True)
        self.content.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.content.setFont(mono)
        self.highlighter = CodeHighlighter(self.content.document())
        breakdown = ElidedLabel()
        breakdown.set_full_text("Score breakdown")
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
        layout.addWidget(self.order_note)
        layout.addWidget(self.group)
        self.show_hit(None)

    def show_hit(self, hit: Hit | None, group: DedupGroup | None = None,
                 member: GroupMember | None = None, query: str = "", order_note: str = "") -> None:
        previous, self.hit = self.hit, hit
        has_file = hit is not None and local_file(hit) is not None
        self.open_button.setEnabled(has_file)
        self.reveal_button.setEnabled(has_file)
        # A commit names files but is none: nothing to open, so no buttons that say so.
        commit = hit is not None and is_task(hit)
        self.open_button.setVisible(not commit)
        self.reveal_button.setVisible(not commit)
        self.useful_button.setEnabled(hit is not None)
        self.not_useful_button.setEnabled(hit is not None)
        if previous is None or hit is None or previous.id != hit.id:
            self.set_rating(None)
        self.order_note.setText(order_note)
        self.order_note.setVisible(bool(order_note) and hit is not None)
        if hit is None:
            self.title.set_full_text("Select a result to see it here")
            self.location.set_full_text("")
            self.content.setPlainText("")
            self.chart.set_parts(None)
            self.group.setText("")
            return
        same = previous is not None and previous.id == hit.id and previous.content == hit.content
        self.chart.set_parts(hit.parts)
        self.group.setText(_group_text(hit, group, member))
        if same and query == self.query:  # a live update of the same hit: keep the text and scroll
            return
        self.query = query
        self.title.set_full_text(safe_text.one_line(hit.title, 300) or "(untitled)")
        if is_task(hit):
            where = commit_line(hit)
        else:
            where = safe_text.one_line(hit.location, 400) if hit.path or hit.uri else ""
        origin = f"{safe_text.one_line(hit.source)} / {safe_text.one_line(hit.tool)}"
        if (repo := repository_of(hit)) is not None:  # several may be indexed: say which
            origin = f"{safe_text.one_line(repo, 120)}    ·    {origin}"
        self.location.set_full_text(f"{safe_text.one_line(where, 400)}    ·    {origin}" if where else origin)
        shown = presentation(hit)
        # Code keeps its lines; prose (task descriptions, notes, docs) wraps.
        self.content.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth if shown.wrap
                                     else QPlainTextEdit.LineWrapMode.NoWrap)
        self.content.setPlainText(shown.text)
        self.highlighter.configure(shown.language, gutter=shown.gutter, focus=shown.focus,
                                   words=words_pattern(query_terms(query)))
        if shown.focus is not None:  # the chunk, not the lines before it, at the top
            block = self.content.document().findBlockByNumber(max(0, shown.focus[0] - 1))
            cursor = self.content.textCursor()
            cursor.setPosition(block.position())
            self.content.setTextCursor(cursor)
            self.content.centerCursor()

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


def _wrapping_label() -> QLabel:
    """Plain text that wraps to the pane's width. Its width is the pane's to give (a
    long unbreakable word, a path, must not widen the pane); its height follows."""
    label = QLabel()
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.setMinimumWidth(1)
    return label


def _rated_style(colour: str) -> str:
    """A checked (rated) feedback button is tinted; the app style sheet has no :checked."""
    c = theme.colours()
    return (f"QPushButton {{ padding: 3px 10px; }}"
            f"QPushButton:checked {{ background: {c[colour]}; color: white; border-color: {c[colour]}; }}")


def commits_listed_first(response: SearchResponse | None) -> bool:
    """Whether the engine listed the commits ahead of the files whatever their scores
    (a question about the past is answered by its commits): then the list is not in
    score order, and the app says why."""
    if response is None or quotes_files(response.request.query):
        return False
    tasks = [is_task(h) for h in response.hits]
    return any(tasks) and not all(tasks)


def ranking_note(hit: Hit, response: SearchResponse | None) -> str:
    """Why ``hit`` is listed where it is when its score alone would not put it there."""
    if not commits_listed_first(response):
        return ""
    if is_task(hit):
        return ("Listed with the commits, ahead of every file: a question about the past is "
                "answered by its commits first. Among the commits, by score.")
    return ("Listed after the commits, whatever their scores: a question about the past is "
            "answered by its commits first. Among the files, by score.")


def _group_text(hit: Hit, group: DedupGroup | None, member: GroupMember | None) -> str:
    """Confidence, each source's own rank and score, and the folded duplicates, each
    with why it was folded, in words."""
    if member is not None:
        return f"Folded into the result above: {fold_label(member)}."
    views = "; ".join(view.text() for view in source_views(hit, group))
    lines = [f"Confidence {hit.confidence:.2f} (how likely this is relevant)",
             f"Sources: {safe_text.one_line(views, 600)}"]
    if reasons := _ranking_reasons(hit):
        lines.append(f"Ranked by {safe_text.one_line(hit.source, 60)}: {reasons}")
    if group is None or not group.members:
        return "\n".join(lines)
    lines.append(f"Agreed by {group.agreement} sources ({', '.join(group.sources)}); folded:")
    lines += [
        f"  • {safe_text.one_line(m.hit.source)}: {safe_text.one_line(m.hit.location, 120)} — "
        f"{safe_text.one_line(why_folded(m, hit), 200)}"
        for m in group.members[:20]
    ]
    if len(group.members) > 20:
        lines.append(f"  … and {len(group.members) - 20} more")
    return "\n".join(lines)


_ROLE_WORDS = {
    "test": "a test", "test data": "what a test runs on", "doc": "documentation", "example": "an example", "vendored": "a vendored copy",
    "generated": "generated code", "record": "a changelog or package record",
    "superseded": "an older copy of newer code", "tooling": "build, CI or editor configuration",
    "translation": "a translation of a document held in English",
    "asset": "an image, icon, font or source map",
}


# Why the code index put a file first for a task (a hit's ``led_by``).
_LEAD_WORDS = {
    LED_BY_TRACEBACK: "listed first: its file is where the question's traceback raised",
    LED_BY_ERROR: "listed first: its file defines the function the question's error says refused an argument",
    LED_BY_QUOTE: "listed first: its file holds a line of code the question quotes",
}


def _ranking_reasons(hit: Hit) -> str:
    """What the code index weighed beyond the words and meaning, from the hit's
    metadata (``tributary.engine.index.search.SearchHit``): its file's role, a file name made of
    the question's words, a definition of the looked-up name; for a function the history
    read, the past tasks that changed it."""
    reasons: list[str] = []
    if hit.metadata.get("symbol_match") is True:
        reasons.append("defines the name looked up")
    if hit.metadata.get("name_match") is True:
        reasons.append("its file is named by the question's words")
    led_by = hit.metadata.get("led_by")
    if isinstance(led_by, str) and led_by in _LEAD_WORDS:
        reasons.append(_LEAD_WORDS[led_by])
    changed_by = hit.metadata.get("changed_by")
    if hit.metadata.get("kind") == "function" and isinstance(changed_by, str) and changed_by:
        reasons.append(f"past tasks like this question changed it: {changed_by}")
    role = hit.metadata.get("role")
    if isinstance(role, str) and role in _ROLE_WORDS:
        reasons.append(f"{_ROLE_WORDS[role]}, ranked below code unless the question asks for it")
    return "; ".join(reasons)


@dataclass(frozen=True, slots=True)
class Presentation:
    """What the content view shows for one hit and how."""

    text: str
    language: str | None  # None: prose, never coloured as code
    wrap: bool
    gutter: int = 0  # characters of line number at the start of each line
    focus: tuple[int, int] | None = None  # the chunk's first and last line (0-based) in ``text``


def presentation(hit: Hit, around: int = AROUND) -> Presentation:
    """A commit as a commit, code as numbered code (with the file's lines around it when
    they can be read), anything else as wrapped prose."""
    if is_task(hit):
        return Presentation(_commit_text(hit), None, wrap=True)
    # Long lines are cut for display: a megabyte line would stall the text layout.
    text = safe_text.block(hit.content, limit=MAX_SHOWN)
    if hit.metadata.get("kind") == FILE_KIND:  # the past tasks that changed a file, not its code
        return Presentation(text, None, wrap=True)
    language = language_for(hit.path, text)
    if language is None or hit.start_line is None:
        return Presentation(text, language, wrap=language is None)
    lines = text.split("\n")
    focus = (0, len(lines) - 1)
    numbers = _given_numbers(hit, len(lines))  # a grep answer's lines, with gaps
    if numbers is None:
        first = hit.start_line
        # Lines past the hit's own (a looked-up class's list of members, each saying where it
        # is) are not the file's next lines: they get no number, and the file is not read around.
        own = hit.end_line - first + 1 if hit.end_line is not None and hit.end_line >= first else len(lines)
        found = _around(hit, around) if len(lines) <= own else None
        if found is not None:
            lines, first, focus = found
            own = len(lines)
        numbers = [first + i if i < own else None for i in range(len(lines))]
    width = len(str(max((n for n in numbers if n is not None), default=0)))
    numbered = [f"{'' if n is None else n:>{width}} │ {line}" for n, line in zip(numbers, lines, strict=True)]
    return Presentation("\n".join(numbered), language, wrap=False, gutter=width + 3, focus=focus)


def _given_numbers(hit: Hit, count: int) -> list[int | None] | None:
    """Each content line's number in the file, when the source said them and they fit
    the ``count`` lines shown: a grep answer's matched lines are not consecutive."""
    given = hit.metadata.get("line_numbers")
    if not isinstance(given, list) or len(given) != count:
        return None
    if not all(n is None or (isinstance(n, int) and not isinstance(n, bool) and n > 0) for n in given):
        return None
    return given


def _around(hit: Hit, around: int) -> tuple[list[str], int, tuple[int, int]] | None:
    """The chunk's lines with ``around`` of the file's lines either side: (lines, the
    first one's number, the chunk's span in them); None when the file cannot be read
    or no longer holds the chunk at its lines."""
    path = local_file(hit)
    if path is None or hit.start_line is None or hit.end_line is None:
        return None
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        file_lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return None
    start, end = hit.start_line - 1, hit.end_line
    chunk = [line.strip() for line in hit.content.split("\n") if line.strip()]
    held = [line.strip() for line in file_lines[start:end] if line.strip()]
    if not chunk or chunk[:3] != held[:3]:
        return None
    lo, hi = max(0, start - around), min(len(file_lines), end + around)
    lines = safe_text.block("\n".join(file_lines[lo:hi]), limit=MAX_SHOWN).split("\n")
    return lines, lo + 1, (start - lo, end - 1 - lo)


def _commit_text(hit: Hit) -> str:
    """Short hash, author and date, the files touched, then the message."""
    files = [str(f) for f in hit.metadata.get("files") or [] if isinstance(f, str)]
    lines = [commit_line(hit)]
    if files:
        lines.append(f"Files touched ({len(files)}):")
        lines += [f"  {path}" for path in files[:MAX_FILES_LISTED]]
        if len(files) > MAX_FILES_LISTED:
            lines.append(f"  … and {len(files) - MAX_FILES_LISTED} more")
    lines += ["", hit.content]
    return safe_text.block("\n".join(lines), limit=MAX_SHOWN)
