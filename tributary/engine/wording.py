"""Counts written as people write them: "1 file", "2 files", "4,877 chunks"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun plural unless the count is one (``plural`` when
    adding an "s" does not make it), the count with thousands separators."""
    word = noun if count == 1 else plural or f"{noun}s"
    return f"{count:,} {word}"
