"""Docstring → function queries (CodeSearchNet-style), generated from a Python corpus.

Each documented function becomes a query: the first paragraph of its docstring;
the relevant file is the function's file, its span the function's line range. The
answer must not be in the index, so the corpus is copied with *every* docstring
(module, class, function) replaced by ``...`` padded with the newlines it had, which
keeps the code valid and every line number — and so every span — unchanged.

Parsing is tree-sitter (the grammar wheel works offline, as the indexer uses it).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import tree_sitter
import tree_sitter_python

from tributary.engine.eval.datasets import EvalQuery, Span, write_dataset

MIN_WORDS = 3
MIN_LINES = 3  # of code, docstring excluded (CodeSearchNet drops shorter functions)
MAX_FILE_BYTES = 1_000_000
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv",
                       ".tox", ".mypy_cache", ".pytest_cache", "build", "dist"})


@dataclass(frozen=True, slots=True)
class DocumentedFunction:
    name: str  # qualified: Class.method
    start_line: int  # 1-based, inclusive (decorators included)
    end_line: int
    docstring: str  # cleaned (inspect.cleandoc)
    docstring_lines: int = 1

    @property
    def code_lines(self) -> int:
        """Lines of the function other than its docstring (decorators and signature count)."""
        return self.end_line - self.start_line + 1 - self.docstring_lines

    @property
    def summary(self) -> str:
        return first_paragraph(self.docstring)


@dataclass(slots=True)
class DocstringReport:
    out: Path
    files: int = 0
    python_files: int = 0
    functions: int = 0
    queries: int = 0
    stripped: int = 0
    dropped: dict[str, int] = field(default_factory=dict)

    def drop(self, why: str) -> None:
        self.dropped[why] = self.dropped.get(why, 0) + 1


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))


def _docstring_node(body: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The string node of a block's first statement, when that statement is a lone string."""
    if body is None:
        return None
    for child in body.named_children:
        if child.type == "comment":
            continue
        if child.type == "expression_statement" and child.named_child_count == 1:
            only = child.named_children[0]
            if only.type == "string":
                return only
        return None
    return None


def _literal(node: tree_sitter.Node) -> str:
    text = (node.text or b"").decode("utf-8", "replace")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = text.strip("rRuUbB").strip("'\"")
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return inspect.cleandoc(str(value))


def first_paragraph(docstring: str) -> str:
    """The docstring's first paragraph on one line (up to the first blank line)."""
    paragraph = re.split(r"\n\s*\n", docstring.strip(), maxsplit=1)[0]
    return " ".join(paragraph.split())


def _walk(node: tree_sitter.Node, scope: tuple[str, ...]) -> Iterator[tuple[tree_sitter.Node, tuple[str, ...]]]:
    for child in node.named_children:
        target = child
        if child.type == "decorated_definition":
            inner = child.child_by_field_name("definition")
            target = inner if inner is not None else child
        if target.type in ("function_definition", "class_definition"):
            name_node = target.child_by_field_name("name")
            name = (name_node.text or b"").decode("utf-8", "replace") if name_node else "?"
            yield child, scope
            yield from _walk_body(target, (*scope, name))
        else:
            yield from _walk(child, scope)


def _walk_body(definition: tree_sitter.Node, scope: tuple[str, ...]) -> Iterator[tuple[tree_sitter.Node, tuple[str, ...]]]:
    body = definition.child_by_field_name("body")
    if body is not None:
        yield from _walk(body, scope)


def _definition(node: tree_sitter.Node) -> tree_sitter.Node:
    if node.type == "decorated_definition":
        inner = node.child_by_field_name("definition")
        if inner is not None:
            return inner
    return node


def documented_functions(source: bytes) -> list[DocumentedFunction]:
    """Every function or method with a docstring, outermost first, in file order."""
    tree = _parser().parse(source)
    found: list[DocumentedFunction] = []
    for outer, scope in _walk(tree.root_node, ()):
        definition = _definition(outer)
        if definition.type != "function_definition":
            continue
        doc = _docstring_node(definition.child_by_field_name("body"))
        if doc is None:
            continue
        name_node = definition.child_by_field_name("name")
        name = (name_node.text or b"").decode("utf-8", "replace") if name_node else "?"
        found.append(DocumentedFunction(
            name=".".join((*scope, name)),
            start_line=outer.start_point[0] + 1,
            end_line=outer.end_point[0] + 1,
            docstring=_literal(doc),
            docstring_lines=doc.end_point[0] - doc.start_point[0] + 1,
        ))
    return found


def docstring_ranges(source: bytes) -> list[tuple[int, int]]:
    """Byte ranges of every docstring: the module's, each class's and each function's."""
    tree = _parser().parse(source)
    nodes = [_docstring_node(tree.root_node)]
    for outer, _scope in _walk(tree.root_node, ()):
        nodes.append(_docstring_node(_definition(outer).child_by_field_name("body")))
    return sorted((n.start_byte, n.end_byte) for n in nodes if n is not None)


def strip_docstrings(source: bytes) -> tuple[bytes, int]:
    """``source`` with each docstring replaced by ``...`` and its newlines; and how many."""
    ranges = docstring_ranges(source)
    out = bytearray()
    last = 0
    for start, end in ranges:
        out += source[last:start]
        out += b"..." + b"\n" * source[start:end].count(b"\n")
        last = end
    out += source[last:]
    return bytes(out), len(ranges)


def _files(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            if not name.startswith("."):
                yield Path(folder, name)


def _keep(fn: DocumentedFunction, path: str, report: DocstringReport) -> bool:
    short = fn.name.rsplit(".", 1)[-1]
    if short.startswith("test") or Path(path).name.startswith("test_"):
        report.drop("test function")
        return False
    if fn.code_lines < MIN_LINES:
        report.drop(f"under {MIN_LINES} lines of code")
        return False
    if len(fn.summary.split()) < MIN_WORDS or fn.summary.startswith(">>>"):
        report.drop(f"summary under {MIN_WORDS} words")
        return False
    return True


def build_docstring_dataset(
    corpus: Path, out: Path, *, max_queries: int | None = None
) -> DocstringReport:
    """Write a dataset whose corpus is ``out/corpus`` (docstrings stripped) and whose
    queries are the documented functions' summaries. Duplicate summaries (overloads,
    copies) are dropped: a query must have one answer."""
    corpus = corpus.expanduser().resolve()
    target = out / "corpus"
    if target.exists():
        shutil.rmtree(target)
    report = DocstringReport(out=out)
    queries: dict[str, EvalQuery] = {}
    repeated: set[str] = set()
    for path in _files(corpus):
        rel = path.relative_to(corpus).as_posix()
        dest = target / rel
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        report.files += 1
        if path.suffix != ".py":
            shutil.copyfile(path, dest)
            continue
        source = path.read_bytes()
        report.python_files += 1
        stripped, count = strip_docstrings(source)
        report.stripped += count
        dest.write_bytes(stripped)
        for fn in documented_functions(source):
            report.functions += 1
            if not _keep(fn, rel, report):
                continue
            text = fn.summary
            if text in queries or text in repeated:
                queries.pop(text, None)
                repeated.add(text)
                report.drop("duplicate summary")
                continue
            qid = hashlib.blake2b(f"{rel}:{fn.name}:{fn.start_line}".encode(), digest_size=6).hexdigest()
            queries[text] = EvalQuery(
                id=qid, query=text, relevant={rel: 1.0},
                spans=(Span(rel, fn.start_line, fn.end_line, fn.name),),
            )
    chosen = list(queries.values())
    if max_queries is not None and len(chosen) > max_queries:
        chosen = sorted(chosen, key=lambda q: q.id)[:max_queries]
    write_dataset(out, {"path": "corpus", "source": str(corpus), "kind": "docstrings"}, [], chosen)
    report.queries = len(chosen)
    return report
