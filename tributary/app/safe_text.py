"""Untrusted text (hit titles, content, paths, server errors) made safe to display.

Hits come from any MCP server, so their text is data that may hold control
characters, ANSI colour codes, bidi overrides that reorder what the eye sees
(Trojan Source), megabyte-long lines that would stall Qt's text layout, or markup
that Qt would render: a label or tooltip whose text *looks* like rich text is
shown as HTML. Every place the UI shows such text goes through one of these:

* :func:`one_line` — a single display line (tree cells, list items, labels):
  escapes and layout marks dropped, controls and whitespace runs become one space;
* :func:`block` — multi-line text for a plain-text viewer, lines and total capped,
  controls and layout marks shown as visible symbols (␀, ⟨U+202E⟩);
* :func:`tooltip` — escaped rich text, so a tooltip never interprets markup.
"""

from __future__ import annotations

import html
import re

LINE_LIMIT = 160  # characters in a one-line cell
BLOCK_LINE_LIMIT = 2_000  # characters per line in a viewer: longer lines are cut
BLOCK_LIMIT = 200_000  # characters in a viewer
TOOLTIP_LIMIT = 1_500  # characters in a tooltip

# CSI and OSC escape sequences (colours, cursor moves, window titles): presentation
# for a terminal, noise here.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# C0 controls except tab and newline, DEL, C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
# Unicode format characters that change how text is laid out: bidi embeddings,
# overrides and isolates, marks, zero-width characters, the BOM.
_FORMAT = re.compile(r"[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_WHITESPACE = re.compile(r"\s+")


def _control_picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟: visible, inert
    if code == 0x7F:
        return "\u2421"  # ␡
    return "\ufffd"


def _format_mark(match: re.Match[str]) -> str:
    return f"⟨U+{ord(match.group()):04X}⟩"


def visible(text: str) -> str:
    """``text`` with ANSI sequences removed and other controls made visible and inert.

    Newlines and tabs stay; a carriage return ends a line (``\\r\\n`` and a lone
    ``\\r`` both become ``\\n``).
    """
    text = _ANSI.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub(_control_picture, text)
    return _FORMAT.sub(_format_mark, text)


def one_line(text: str | None, limit: int = LINE_LIMIT) -> str:
    """One display line of at most ``limit`` characters, whitespace runs collapsed."""
    if not text:
        return ""
    # Cut before cleaning: a megabyte title must not cost a megabyte of work per row.
    head = _FORMAT.sub("", _ANSI.sub("", text[: limit * 4 + 64]))
    flat = _WHITESPACE.sub(" ", _CONTROL.sub(" ", head)).strip()
    if len(flat) > limit or len(text) > limit * 4 + 64:
        return flat[: limit - 1].rstrip() + "…"
    return flat


def block(text: str | None, *, line_limit: int = BLOCK_LINE_LIMIT, limit: int = BLOCK_LIMIT) -> str:
    """Multi-line text for a plain-text viewer: each line cut to ``line_limit`` (so the
    lines after a huge one still show), the whole to about ``limit`` characters."""
    if not text:
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out: list[str] = []
    shown, start, end_of_text = 0, 0, len(text)
    while start <= end_of_text:
        end = text.find("\n", start)
        if end < 0:
            end = end_of_text
        line = visible(text[start : min(end, start + line_limit)])
        if end - start > line_limit:
            line += f" … ({end - start - line_limit:,} more characters on this line)"
        out.append(line)
        shown += len(line) + 1
        start = end + 1
        if shown >= limit and start < end_of_text:
            out.append(f"… (cut: {end_of_text - start:,} more characters)")
            break
    return "\n".join(out)


def tooltip(text: str | None, limit: int = TOOLTIP_LIMIT) -> str:
    """A tooltip that shows ``text`` literally: escaped, lines capped, as rich text.

    Qt renders a tooltip as HTML when it merely looks like HTML; escaping and marking
    it as rich text ourselves makes the rendering the same whatever the text holds.
    """
    if not text:
        return ""
    shown = block(text[:limit], line_limit=200, limit=limit)
    if len(text) > limit:
        shown += "\n…"
    # pre-wrap keeps indentation and line breaks, and still wraps a long line.
    return f"<qt><p style='white-space:pre-wrap'>{html.escape(shown, quote=False)}</p></qt>"
