"""Routing patterns: compile them case-insensitively and refuse those that could backtrack
catastrophically (a config is input like any other, and may be hostile).

Python's ``re`` is a backtracking engine with no timeout, so a pattern such as ``(a+)+b``
can hang the engine on a query of 30 characters. Rather than time-limit matching (which
would need a thread or process per match), rules are checked when they are written:
:func:`check_pattern` parses the pattern with the stdlib's own parser (``re._parser``,
the tree ``re.compile`` itself uses) and looks for the three shapes behind practically
all catastrophic backtracking:

1. **Nested quantifiers** — a repeated group containing a repetition of variable length
   (``(a+)+``, ``(.*)*``, ``(x?x)+``), unless some mandatory part of the group can never
   be consumed by the inner repetition and so pins where each iteration ends
   (``(\\d+\\.)+`` is accepted: a digit run cannot swallow the dot). Exponential.
2. **Overlapping alternatives under a repetition** — ``(a|a)*``, ``(\\w+|\\d+)*``: two
   branches that can start with the same character (or both match nothing). Exponential.
3. **Chained repetitions over the same characters** — ``\\d+\\d+``, ``.*a.*b``: two
   unbounded repetitions in a row that can split the same text (only parts they could
   both consume lie between them). Cubic under ``re.search``; a trailing repetition at
   the very end of the pattern is exempt, since nothing after it can fail.

Character classes are compared over a sample alphabet (ASCII, a few non-ASCII letters,
digits and spaces, and every literal the pattern names), case-folded because rules match
case-insensitively. The check is deliberately conservative: it may reject a rare safe
pattern (the message says how to rewrite it), never the reverse for these shapes.
Routing also matches only the first :data:`MAX_MATCH_CHARS` characters of a query, which
bounds the quadratic cost that any ``.*`` has under ``re.search``.
"""

from __future__ import annotations

import functools
import importlib
import re
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

_sre: Any = importlib.import_module("re._parser")
_c: Any = importlib.import_module("re._constants")

MAX_PATTERN_CHARS = 1000
MAX_MATCH_CHARS = 1024  # routing looks at this much of a query; see the module docstring
_BIG_REPEAT = 10  # a repetition allowing more than this many iterations counts as unbounded
_FLAGS = re.IGNORECASE

Item = tuple[Any, Any]  # (opcode, argument) as produced by re._parser

_SAMPLES = "éßΩЖ中\u00a0\u2003٣\u2028\u0130"

_NESTED = (
    "could backtrack catastrophically: a repeated group contains a repetition that can "
    "split the same text in many ways (like '(a+)+' or '(.*)*'); remove the inner or the "
    "outer quantifier (e.g. '(a+)+' → 'a+')"
)
_ALTERNATION = (
    "could backtrack catastrophically: alternatives inside a repeated group can match the "
    "same text (like '(a|a)*' or '(\\w+|\\d+)*'); make the alternatives distinct or use a "
    "character class"
)
_CHAIN = (
    "could be very slow on long queries: two repetitions in a row can match the same text "
    "(like '\\d+\\d+' or '.*a.*b'); drop the redundant one — rules match anywhere in the "
    "query, so leading '.*' is never needed"
)


def _is_repeat(op: Any) -> bool:
    return op is _c.MAX_REPEAT or op is _c.MIN_REPEAT


class _Analyzer:
    """Width, first-character and consumed-character sets of parsed regex items."""

    def __init__(self, universe: frozenset[str]) -> None:
        self.universe = universe

    # --- character sets -------------------------------------------------------------
    def _fold(self, code: int) -> frozenset[str]:
        ch = chr(code)
        return frozenset(c for c in (ch, ch.lower(), ch.upper()) if len(c) == 1)

    def _in_category(self, category: Any, ch: str) -> bool:
        name = str(category)
        negate = "_NOT_" in name
        if "DIGIT" in name:
            hit = ch.isdecimal()
        elif "SPACE" in name:
            hit = ch.isspace()
        elif "WORD" in name:
            hit = ch.isalnum() or ch == "_"
        elif "LINEBREAK" in name:
            hit = ch == "\n"
        else:  # an unknown category: assume it can match anything
            return True
        return hit != negate

    def _in_set(self, items: Sequence[Item], ch: str) -> bool:
        negate = False
        hit = False
        for op, av in items:
            if op is _c.NEGATE:
                negate = True
            elif op is _c.LITERAL:
                hit = hit or ch in self._fold(av)
            elif op is _c.RANGE:
                lo, hi = av
                hit = hit or any(lo <= ord(c) <= hi for c in {ch, ch.lower(), ch.upper()} if len(c) == 1)
            elif op is _c.CATEGORY:
                hit = hit or self._in_category(av, ch)
            else:  # anything unexpected inside a set: be conservative
                hit = True
        return hit != negate

    def first(self, item: Item) -> frozenset[str]:
        op, av = item
        if op is _c.LITERAL:
            return self._fold(av) & self.universe
        if op is _c.NOT_LITERAL:
            return self.universe - self._fold(av)
        if op is _c.ANY:
            return self.universe
        if op is _c.IN:
            return frozenset(ch for ch in self.universe if self._in_set(av, ch))
        if op is _c.SUBPATTERN:
            return self.first_seq(av[3])
        if op is _c.ATOMIC_GROUP:
            return self.first_seq(av)
        if op is _c.BRANCH:
            return frozenset().union(*(self.first_seq(alt) for alt in av[1]))
        if _is_repeat(op) or op is _c.POSSESSIVE_REPEAT:
            return self.first_seq(av[2]) if av[1] > 0 else frozenset()
        if op is _c.GROUPREF_EXISTS:
            return self.first_seq(av[1]) | (self.first_seq(av[2]) if av[2] else frozenset())
        if op is _c.GROUPREF:
            return self.universe
        return frozenset()  # AT, ASSERT, ASSERT_NOT: consume nothing

    def first_seq(self, seq: Iterable[Item]) -> frozenset[str]:
        out: set[str] = set()
        for item in seq:
            out |= self.first(item)
            if self.min_len(item) > 0:
                break
        return frozenset(out)

    def chars(self, item: Item) -> frozenset[str]:
        op, av = item
        if op in (_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN):
            return self.first(item)
        if op is _c.SUBPATTERN:
            return self.chars_seq(av[3])
        if op is _c.ATOMIC_GROUP:
            return self.chars_seq(av)
        if op is _c.BRANCH:
            return frozenset().union(*(self.chars_seq(alt) for alt in av[1]))
        if _is_repeat(op) or op is _c.POSSESSIVE_REPEAT:
            return self.chars_seq(av[2]) if av[1] > 0 else frozenset()
        if op is _c.GROUPREF_EXISTS:
            return self.chars_seq(av[1]) | (self.chars_seq(av[2]) if av[2] else frozenset())
        if op is _c.GROUPREF:
            return self.universe
        return frozenset()

    def chars_seq(self, seq: Iterable[Item]) -> frozenset[str]:
        return frozenset().union(*(self.chars(item) for item in seq))

    # --- widths ---------------------------------------------------------------------
    def min_len(self, item: Item) -> int:
        op, av = item
        if op in (_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN):
            return 1
        if op is _c.SUBPATTERN:
            return self.min_len_seq(av[3])
        if op is _c.ATOMIC_GROUP:
            return self.min_len_seq(av)
        if op is _c.BRANCH:
            return min(self.min_len_seq(alt) for alt in av[1])
        if _is_repeat(op) or op is _c.POSSESSIVE_REPEAT:
            return int(av[0]) * self.min_len_seq(av[2])
        if op is _c.GROUPREF_EXISTS:
            return min(self.min_len_seq(av[1]), self.min_len_seq(av[2]) if av[2] else 0)
        return 0

    def min_len_seq(self, seq: Iterable[Item]) -> int:
        return sum(self.min_len(item) for item in seq)


def _universe(tree: Any) -> frozenset[str]:
    chars = {chr(code) for code in range(128)} | set(_SAMPLES)

    def collect(seq: Iterable[Item]) -> None:
        for op, av in seq:
            if op in (_c.LITERAL, _c.NOT_LITERAL):
                chars.update(c for c in (chr(av), chr(av).lower(), chr(av).upper()) if len(c) == 1)
            elif op is _c.RANGE:
                chars.update((chr(av[0]), chr(av[1])))
            for child in _children(op, av):
                collect(child)

    collect(tree)
    return frozenset(chars)


def _children(op: Any, av: Any) -> list[Sequence[Item]]:
    """The sub-sequences an item contains (group bodies, branches, repeat bodies, sets)."""
    if op is _c.SUBPATTERN:
        return [av[3]]
    if op is _c.ATOMIC_GROUP:
        return [av]
    if op is _c.BRANCH:
        return list(av[1])
    if _is_repeat(op) or op is _c.POSSESSIVE_REPEAT:
        return [av[2]]
    if op in (_c.ASSERT, _c.ASSERT_NOT):
        return [av[1]]
    if op is _c.GROUPREF_EXISTS:
        return [av[1]] + ([av[2]] if av[2] else [])
    if op is _c.IN:
        return [av]
    return []


class _Checker:
    def __init__(self, analyzer: _Analyzer) -> None:
        self.a = analyzer

    def _big(self, item: Item) -> bool:
        op, av = item
        return _is_repeat(op) and (av[1] is _c.MAXREPEAT or av[1] > _BIG_REPEAT)

    def _variable(self, item: Item) -> bool:
        op, av = item
        return _is_repeat(op) and av[0] != av[1] and self.a.min_len_seq(av[2]) > 0

    def check(self, seq: Sequence[Item], top: bool) -> str | None:
        """Walk every sequence in the tree; the first problem found, or None."""
        problem = self._chain(seq, top)
        if problem:
            return problem
        for op, av in seq:
            if self._big((op, av)):
                problem = self._nested(av[2], []) or self._alternation(av[2])
                if problem:
                    return problem
            if op is _c.IN:
                continue
            for child in _children(op, av):
                problem = self.check(child, top=False)
                if problem:
                    return problem
        return None

    def _nested(self, seq: Sequence[Item], context: list[Sequence[Item]]) -> str | None:
        """Inside a big repetition's body: find variable repetitions no delimiter pins."""
        levels = [*context, seq]
        for item in seq:
            op, av = item
            if self._variable(item):
                if not self._delimited(item, levels):
                    return _NESTED
                continue  # its own body is checked when it is visited as an outer repeat
            if op in (_c.ASSERT, _c.ASSERT_NOT, _c.IN) or op is _c.POSSESSIVE_REPEAT:
                continue
            if op is _c.ATOMIC_GROUP:
                continue
            for child in _children(op, av):
                problem = self._nested(child, levels)
                if problem:
                    return problem
        return None

    def _delimited(self, inner: Item, levels: list[Sequence[Item]]) -> bool:
        consumed = self.a.chars(inner)
        for level in levels:
            for sibling in level:
                if sibling is inner or _contains(sibling, inner):
                    continue
                if self.a.min_len(sibling) > 0 and not (self.a.first(sibling) & consumed):
                    return True
        return False

    def _alternation(self, seq: Sequence[Item]) -> str | None:
        for op, av in seq:
            if op in (_c.ASSERT, _c.ASSERT_NOT, _c.IN) or op is _c.POSSESSIVE_REPEAT:
                continue
            if op is _c.BRANCH and self._overlapping(av[1]):
                return _ALTERNATION
            for child in _children(op, av):
                problem = self._alternation(child)
                if problem:
                    return problem
        return None

    def _overlapping(self, alternatives: Sequence[Sequence[Item]]) -> bool:
        seen_empty = False
        seen: set[str] = set()
        for alt in alternatives:
            if self.a.min_len_seq(alt) == 0:
                if seen_empty:
                    return True
                seen_empty = True
                continue
            first = self.a.first_seq(alt)
            if first & seen:
                return True
            seen |= first
        return False

    def _chain(self, seq: Sequence[Item], top: bool) -> str | None:
        flat = _flatten(seq)
        previous: Item | None = None
        for index, item in enumerate(flat):
            op, av = item
            unbounded = _is_repeat(op) and av[1] is _c.MAXREPEAT and self.a.min_len_seq(av[2]) > 0
            if unbounded:
                last = top and index == len(flat) - 1
                if previous is not None and not last and self.a.chars(previous) & self.a.chars(item):
                    return _CHAIN
                previous = item
            elif (
                previous is not None
                and self.a.min_len(item) > 0
                and not (self.a.first(item) & self.a.chars(previous))
            ):
                previous = None  # a delimiter the repetition cannot swallow
        return None


def _contains(container: Item, target: Item) -> bool:
    op, av = container
    for child in _children(op, av):
        for item in child:
            if item is target or _contains(item, target):
                return True
    return False


def _flatten(seq: Sequence[Item]) -> list[Item]:
    """Plain groups spliced into their parent sequence: ``(a)(b+)`` reads as ``a b+``."""
    out: list[Item] = []
    for item in seq:
        op, av = item
        if op is _c.SUBPATTERN:
            out.extend(_flatten(av[3]))
        else:
            out.append(item)
    return out


@functools.lru_cache(maxsize=1024)
def check_pattern(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable routing pattern, or None when it is.

    Cheap enough to call on every keystroke (cached); the message is for the user.
    """
    if not pattern.strip():
        return "is empty (it would match every query; use the fallback instead)"
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"is too long ({len(pattern)} characters, at most {MAX_PATTERN_CHARS})"
    try:
        with warnings.catch_warnings():  # e.g. "possible nested set": still a valid pattern
            warnings.simplefilter("ignore")
            re.compile(pattern, _FLAGS)
            tree = _sre.parse(pattern, _FLAGS)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        return f"does not compile: {exc.msg}{where}"
    except (RecursionError, OverflowError, ValueError, TypeError) as exc:
        return f"does not compile: {exc}"
    try:
        data: Sequence[Item] = tree.data
        return _Checker(_Analyzer(_universe(data))).check(data, top=True)
    except RecursionError:
        return "is nested too deeply"


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """The compiled, case-insensitive pattern; ``ValueError`` with the reason if unusable."""
    problem = check_pattern(pattern)
    if problem is not None:
        raise ValueError(f"pattern {pattern!r} {problem}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return re.compile(pattern, _FLAGS)


def safe_compile(pattern: str) -> re.Pattern[str] | None:
    """Like :func:`compile_pattern` but None instead of an exception (for routing)."""
    try:
        return compile_pattern(pattern)
    except ValueError:
        return None
