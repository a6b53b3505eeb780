"""A cheap, rule-based classifier of a query's *form*, for query-adaptive weights.

Three classes, chosen because different sources answer them best:

- ``symbol`` — a lookup of a specific thing in code: identifiers (``snake_case``,
  ``CamelCase``, ``dotted.names``, ``call()``, ``Class::member``), file paths
  (``src/app.py``), text in backticks, or "where is X defined"-style phrasing.
  The files server (keyword + symbol index) answers these best.
- ``howto`` — how-to and historical questions: question words (how, why, when did …)
  and bug vocabulary (fix, bug, error, crash …). Task history answers these best.
- ``conceptual`` — everything else ("authentication flow", "caching strategy").

Precedence: an explicit lookup phrase wins, then how-to/bug words, then the presence of
identifiers, then the default. So "fix the crash in parse_args" is ``howto`` (a task
about a symbol) and "parse_args" alone is ``symbol``. Pure function, no I/O.

``asks_history`` is narrower than ``howto``: a question about the past itself ("when
did …", "who changed …", "which commit …"), the one kind of query answered by commits
rather than by code.

Also the names a query asks about (``named_identifiers``) and, narrower, the names a
*lookup* asks for (``lookup_names``: a query of nothing but names and lookup words),
which the files server and fusion use to put definitions first.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from tributary.engine.localsearch.longquery import is_task_question

SYMBOL: Final = "symbol"
HOWTO: Final = "howto"
CONCEPTUAL: Final = "conceptual"
QUERY_CLASSES: Final = (SYMBOL, HOWTO, CONCEPTUAL)

_MAX_CHARS = 2000  # classification reads only the start of a (possibly pasted) query

_LOOKUP = re.compile(
    r"\bwhere\s+(?:is|are)\b.{0,80}?\b(?:defined|declared|implemented|located)\b"
    r"|\b(?:definition|declaration|signature|implementation)\s+of\b"
    r"|\b(?:find|show|go\s+to|goto|jump\s+to)\s+(?:the\s+)?(?:function|method|class|symbol"
    r"|file|def|struct|enum|interface|type|variable|constant)\b",
    re.IGNORECASE,
)
_HOWTO = re.compile(
    r"^\s*(?:how|why|when|what\s+(?:caused|causes|broke|changed|happened))\b"
    r"|\bhow\s+(?:do|does|did|can|could|should|to|is|are)\b"
    r"|\bwhy\s+(?:do|does|did|is|are|was|were|can't|cannot|doesn't|isn't)\b"
    r"|\bwhen\s+(?:did|was|were)\b"
    r"|\b(?:fix(?:es|ed|ing)?|bugs?|error|errors|exception|traceback|crash(?:es|ed)?"
    r"|fail(?:s|ed|ing|ure)?|broken|regression|workaround|deprecat\w*|migrat\w*"
    r"|history|changelog|who\s+changed)\b",
    re.IGNORECASE,
)
# Identifier shapes. Each needs something a plain English word never has.
_BACKTICK = re.compile(r"`[^`\n]+`")
_PATH = re.compile(
    r"(?:^|[\s(\"'])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+"  # a/b, ./a/b.py, src/pkg/
    r"|(?<![\w-])-*\w[\w-]*\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|swift"
    r"|md|rst|toml|yaml|yml|json|cfg|ini|sql|sh)\b",
    re.IGNORECASE,
)
_SNAKE = re.compile(r"\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b|\b_{1,2}[A-Za-z]\w*")
_CAMEL = re.compile(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
_CALL = re.compile(r"\b[A-Za-z_]\w*\(\)|::|->")
_SENTENCE_DOT = re.compile(r"\b(?:e\.g|i\.e|etc|vs)\b\.?", re.IGNORECASE)


def _has_identifier(text: str) -> bool:
    if _BACKTICK.search(text) or _PATH.search(text):
        return True
    if _SNAKE.search(text) or _CAMEL.search(text) or _CALL.search(text):
        return True
    # "dotted.names" but not a sentence's full stop ("it. Then") or an abbreviation.
    return bool(_DOTTED.search(_SENTENCE_DOT.sub(" ", text)))


def classify_query(query: str) -> str:
    """``symbol``, ``howto`` or ``conceptual`` (see the module docstring)."""
    text = query[:_MAX_CHARS]
    if _LOOKUP.search(text):
        return SYMBOL
    if _HOWTO.search(text):
        return HOWTO
    if _has_identifier(text):
        return SYMBOL
    return CONCEPTUAL


# ----------------------------------------------------------------- names a query asks for

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Tried once per run of name characters (the lookbehind), not once per character, so
# it stays linear in the query's length; the group skips the run's leading digits.
_QUALIFIED = re.compile(r"(?<![A-Za-z0-9_])[0-9]*([A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|#)[A-Za-z_][A-Za-z0-9_]*)+)")
_DEFINER = re.compile(
    r"\b(?:def|class|function|func|fn|struct|enum|trait|interface|type|module)\s+([A-Za-z_][A-Za-z0-9_]*)"
)
_DEFINER_ALONE = re.compile(  # "class Session", "def parse_args()": a definition asked for by its keyword
    r"\s*(?:def|class|function|func|fn|struct|enum|trait|interface|type|module)\s+[A-Za-z_][A-Za-z0-9_]*(?:\(\))?\s*"
)
_MIN_NAME = 3


def _shaped(word: str) -> bool:
    """Whether a word has a shape plain English never has: an inner underscore, a case
    change inside it (``getUser``, ``FixtureDef``) or letters and digits together."""
    inner = word.strip("_")
    if "_" in inner:
        return True
    if any(c.isupper() for c in inner[1:]) and any(c.islower() for c in inner):
        return True
    return any(c.isdigit() for c in inner) and any(c.isalpha() for c in inner)


@lru_cache(maxsize=1024)
def named_identifiers(query: str) -> frozenset[str]:
    """The code names a query asks about, case-folded: identifier-shaped words
    (``parse_args``, ``FixtureDef``, ``CallSpec2``), words in backticks or called
    (``setup()``), the member of a qualified name (``Config.getini`` -> ``getini`` too),
    the name after ``def``/``class``/…, and a query that is one word alone. Dunder names
    (``__init__``: defined everywhere) and names shorter than 3 characters are left out.
    Empty for prose (``how are fixtures cached``).
    """
    text = query[:_MAX_CHARS]
    names: set[str] = set()
    words = _NAME.findall(text)
    if len(words) == 1 and text.strip().strip("`()").strip() == words[0]:
        names.add(words[0])
    for word in words:
        if _shaped(word):
            names.add(word)
    for quoted in _BACKTICK.findall(text):
        names.update(_NAME.findall(quoted)[-1:])
    for qualified in _QUALIFIED.findall(text):
        names.add(_NAME.findall(qualified)[-1])
    for called in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\(\)", text):
        names.add(called)
    names.update(_DEFINER.findall(text))
    return frozenset(
        name.casefold() for name in names
        if len(name) >= _MIN_NAME and not (name.startswith("__") and name.endswith("__"))
    )


# Words a lookup may hold besides the names it looks up ("where is X defined", "class X").
_LOOKUP_WORDS = frozenset({
    "a", "an", "the", "of", "in", "is", "are", "where", "find", "show", "go", "to", "goto",
    "jump", "def", "class", "function", "func", "fn", "method", "struct", "enum", "trait",
    "interface", "type", "module", "symbol", "variable", "constant", "defined", "declared",
    "implemented", "located", "definition", "declaration", "implementation", "signature",
})
_MAX_LOOKUP_WORDS = 8
_MAX_PHRASE_NAMES = 2  # "where is the retry policy defined"; more reads as a sentence


@lru_cache(maxsize=1024)
def lookup_names(query: str) -> frozenset[str]:
    """The names a lookup asks for, case-folded; empty for any other query.

    A lookup is nothing but names and lookup words: ``FixtureDef``, ``Config.getini``,
    ``class FixtureDef``, ``where is getfixturemarker defined`` (in a lookup phrase the
    other words, at most two, are the names, whatever their shape: a commit title such
    as "docs: correct grammar definition of lexer" is a sentence). A question that
    mentions a name (``Don't delete FixtureDef.cached_result``) is about something else
    than where the name is defined: lifting definitions for such queries lowered the
    pytest benchmark's MRR (docs/benchmarks.md, "Lookups")."""
    text = query[:_MAX_CHARS]
    words = _NAME.findall(text)
    if not words or len(words) > _MAX_LOOKUP_WORDS:
        return frozenset()
    names = set(named_identifiers(text))
    qualifiers = {part.casefold() for name in _QUALIFIED.findall(text) for part in _NAME.findall(name)}
    others = [
        folded for word in words
        if (folded := word.casefold()) not in names and folded not in _LOOKUP_WORDS and folded not in qualifiers
    ]
    if others:
        if len(others) > _MAX_PHRASE_NAMES or not (_LOOKUP.search(text) or _DEFINER_ALONE.fullmatch(text)):
            return frozenset()
        names.update(w for w in others if len(w) >= _MIN_NAME and not (w.startswith("__") and w.endswith("__")))
    return frozenset(names)


_QUESTION = re.compile(
    r"^\s*(?:how|what|why|where|when|which|who)\b|\?\s*$",
    re.IGNORECASE,
)


@lru_cache(maxsize=1024)
def asked_qualified_names(query: str) -> frozenset[str]:
    """The qualified names a question writes, as written: ``res.redirect``,
    ``Config.getini``, ``Vec::push``. A question about one ("how does res.redirect build
    the Location header") is about that definition, whatever else it asks; a statement
    that mentions one is often not (the commit "Add test for Cache.mkdir" changed a
    test). A question starts with a question word or ends with a question mark ("Do
    not collect …" is a commit's imperative). The files server looks each up as a
    whole name, so a file name (``utils.js``) or an abbreviation (``e.g``) that no
    symbol spells finds nothing."""
    text = query[:_MAX_CHARS]
    return frozenset(_QUALIFIED.findall(text)) if _QUESTION.search(text) else frozenset()


_MAX_JOINED_WORDS = 4


@lru_cache(maxsize=1024)
def joined_names(query: str) -> frozenset[str]:
    """The names a short phrase of plain words may spell, case-folded: "echo via pager"
    may be ``echo_via_pager``, "help formatter" ``HelpFormatter``. A person types a
    function's name as the words it is made of; the definition is lifted only where the
    index has one (the files server's symbol search, the engine's ``defines`` part), so
    a phrase that spells no name changes nothing. Empty unless the query is two to
    four words of letters and digits and nothing else."""
    words = query.split()
    if not 2 <= len(words) <= _MAX_JOINED_WORDS or not all(w.isascii() and w.isalnum() for w in words):
        return frozenset()
    folded = [word.casefold() for word in words]
    return frozenset({"_".join(folded), "".join(folded)})


# ----------------------------------------------------------------- questions about the past

_HISTORY = re.compile(
    r"\bwhen\s+(?:did|was|were|has|have)\b"
    r"|\bwho\s+(?:changed|wrote|added|removed|introduced|broke|fixed|touched|made)\b"
    r"|\bwhat\s+(?:has\s+|was\s+|were\s+)?(?:changed|broke|happened)\b"
    r"|\b(?:which|what)\s+(?:commit|commits|change|changes|pr|pull\s+request)\s+"
    r"(?:that|which|where|did|to|for|about|in|introduced|added|removed|fixed|broke|changed)\b"
    r"|\b(?:history|changelog|blame|git\s+log)\s+(?:of|for)\b"
    r"|\b(?:recent|latest|last|past)\s+(?:commits?|changes)\b"
    r"|\bwhy\s+(?:was|were|did\s+\w+)\s.{0,80}?\b(?:changed|added|removed|introduced|"
    r"renamed|deprecated|reverted)\b"
    # "why did the cache plugin change": the verb after "did" is in its plain form
    r"|\bwhy\s+did\s.{0,80}?\b(?:change|add|remove|introduce|rename|deprecate|revert|drop)\b",
    re.IGNORECASE,
)


def asks_history(query: str) -> bool:
    """Whether ``query`` asks about the project's past (when, who, which commit), so the
    answer is commits; for every other query a file is represented by its code. An
    issue-length task never does, whatever its prose says ("What happened: ...")."""
    return not is_task_question(query) and bool(_HISTORY.search(query[:_MAX_CHARS]))
