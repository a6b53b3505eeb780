"""An issue's messages find the code that writes them, around the values put into them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tributary.engine.index.search import _LETTERS, _PLACEHOLDER, _longest_run, _phrased


def plain(code: str) -> tuple[str, set[str]]:
    words = _LETTERS.findall(_PLACEHOLDER.sub(" ", code).lower())
    return f" {' '.join(words)} ", set(words)


def test_a_message_is_found_around_its_placeholders() -> None:
    phrase = ["right", "contains", "more", "items", "first", "extra", "item"]
    for code in ('"%s contains %d more items, first extra item: %s" % (side, n, extra)',
                 'f"{side} contains {n} more items, first extra item: {extra!r}"',
                 '"{0} contains {1} more items, first extra item: {2}".format(side, n, extra)'):
        assert _longest_run(phrase, *plain(code)) == 6, code


def test_scattered_words_are_not_a_message() -> None:
    phrase = ["right", "contains", "more", "items", "first", "extra", "item"]
    assert _longest_run(phrase, *plain("items = first(more); extra = contains(item, right)")) == 0
    assert _longest_run(phrase, *plain('"more items"')) == 0  # two words in a row: not enough


def test_an_issue_quoting_a_message_finds_the_function_that_writes_it(tmp_path: Path) -> None:
    """Many functions share the issue's words; one writes its message."""
    from tests.index.index_helpers import HashingEmbedder
    from tributary.engine.index.manager import index_path_for, index_repository
    from tributary.engine.index.search import hybrid_search
    from tributary.engine.index.store import SqliteStore

    repo = tmp_path / "app"
    (repo / "app").mkdir(parents=True)
    compare = ["def compare_items(left, right):\n    \"\"\"Compare the items of two sequences.\"\"\"\n"
               "    return [item for item in left if item in right]\n"]
    for n in range(12):  # items, sequences, extra, first: everywhere
        compare.append(f"def extra_items_{n}(items, first, right):\n"
                       "    \"\"\"The right item contains the first extra items; more items, more extra.\"\"\"\n"
                       f"    return items[first + {n}:] + right  # first extra item, right items, more\n")
    compare.append("def explain_sequence(left, right):\n    side = 'Right' if len(right) > len(left) else 'Left'\n"
                   "    extra = (right or left)[0]\n"
                   "    return '%s contains %d more items, first extra item: %s' % (side, 1, extra)\n")
    (repo / "app" / "compare.py").write_text("\n\n".join(compare), encoding="utf-8")
    issue = ("Confusing message when comparing byte strings\n\nThe comparison of items is confusing:\n\n```\n"
             "E       AssertionError: assert b'' == b'42'\nE         Right contains more items, first extra item: 52\n"
             "```\n\n" + "The first extra item is the ordinal of the character, not the character. " * 10)
    embedder = HashingEmbedder()
    index_repository(repo, embedder=embedder, index_dir=tmp_path / "idx")
    store = SqliteStore(index_path_for(repo, directory=tmp_path / "idx"), readonly=True)
    try:
        hits = hybrid_search(store, issue, None, repo="app", top_k=5)
        assert hits[0].symbol == "explain_sequence"
    finally:
        store.close()


def test_within_a_file_the_function_writing_the_whole_message_is_the_one() -> None:
    """Three words of a message in a comment are common among a file's functions; the
    one that writes all of it stands out."""
    chunks = [SimpleNamespace(content=code) for code in (
        "return items[n:]  # first extra item, right items",
        "return '%s contains %d more items, first extra item: %s' % (side, 1, extra)",
        "return left == right",
    )]
    assert _phrased(chunks, ["right contains more items first extra item"]) == [1]  # type: ignore[arg-type]
    assert _phrased(chunks, []) == []  # type: ignore[arg-type]
