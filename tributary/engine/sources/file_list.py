"""A list of file paths, one per line, read as one hit per file.

File-finding tools answer with paths alone: the reference filesystem server's
``search_files`` gives ``/home/ann/src/click/src/click/termui.py`` and the rest of its
matches one per line in one text block. Taken as prose, the block was a single hit
named after its first line, with no path: it could not be opened, its files never met
the same files found by other sources, and the other matches were hidden in its text.

A block is read this way only when every non-blank line is a path (absolute, or
relative with no spaces) and at least one has a folder in it; anything else stays text.
Each line is looked at once, so the time is linear in the text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tributary.engine.sources.grep_output import MAX_FILES, MAX_PATH_CHARS


def listed_files(text: str) -> list[dict[str, Any]] | None:
    """One item per path (``path``, ``content``) when ``text`` lists file paths, in the
    order given and at most ``MAX_FILES`` of them; else None."""
    return listed_paths(text.splitlines())


def listed_paths(lines: Iterable[str]) -> list[dict[str, Any]] | None:
    """``listed_files`` for lines already apart (a structured answer's list of paths)."""
    paths: dict[str, None] = {}  # in order, once each
    foldered = False
    for line in lines:
        path = line.strip()
        if not path:
            continue
        if not _path_line(path):
            return None
        foldered = foldered or "/" in path or "\\" in path
        if len(paths) < MAX_FILES:
            paths.setdefault(path)
    if not paths or not foldered:
        return None
    return [{"path": path, "content": path} for path in paths]


def _path_line(line: str) -> bool:
    if len(line) > MAX_PATH_CHARS or "\t" in line or "://" in line:
        return False
    if line.startswith("/") or _drive(line):
        return ": " not in line  # absolute, a folder's name may hold spaces; not a message
    if " " in line or ":" in line:
        return False  # prose, a message, a grep line
    name = line.replace("\\", "/").rsplit("/", 1)[-1]
    return "/" in line or "\\" in line or ("." in name and name not in (".", "..") and not name.endswith("."))


def _drive(line: str) -> bool:
    """``C:\\`` or ``C:/``: a Windows path."""
    return len(line) > 3 and line[0].isalpha() and line[1] == ":" and line[2] in "\\/"
