"""A cheap, rule-based classifier of a query's *form* (issue 8, query-adaptive weights).

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
"""

from __future__ import annotations

import re
from typing import Final

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
    r"|\b[\w-]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|swift"
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
