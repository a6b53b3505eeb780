"""Compress large code to its outline: signatures and docstrings, bodies elided.

Python goes through tree-sitter (the grammar wheel works offline): decorators, the full
``def``/``class`` header, the docstring, then ``...`` in place of the body; methods of
classes are kept, nested functions are not. Other languages, and Python that does not
parse into any definition (a chunk cut mid-function), use a regex outline: lines that
open a function/type declaration plus the comment block just above each.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tree_sitter import Language, Node, Parser

from .text import language_of

_DEFINITIONS = ("function_definition", "class_definition")
_SIGNATURE = re.compile(
    r"^\s*(?:export\s+|default\s+|pub(?:\(\w+\))?\s+|public\s+|private\s+|protected\s+|internal\s+"
    r"|static\s+|final\s+|abstract\s+|async\s+|unsafe\s+|override\s+|virtual\s+)*"
    r"(?:def|class|function\*?|func|fn|interface|struct|enum|trait|impl|type|module|object|record)\b"
    r"|^\s*(?:public|private|protected)\s+[\w<>\[\],\s]+\s+\w+\s*\("
    r"|^\s*(?:const|let|var)\s+\w+\s*=\s*(?:async\s*)?(?:\([^)]*\)|\w+)\s*=>"
)
_COMMENT = re.compile(r"^\s*(?://|#(?!include)|/\*|\*|\"\"\"|''')")
_DECORATOR = re.compile(r"^\s*@")


@lru_cache(maxsize=1)
def _python_parser() -> Parser:
    import tree_sitter_python

    return Parser(Language(tree_sitter_python.language()))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _docstring(body: Node) -> Node | None:
    first = body.named_children[0] if body.named_children else None
    is_doc = (
        first is not None
        and first.type == "expression_statement"
        and bool(first.named_children)
        and first.named_children[0].type == "string"
    )
    return first if is_doc else None


def _emit_definition(node: Node, lines: list[str], out: list[tuple[int, str]]) -> None:
    definition = node
    if node.type == "decorated_definition":
        inner = node.child_by_field_name("definition")
        if inner is None:
            return
        definition = inner
    body = definition.child_by_field_name("body")
    if body is None:
        return
    first_row, body_row = node.start_point.row, body.start_point.row
    out.extend((row, lines[row]) for row in range(first_row, body_row))
    indent = _indent(lines[body_row])
    if body_row == definition.start_point.row:  # one-liner: `def f(): pass`
        # tree-sitter columns count bytes, not characters
        head = lines[body_row].encode("utf-8", "surrogatepass")[: body.start_point.column]
        out.append((body_row, head.decode("utf-8", "ignore").rstrip()))
        indent += "    "
    doc = _docstring(body)
    if doc is not None and doc.start_point.row > definition.start_point.row:
        for row in range(doc.start_point.row, doc.end_point.row + 1):
            out.append((row, lines[row]))
    if definition.type == "class_definition":
        before = len(out)
        _visit(body, lines, out)
        if len(out) == before:
            out.append((body.end_point.row, indent + "..."))
    else:
        out.append((body.end_point.row, indent + "..."))


def _visit(node: Node, lines: list[str], out: list[tuple[int, str]]) -> None:
    for child in node.children:
        if child.type in _DEFINITIONS or child.type == "decorated_definition":
            _emit_definition(child, lines, out)
        elif child.type not in ("block", "string", "comment"):
            _visit(child, lines, out)


def _python_outline(text: str) -> str | None:
    tree = _python_parser().parse(text.encode("utf-8", "surrogatepass"))
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    module_doc = _docstring(tree.root_node)
    if module_doc is not None:
        out.extend((r, lines[r]) for r in range(module_doc.start_point.row, module_doc.end_point.row + 1))
    before = len(out)
    _visit(tree.root_node, lines, out)
    if len(out) == before:
        return None
    return "\n".join(line for _, line in sorted(out, key=lambda item: item[0]))


def _regex_outline(text: str) -> str | None:
    lines = text.split("\n")
    keep: set[int] = set()
    for i, line in enumerate(lines):
        if _SIGNATURE.match(line):
            keep.add(i)
            j = i - 1
            while j >= 0 and (_COMMENT.match(lines[j]) or _DECORATOR.match(lines[j])):
                keep.add(j)
                j -= 1
    if not keep:
        return None
    out: list[str] = []
    last = -2
    for i in sorted(keep):
        if i != last + 1 and out:
            out.append("...")
        out.append(lines[i])
        last = i
    if last < len(lines) - 1:
        out.append("...")
    return "\n".join(out)


def outline(text: str, path: str | None) -> str | None:
    """Signatures + docstrings of ``text``, or None when no definition is found."""
    if language_of(path) in (None, "python"):
        result = _python_outline(text)
        if result is not None:
            return result
    return _regex_outline(text)
