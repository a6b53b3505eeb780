"""A question as a grep tool's regular expression (``query_mode: pattern``).

A grep server (mcp-ripgrep's ``search``) takes its query as a regular expression. Sent
whole, a question finds nothing ("how are default values shown" never occurs as such),
and an issue with code in it is not even a valid expression (``default=("a", "b")``:
"regex parse error"). The question's names are what grep can find: an issue's code names,
most used first (``get_help_record|show_default|PosixPath``), or a phrase's words and
identifiers (``default|values|shown|help``), joined as alternatives. Only identifier
characters are kept, so the expression means the same in every regex dialect a grep
tool may use (Rust's, PCRE, JavaScript's, POSIX extended) and matches in linear time
even in a backtracking engine. A one-line query that is already written as an
expression (``def \\w+_help``, ``^class .*Error``) goes as it is; a sentence that only
mentions an escape (``readouterr() converts \\r to \\n since 6.0``) is a question.
"""

from __future__ import annotations

import re

from tributary.engine.localsearch.fts import STOPWORDS
from tributary.engine.localsearch.longquery import is_task_question, read_task

PATTERN_WORDS = 8  # alternatives in one expression: more makes grep's answer a flood
MIN_WORD = 3  # shorter words (``id``, ``py``) match inside almost every line
MAX_RAW = 300  # a query longer than this is never taken for an expression of its own
PROSE_WORDS = 4  # plain words, apart, that make a line a sentence rather than an expression
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
_WHOLE_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What only an expression says: an escape, an alternative, a repeated dot, a group
# option, a count, or an anchor at either end (``x[0]`` is more often indexing).
_REGEX_SYNTAX = re.compile(r"\\[A-Za-z\\.(\[{|]|\||\.[*+?]|\(\?|\{\d{1,3}(?:,\d{0,3})?\}|^\^|\$$")
_META = re.compile(r"[\\^$.|?*+()\[\]{}]")
_PLAIN_WORD = re.compile(r"[A-Za-z]{2,}")


def grep_pattern(query: str) -> str:
    """``query`` as a regular expression for a grep tool (see the module's docstring);
    the query itself when it is one line written as an expression, and escaped when it
    holds no word."""
    if _written_as_expression(query):
        return query
    words = _task_words(query) if is_task_question(query) else _phrase_words(query)
    return "|".join(words) if words else _META.sub(r"\\\g<0>", query)


def _written_as_expression(query: str) -> bool:
    if len(query) > MAX_RAW or "\n" in query.strip() or _REGEX_SYNTAX.search(query.strip()) is None:
        return False
    if sum(_PLAIN_WORD.fullmatch(token) is not None for token in query.split()) >= PROSE_WORDS:
        return False
    try:
        re.compile(query.strip())
    except (re.error, OverflowError, RecursionError):
        return False
    return True


def _task_words(query: str) -> list[str]:
    """An issue's own names (its code names, then the last part of its ``Class.member``
    and dotted names), the ones only code would spell first; its rarest-looking terms
    only when it names nothing."""
    task = read_task(query)
    names = [name for name, _count in task.names]
    names += [dotted.rpartition(".")[2] for dotted in (*task.members, *task.modules)]
    return _picked(names) or _picked(list(task.terms))


def _phrase_words(query: str) -> list[str]:
    return _picked(_IDENTIFIER.findall(query))


def _picked(candidates: list[str]) -> list[str]:
    """Up to ``PATTERN_WORDS`` of ``candidates``: the ones spelled as code
    (``show_default``, ``PosixPath``) when there are any, which grep finds where they
    are defined and used; otherwise the plain words, which match everywhere."""
    words: list[str] = []
    seen: set[str] = set()
    for word in candidates:
        folded = word.lower()
        if (len(word) >= MIN_WORD and folded not in STOPWORDS and folded not in seen
                and _WHOLE_IDENTIFIER.fullmatch(word) is not None):
            seen.add(folded)
            words.append(word)
    coded = [word for word in words if _spelled_as_code(word)]
    return (coded or words)[:PATTERN_WORDS]


def _spelled_as_code(word: str) -> bool:
    """``show_default``, ``PosixPath``, ``setLevel``; not ``main`` or ``__init__``
    (every class has one)."""
    if word.startswith("__") and word.endswith("__"):
        return False
    inner = word.strip("_")
    return "_" in inner or any(c.isupper() for c in inner[1:])
