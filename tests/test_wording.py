"""Counts in messages read as people write them."""

from __future__ import annotations

from tributary.engine.wording import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "file") == "1 file"
    assert counted(0, "file") == "0 files"
    assert counted(2, "chunk") == "2 chunks"


def test_large_counts_have_separators_and_irregular_plurals_are_given() -> None:
    assert counted(14447, "chunk") == "14,447 chunks"
    assert counted(3, "index", "indexes") == "3 indexes"
    assert counted(1, "index", "indexes") == "1 index"
