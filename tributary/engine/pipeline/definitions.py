"""Definitions first: a hit that defines the name a lookup asks for is lifted to the top.

A developer who types a name (``FixtureDef``, ``getfixturemarker``, ``where is
parse_args defined``) wants where it is defined. Rank fusion alone buries it: every
file that two sources both return (the task history names many files for any word)
outscores a definition only one source found: on the names of
``bench/identifier_queries.py`` the files server alone put the definition first far
more often than the fused ranking did (docs/benchmarks.md, "Lookups").

So ``fuse`` adds a ``defines`` part to each hit that defines a name the lookup asks for
(``tributary.engine.query.kinds.lookup_names``, compared case-folded): ``def``, ``class``,
``function``, ``fn``, ``func``, ``struct``, …, a JS/TS ``const f = (…)`` or ``obj.f =
function``, or a Java/C# method after its access modifier, in the hit's first 4,000
characters. The part is the weight times the best base score, so it is on every
strategy's scale, as the hints boost is; half that when the name is not the hit's first
definition (a helper nested in a test). Names compare case-folded, but where some hit
defines the name spelled as the question spells it, the others keep half:
``Serialize`` asks for the trait, not the hundred ``fn serialize`` methods of its
impls. Nothing is added for other queries: a question that mentions a name is not
asking where it is defined.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tributary.engine.model import Hit

DEFAULT_DEFINITION_WEIGHT = 1.0
LATER_DEFINITION = 0.5  # the name is defined in the hit, but not first
OTHER_CASE = 0.5  # defined only in another case than the question's, when some hit has its case
_SCAN_CHARS = 4000

_MODIFIERS = (
    r"(?:(?:export|default|pub(?:\([^)\n]*\))?|async|public|private|protected|internal|static|final"
    r"|abstract|override|open|sealed|data|inline|unsafe|extern|declare)\s+)*"
)
_DEFINITION = re.compile(
    r"^[ \t]*" + _MODIFIERS + r"(?:"
    r"(?:def|class|function\*?|fn|fun|struct|enum|trait|interface|module|mod|type|object|record)\s+"
    r"|func\s+(?:\([^)\n]*\)\s*)?"  # Go, with or without a receiver
    r"|(?:const|let|var)\s+(?=[A-Za-z_$][\w$]*\s*=\s*(?:async\s*)?(?:function\b|\([^)\n]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>))"
    r")([A-Za-z_$][\w$]*)"
    # Java/C#-style methods, after an access modifier: ``public String greet(``
    r"|^[ \t]*(?:public|private|protected|internal)\s+"
    r"(?:(?:static|final|virtual|override|abstract|synchronized|async)\s+)*"
    r"[\w.$]+(?:<[^>\n]*>)?(?:\[\])*\s+([A-Za-z_$][\w$]*)\s*\("
    # JavaScript's functions assigned to a member: ``res.send = function send(body) {``
    r"|^[ \t]*(?:[A-Za-z_$][\w$]*\.)+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?function\b",
    re.M,
)


_WORD = re.compile(r"[A-Za-z_$][\w$]*")


def _name(match: re.Match[str]) -> str:
    return match.group(1) or match.group(2) or match.group(3)


def first_definition(text: str) -> str | None:
    """The name of the first function, class or type ``text`` defines, if any."""
    match = _DEFINITION.search(text, 0, _SCAN_CHARS)
    return _name(match) if match else None


def _defined(text: str, names: frozenset[str]) -> tuple[float, str | None]:
    signal = 1.0
    for match in _DEFINITION.finditer(text, 0, _SCAN_CHARS):
        name = _name(match)
        if name.casefold() in names:
            return signal, name
        signal = LATER_DEFINITION
    return 0.0, None


def definition_signal(text: str, names: frozenset[str]) -> float:
    """1.0 if the first definition in ``text`` is one of ``names`` (case-folded), 0.5
    if a later one is (a helper nested in a test, a method in a class's chunk), else 0."""
    return _defined(text, names)[0]


def apply_definitions(hits: Sequence[Hit], names: frozenset[str], weight: float, query: str = "") -> None:
    """Add the ``defines`` part to the hits defining one of ``names`` (case-folded);
    when one defines it as ``query`` spells it, those defining it in another case keep
    ``OTHER_CASE`` of theirs."""
    if not names or weight <= 0.0 or not hits:
        return
    scale = max((h.score for h in hits), default=0.0) or 1.0
    spelled = frozenset(_WORD.findall(query))
    found = [(hit, *_defined(hit.content, names)) for hit in hits]
    exact = any(signal > 0.0 and name in spelled for _, signal, name in found)
    for hit, signal, name in found:
        if signal <= 0.0:
            continue
        if exact and name not in spelled:
            signal *= OTHER_CASE
        hit.parts.add("defines", signal * weight * scale, raw=signal)
        hit.score = hit.parts.total
