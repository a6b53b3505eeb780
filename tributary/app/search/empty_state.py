"""What the results area shows when it has no rows: where to start, and how.

First run (nothing to ask): add a repository, or import the MCP servers already set
up in Claude Desktop / Claude Code / Cursor / VS Code on this machine. Ready: how to
ask and the keys that matter. No results: what to try. Each state offers its next
step as a button, so the keyboard reaches it too.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from tributary.app import safe_text, theme
from tributary.app.layouts import scrolled_down

EXAMPLE = "where is the retry logic"
KEYS = ("Enter searches now · ↓ moves to the results · Enter opens a result in your editor · "
        "Ctrl+C copies it · Esc comes back here · Ctrl+L from anywhere")
# Said as an example: under "Asking for …" a bare "Filters: lang:go" read as the filters
# the question was asked with.
SYNTAX = "To narrow a search, type filters with it, e.g. lang:go  path:src/  -path:tests/  source:files"


MARGIN = 24  # px around the empty state's text and buttons


class EmptyState(QWidget):
    add_repository = Signal()
    import_servers = Signal()
    add_server = Signal()
    example = Signal(str)
    show_weak = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("EmptyState")
        self.state = ""
        self.title = QLabel()
        self.title.setObjectName("EmptyTitle")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.body = QLabel()
        self.body.setObjectName("Muted")
        self.body.setWordWrap(True)
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.add_button = QPushButton(theme.icon("add", "#ffffff"), "Add a repository…")
        self.add_button.setObjectName("Primary")
        self.add_button.setToolTip("Index a folder: its code and git history become searchable")
        self.add_button.clicked.connect(self.add_repository.emit)
        self.import_button = QPushButton(theme.icon("import"), "Import MCP servers")
        self.import_button.clicked.connect(self.import_servers.emit)
        self.server_button = QPushButton(theme.icon("servers"), "Add an MCP server…")
        self.server_button.clicked.connect(self.add_server.emit)
        self.example_button = QPushButton(theme.icon("search"), f"Try “{EXAMPLE}”")
        self.example_button.clicked.connect(lambda: self.example.emit(EXAMPLE))
        self.weak_button = QPushButton(theme.icon("search"), "Show the weak matches")
        self.weak_button.setToolTip("List the closest matches anyway")
        self.weak_button.clicked.connect(self.show_weak.emit)
        # Side by side where they fit, one under another where they do not (a narrow
        # results pane, a large scale factor): a button never cuts its own label.
        buttons = self._buttons = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        buttons.setSpacing(8)
        for button in self._all_buttons():
            button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
            button.setAutoDefault(True)  # Enter presses the focused button, as Space does
            buttons.addWidget(button, 0, Qt.AlignmentFlag.AlignLeft)
        buttons.addStretch()
        self.keys = QLabel()
        self.keys.setObjectName("Hint")
        self.keys.setWordWrap(True)
        self.keys.setTextFormat(Qt.TextFormat.PlainText)
        # The text in a scroll area: in a short window it scrolls instead of being cut.
        content = QWidget()
        content.setObjectName("EmptyState")
        scroll = scrolled_down(content)
        scroll.setObjectName("EmptyState")
        scroll.viewport().setObjectName("EmptyState")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        layout = QVBoxLayout(content)
        layout.setContentsMargins(MARGIN, MARGIN, MARGIN, MARGIN)
        layout.setSpacing(10)
        layout.addWidget(self.title)
        layout.addWidget(self.body)
        layout.addLayout(buttons)
        layout.addSpacing(6)
        layout.addWidget(self.keys)
        layout.addStretch()
        self.show_ready()

    def _all_buttons(self) -> tuple[QPushButton, ...]:
        return (self.add_button, self.import_button, self.server_button, self.example_button,
                self.weak_button)

    def _arrange_buttons(self) -> None:
        shown = [b for b in self._all_buttons() if not b.isHidden()]
        needed = sum(b.sizeHint().width() for b in shown) + self._buttons.spacing() * max(0, len(shown) - 1)
        room = self.contentsRect().width() - 2 * MARGIN
        fits = needed <= room
        self._buttons.setDirection(QBoxLayout.Direction.LeftToRight if fits else QBoxLayout.Direction.TopToBottom)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._arrange_buttons()

    def _show(self, state: str, title: str, body: str, *, buttons: tuple[QPushButton, ...] = (),
              keys: str = "") -> None:
        self.state = state
        self.title.setText(title)
        self.body.setText(body)
        for button in (self.add_button, self.import_button, self.server_button, self.example_button,
                       self.weak_button):
            button.setVisible(button in buttons)
        self.keys.setText(keys)
        self.keys.setVisible(bool(keys))
        self._arrange_buttons()

    def show_first_run(self, reason: str = "") -> None:
        """Nothing to ask yet: index a repository, or bring servers in."""
        from pathlib import Path

        from tributary.engine.api import (  # not for the first paint
            CLIENTS,
            discover_client_configs,
        )

        found = sorted({CLIENTS.get(c.client, c.client) for c in discover_client_configs(workspace=Path.cwd())
                        if c.servers})
        body = ("Tributary asks your indexed repositories and your MCP servers at once and hands back one "
                "ranked answer. Add a repository to search its code and its history")
        if found:
            body += f", or import the servers already set up in {', '.join(found)}."
            self.import_button.setText(f"Import from {', '.join(found)}")
        else:
            body += ", or add an MCP server (no MCP client's config with servers was found on this machine)."
        if reason:
            body += f"\n\nThe last search could not run: {reason}"
        shown = (self.add_button, self.import_button) if found else (self.add_button, self.server_button)
        self._show("first-run", "Nothing to ask yet", body, buttons=shown)

    def show_indexing(self, paths: list[str]) -> None:
        """The first repository is being indexed: say when it can be asked, not "add one"."""
        from pathlib import Path

        names = ", ".join(Path(p).name for p in paths)
        body = (f"Tributary is reading every file of {names}. Keyword and symbol search opens as "
                "soon as that is done, and meaning-based matches join while the semantic index "
                "fills in. Progress is on the Indexes page.")
        self._show("indexing", f"Indexing {names}…", body)

    def show_ready(self, *, starting: bool = False) -> None:
        title = "Starting the engine…" if starting else "Ask every source at once"
        body = ("Type a question above. Results appear as each source answers; the best of them, "
                "folded and ranked, is ready to copy as context.")
        self._show("ready", title, body, keys=f"{KEYS}\n{SYNTAX}")

    def show_asking(self, query: str) -> None:
        """A search is out and nothing has come back yet: say so, not "type a question"."""
        body = "Results appear here as each source answers; the chips above say which are still working."
        self._show("asking", f"Asking for “{_quoted(query)}”…", body)

    def show_no_results(self, query: str, filtered: bool, rules: Sequence[str] = (),
                        asked: Sequence[str] = (), notes: Sequence[str] = ()) -> None:
        """Nothing found: what to try. When routing ``rules`` chose the sources (``asked``),
        say so: the others were never asked, which is not what "no results" suggests.
        The answer's ``notes`` come first (the filters left out every hit; a source's
        index still filling in): they say why better than a tip."""
        tips = "".join(f"{note.rstrip('.')}.\n\n" for note in notes)
        tips += "Try fewer or other words"
        tips += ", or loosen the filters (Sources, Language, Paths)." if filtered else "."
        if rules:
            named = ", ".join(f"“{rule}”" for rule in rules)
            which = ", ".join(asked) if asked else "no source"
            tips += (f"\n\nThe routing rule{'s' if len(rules) > 1 else ''} {named} sent this question to "
                     f"{which} only; the other sources were not asked (Sources & routing → Routing rules).")
        self._show("no-results", f"No results for “{_quoted(query)}”", tips, keys=SYNTAX)

    def show_not_confident(self, query: str, count: int, partial: list[str] | None = None) -> None:
        """The sources answered, but nothing clears the confidence bar: say so rather than
        list noise, and keep the closest matches one key away. ``partial``: what the
        sources said was missing from their answer (a semantic index still filling in)."""
        body = (f"None of the {count} closest matches is a clear answer: the sources found little of "
                "the question's words or meaning. Try other words, a name from the code, or a filter.")
        if partial:
            body += ("\n\nMeaning-based matches are not all in yet, so this answer leans on keywords: "
                     + "; ".join(partial) + ".")
        self.weak_button.setText(f"Show the {count} weak matches")
        self._show("not-confident", f"No confident results for “{_quoted(query)}”", body,
                   buttons=(self.weak_button,), keys=SYNTAX)

    def show_problem(self, reason: str) -> None:
        self._show("problem", "No source answered", reason, buttons=(self.server_button,))

    def show_engine_problem(self, reason: str, *, mendable: bool) -> None:
        """The engine did not start: say why, and what brings it up."""
        after = ("Fix the file and save it: Tributary starts as soon as it can read it, and runs "
                 "a search typed meanwhile." if mendable else
                 "Quit and start Tributary again once that is fixed; the log has the details.")
        self._show("engine-problem", "The engine could not start", f"{reason.strip()}\n\n{after}")


QUOTE_LIMIT = 80  # characters of the question a heading quotes


def _quoted(query: str) -> str:
    """The question as a heading quotes it: one line, cut (an issue pasted whole is
    thousands of characters over many lines)."""
    return safe_text.one_line(query, QUOTE_LIMIT)
