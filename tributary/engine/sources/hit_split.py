"""One huge hit split into parts at structural boundaries, and "no matches" answers.

Some servers answer a query with one enormous text: mcp-server-git's ``git_log`` is
a single 32,866-character block, which took 99 % of a context budget. Such a hit is
cut into parts of at most ``MAX_HIT_CHARS`` characters — before a line that starts
a commit (``commit <sha>``, ``Commit: <sha>``), else at a blank line (a paragraph), else at a line end,
else at a space — keeping its source's order, so ranking and budgeting see several
ordinary hits (the most recent commits first) and none crowds out the rest. At most
``MAX_PARTS`` parts are kept (the rest of such a text is cut, with a note).

Servers also say "nothing" in words (``No matches found``); :func:`says_nothing`
recognises such an answer so it is not ranked as a hit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_HIT_CHARS = 6_000  # ≈1,500 tokens: about a fifth of the default context budget
MAX_PARTS = 10
_BOUNDARIES = (
    re.compile(r"\n(?=[Cc]ommit:?[ \t]+[0-9a-f]{7,64}\b)"),  # git log (and mcp-server-git's)
    re.compile(r"\n[ \t]*\n"),  # a blank line: paragraphs, functions, records
    re.compile(r"\n"),
    re.compile(r"\s"),
)
_NOTHING = re.compile(
    r"(?:no\b[\w\s'\"`.-]{0,60}?\b(?:found|match(?:es|ed|ing)?|results?|hits?|entries)"
    r"|nothing\s+(?:found|matched|to\s+show)"
    r"|(?:found\s+)?0\s+(?:results?|matches|hits|items|files|entries)(?:\s+found)?)\b",
    re.IGNORECASE,
)
MAX_NOTHING_CHARS = 200


@dataclass(frozen=True, slots=True)
class Part:
    text: str
    first_line: int  # lines before this part in the whole text (0 for the first)


def split_text(
    text: str, max_chars: int = MAX_HIT_CHARS, max_parts: int | None = None
) -> tuple[list[Part], bool]:
    """``text`` in parts of at most ``max_chars`` characters, cut at the best boundary
    in each part's second half (one part if it is short enough), and whether they
    hold all of it (False: ``max_parts`` were made and text was left over)."""
    parts: list[Part] = []
    start, line = 0, 0
    while len(text) - start > max_chars:
        if max_parts is not None and len(parts) >= max_parts:
            return parts, False
        cut = _cut(text, start, max_chars)
        piece = text[start:cut]
        if piece.strip():
            parts.append(Part(piece.strip("\n"), line + _leading_newlines(piece)))
        line += piece.count("\n")
        start = cut
    rest = text[start:]
    if max_parts is not None and len(parts) >= max_parts and rest.strip():
        return parts, False
    if rest.strip() or not parts:
        parts.append(Part(rest.strip("\n") if parts else rest, line + _leading_newlines(rest)))
    return parts, True


def _cut(text: str, start: int, max_chars: int) -> int:
    low, high = start + max_chars // 2, start + max_chars
    for boundary in _BOUNDARIES:
        last = None
        for last in boundary.finditer(text, low, high):  # noqa: B007 - the last one is wanted
            pass
        if last is not None:
            return last.end()
    return high


def _leading_newlines(piece: str) -> int:
    return len(piece) - len(piece.lstrip("\n"))


def says_nothing(text: str) -> bool:
    """Whether a server's whole answer is a short "no matches found"-style sentence."""
    stripped = text.strip().strip(" .!:;[](){}<>\"'`")
    return (0 < len(stripped) <= MAX_NOTHING_CHARS and "\n" not in stripped
            and _NOTHING.match(stripped) is not None)
