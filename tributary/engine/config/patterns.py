"""User-supplied regular expressions (routing rules), compiled by RE2: linear time, always.

Python's ``re`` backtracks, so a pattern such as ``(a|aa)+$`` or ``(a+)+b`` can hold the
engine for minutes on a query of 30 characters, and no static check can tell every such
pattern from a safe one. RE2 (the ``google-re2`` package) matches in time linear in the
text whatever the pattern, so the whole class of problem is gone rather than guessed at.
The price is RE2's syntax: backreferences (``\\1``), lookaround (``(?=…)``, ``(?<!…)``),
atomic groups and possessive quantifiers are not supported; such patterns are rejected
with a message that says so. Rules match case-insensitively (Unicode case folding).
``\\w``, ``\\d``, ``\\s`` and ``\\b`` are ASCII in RE2; ``\\pL`` matches any letter.
"""

from __future__ import annotations

import functools
from typing import Any, Protocol, cast

import re2

MAX_PATTERN_CHARS = 1000
_MAX_MEM = 1 << 21  # bytes RE2 may use for one compiled pattern (its own default is 8 MiB)
_NO = "RE2, the linear-time engine routing uses, does not support it"
_NEEDLESS = "RE2, the linear-time engine routing uses, never backtracks"

# a fragment of RE2's error text → why the pattern is refused, for the user
_UNSUPPORTED = (
    ("invalid escape sequence: \\1", f"uses a backreference like '\\1': {_NO}"),
    ("invalid escape sequence: \\Z", "uses '\\Z': write '\\z' for the end of the query"),
    ("invalid perl operator: (?P=", f"uses a named backreference '(?P=name)': {_NO}"),
    ("invalid perl operator: (?=", f"uses lookahead '(?=…)': {_NO}"),
    ("invalid perl operator: (?!", f"uses negative lookahead '(?!…)': {_NO}"),
    ("invalid perl operator: (?<=", f"uses lookbehind '(?<=…)': {_NO}"),
    ("invalid perl operator: (?<!", f"uses negative lookbehind '(?<!…)': {_NO}"),
    ("invalid perl operator: (?>", f"uses an atomic group '(?>…)': drop the '?>', {_NEEDLESS}"),
    ("invalid perl operator: (?#", f"uses a comment '(?#…)': {_NO}"),
    ("bad repetition operator: ++", f"uses a possessive quantifier: write 'a+' for 'a++', {_NEEDLESS}"),
    ("bad repetition operator: *+", f"uses a possessive quantifier: write 'a*' for 'a*+', {_NEEDLESS}"),
    ("bad repetition operator: ?+", f"uses a possessive quantifier: write 'a?' for 'a?+', {_NEEDLESS}"),
)


class Match(Protocol):
    """The parts of a match routing uses (RE2's match object has the ``re`` API)."""

    def span(self) -> tuple[int, int]: ...

    def group(self, index: int = 0) -> str: ...


class Pattern(Protocol):
    def search(self, text: str) -> Any: ...


class CompiledPattern:
    """A compiled, case-insensitive routing pattern; searching never raises."""

    __slots__ = ("_regex", "pattern")

    def __init__(self, pattern: str, regex: Pattern) -> None:
        self.pattern = pattern
        self._regex = regex

    def search(self, text: str) -> Match | None:
        """The first match in ``text``, in time linear in its length. Text that is not valid
        Unicode (a lone surrogate) is matched with each bad code point read as '?', so
        offsets still count characters of ``text``."""
        try:
            found = self._regex.search(text)
        except UnicodeError:
            found = self._regex.search(text.encode("utf-8", "replace").decode("utf-8"))
        return cast("Match | None", found)


def _options() -> Any:
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False  # the reason is returned to the user, not logged to stderr
    options.max_mem = _MAX_MEM
    return options


def _reason(pattern: str, error: Exception) -> str:
    raw = error.args[0] if error.args else error
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if "(?P=" in pattern and "invalid perl operator: (?P" in text:
        text = "invalid perl operator: (?P="  # RE2 names only '(?P'
    for needle, why in _UNSUPPORTED:
        if needle in text:
            return f"cannot be used: it {why}"
    if "pattern too large" in text:
        return ("is too large once compiled (a counted repetition copies what it repeats, "
                "as in '\\pL{1000}'); simplify it")
    return f"does not compile: {text}"


def _compile(pattern: str) -> CompiledPattern | str:
    if not pattern.strip():
        return "is empty (it would match every query; use the fallback instead)"
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"is too long ({len(pattern)} characters, at most {MAX_PATTERN_CHARS})"
    try:
        regex = re2.compile(pattern, _options())
    except re2.error as exc:
        return _reason(pattern, exc)
    except UnicodeError:
        return "is not valid Unicode (it holds a lone surrogate)"
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        return f"does not compile: {exc}"
    return CompiledPattern(pattern, cast(Pattern, regex))


_compiled = functools.lru_cache(maxsize=512)(_compile)


def check_pattern(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable routing pattern, or None when it is.

    Cheap enough to call on every keystroke (cached); the message is for the user and
    follows the pattern, as in "the pattern '(a+)\\1b' cannot be used: it uses …".
    """
    result = _compiled(pattern)
    return result if isinstance(result, str) else None


def compile_pattern(pattern: str) -> CompiledPattern:
    """The compiled pattern; ``ValueError`` with the reason if it is unusable."""
    result = _compiled(pattern)
    if isinstance(result, str):
        raise ValueError(f"pattern {pattern!r} {result}")
    return result


def safe_compile(pattern: str) -> CompiledPattern | None:
    """Like :func:`compile_pattern` but None instead of an exception (for routing)."""
    result = _compiled(pattern)
    return None if isinstance(result, str) else result
