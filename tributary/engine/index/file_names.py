"""File names as evidence: a file named with the question's own words.

"update and delete statement builders" is answered by ``UpdateStatement.kt`` and
``DeleteStatement.kt``; "Column definition and column types" by ``Column.kt``. Chunk
search sees a name only as one more word of a long path, so a file whose name the
question spells out often ranks below a file that merely uses the same words. A file
whose name words all occur in the question is named by it; among the fused candidates,
the named files form one more ranked list (more name words first: ``ColumnType`` is a
closer match than ``Column`` for "column types"), fused like the others.

Words are compared after folding case, splitting CamelCase and ``snake_case``/``kebab``,
dropping stopwords and a plural ending, so ``StatementBuilder`` is named by "statement
builders"; a name word of three letters or more also matches the words it abbreviates
(``impls`` "implementations", ``utils`` "utility", ``ser`` "serialize"). A test file's
name carries "test" (``column_test.go``, ``object.test.ts``), so it is named only when
the question says "test".

A lookup (``tributary.engine.query.kinds.lookup_names``: ``ResultRow``, ``MyPathLike``) names only
the file called by the whole name (``ResultRow.kt``), not ``path.py`` for a part of it:
the symbol list already finds the definition, wherever it lives.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import PurePosixPath

from tributary.engine.localsearch.fts import STOPWORDS, fts_terms

ABBREVIATION = 3  # a name word this long or longer may be the start of a question's word
# At most this many named files get the bonus: a word that names many files (``index``
# in a TypeScript repository of index.ts files) says little about any one of them.
MAX_NAMED = 5

_PARTS = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_ES_AFTER = ("s", "x", "z", "ch", "sh")


def singular(word: str) -> str:
    """``word`` without a plural ending (``builders`` -> ``builder``, ``indexes`` ->
    ``index``, ``entries`` -> ``entry``); words ending in ``ss``, ``us`` or ``is`` kept."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(_ES_AFTER):
        return word[:-2]
    return word[:-1]


def _words(parts: Iterable[str]) -> frozenset[str]:
    return frozenset(
        singular(low) for part in parts if len(low := part.lower()) >= 2 and low not in STOPWORDS
    )


@cache
def name_words(path: str) -> frozenset[str]:
    """The words of a file's name, without its extension: ``src/UpdateStatement.kt`` ->
    {update, statement}; ``tests/object.test.ts`` -> {object, test}."""
    parts = [piece for word in _PARTS.findall(_stem(path)) for piece in (_CAMEL.findall(word) or [word])]
    return _words(parts)


def _stem(path: str) -> str:
    name = PurePosixPath(path).name
    return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name


def query_words(query: str) -> frozenset[str]:
    """The words of a question, compared with :func:`name_words`."""
    return _words(fts_terms(query, limit=256))


def _named(words: frozenset[str], asked: frozenset[str]) -> bool:
    return bool(words) and all(
        word in asked or (len(word) >= ABBREVIATION and any(a.startswith(word) for a in asked))
        for word in words
    )


def _squashed(text: str) -> str:
    return "".join(_PARTS.findall(text)).lower()


def named_ranks(paths: Iterable[str], query: str, lookup: frozenset[str] = frozenset()) -> Mapping[str, int]:
    """The 1-based rank of each file in ``paths`` (best candidates first) whose name
    words all occur in ``query``: files with more name words first, then in the order
    given; at most ``MAX_NAMED`` of them. ``lookup``: the names a lookup asks for, each
    of which names only the file called by all of it."""
    asked = query_words(query)
    if not asked:
        return {}
    whole = {_squashed(name) for name in lookup}
    named: dict[str, int] = {}
    for path in paths:
        if path in named:
            continue
        words = name_words(path)
        if _squashed(_stem(path)) in whole if whole else _named(words, asked):
            named[path] = len(words)
    order = sorted(named, key=lambda path: -named[path])  # stable: candidate order kept
    return {path: rank for rank, path in enumerate(order[:MAX_NAMED], 1)}
