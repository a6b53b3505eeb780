"""A source file's text, decoded by its declared or detected encoding.

Real repositories hold files in legacy encodings; indexed as UTF-8 with replacement
characters they would be garbage in every answer. The order of evidence:

1. a byte-order mark (UTF-8, UTF-16, UTF-32);
2. strict UTF-8 (nearly every file: ASCII is UTF-8);
3. a coding declaration in the first two lines — PEP 263's ``# -*- coding: X -*-``,
   also after ``//``, ``/*``, ``--``, ``;``, ``%`` or ``<!--`` (Emacs and Vim put
   it there in other languages);
4. charset-normalizer's best guess.

The text is then stored as UTF-8 like any other. A file that none of these decodes
raises :class:`UndecodableError` with the reason, and the caller skips that file
with a note: one file never fails a repository.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from charset_normalizer import from_bytes

from tributary.engine.errors import TributaryError

BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_COOKIE = re.compile(
    rb"^[ \t\f]*(?:#|//|/\*|--|;|%|<!--).*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE
)


class UndecodableError(TributaryError, ValueError):
    """The bytes are not text in an encoding that could be told."""


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    encoding: str  # the codec that decoded it ("utf-8" for nearly every file)


def has_bom(head: bytes) -> bool:
    """Whether ``head`` starts with a Unicode byte-order mark (UTF-16/32 hold NUL bytes)."""
    return any(head.startswith(bom) for bom, _ in BOMS)


def declared_encoding(data: bytes) -> str | None:
    """The codec named by a coding declaration in the first two lines, if Python knows it."""
    head = b"\n".join(data.split(b"\n", 2)[:2])
    match = _COOKIE.search(head)
    if match is None:
        return None
    try:
        return codecs.lookup(match.group(1).decode("ascii")).name
    except (LookupError, UnicodeDecodeError):
        return None


def decode_source(data: bytes) -> Decoded:
    """``data`` as text; :class:`UndecodableError` when no encoding fits."""
    for bom, codec in BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data.decode(codec), codec)
            except UnicodeDecodeError as exc:
                raise UndecodableError(f"has a {codec} byte-order mark but is not {codec}: "
                                       f"{exc.reason} at byte {exc.start}") from None
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    declared = declared_encoding(data)
    if declared is not None:
        try:
            return Decoded(data.decode(declared), declared)
        except UnicodeDecodeError:
            pass  # a wrong declaration: let the detector look
    best = from_bytes(data).best()
    if best is None:
        raise UndecodableError("not UTF-8, and no text encoding could be detected")
    return Decoded(str(best), best.encoding)
