"""Syntax highlighting for hit content: Python (full) and a generic C-like fallback."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from app import theme


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


class CodeHighlighter(QSyntaxHighlighter):
    """Regex rules per line; Python triple-quoted strings span lines via block state."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.language: str | None = None
        self._styles = _styles(theme.is_dark())

    def set_language(self, language: str | None) -> None:
        self.language = language
        self._styles = _styles(theme.colours() is theme.DARK)
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        if self.language is None:
            return
        rules = PY_RULES if self.language == "python" else C_RULES
        for rule in rules:
            for match in rule.pattern.finditer(text):
                start, end = match.span(rule.group)
                self.setFormat(start, end - start, self._styles[rule.style])
        if self.language == "python":
            self._triple_quotes(text)

    def _triple_quotes(self, text: str) -> None:
        # State 1: inside a docstring that began on an earlier line.
        self.setCurrentBlockState(0)
        start = 0
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
