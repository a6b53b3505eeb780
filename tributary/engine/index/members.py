"""A looked-up class shown with its members' signatures.

The chunker gives a class's own chunk the lines up to its first method (each method is
a chunk of its own), so a class that opens with a method is one line long: looking up
``APIRoute`` answered ``class APIRoute(routing.Route):`` and nothing else, to a person
and to an LLM alike. The class's hit keeps its own lines and gains one line per member,
its signature and where it lies, as the file's outline would show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tributary.engine.index.store import StoredChunk

MAX_MEMBERS = 40  # listed members of one class; the rest are counted
_HASH_COMMENTS = frozenset({
    "python", "ruby", "elixir", "bash", "shell", "r", "perl", "julia", "nim", "crystal", "powershell",
    "yaml", "toml", "make", "cmake", "coffeescript",
})  # fmt: skip


def members_of(chunks: Sequence[StoredChunk], symbol: str, after: int) -> list[StoredChunk]:
    """Of a file's ``chunks`` (in line order), those that define ``symbol``'s direct
    members below line ``after``, one per member (a long one's first part)."""
    prefix = symbol + "."
    found: dict[str, StoredChunk] = {}
    for chunk in chunks:
        name = chunk.symbol or ""
        if chunk.start_line <= after or not name.startswith(prefix):
            continue
        if "." in name[len(prefix) :]:
            continue  # a member's member (a nested class's method)
        first = found.get(name)
        found[name] = chunk if first is None else _joined(first, chunk)
    return list(found.values())


def _joined(first: StoredChunk, part: StoredChunk) -> StoredChunk:
    """A long member's first part, extended to the end of a later part."""
    return replace(first, end_line=max(first.end_line, part.end_line))


def _closed(signature: str, language: str) -> str:
    """``signature`` cut before a string it opens and does not close (a cut signature
    stops inside an annotation's docstring): an open quote would run on, for a reader and
    for a highlighter, into the next members. (``'`` opens a string in Python; in Rust it
    marks a lifetime.)"""
    signature = signature.split('"""', 1)[0].split("'''", 1)[0]
    for quote in "\"'" if language == "python" else '"':
        if signature.count(quote) % 2:
            signature = signature[: signature.rfind(quote)]
    return signature.rstrip()


def member_lines(members: Sequence[StoredChunk], language: str) -> str:
    """The lines that list ``members`` under their class ("" for none)."""
    mark = "#" if language.lower() in _HASH_COMMENTS else "//"
    lines = []
    for chunk in members[:MAX_MEMBERS]:
        head = chunk.content.lstrip("\n")
        indent = head[: len(head) - len(head.lstrip())] if head.strip() else "    "
        signature = _closed(chunk.signature or (chunk.symbol or "").rsplit(".", 1)[-1], language.lower())
        lines.append(f"{indent}{signature} …  {mark} lines {chunk.start_line}-{chunk.end_line}")
    if len(members) > MAX_MEMBERS:
        lines.append(f"{mark} … and {len(members) - MAX_MEMBERS} more members")
    return "\n".join(lines)
