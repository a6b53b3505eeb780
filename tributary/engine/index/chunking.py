"""Split a file into chunks: tree-sitter units for code, sliding windows for the rest.

Code in a parsed language yields one chunk per function, method and class (the
class chunk is its header, docstring and attributes up to the first method), with
the symbol's name, kind, signature, docstring and line range; the lines no unit
covers (imports, module constants, scripts) become ``block`` windows so every line
is searchable. Other text (Markdown, rst, config, unparsed languages) becomes
``text``/``block`` windows cut at blank lines.

Each chunk carries ``embed_text``: what the embedding model should see. The model
reads only its first ``max_seq_length`` tokens (128 by default), so we put what
matters first — path, kind, symbol, signature, docstring — then the head of the body.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from tributary.engine.index.languages import PARSED_LANGUAGES, is_code

CHUNKER_VERSION = "8"  # bump when chunk boundaries, texts or embed texts change: files re-chunk
WINDOW_LINES = 40  # code windows; BM25 sees all of it, the model its first 128 tokens
TEXT_WINDOW_CHARS = 2000  # prose windows: the model reads the head, BM25 all of it
TEXT_WINDOW_MAX_LINES = 40
MAX_UNIT_LINES = 200  # longer units are split into parts of WINDOW_LINES
MIN_GAP_LINES = 2  # uncovered runs with fewer non-blank lines are not worth a chunk
MIN_VALUE_LINES = 3  # a JavaScript definition by a call (``memo(() => ...)``) this long is a unit
SIGNATURE_CHARS = 240
DOCSTRING_CHARS = 400
EMBED_CHARS = 1200  # beyond what 128 tokens can hold; avoids tokenising huge bodies
MAX_SIGNATURE_OFFSET = 400  # decorators may come first
MAX_DOCSTRING_OFFSET = 8  # the opening quotes or comment marker

KINDS = ("function", "method", "class", "block", "text")


@dataclass(slots=True)
class Chunk:
    path: str
    language: str
    kind: str
    start_line: int  # 1-based, inclusive
    end_line: int
    content: str
    symbol: str | None = None
    signature: str | None = None
    docstring: str | None = None
    embed_text: str = ""
    _hash: str | None = field(default=None, repr=False)

    @property
    def embed_hash(self) -> str:
        """Identifies the vector: equal embed texts share one embedding."""
        if self._hash is None:
            self._hash = hashlib.blake2b(
                self.embed_text.encode("utf-8"), digest_size=16
            ).hexdigest()
        return self._hash


# --------------------------------------------------------------------------- parsers


# language -> (the grammar wheel's module, its function returning the language pointer).
# One small wheel per grammar: each works offline and is kept by the grammar's authors.
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "swift": ("tree_sitter_swift", "language"),
    "scala": ("tree_sitter_scala", "language"),
    "elixir": ("tree_sitter_elixir", "language"),
    "lua": ("tree_sitter_lua", "language"),
    "shell": ("tree_sitter_bash", "language"),
}


def grammar_modules() -> list[str]:
    """The grammar wheels' modules, imported by name when a language is first parsed:
    a frozen bundle must be told to include them (``packaging/build.sh``)."""
    return sorted({module for module, _ in _GRAMMARS.values()})


@cache
def _parser(language: str) -> Any:
    import importlib

    import tree_sitter

    if language not in _GRAMMARS:
        raise ValueError(f"no grammar for {language}")
    module_name, function = _GRAMMARS[language]
    grammar = getattr(importlib.import_module(module_name), function)()
    return tree_sitter.Parser(tree_sitter.Language(grammar))


@dataclass(frozen=True, slots=True)
class _Spec:
    functions: frozenset[str]  # function-like nodes (methods when inside a class)
    classes: frozenset[str]  # class-like nodes whose body holds methods
    methods: frozenset[str] = frozenset()  # always methods
    wrappers: frozenset[str] = frozenset()  # decorated/export nodes around a unit
    comments: frozenset[str] = frozenset({"comment"})


_JS_CLASSES = frozenset({"class_declaration", "class", "abstract_class_declaration"})
_SPECS: dict[str, _Spec] = {
    "python": _Spec(
        functions=frozenset({"function_definition"}),
        classes=frozenset({"class_definition"}),
        wrappers=frozenset({"decorated_definition"}),
    ),
    "javascript": _Spec(
        functions=frozenset({"function_declaration", "generator_function_declaration"}),
        classes=_JS_CLASSES,
        methods=frozenset({"method_definition"}),
        wrappers=frozenset({"export_statement"}),
    ),
    "typescript": _Spec(
        functions=frozenset({"function_declaration", "generator_function_declaration"}),
        classes=_JS_CLASSES | {"interface_declaration", "enum_declaration"},
        methods=frozenset({"method_definition"}),
        wrappers=frozenset({"export_statement"}),
    ),
    "go": _Spec(
        functions=frozenset({"function_declaration"}),
        classes=frozenset({"type_declaration"}),
        methods=frozenset({"method_declaration"}),
    ),
    "rust": _Spec(
        functions=frozenset({"function_item"}),
        classes=frozenset({"struct_item", "enum_item", "trait_item", "impl_item", "union_item"}),
        comments=frozenset({"line_comment", "block_comment"}),
    ),
    "java": _Spec(
        functions=frozenset(),
        classes=frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
            }
        ),
        methods=frozenset({"method_declaration", "constructor_declaration"}),
        comments=frozenset({"line_comment", "block_comment"}),
    ),
}
_C_COMMENTS = frozenset({"comment"})
_SPECS.update(
    {
        "kotlin": _Spec(
            functions=frozenset({"function_declaration"}),
            classes=frozenset({"class_declaration", "object_declaration"}),
            comments=frozenset({"line_comment", "block_comment"}),
        ),
        "c": _Spec(
            functions=frozenset({"function_definition"}),
            classes=frozenset({"struct_specifier", "union_specifier", "enum_specifier"}),
        ),
        "cpp": _Spec(
            functions=frozenset({"function_definition"}),
            classes=frozenset(
                {"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}
            ),
            wrappers=frozenset({"template_declaration"}),
        ),
        "csharp": _Spec(
            functions=frozenset({"local_function_statement"}),
            classes=frozenset(
                {
                    "class_declaration",
                    "interface_declaration",
                    "struct_declaration",
                    "record_declaration",
                    "enum_declaration",
                }
            ),
            methods=frozenset(
                {"method_declaration", "constructor_declaration", "operator_declaration"}
            ),
        ),
        "ruby": _Spec(
            functions=frozenset({"method", "singleton_method"}),
            classes=frozenset({"class", "module", "singleton_class"}),
        ),
        "php": _Spec(
            functions=frozenset({"function_definition"}),
            classes=frozenset(
                {
                    "class_declaration",
                    "interface_declaration",
                    "trait_declaration",
                    "enum_declaration",
                }
            ),
            methods=frozenset({"method_declaration"}),
        ),
        "swift": _Spec(
            functions=frozenset({"function_declaration", "init_declaration"}),
            classes=frozenset({"class_declaration", "protocol_declaration"}),
            methods=frozenset({"protocol_function_declaration"}),
            comments=frozenset({"comment", "multiline_comment"}),
        ),
        "scala": _Spec(
            functions=frozenset({"function_definition", "function_declaration"}),
            classes=frozenset({"class_definition", "object_definition", "trait_definition"}),
            comments=frozenset({"comment", "block_comment"}),
        ),
        "lua": _Spec(functions=frozenset({"function_declaration"}), classes=frozenset()),
        "shell": _Spec(functions=frozenset({"function_definition"}), classes=frozenset()),
        # Elixir's definitions are macro calls (``def``, ``defmodule``): see _elixir_unit.
        "elixir": _Spec(functions=frozenset(), classes=frozenset()),
    }
)
_SPECS["tsx"] = _SPECS["typescript"]
_C_DECLARATORS = frozenset(
    {"function_declarator", "pointer_declarator", "reference_declarator", "parenthesized_declarator"}
)
_ELIXIR_MODULES = frozenset({"defmodule", "defprotocol", "defimpl"})
_ELIXIR_FUNCTIONS = frozenset(
    {"def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate"}
)
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_JS_GRAMMARS = frozenset({"javascript", "typescript", "tsx"})
_JS_WRAPPED_VALUES = frozenset(
    {"as_expression", "satisfies_expression", "parenthesized_expression", "non_null_expression"}
)


def _text(node: Any, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _symbol_name(node: Any, language: str, source: bytes) -> str | None:
    if language == "rust" and node.type == "impl_item":
        target = node.child_by_field_name("type")
        trait = node.child_by_field_name("trait")
        if target is not None:
            name = _text(target, source)
            return f"{name} ({_text(trait, source)})" if trait is not None else name
    if language == "go" and node.type == "type_declaration":
        for child in node.named_children:
            if child.type in ("type_spec", "type_alias"):
                name_node = child.child_by_field_name("name")
                if name_node is not None:
                    return _text(name_node, source)
        return None
    name_node = node.child_by_field_name("name")
    if name_node is None and language in ("c", "cpp"):
        name_node = _c_declared_name(node)
    if name_node is None:
        return None
    name = _text(name_node, source)
    if language == "go" and node.type == "method_declaration":
        receiver = node.child_by_field_name("receiver")
        if receiver is not None:
            kind = re.findall(r"[A-Za-z_]\w*", _text(receiver, source))
            if kind:
                return f"{kind[-1]}.{name}"
    return name


def _c_declared_name(node: Any) -> Any:
    """The name inside a C/C++ function's declarator chain (``*f(...)``, ``A::m(...)``)."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type in _C_DECLARATORS:
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def _elixir_unit(node: Any, source: bytes) -> tuple[str, str | None, Any] | None:
    """``defmodule A do … end`` → ("class", "A", its do-block); ``def f(x)`` → ("function",
    "f", None); None for any other call."""
    target = node.child_by_field_name("target")
    if target is None or target.type != "identifier":
        return None
    keyword = _text(target, source)
    arguments = next((c for c in node.named_children if c.type == "arguments"), None)
    first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    if keyword in _ELIXIR_MODULES:
        block = next((c for c in node.named_children if c.type == "do_block"), None)
        return "class", _text(first, source) if first is not None else None, block
    if keyword in _ELIXIR_FUNCTIONS:
        head = first
        while head is not None and head.type == "binary_operator":  # ``f(x) when guard``
            head = head.child_by_field_name("left")
        if head is not None and head.type == "call":
            head = head.child_by_field_name("target")
        return "function", _text(head, source) if head is not None else None, None
    return None


def _signature(node: Any, source: bytes) -> str:
    return _head(node, node.child_by_field_name("body"), source)


def _python_docstring(node: Any, source: bytes) -> str | None:
    body = node.child_by_field_name("body")
    if body is None or not body.named_children:
        return None
    first = body.named_children[0]
    if first.type == "expression_statement" and first.named_children:
        value = first.named_children[0]
        if value.type == "string":
            return _clean_doc(_text(value, source))
    return None


# Nodes between a doc comment and what it documents: Rust's ``#[derive(…)]``, a Kotlin
# annotation the grammar reads as an expression of its own.
_ATTRIBUTES = frozenset({"attribute_item", "annotation", "annotated_expression"})
# Comments about the enclosing module, not the next item: Rust's ``//!`` and ``/*!``.
_INNER_DOC = ("//!", "/*!", "#!")


def _leading(outer: Any, spec: _Spec, source: bytes) -> list[Any]:
    """The comments and attributes right above ``outer`` (no blank line between, or one
    below a ``/** ... */`` doc comment, as much JavaScript is written), top first; a run
    with no comment in it is none."""
    run: list[Any] = []
    node = outer.prev_named_sibling
    row = outer.start_point[0]
    if node is not None and node.end_point[0] == row - 2 and _text(node, source).startswith("/**"):
        row -= 1
    while node is not None and node.end_point[0] >= row - 1:
        if node.type in spec.comments:
            if _text(node, source).startswith(_INNER_DOC):
                break
        elif node.type not in _ATTRIBUTES:
            break
        run.insert(0, node)
        row = node.start_point[0]
        node = node.prev_named_sibling
    while run and run[0].type not in spec.comments:
        run.pop(0)
    return run


def _above(outer: Any, spec: _Spec, source: bytes) -> tuple[str | None, int]:
    """The doc comment right above ``outer``, cleaned, and the row where it (with any
    attributes) begins, ``outer``'s own row when there is none: a definition's chunk
    starts with its doc comment, not after it."""
    run = _leading(outer, spec, source)
    lines = [_text(node, source) for node in run if node.type in spec.comments]
    first = run[0].start_point[0] if run else outer.start_point[0]
    return (_clean_doc("\n".join(lines)) if lines else None), int(first)


def _clean_doc(raw: str) -> str | None:
    text = re.sub(r"^[rbuRBU]*('''|\"\"\"|'|\")|('''|\"\"\"|'|\")$", "", raw.strip())
    text = re.sub(r"(?m)\s*\*/\s*$", "", text)
    text = re.sub(r"(?m)^\s*(///?|/\*\*?|\*|#|--)\s?", "", text)
    text = " ".join(text.split())
    return text[:DOCSTRING_CHARS] or None


@dataclass(slots=True)
class _Unit:
    kind: str
    symbol: str | None
    start: int  # 0-based row of the outer node (decorators, export)
    end: int  # 0-based row, inclusive
    signature: str
    docstring: str | None
    first: int  # 0-based row of the doc comment above it, else ``start``


def _variable_function(node: Any, source: bytes) -> tuple[str, Any] | None:
    """``const name = (...) => {...}`` and friends: a named function in a declaration."""
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(declarators) != 1:
        return None
    value = declarators[0].child_by_field_name("value")
    name = declarators[0].child_by_field_name("name")
    if value is None or name is None or value.type not in _FUNCTION_VALUES:
        return None
    return _text(name, source), value


def _first_function(node: Any) -> Any:
    """The first function value among a call's (or ``new``'s) arguments, else ``None``."""
    arguments = node.child_by_field_name("arguments")
    if node.type not in ("call_expression", "new_expression") or arguments is None:
        return None
    return next((arg for arg in arguments.named_children if arg.type in _FUNCTION_VALUES), None)


def _unwrapped(value: Any) -> Any:
    """``value`` without the TypeScript casts and parentheses around it."""
    while value.type in _JS_WRAPPED_VALUES and value.named_children:
        value = value.named_children[0]
    return value


def _head(node: Any, body: Any, source: bytes) -> str:
    """The text of ``node`` up to ``body`` (or its first line), on one line."""
    end = body.start_byte if body is not None else node.end_byte
    head = source[node.start_byte : end].decode("utf-8", errors="replace")
    if body is None:
        head = head.split("\n", 1)[0]
    return " ".join(head.split()).rstrip(":{ ")[:SIGNATURE_CHARS]


def _variable_value(node: Any, source: bytes) -> tuple[str, str, Any, str] | None:
    """``const name = <several lines>``: the kind, name, class body (for a class value)
    and signature of a named value that is a function or class made another way than
    by a plain function value.

    Much JavaScript and TypeScript is defined so (``export const $ZodString =
    core.$constructor("$ZodString", (inst, def) => {...})``, ``const Button =
    React.memo((props) => ...)``, ``const Shape = class {...}``): each is a unit of its
    own rather than lines of a window that cuts through it. Other values (objects,
    tables) stay in the file's windows, as module constants do in every language.
    """
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(declarators) != 1 or node.end_point[0] - node.start_point[0] + 1 < MIN_VALUE_LINES:
        return None
    value = declarators[0].child_by_field_name("value")
    name = declarators[0].child_by_field_name("name")
    if value is None or name is None or name.type != "identifier":
        return None
    value = _unwrapped(value)
    if value.type == "class":
        body = value.child_by_field_name("body")
        return "class", _text(name, source), body, _head(node, body, source)
    function = _first_function(value)
    if function is None:
        return None
    return "function", _text(name, source), None, _head(node, function.child_by_field_name("body"), source)


def _named_argument(call: Any, statement: Any, source: bytes) -> tuple[str, str, str] | None:
    """``defineGetter(req, 'path', function path() {...})``: a function defined as a
    call's argument, when it has a name of its own (an unnamed one, as in a test's
    ``it('...', function () {...})``, stays in its window)."""
    function = _first_function(call)
    own = function.child_by_field_name("name") if function is not None else None
    if own is None or statement.end_point[0] - statement.start_point[0] + 1 < MIN_VALUE_LINES:
        return None
    return "function", _text(own, source), _head(statement, function.child_by_field_name("body"), source)


def _statement_function(node: Any, source: bytes) -> tuple[str, str, str] | None:
    """The kind, name and signature of the function an expression statement defines:
    ``res.send = function send(body) {...}`` or ``Router.prototype.route = function
    (path) {...}`` (CommonJS modules and prototypes define their functions by assignment;
    the name is the assigned one, ``.prototype`` left out, or a module export's own), or
    a named function passed to a call (``_named_argument``)."""
    expression = node.named_children[0] if node.named_child_count == 1 else None
    if expression is not None and expression.type == "call_expression":
        return _named_argument(expression, node, source)
    if expression is None or expression.type != "assignment_expression":
        return None
    left, right = expression.child_by_field_name("left"), expression.child_by_field_name("right")
    while right is not None and right.type == "assignment_expression":  # a = b = function
        right = right.child_by_field_name("right")
    if left is None or right is None or right.type not in _FUNCTION_VALUES:
        return None
    target = _text(left, source).replace(".prototype.", ".")
    own = right.child_by_field_name("name")
    signature = _head(node, right.child_by_field_name("body"), source)
    parts = target.split(".")
    if parts[0] in ("module", "exports"):
        if target in ("module.exports", "exports"):
            return ("function", _text(own, source), signature) if own is not None else None
        return "function", parts[-1], signature
    if left.type == "identifier":
        return "function", target, signature
    if left.type != "member_expression" or not all(part.isidentifier() or part.startswith("$") for part in parts):
        return None
    return "method", target, signature


def _units(root: Any, language: str, source: bytes) -> list[_Unit]:
    spec = _SPECS[language]
    units: list[_Unit] = []

    def describe(node: Any, outer: Any) -> tuple[str, str | None, int]:
        comment, first = _above(outer, spec, source)
        doc = _python_docstring(node, source) if language == "python" else None
        return _signature(node, source), doc or comment, first

    def visit(parent: Any, owner: str | None) -> None:
        for child in parent.named_children:
            outer, node = child, child
            if child.type in spec.wrappers:
                inner = child.child_by_field_name("definition") or child.child_by_field_name(
                    "declaration"
                )
                if inner is None:
                    visit(child, owner)
                    continue
                node = inner
            if language == "elixir" and node.type == "call":
                found_unit = _elixir_unit(node, source)
                if found_unit is not None:
                    kind, name, block = found_unit
                    qualified = f"{owner}.{name}" if owner and name and kind == "class" else name
                    if kind == "function" and owner:
                        kind, qualified = "method", f"{owner}.{name}" if name else None
                    sig = " ".join(_text(node, source).split("\n", 1)[0].split())
                    units.append(
                        _Unit(
                            kind, qualified, outer.start_point[0], outer.end_point[0],
                            sig.removesuffix(" do")[:SIGNATURE_CHARS], *_above(outer, spec, source),
                        )
                    )  # fmt: skip
                    if block is not None:
                        visit(block, qualified or owner)
                    continue
            if language in _JS_GRAMMARS and node.type == "expression_statement":
                assigned = _statement_function(node, source)
                if assigned is not None:
                    kind, name, sig = assigned
                    units.append(_Unit(kind, name, outer.start_point[0], outer.end_point[0], sig, *_above(outer, spec, source)))
                    continue
            if node.type in ("lexical_declaration", "variable_declaration"):
                found = _variable_function(node, source)
                valued = _variable_value(node, source) if found is None and language in _JS_GRAMMARS else None
                if valued is not None:
                    kind, var_name, body, sig = valued
                    qualified = f"{owner}.{var_name}" if owner else var_name
                    units.append(_Unit(kind, qualified, outer.start_point[0], outer.end_point[0], sig, *_above(outer, spec, source)))
                    if body is not None:
                        visit(body, qualified)
                if found is not None:
                    var_name = found[0]
                    kind = "method" if owner else "function"
                    sig = " ".join(_text(node, source).split("\n", 1)[0].split())[:SIGNATURE_CHARS]
                    units.append(
                        _Unit(
                            kind,
                            f"{owner}.{var_name}" if owner else var_name,
                            outer.start_point[0],
                            outer.end_point[0],
                            sig,
                            *_above(outer, spec, source),
                        )
                    )
                continue
            if node.type in spec.functions or node.type in spec.methods:
                name = _symbol_name(node, language, source)
                kind = "method" if (owner or node.type in spec.methods) else "function"
                qualified = f"{owner}.{name}" if owner and name and "." not in name else name
                units.append(
                    _Unit(kind, qualified, outer.start_point[0], outer.end_point[0], *describe(node, outer))
                )
            elif node.type in spec.classes:
                name = _symbol_name(node, language, source)
                class_name = f"{owner}.{name}" if owner and name else name
                units.append(
                    _Unit("class", class_name, outer.start_point[0], outer.end_point[0], *describe(node, outer))
                )
                body = node.child_by_field_name("body")
                # (a grammar with no ``body`` field, e.g. Kotlin's: its children hold it)
                visit(body if body is not None else node, class_name or owner)
            elif child.named_child_count and node.type not in _FUNCTION_VALUES:
                visit(child, owner)  # namespaces, modules, if-blocks at top level

    visit(root, None)
    return units


# --------------------------------------------------------------------------- chunks


def _embed_header(path: str, kind: str, symbol: str | None) -> str:
    return f"{path} {kind} {symbol}" if symbol else path


def _make_chunk(
    path: str,
    language: str,
    kind: str,
    lines: Sequence[str],
    start: int,
    end: int,
    symbol: str | None = None,
    signature: str | None = None,
    docstring: str | None = None,
    embed_from: int | None = None,
) -> Chunk:
    """A chunk of rows ``start``..``end``; its embed text reads the body from
    ``embed_from`` on (a definition's own first row: its doc comment is already the
    ``docstring``)."""
    content = "\n".join(lines[start : end + 1])
    body = content if embed_from is None or embed_from <= start else "\n".join(lines[embed_from : end + 1])
    parts = [_embed_header(path, kind, symbol)]
    if signature:
        parts.append(signature)
    if docstring:
        parts.append(docstring)
    parts.append(_body_for_embedding(body, signature, docstring))
    embed_text = "\n".join(parts)[:EMBED_CHARS]
    return Chunk(
        path, language, kind, start + 1, end + 1, content, symbol, signature, docstring, embed_text
    )


def _body_for_embedding(content: str, signature: str | None, docstring: str | None) -> str:
    """The head of the body without what the embed text already said.

    The model reads ~48 tokens; the signature and docstring repeated from the header
    took a third of them. Whitespace is collapsed first (WordPiece ignores it, so the
    tokens are the same) so the normalised signature and docstring can be found; the
    decorators before the signature stay.
    """
    body = " ".join(content[: EMBED_CHARS * 2].split())
    if signature:
        at = body.find(signature)
        if 0 <= at <= MAX_SIGNATURE_OFFSET:
            body = body[:at] + body[at + len(signature):].lstrip(" :{")
            if docstring:
                after = body[at:]
                start = after.find(docstring)
                if 0 <= start <= MAX_DOCSTRING_OFFSET:
                    body = body[:at] + after[start + len(docstring):].lstrip(" \"'*/")
    return body[:EMBED_CHARS]


def _split_range(start: int, end: int, size: int) -> Iterator[tuple[int, int]]:
    pos = start
    while pos <= end:
        stop = min(end, pos + size - 1)
        if end - stop < size // 4:  # fold a short tail into this part
            stop = end
        yield pos, stop
        pos = stop + 1


def _unit_chunks(
    path: str, language: str, lines: Sequence[str], units: list[_Unit]
) -> tuple[list[Chunk], list[bool]]:
    covered = [False] * len(lines)
    chunks: list[Chunk] = []
    for unit in sorted(units, key=lambda u: u.first):
        end = unit.end
        if unit.kind == "class":
            inner = [u.first for u in units if u is not unit and unit.start < u.start <= unit.end]
            if inner:
                end = max(min(inner) - 1, unit.start)
                while end > unit.start and not lines[end].strip():
                    end -= 1
        for number, (part_start, part_end) in enumerate(_unit_parts(unit.first, end)):
            chunks.append(
                _make_chunk(
                    path, language, unit.kind, lines, part_start, part_end, unit.symbol,
                    unit.signature, unit.docstring if number == 0 else None,
                    unit.start if number == 0 else None,
                )
            )  # fmt: skip
        for row in range(unit.first, min(end, len(lines) - 1) + 1):
            covered[row] = True
    return chunks, covered


def _unit_parts(start: int, end: int) -> Iterator[tuple[int, int]]:
    if end - start + 1 <= MAX_UNIT_LINES:
        yield start, end
    else:
        yield from _split_range(start, end, WINDOW_LINES)


def _gap_chunks(
    path: str, language: str, lines: Sequence[str], covered: list[bool], min_lines: int = MIN_GAP_LINES
) -> list[Chunk]:
    chunks: list[Chunk] = []
    row = 0
    total = len(lines)
    while row < total:
        if covered[row] or not lines[row].strip():
            row += 1
            continue
        start = row
        while row < total and not covered[row] and row - start < WINDOW_LINES:
            row += 1
        end = row - 1
        while end > start and not lines[end].strip():
            end -= 1
        if sum(1 for i in range(start, end + 1) if lines[i].strip()) >= min_lines:
            chunks.append(_make_chunk(path, language, "block", lines, start, end))
    return chunks


def _text_windows(
    path: str,
    language: str,
    lines: Sequence[str],
    first: int = 0,
    stop: int | None = None,
    symbol: str | None = None,
) -> list[Chunk]:
    """Windows of about TEXT_WINDOW_CHARS over rows ``first`` to ``stop`` (exclusive),
    ending at a blank line when one is near."""
    kind = "block" if is_code(language) else "text"
    chunks: list[Chunk] = []
    total = len(lines) if stop is None else stop
    row = first
    while row < total:
        while row < total and not lines[row].strip():
            row += 1
        if row >= total:
            break
        start, size, last_blank = row, 0, -1
        while row < total and row - start < TEXT_WINDOW_MAX_LINES and size < TEXT_WINDOW_CHARS:
            size += len(lines[row]) + 1
            if not lines[row].strip():
                last_blank = row
            row += 1
        if row < total and last_blank > start + (row - start) // 2:
            row = last_blank + 1  # end at a paragraph break rather than mid-paragraph
        end = row - 1
        while end > start and not lines[end].strip():
            end -= 1
        chunks.append(_make_chunk(path, language, kind, lines, start, end, symbol))
    return chunks


# What a Markdown heading shows a reader, not its markup: a badge (a linked image) is
# dropped, an image or an HTML ``<img>`` reads as its alt text, a link as its text, any
# other tag as nothing (``# <img alt="chi" src="logo.svg" />`` is the heading "chi").
# Each pattern is one bounded run of a negated class: linear in the heading.
_BADGE = re.compile(r"\[!\[[^\]\n]{0,400}\]\([^)\n]{0,1000}\)\]\([^)\n]{0,1000}\)")
_IMAGE = re.compile(r"!\[([^\]\n]{0,400})\]\([^)\n]{0,1000}\)")
_LINK = re.compile(r"\[([^\]\n]{0,400})\]\([^)\n]{0,1000}\)")
_HTML_IMAGE = re.compile(r"<img\b[^>]{0,1000}?\balt=[\"']([^\"'>]{0,400})[\"'][^>]{0,1000}>", re.I)
_TAG = re.compile(r"</?[A-Za-z][^>\n]{0,1000}>")


def heading_text(raw: str) -> str | None:
    """A Markdown heading as a reader sees it: its words, without images' and links'
    markup or HTML tags; None when nothing readable is left."""
    text = _BADGE.sub(" ", raw)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _HTML_IMAGE.sub(r" \1 ", text)
    text = _TAG.sub(" ", text)
    return " ".join(text.split()) or None


def _markdown_sections(text: str) -> list[tuple[int, int, str | None]]:
    """(first row, stop row, heading path) of each Markdown section's own text, the text
    before its first subsection; the heading path reads ``Install > From source``."""
    import tree_sitter
    import tree_sitter_markdown

    source = text.encode("utf-8")
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_markdown.language()))
    root = parser.parse(source).root_node
    sections: list[tuple[int, int, str | None]] = []

    def heading_of(section: Any) -> str | None:
        for child in section.named_children:
            if child.type == "atx_heading":
                content = child.child_by_field_name("heading_content")
                if content is not None:
                    return heading_text(_text(content, source))
        return None

    def visit(node: Any, trail: tuple[str, ...]) -> None:
        start = node.start_point[0]
        for child in node.named_children:
            if child.type == "section":
                if child.start_point[0] > start:
                    sections.append((start, child.start_point[0], " > ".join(trail) or None))
                heading = heading_of(child)
                visit(child, (*trail, heading) if heading else trail)
                start = child.end_point[0] + (1 if child.end_point[1] else 0)
        stop = node.end_point[0] + (1 if node.end_point[1] else 0)
        if stop > start:
            sections.append((start, stop, " > ".join(trail) or None))

    visit(root, ())
    return sorted(sections)


def _markdown_chunks(path: str, lines: Sequence[str], text: str) -> list[Chunk]:
    chunks: list[Chunk] = []
    for first, stop, heading in _markdown_sections(text):
        chunks.extend(_text_windows(path, "markdown", lines, first, min(stop, len(lines)), heading))
    return chunks


def _grammar_for(path: str, language: str) -> str:
    """A ``.h`` header is parsed as C++: C++ headers are as common as C ones, and the C++
    grammar reads C declarations too, while the C grammar loses every class and template."""
    return "cpp" if language == "c" and path.lower().endswith(".h") else language


def chunk_text(path: str, language: str, text: str) -> list[Chunk]:
    """All chunks of one file, ordered by start line."""
    lines = text.splitlines()
    if not lines:
        return []
    if language in PARSED_LANGUAGES:
        source = text.encode("utf-8")
        grammar = _grammar_for(path, language)
        tree = _parser(grammar).parse(source)
        units = _units(tree.root_node, grammar, source)
        if units:
            chunks, covered = _unit_chunks(path, language, lines, units)
            chunks.extend(_gap_chunks(path, language, lines, covered))
            chunks.sort(key=lambda c: (c.start_line, -c.end_line))
            return chunks
        # No definitions: the file is all "gap", and a short one (``__version__ = "1.2"``,
        # a re-exporting ``__init__``) is still worth finding, so even one line is a chunk.
        return _gap_chunks(path, language, lines, [False] * len(lines), min_lines=1)
    if language == "markdown":
        return _markdown_chunks(path, lines, text)
    return _text_windows(path, language, lines)


ChunkFn = Callable[[str, str, str], list[Chunk]]
