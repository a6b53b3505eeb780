"""Cheap text helpers shared by the pipeline stages: dedup keys, query terms, languages.

Everything here is linear in the text and runs in C where it can (``bytes.translate``,
``re``), because the pipeline calls it for every hit of every query.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WHITESPACE = b" \t\n\r\x0b\x0c"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# Words that carry no retrieval signal in a developer's question.
_STOPWORD_TEXT = (
    "a an and are as at be by can do does for from how i if in into is it its me my "
    "of on or our should so that the their then there this to use used using was we "
    "what when where which who why will with you your"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# File extension -> language name, for hints and for choosing code treatment.
EXTENSION_LANGUAGE: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp",
    ".cs": "csharp", ".rb": "ruby", ".php": "php", ".swift": "swift", ".scala": "scala",
    ".sh": "shell", ".bash": "shell",
    ".md": "markdown", ".rst": "rst", ".txt": "text",
    ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".cfg": "ini", ".ini": "ini",
}
PROSE_LANGUAGES = frozenset({"markdown", "rst", "text"})


# Markup one server keeps and another strips: link targets, bare URLs, emphasis and
# heading marks, table bars. Removed from prose before comparing (never from code):
# link targets first, then URLs, each only when its literal sign is in the text, then
# the marks together with the whitespace in one ``bytes.translate``. (One regex with the
# three as alternatives cost 5-8x more on real documents: with no literal to scan for,
# it is tried at every character.)
_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
_URL = re.compile(r"<?https?://[^\s)>]+>?")
_MARKS_AND_WHITESPACE = b"#*_`[]|>" + _WHITESPACE


def squeeze_prose(text: str) -> bytes:
    """``squeeze`` after removing Markdown/HTML-ish markup, for documents, not code."""
    if "](" in text:
        text = _LINK_TARGET.sub("", text)
    if "://" in text:
        text = _URL.sub("", text)
    return text.encode("utf-8", "surrogatepass").translate(None, _MARKS_AND_WHITESPACE)


# squeezed_key's memo: texts seen in earlier searches (servers return the same chunks
# again and again), up to a total size, then started afresh.
_SQUEEZED: tuple[dict[str, bytes], dict[str, bytes]] = ({}, {})  # code, prose
_SQUEEZED_CHARS = [0]
SQUEEZE_MEMO_CHARS = 8_000_000


def squeezed_key(text: str, prose: bool) -> bytes:
    """``squeeze_prose(text)`` if ``prose`` else ``squeeze(text)``, remembered by text.

    The dedup key of every hit of every search: a lookup (the string's hash, computed
    once per string) costs a fraction of removing the whitespace again.
    """
    memo = _SQUEEZED[prose]
    key = memo.get(text)
    if key is None:
        key = squeeze_prose(text) if prose else squeeze(text)
        if _SQUEEZED_CHARS[0] + len(text) > SQUEEZE_MEMO_CHARS:
            clear_squeezed()
        memo[text] = key
        _SQUEEZED_CHARS[0] += len(text)
    return key


def clear_squeezed() -> None:
    """Forget remembered keys (benchmarks measure cold and warm runs)."""
    for memo in _SQUEEZED:
        memo.clear()
    _SQUEEZED_CHARS[0] = 0


def squeeze(text: str) -> bytes:
    """The text's UTF-8 bytes with all whitespace removed: the dedup key and fuzzy form.

    Removing (rather than collapsing) whitespace also folds re-indented and re-wrapped
    copies together; two texts differing only in where spaces fall are duplicates for us.
    """
    return text.encode("utf-8", "surrogatepass").translate(None, _WHITESPACE)


def split_identifier(word: str) -> list[str]:
    """``parse_HTTPResponse`` -> ``["parse", "http", "response"]``."""
    parts: list[str] = []
    for piece in word.split("_"):
        parts.extend(p.lower() for p in _CAMEL.findall(piece))
    return parts


@lru_cache(maxsize=512)
def query_terms(query: str) -> tuple[str, ...]:
    """Distinct lower-case terms of a query, identifiers split, stopwords dropped, in order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query):
        lowered = word.lower()
        candidates = [lowered, *split_identifier(word)] if ("_" in word or word != lowered) else [lowered]
        for term in candidates:
            if len(term) >= 2 and term not in STOPWORDS:
                seen.setdefault(term, None)
    return tuple(seen)


@lru_cache(maxsize=4096)
def language_of(path: str | None) -> str | None:
    """The language a file's extension names, or None."""
    if not path:
        return None
    dot = path.rfind(".")
    if dot <= max(path.rfind("/"), path.rfind("\\")) + 1:  # no suffix (or a dotfile)
        return None
    return EXTENSION_LANGUAGE.get(path[dot:].lower())


_CODE_LOOK = re.compile(r"^\s*(def |class |function |func |fn |import |#include|public )", re.M)


def looks_like_code(content: str) -> bool:
    """Whether the text itself reads as code: a definition or import starts a line."""
    return _CODE_LOOK.search(content, 0, 2000) is not None


def is_code(path: str | None, content: str) -> bool:
    """Whether content should be treated as code (by extension, else by its look)."""
    language = language_of(path)
    if language is not None:
        return language not in PROSE_LANGUAGES
    return looks_like_code(content)
