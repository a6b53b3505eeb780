"""A task's context spends its budget on code: long Python docstrings cut to their start.

An issue is answered by changing code, and the context an agent gets for it reads the
likeliest files function by function until the budget is spent. In a library such as
sympy two lines in five of a function are its docstring, most of them examples and
their output, so the budget ran out a few functions into a file. In a task's context,
past its first few hits, a docstring longer than ``LONG_DOCSTRING`` lines keeps its
first paragraph (at most ``KEPT_LINES`` lines) and a line saying how many were left out;
the code is whole. The result list, and every other question's context, keep the
chunks as they are.

The scan is line by line and looks ahead only for a definition's header and its
docstring's end, each line read a bounded number of times (linear in the chunk).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace

from tributary.engine.model import Hit

from .text import language_of

LONG_DOCSTRING = 8  # a docstring this many lines or fewer is kept whole
KEPT_LINES = 5  # of a longer one, its first paragraph up to this many lines
HEADER_LINES = 30  # a def/class header spans at most this many lines
WHOLE_LEADS = 3  # a task context's first hits keep their docstrings whole
CUT_MARK = "docstring_lines_cut"  # metadata: how many lines a hit's docstrings lost

_DEFINITION = re.compile(r"^\s*(?:async\s+def|def|class)\s+\w")
_OPENER = re.compile(r"^(\s*)(?:[rRuUbB]{0,2})(\"\"\"|''')")


def brief_docstrings(hits: Sequence[Hit], whole: Collection[str] = ()) -> list[Hit]:
    """``hits`` with each Python chunk's long docstrings cut (a copy of the hit, its
    tokens to be counted again); hits whose id is in ``whole`` and chunks of other
    languages as they are."""
    out: list[Hit] = []
    for hit in hits:
        if hit.id in whole or not hit.content or language_of(hit.path) != "python":
            out.append(hit)
            continue
        cut = briefed(hit.content)
        if cut is None:
            out.append(hit)
        else:
            text, dropped = cut
            out.append(replace(hit, content=text, tokens=0, metadata={**hit.metadata, CUT_MARK: dropped}))
    return out


def briefed(code: str) -> tuple[str, int] | None:
    """``code`` with every long docstring of its definitions cut to its first paragraph,
    and the number of lines left out; None when none is long."""
    lines = code.split("\n")
    out: list[str] = []
    dropped = 0
    i = 0
    while i < len(lines):
        out.append(lines[i])
        if _DEFINITION.match(lines[i]) is None:
            i += 1
            continue
        body = _after_header(lines, i)
        span = _docstring(lines, body) if body is not None else None
        if span is None:
            i += 1
            continue
        start, end, indent = span
        out.extend(lines[i + 1 : start])
        if end - start + 1 <= LONG_DOCSTRING:
            out.extend(lines[start : end + 1])
        else:
            kept = _first_paragraph(lines, start, end)
            left_out = end - start - len(kept)  # the closing line stays
            out.extend(kept)
            out.append(f"{indent}[… {left_out} more lines of this docstring]")
            out.append(lines[end])
            dropped += left_out
        i = end + 1
    return ("\n".join(out), dropped) if dropped else None


def _after_header(lines: Sequence[str], at: int) -> int | None:
    """The line after the header opened at ``at`` (the first line ending in ``:``)."""
    for n in range(at, min(len(lines), at + HEADER_LINES)):
        if lines[n].split("#", 1)[0].rstrip().endswith(":"):
            return n + 1
    return None


def _docstring(lines: Sequence[str], at: int) -> tuple[int, int, str] | None:
    """``(first line, last line, indent)`` of the docstring opening at the first
    non-blank line from ``at``, when it spans several lines and closes in the chunk."""
    while at < len(lines) and not lines[at].strip():
        at += 1
    if at >= len(lines):
        return None
    opener = _OPENER.match(lines[at])
    if opener is None:
        return None
    quote = opener.group(2)
    if quote in lines[at][opener.end():]:
        return None  # opened and closed on one line
    for end in range(at + 1, len(lines)):
        if quote in lines[end]:
            return at, end, opener.group(1)
    return None


def _first_paragraph(lines: Sequence[str], start: int, end: int) -> list[str]:
    """The docstring's lines from its opening up to its first blank line (or
    ``KEPT_LINES`` lines), never its closing line."""
    kept: list[str] = []
    for n in range(start, min(end, start + KEPT_LINES)):
        if n > start and not lines[n].strip():
            break
        kept.append(lines[n])
    return kept
