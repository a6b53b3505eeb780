"""FTS5 queries for the local indexes: a query's words as terms, code-aware.

Both the code index and the task history search with the same terms: distinct,
lower-cased words of letters and digits, with identifiers also split into their parts
(``junit_xml`` -> ``junit xml``, ``LogXML`` -> ``logxml log xml``, as the code index
stores them), stopwords and one-letter words left out. Every term is quoted, so FTS5
syntax in a query (``OR``, ``NOT``, ``"``, ``*``, ``:``) is inert.

Numbers are terms only where asked: in task titles they name issues and versions
(``#1234``, ``3.12``); in code they are mostly literals that match everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import closing

from tributary.engine.sqlite import connect

MAX_QUERY_TERMS = 48

_STOPWORD_TEXT = """a an and are as at be been but by can could did do does for from had has have
how i if in into is it its let may might more most no not of on or our should so some such than that
the their them then there these this those to too up use used using was we were what when where
which while who why will with would you your also via now only just like make makes made"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_LETTER_WORD = re.compile(r"[^\W\d_][^\W_]*")  # starts with a letter; "_" separates words
_ANY_WORD = re.compile(r"[^\W_]+")  # ... or with a digit, where numbers count
_ASCII_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def split_identifiers(text: str) -> str:
    """The parts of CamelCase and mixed identifiers (``LogXML`` -> ``Log XML``) and each
    snake_case identifier whole (``deny_unknown_fields`` -> ``denyunknownfields``), for
    an index's terms column.

    unicode61 already splits on ``_``, ``/`` and ``.``, so a CamelCase name is a word of
    its own and its parts need help; a snake_case name is only its parts, and the whole
    (``identifier_terms``) is what lets a question that spells it find its uses.
    """
    parts: list[str] = []
    seen: set[str] = set()
    for word in _ASCII_WORD.findall(text):
        if word in seen or word.islower() or word.isupper():
            continue
        seen.add(word)
        pieces = _CAMEL.findall(word)
        if len(pieces) > 1:
            parts.extend(pieces)
    parts.extend(identifier_terms(text, limit=None))
    return " ".join(parts)


# A snake_case identifier: words joined by underscores (leading ones allowed). The
# separator class and the word class are disjoint, so the match is linear.
_SNAKE = re.compile(r"(?<![A-Za-z0-9_])_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+")
_SNAKE_PART = re.compile(r"[A-Za-z0-9]+")
MAX_IDENTIFIER_CHARS = 64  # a longer run of words and underscores is not a name
MAX_IDENTIFIER_TERMS = 24  # a question's whole identifiers searched


def identifier_terms(text: str, *, limit: int | None = MAX_IDENTIFIER_TERMS) -> list[str]:
    """The snake_case identifiers in ``text``, each squashed into one lower-case term
    (``_print_SeqFormula`` -> ``printseqformula``), distinct, in order; at most
    ``limit`` (None: all). An identifier is a term as a whole, not only its words:
    ``deny_unknown_fields`` is rare where ``deny``, ``unknown`` and ``fields`` are not."""
    terms: list[str] = []
    seen: set[str] = set()
    for match in _SNAKE.finditer(text):
        word = match.group()
        if len(word) > MAX_IDENTIFIER_CHARS:
            continue
        term = "".join(_SNAKE_PART.findall(word)).lower()
        if term in seen:
            continue
        seen.add(term)
        terms.append(term)
        if limit is not None and len(terms) >= limit:
            break
    return terms


def fts_terms(text: str, *, numbers: bool = False, limit: int = MAX_QUERY_TERMS) -> list[str]:
    """A query's terms, in order: each word and, for a mixed-case ASCII identifier, its
    CamelCase parts; stopwords, one-character words and repeats left out; at most
    ``limit``. ``numbers`` keeps words that start with a digit (``404``, ``2to3``)."""
    terms: list[str] = []
    seen: set[str] = set()
    for word in (_ANY_WORD if numbers else _LETTER_WORD).findall(text):
        split = word.isascii() and not word.islower()
        for piece in [word, *(_CAMEL.findall(word) if split else [])]:
            low = piece.lower()
            if len(low) < 2 or low in STOPWORDS or low in seen:
                continue
            seen.add(low)
            terms.append(low)
        if len(terms) >= limit:
            break
    return terms[:limit]


def keyword_terms(text: str) -> list[str]:
    """The code index's terms for ``text``: its words (``fts_terms``), then its
    snake_case identifiers whole (``identifier_terms``), which the index's terms column
    holds too."""
    terms = fts_terms(text)
    held = set(terms)
    return terms + [term for term in identifier_terms(text) if term not in held]


def fts_query(text: str | Sequence[str]) -> str | None:
    """A query's words (or the given terms) OR-ed as quoted FTS5 phrases; None when
    there are none."""
    terms = fts_terms(text) if isinstance(text, str) else list(text)
    return " OR ".join(f'"{term}"' for term in terms) if terms else None


def symbol_text(symbol: str | None) -> str:
    """A chunk's symbol as the code index's symbol column holds it: the name, then its
    parts (``LogXML.add_stats`` -> ``LogXML.add_stats Log XML``)."""
    name = symbol or ""
    return f"{name} {split_identifiers(name)}"


# BM25 column weights of the code index: path, symbol, body, split identifiers.
CODE_WEIGHTS = (4.0, 4.0, 1.0, 1.0)
# ... and of ``keyword_order``, whose units share one path: symbol, body, split identifiers.
UNIT_WEIGHTS = CODE_WEIGHTS[1:]


def keyword_order(units: Sequence[tuple[str | None, str]], terms: Sequence[str]) -> list[int]:
    """The positions of ``units`` (``(symbol, code)`` pairs), those matching ``terms``
    first by FTS5's BM25 among these units alone, then the rest in their order.

    Within one file a word the whole file uses says nothing about which of its functions
    is meant; scored against the file's own units it weighs little, and the words that
    set one function apart weigh most. The columns are the code index's."""
    match = fts_query(terms)
    if match is None or not units:
        return list(range(len(units)))
    with closing(connect(":memory:")) as conn:
        conn.execute(
            "CREATE VIRTUAL TABLE units USING fts5(symbol, body, terms, tokenize='porter unicode61')"
        )
        conn.executemany(
            "INSERT INTO units(rowid, symbol, body, terms) VALUES (?, ?, ?, ?)",
            [(n, symbol_text(symbol), code, split_identifiers(code)) for n, (symbol, code) in enumerate(units)],
        )  # fmt: skip
        weights = ", ".join(str(w) for w in UNIT_WEIGHTS)
        found = [int(row[0]) for row in conn.execute(
            f"SELECT rowid FROM units WHERE units MATCH ? ORDER BY bm25(units, {weights}), rowid", (match,))]  # fmt: skip
    matched = set(found)
    return found + [n for n in range(len(units)) if n not in matched]
