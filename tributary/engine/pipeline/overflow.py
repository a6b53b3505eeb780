"""Overflow treatments: make one hit's content fit a token limit.

* ``truncate``  keep whole leading blocks — top-level definitions or paragraphs — and,
  only when the first block alone is too big, whole leading lines; never cuts a line.
* ``compress``  code -> signatures + docstrings (``compress.outline``), then truncated
  if still too long; prose falls back to ``summarise``.
* ``summarise`` extractive: the units (sentences of prose, lines of code) sharing most
  terms with the query, as many as fit, in their original order, gaps marked ``…``.
* ``drop``      nothing fits: the hit is left out.

Every function returns the new text (within the limit, marker included) or None.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from tributary.engine.model import OVERFLOW_STRATEGIES

from .compress import outline
from .text import is_code, query_terms
from .tokens import count_tokens, count_tokens_batch, line_token_counts, remember_count

GAP = "…"
_DEFINITION = re.compile(r"(?:@|(?:async\s+)?(?:def|class|function|func|fn)\b)")
_DEFINITION_FIRST = frozenset("@adcf")  # every _DEFINITION match starts with one of these
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_HEADING = re.compile(r"^\s*(#{1,6}\s|[=\-]{3,}\s*$)")
_CODE_START = re.compile(
    r"^(?:@|def |class |async def |function |func |fn |pub |impl |struct |enum |interface |type |export "
    r"|public |private |protected |const |let |var )"
)


def _block_starts(lines: list[str], code: bool) -> list[int]:
    """Indices of lines that begin a block: a definition or paragraph at the base indent."""
    return list(_iter_block_starts(lines, code))


def _iter_block_starts(lines: list[str], code: bool) -> Iterator[int]:
    """``_block_starts`` one at a time: truncation stops at the first block that does
    not fit, so the lines past it are never matched against the block patterns."""
    indents = [len(line) - len(rest) for line in lines if (rest := line.lstrip())]
    base = min(indents) if indents else 0
    yield 0
    previous = lines[0].lstrip() if lines else ""
    for i in range(1, len(lines)):
        rest = lines[i].lstrip()
        before, previous = previous, rest
        if not rest:
            continue
        if code:
            if before.startswith("@"):  # a decorated definition starts at its decorator
                continue
            indent = len(lines[i]) - len(rest)
            at_base = indent <= base and (not before or _CODE_START.match(rest))
            if at_base or (rest[0] in _DEFINITION_FIRST and _DEFINITION.match(rest)):
                yield i
        elif not before or _HEADING.match(lines[i]):
            yield i


# No token spans more characters than this (a whole word at most; indentation counts
# as characters but not tokens), so a prefix this many times the limit usually holds
# more tokens than the limit; when it does not, every line is counted.
_CHARS_PER_TOKEN_BOUND = 16


def _leading_line_counts(text: str, enough: int) -> list[int]:
    """Exact token counts of ``text``'s first lines: of every line, or of enough leading
    lines to add up to more than ``enough`` (a cut never reaches past them)."""
    end = text.rfind("\n", 0, _CHARS_PER_TOKEN_BOUND * max(enough, 1))
    if end > 0:
        head = line_token_counts(text[:end])
        if sum(head) > enough:
            return head
    return line_token_counts(text)


def truncate(text: str, limit: int, code: bool) -> str | None:
    """Leading whole blocks (else whole lines) of ``text`` within ``limit`` tokens."""
    if limit <= 0:
        return None
    lines = text.split("\n")
    # Only the lines up to the cut need counting: a block reaching past the counted ones
    # would cost more than the limit anyway, since they already add up to more.
    per_line = _leading_line_counts(text, limit)
    if len(per_line) == len(lines) and sum(per_line) <= limit:
        return text
    marker_budget = count_tokens(f"{GAP} [{len(lines)} more lines]")
    room = limit - marker_budget
    cut = 0
    used = 0
    starts = _iter_block_starts(lines, code)
    start = next(starts)
    for end in itertools.chain(starts, [len(lines)]):
        cost = sum(per_line[start:end])
        if used + cost > room:
            break
        used += cost
        cut = start = end
    if cut == 0:  # the first block alone is too big: fall back to whole lines
        for i, n in enumerate(per_line):
            if used + n > room:
                break
            used += n
            cut = i + 1
    while cut > 0 and not lines[cut - 1].strip():
        cut -= 1
    if cut == 0:
        return None
    marker = f"{GAP} [{len(lines) - cut} more lines]"
    result = "\n".join([*lines[:cut], marker])
    # Counts add up at newlines: the caller prices the result without counting it again.
    remember_count(result, sum(per_line[:cut]) + count_tokens(marker))
    return result


def _units(text: str, code: bool) -> list[str]:
    if code:
        return [line for line in text.split("\n") if line.strip()]
    return [u.strip() for u in _SENTENCE_END.split(text) if u.strip()]


def summarise(text: str, limit: int, query: str, code: bool = False) -> str | None:
    """The units most similar to the query (shared terms), in order, within ``limit``."""
    if limit <= 0:
        return None
    units = _units(text, code)
    if not units:
        return None
    terms = query_terms(query)
    lowered = [u.lower() for u in units]
    scores = [sum(1 for t in terms if t in u) + (0.5 if _HEADING.match(units[i]) else 0.0)
              for i, u in enumerate(lowered)]
    costs = count_tokens_batch(units)
    gap_cost = count_tokens(GAP)
    chosen: set[int] = set()
    used = 0
    for i in sorted(range(len(units)), key=lambda i: (-scores[i], i)):
        extra = costs[i] + 2 * gap_cost  # at most one gap marker on each side
        if used + extra <= limit:
            chosen.add(i)
            used += costs[i] + gap_cost
    if not chosen:
        return None
    out: list[str] = []
    last = -1
    for i in sorted(chosen):
        if i != last + 1:
            out.append(GAP)
        out.append(units[i])
        last = i
    if last != len(units) - 1:
        out.append(GAP)
    result = "\n".join(out)
    while count_tokens(result) > limit and len(out) > 1:  # defensive: gaps never exceed the estimate
        out.pop()
        result = "\n".join(out)
    return result if count_tokens(result) <= limit else None


def compress(text: str, limit: int, path: str | None, query: str) -> str | None:
    """Code outline (truncated if needed); prose is summarised instead."""
    if limit <= 0:
        return None
    if not is_code(path, text):
        return summarise(text, limit, query)
    skeleton = outline(text, path)
    if skeleton is None:
        return truncate(text, limit, code=True)
    if count_tokens(skeleton) <= limit:
        return skeleton
    return truncate(skeleton, limit, code=True)


def fit(text: str, limit: int, strategy: str, path: str | None, query: str) -> tuple[str, str] | None:
    """``(new_text, treatment)`` fitting ``limit`` tokens under ``strategy``, or None (drop)."""
    if strategy == "drop" or limit <= 0:
        return None
    code = is_code(path, text)
    if strategy == "truncate":
        result = truncate(text, limit, code)
        return (result, "truncated") if result is not None else None
    if strategy == "compress":
        result = compress(text, limit, path, query)
        return (result, "compressed") if result is not None else None
    if strategy == "summarise":
        result = summarise(text, limit, query, code)
        return (result, "summarised") if result is not None else None
    raise ValueError(f"unknown overflow strategy {strategy!r}; known: {', '.join(OVERFLOW_STRATEGIES)}")
