"""JSONC read (``strip_jsonc``) and one member set in its text, everything else as it was.

Editors' settings files (VS Code's ``mcp.json``, Zed's ``settings.json``) are JSONC:
comments, trailing commas, the user's own layout. Loading and dumping such a file to add
one server loses all of that, so ``set_member`` splices the member into the text: the
file is read once into tokens (strings, comments and scalars skipped whole, so linear in
its length), the object holding the member found, and only its span rewritten, in the
file's own indentation. Written here because the registry's packages that edit JSONC in
place do not fit: jsoncgx is GPL-3.0 (Tributary is MIT, and its bundle ships its
dependencies), and jsonc-edit drives Microsoft's parser in a Node.js process.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

_STRUCTURE = frozenset("{}[]:,")
_INDENT = re.compile(r"^([ \t]+)\S", re.MULTILINE)


class JsoncEditError(ValueError):
    """The text is not an object this edit can place a member in."""


@dataclass(slots=True)
class _Token:
    kind: str  # one of "{}[]:," , "s" (a string), "v" (a number, true, false, null) or "c" (a comment)
    start: int
    end: int  # one past its last character


@dataclass(slots=True)
class _Node:
    start: int
    end: int
    members: list[tuple[str, _Node]] = field(default_factory=list)  # an object's, in order
    is_object: bool = False


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            tokens.append(_Token("s", i, min(j + 1, n)))
            i = j + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            tokens.append(_Token("c", i, n if end < 0 else end))
            i = tokens[-1].end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            tokens.append(_Token("c", i, n if end < 0 else end + 2))
            i = tokens[-1].end
        elif ch in _STRUCTURE:
            tokens.append(_Token(ch, i, i + 1))
            i += 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in _STRUCTURE and text[j] != '"' \
                    and not text.startswith("//", j) and not text.startswith("/*", j):
                j += 1
            tokens.append(_Token("v", i, j))
            i = j
    return tokens


class _Parser:
    """Objects with their members' spans; arrays and scalars as spans only."""

    def __init__(self, text: str, tokens: Sequence[_Token]) -> None:
        self.text, self.tokens, self.at = text, tokens, 0

    def _next(self, *kinds: str) -> _Token:
        if self.at >= len(self.tokens):
            raise JsoncEditError("the text ends inside a value")
        token = self.tokens[self.at]
        if kinds and token.kind not in kinds:
            raise JsoncEditError(f"unexpected {self.text[token.start:token.end]!r} at character {token.start + 1}")
        self.at += 1
        return token

    def _peek(self) -> str | None:
        return self.tokens[self.at].kind if self.at < len(self.tokens) else None

    def value(self) -> _Node:
        first = self._next("{", "[", "s", "v")
        if first.kind in ("s", "v"):
            return _Node(first.start, first.end)
        closing = "}" if first.kind == "{" else "]"
        node = _Node(first.start, first.end, is_object=first.kind == "{")
        while self._peek() != closing:
            if node.is_object:
                key = self._next("s")
                self._next(":")
                node.members.append((json.loads(self.text[key.start:key.end]), self.value()))
            else:
                self.value()
            if self._peek() == ",":
                self._next(",")
            elif self._peek() != closing:
                self._next(closing)  # says what was found instead
        node.end = self._next(closing).end
        return node


def strip_jsonc(text: str) -> str:
    """JSON from JSONC: comments and trailing commas removed (outside strings; a block
    comment's newlines kept, so JSON errors point at the right line)."""
    tokens = _tokens(text)
    closes: list[bool] = []  # per token: the next token that is not a comment closes a list
    closing = False
    for token in reversed(tokens):
        closes.append(closing)
        if token.kind != "c":
            closing = token.kind in "}]"
    closes.reverse()
    out: list[str] = []
    at = 0
    for token, trailing in zip(tokens, closes, strict=True):
        if token.kind == "c":
            out += [text[at : token.start], "\n" * text.count("\n", token.start, token.end)]
            at = token.end
        elif token.kind == "," and trailing:
            out.append(text[at : token.start])
            at = token.end
    return "".join(out) + text[at:]


def set_member(text: str, section: str, name: str, value: Any) -> str:
    """``text`` with ``value`` as ``[section][name]`` of its top-level object: replacing
    that member's value, added to ``section`` (made if missing) after its last member,
    comments, trailing commas and layout elsewhere kept."""
    if not text.strip():
        return json.dumps({section: {name: value}}, indent=2, ensure_ascii=False) + "\n"
    tokens = [token for token in _tokens(text) if token.kind != "c"]
    parser = _Parser(text, tokens)
    root = parser.value()
    if not root.is_object:
        raise JsoncEditError("the file is not a JSON object")
    unit = _indent_unit(text)
    found = dict(root.members).get(section)
    if found is None:
        return _added(text, tokens, root, section, {name: value}, 1, unit)
    if not found.is_object:
        raise JsoncEditError(f"'{section}' is not an object")
    current = dict(found.members).get(name)
    if current is None:
        return _added(text, tokens, found, name, value, 2, unit)
    return text[: current.start] + _dumped(value, 2, unit) + text[current.end :]


def _added(text: str, tokens: Sequence[_Token], into: _Node, key: str, value: Any, depth: int, unit: str) -> str:
    """``text`` with ``"key": value`` as the last member of the object ``into`` (at
    ``depth``): a comma after the last member unless one is there, the new member on its
    own line, and the closing brace on the next."""
    close = into.end - 1
    comma = ""
    if into.members:
        last_end = into.members[-1][1].end
        after = next((t for t in tokens if t.start >= last_end), None)
        if after is None or after.kind != ",":
            comma = ","
    else:
        last_end = into.start + 1
    body = text[last_end:close].rstrip()  # comments after the last member stay before the new one
    member = f"\n{unit * depth}{json.dumps(key, ensure_ascii=False)}: {_dumped(value, depth, unit)}"
    return text[:last_end] + comma + body + member + "\n" + unit * (depth - 1) + text[close:]


def _dumped(value: Any, depth: int, unit: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + unit * depth)


def _indent_unit(text: str) -> str:
    """The file's own indentation step: the first indented line's, else two spaces."""
    found = _INDENT.search(text)
    return found.group(1) if found else "  "
