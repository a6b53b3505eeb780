"""Highlighting for hit content: syntax for code (Python in full, a generic C-like
fallback), the query's words marked in code and prose alike, and for code shown with
line numbers, the number gutter and the file's lines around the chunk muted."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from tributary.app import theme
from tributary.engine import api


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    style: str
    group: int = 0


def _fmt(colour: str, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(colour))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    fmt.setFontItalic(italic)
    return fmt


def _styles(dark: bool) -> dict[str, QTextCharFormat]:
    if dark:
        palette = {"keyword": "#c792ea", "builtin": "#82aaff", "string": "#c3e88d",
                   "comment": "#7f8c98", "number": "#f78c6c", "def": "#ffcb6b", "decorator": "#89ddff"}
    else:
        palette = {"keyword": "#8a2be2", "builtin": "#1f5fbf", "string": "#2e7d32",
                   "comment": "#8a8f98", "number": "#b3541e", "def": "#a0580b", "decorator": "#00838f"}
    return {
        "keyword": _fmt(palette["keyword"], bold=True), "builtin": _fmt(palette["builtin"]),
        "string": _fmt(palette["string"]), "comment": _fmt(palette["comment"], italic=True),
        "number": _fmt(palette["number"]), "def": _fmt(palette["def"], bold=True),
        "decorator": _fmt(palette["decorator"]),
    }


PY_RULES = [
    _Rule(re.compile(r"\b(" + "|".join([*keyword.kwlist, "self", "cls"]) + r")\b"), "keyword"),
    _Rule(re.compile(r"\b(print|len|range|dict|list|set|tuple|str|int|float|bool|isinstance|super|open|type)\b"), "builtin"),
    _Rule(re.compile(r"\b(?:def|class)\s+(\w+)"), "def", 1),
    _Rule(re.compile(r"^\s*@[\w.]+", re.MULTILINE), "decorator"),
    _Rule(re.compile(r"\b\d+(\.\d+)?\b"), "number"),
    _Rule(re.compile(r"[rbuf]*'[^'\\\n]*(\\.[^'\\\n]*)*'|[rbuf]*\"[^\"\\\n]*(\\.[^\"\\\n]*)*\""), "string"),
    _Rule(re.compile(r"#[^\n]*"), "comment"),
]
C_RULES = [
    _Rule(re.compile(r"\b(function|const|let|var|return|if|else|for|while|class|struct|fn|func|pub|impl|"
                     r"import|export|from|package|interface|type|new|public|private|static|void|async|await)\b"),
          "keyword"),
    _Rule(re.compile(r"\b\d+(\.\d+)?\b"), "number"),
    _Rule(re.compile(r"'[^'\\\n]*(\\.[^'\\\n]*)*'|\"[^\"\\\n]*(\\.[^\"\\\n]*)*\"|`[^`]*`"), "string"),
    _Rule(re.compile(r"//[^\n]*"), "comment"),
]
_TRIPLE = re.compile(r'"""|\'\'\'')
LANGUAGES = {".py": "python", ".pyi": "python", ".js": "c", ".ts": "c", ".tsx": "c", ".jsx": "c",
             ".go": "c", ".rs": "c", ".java": "c", ".c": "c", ".h": "c", ".cpp": "c"}


def language_for(path: str | None, content: str) -> str | None:
    if path:
        for suffix, language in LANGUAGES.items():
            if path.endswith(suffix):
                return language
    if re.search(r"^\s*(def|class) \w+.*:\s*$", content, re.MULTILINE):
        return "python"
    return None


def words_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """A case-insensitive pattern for the query's words (whole words or their start,
    so ``cache`` marks ``cached``); None when there are none."""
    chosen = sorted({w.casefold() for w in words if len(w) >= 3}, key=lambda w: (-len(w), w))
    if not chosen:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in chosen[:64]) + r")\w*", re.IGNORECASE)


def query_terms(query: str) -> list[str]:
    """The words of a query worth marking: its search terms (no "the", "for", "with"),
    three or more letters long."""
    return [term for term in api.query_terms(query[:4000]) if len(term) >= 3]


class CodeHighlighter(QSyntaxHighlighter):
    """Regex rules per line; Python triple-quoted strings span lines via block state.

    ``gutter`` characters at the start of each line (the line numbers) are never read as
    code; blocks outside ``focus`` (the chunk's lines among the file's around them) are
    muted; ``words`` (the query's) get a marker background in code and prose alike.
    """

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.language: str | None = None
        self.gutter = 0
        self.focus: tuple[int, int] | None = None  # first and last block of the chunk
        self.words: re.Pattern[str] | None = None
        self._styles = _styles(theme.is_dark())

    def configure(self, language: str | None, *, gutter: int = 0, focus: tuple[int, int] | None = None,
                  words: re.Pattern[str] | None = None) -> None:
        self.language, self.gutter, self.focus, self.words = language, gutter, focus, words
        self._styles = _styles(theme.colours() is theme.DARK)
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        colours = theme.colours()
        if self.gutter:
            self.setFormat(0, min(self.gutter, len(text)), _fmt(colours["muted"]))
        if self.language is not None:
            self._code(text)
        block = self.currentBlock().blockNumber()
        if self.focus is not None and not self.focus[0] <= block <= self.focus[1]:
            self.setFormat(self.gutter, max(0, len(text) - self.gutter), _fmt(colours["muted"], italic=True))
        if self.words is not None:
            marker = QTextCharFormat()
            marker.setBackground(QColor("#5c4a00" if colours is theme.DARK else "#fff3b0"))
            for match in self.words.finditer(text, self.gutter):
                self.setFormat(match.start(), match.end() - match.start(), _merged(self.format(match.start()), marker))

    def _code(self, text: str) -> None:
        assert self.language is not None
        rules = PY_RULES if self.language == "python" else C_RULES
        skip = self.gutter
        for rule in rules:
            for match in rule.pattern.finditer(text, skip):
                start, end = match.span(rule.group)
                if start >= skip:
                    self.setFormat(start, end - start, self._styles[rule.style])
        if self.language == "python":
            self._triple_quotes(text)

    def _triple_quotes(self, text: str) -> None:
        # State 1: inside a docstring that began on an earlier line.
        self.setCurrentBlockState(0)
        start = self.gutter
        inside = self.previousBlockState() == 1
        while True:
            if not inside:
                opening = _TRIPLE.search(text, start)
                if opening is None:
                    return
                start = opening.start()
                search_from = opening.end()
            else:
                search_from = start
            closing = _TRIPLE.search(text, search_from)
            if closing is None:
                self.setFormat(start, len(text) - start, self._styles["string"])
                self.setCurrentBlockState(1)
                return
            self.setFormat(start, closing.end() - start, self._styles["string"])
            start = closing.end()
            inside = False


def _merged(base: QTextCharFormat, extra: QTextCharFormat) -> QTextCharFormat:
    out = QTextCharFormat(base)
    out.merge(extra)
    return out
