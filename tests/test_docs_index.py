"""docs/index.md lists every page under docs/, and every page it links exists.

A page nobody links is a page nobody finds; the index is where the README sends readers.
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def linked_pages(text: str) -> set[str]:
    """The Markdown link targets in ``text`` (fragments dropped)."""
    return set(LINK.findall(text))


def test_links_are_read() -> None:
    assert linked_pages("- [a](a.md): x, [b](b.md#part) and [c](../c.md)") == {"a.md", "b.md", "../c.md"}


def test_every_page_is_linked_from_the_index() -> None:
    linked = linked_pages((DOCS / "index.md").read_text(encoding="utf-8"))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")} - {"index.md"}
    assert sorted(pages - linked) == []


def test_every_link_of_the_index_exists() -> None:
    linked = linked_pages((DOCS / "index.md").read_text(encoding="utf-8"))
    assert sorted(t for t in linked if "://" not in t and not (DOCS / t).exists()) == []
