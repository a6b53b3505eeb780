"""grep/ripgrep output (``path:line:text``) read as one hit per file.

A ripgrep-style server answers with one text block of many ``path:line:text`` lines
(``path:line:col:text`` with ``--column``; ``path-line-text`` for context lines and
``--`` between groups). Taken as prose it became a few huge hits with no path. Here
such a block becomes one item per file, in the order the files first appear: its
path, the first and last matched line, and the matched lines with the context the
server gave, capped per file and in number of files.

The parser reads line by line with patterns anchored at the line start and bounded
in length, so its time is linear in the text (no regex runs over the whole block).
A block is read this way only when every non-blank line is a match, context or
separator line and at least one is a match; anything else stays plain text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MAX_PATH_CHARS = 1_024
MAX_LINE_CHARS = 500  # one output line's text kept (minified files have huge lines)
MAX_LINES_PER_FILE = 40  # lines (matches and context) kept per file
MAX_FILE_CHARS = 4_000  # and their text: one file's hit stays one ordinary hit
MAX_FILES = 200
# path:line:text or path:line:col:text; a Windows drive letter may lead the path.
_MATCH = re.compile(r"((?:[A-Za-z]:)?[^:\n]{1,1024}):(\d{1,9}):(?:(\d{1,6}):)?")  # 1024: MAX_PATH_CHARS
_CONTEXT_NUMBER = re.compile(r"-(\d{1,9})-")
_GAP = "…"


@dataclass(slots=True)
class _File:
    path: str
    matched: list[int] = field(default_factory=list)
    lines: list[tuple[int, str]] = field(default_factory=list)  # (line number, text), given order
    dropped: int = 0
    chars: int = 0


def grep_files(text: str) -> list[dict[str, Any]] | None:
    """One item per file (``path``, ``start_line``, ``end_line``, ``content``,
    ``matches``) when ``text`` is grep-style output, else None."""
    lines = text.splitlines()
    matches: list[tuple[str, int, str] | None] = []  # per line: a match, or None
    paths: set[str] = set()
    any_match = False
    for line in lines:
        found = _match_line(line)
        matches.append(found)
        if found is not None:
            paths.add(found[0])
            any_match = True
    if not any_match:
        return None
    entries: list[tuple[str, int, str, bool]] = []
    for line, found in zip(lines, matches, strict=True):
        if found is None:
            if not line.strip() or line.strip() == "--":
                continue
            found = _context_line(line, paths)
            if found is None:
                return None  # not grep output after all: keep the text as it is
            entries.append((*found, False))
        else:
            entries.append((*found, True))
    return by_file(entries)


def by_file(entries: Iterable[tuple[str, int, str, bool]]) -> list[dict[str, Any]]:
    """One item per file from ``(path, line number, text, is a match)`` lines in the
    order given (a grep block's, or a structured answer's one item per matched line)."""
    files: dict[str, _File] = {}
    for path, number, text, is_match in entries:
        entry = files.get(path)
        if entry is None:
            if len(files) >= MAX_FILES:
                continue
            entry = files[path] = _File(path)
        if is_match:
            entry.matched.append(number)
        body = text[:MAX_LINE_CHARS]
        if len(entry.lines) >= MAX_LINES_PER_FILE or entry.chars + len(body) > MAX_FILE_CHARS:
            entry.dropped += 1
            continue
        entry.chars += len(body) + 1
        entry.lines.append((number, body))
    return [_item(f) for f in files.values() if f.matched]


def _match_line(line: str) -> tuple[str, int, str] | None:
    found = _MATCH.match(line)
    if found is None:
        return None
    path = found.group(1)
    if not _plausible_path(path):
        return None
    return path, int(found.group(2)), line[found.end():]


def _context_line(line: str, paths: set[str]) -> tuple[str, int, str] | None:
    """``path-line-text`` for a path already seen in a match line (a path may hold
    ``-12-`` itself, so the prefix must be a known path)."""
    for found in _CONTEXT_NUMBER.finditer(line, 0, MAX_PATH_CHARS + 12):
        path = line[:found.start()]
        if path in paths:
            return path, int(found.group(1)), line[found.end():]
    return None


def _plausible_path(path: str) -> bool:
    # A file name has an extension or a directory; prose ("Note: 3: …") has neither.
    return (path == path.strip() and bool(path)
            and ("/" in path or "\\" in path or "." in path.rsplit("/", 1)[-1]))


def _item(entry: _File) -> dict[str, Any]:
    """The file's hit. Its content is the lines the server gave with a gap mark where
    lines were left out, so ``line_numbers`` says each content line's number in the file
    (None for a gap mark): numbered from ``start_line`` on, they would be wrong."""
    parts: list[str] = []
    numbers: list[int | None] = []
    previous: int | None = None
    for number, body in entry.lines:
        if previous is not None and number != previous + 1:
            parts.append(_GAP)
            numbers.append(None)
        parts.append(body)
        numbers.append(number)
        previous = number
    if entry.dropped:
        parts.append(f"{_GAP} ({entry.dropped} more lines)")
        numbers.append(None)
    return {"path": entry.path, "start_line": min(entry.matched), "end_line": max(entry.matched),
            "content": "\n".join(parts), "matches": len(entry.matched), "line_numbers": numbers}
