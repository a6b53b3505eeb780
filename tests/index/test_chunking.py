"""Chunking: tree-sitter units per language (names, kinds, lines) plus windows."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.index.index_helpers import FILES, make_repo
from tributary.engine.index.chunking import Chunk, chunk_text
from tributary.engine.query.languages import detect_language


def _chunks(repo: Path, rel: str) -> list[Chunk]:
    language = detect_language(rel)
    assert language is not None
    return chunk_text(rel, language, (repo / rel).read_text())


def _units(chunks: list[Chunk]) -> set[tuple[str | None, str]]:
    return {(c.symbol, c.kind) for c in chunks if c.kind != "block"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def test_python_units_lines_docstrings(repo: Path) -> None:
    chunks = _chunks(repo, "src/billing/invoice.py")
    assert _units(chunks) == {
        ("InvoiceCalculator", "class"),
        ("InvoiceCalculator.total_with_tax", "method"),
        ("InvoiceCalculator.refund", "method"),
        ("parse_invoice_number", "function"),
    }
    by_symbol = {c.symbol: c for c in chunks}
    method = by_symbol["InvoiceCalculator.total_with_tax"]
    lines = (repo / "src/billing/invoice.py").read_text().splitlines()
    assert lines[method.start_line - 1].strip().startswith("def total_with_tax")
    assert method.docstring == "Return the amount plus value added tax."
    assert method.signature == "def total_with_tax(self, amount)"
    assert "return amount * (1 + TAX_RATE)" in method.content
    # The class chunk stops before its first method and keeps the docstring.
    cls = by_symbol["InvoiceCalculator"]
    assert cls.end_line < method.start_line and cls.docstring == "Computes invoice totals with tax."
    # Decorators belong to their function.
    func = by_symbol["parse_invoice_number"]
    assert lines[func.start_line - 1].strip() == "@staticmethod"
    # Module-level code is covered by a block window.
    blocks = [c for c in chunks if c.kind == "block"]
    assert any("TAX_RATE = " in c.content for c in blocks)
    assert method.embed_text.startswith(
        "src/billing/invoice.py method InvoiceCalculator.total_with_tax"
    )


def test_embed_text_says_the_signature_and_docstring_once_and_keeps_decorators() -> None:
    source = (
        "import pytest\n\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_scale(n: int,\n"
        "               factor: float = 2.0) -> None:\n"
        '    """Scaling keeps the sign."""\n'
        "    assert scale(n, factor) > 0\n"
    )
    (chunk,) = [c for c in chunk_text("tests/test_scale.py", "python", source)
                if c.kind == "function"]
    signature = "def test_scale(n: int, factor: float = 2.0) -> None"
    assert chunk.signature == signature
    text = chunk.embed_text
    assert text.count("def test_scale") == 1 and text.count("Scaling keeps the sign") == 1
    assert text.index("@pytest.mark.parametrize") > text.index("Scaling keeps the sign")
    assert text.endswith("assert scale(n, factor) > 0")


def test_javascript_units(repo: Path) -> None:
    chunks = _chunks(repo, "web/app.js")
    assert _units(chunks) == {
        ("renderCart", "function"),
        ("CartStore", "class"),
        ("CartStore.addItem", "method"),
        ("formatPrice", "function"),
    }
    render = next(c for c in chunks if c.symbol == "renderCart")
    assert render.docstring == "Render the shopping cart widget."
    # the doc comment above is part of the chunk; the embed text says it once
    assert (render.start_line, render.end_line) == (1, 4)
    assert render.content.startswith("/**") and render.embed_text.count("Render the shopping cart") == 1


def test_typescript_units(repo: Path) -> None:
    units = _units(_chunks(repo, "web/types.ts"))
    assert {("Shipment", "class"), ("shipmentCost", "function"), ("Courier", "class"),
            ("Courier.deliver", "method")} <= units  # fmt: skip


def test_commonjs_functions_assigned_and_passed_are_units() -> None:
    source = (
        "'use strict'\n"
        "var res = Object.create(http.ServerResponse.prototype)\n\n"
        "/**\n * Send a response.\n *\n * @public\n */\n\n"
        "res.send = function send(body) {\n  this.end(body);\n  return this;\n};\n\n"
        "res.contentType =\nres.type = function contentType(type) {\n  return this.set(type);\n};\n\n"
        "Router.prototype.route = function (path) {\n  return new Route(path);\n};\n\n"
        "module.exports = function createApplication() {\n  return app;\n};\n\n"
        "exports.compileETag = function (value) {\n  return value;\n};\n\n"
        "defineGetter(req, 'path', function path() {\n  return parse(this).pathname;\n});\n\n"
        "describe('send', function () {\n  it('sends', function () {\n    send();\n  });\n});\n"
    )
    chunks = chunk_text("lib/response.js", "javascript", source)
    assert _units(chunks) == {
        ("res.send", "method"), ("res.contentType", "method"), ("Router.route", "method"),
        ("createApplication", "function"), ("compileETag", "function"), ("path", "function"),
    }  # fmt: skip
    send = next(c for c in chunks if c.symbol == "res.send")
    # a JSDoc block one blank line above is the function's own
    assert send.docstring is not None and send.docstring.startswith("Send a response.")
    assert send.content.startswith("/**") and send.signature == "res.send = function send(body)"
    # an unnamed callback (a test's) stays in a window
    assert any("describe('send'" in c.content for c in chunks if c.kind == "block")


def test_typescript_named_values_are_units() -> None:
    source = (
        "export const $ZodString: core.$constructor<$ZodString> = core.$constructor(\n"
        "  \"$ZodString\",\n  (inst, def) => {\n    inst._zod.parse = (payload) => payload;\n  }\n);\n\n"
        "const defaults = {\n  retries: 3,\n  timeout: 10,\n} as const;\n\n"
        "export const Button = React.memo((props: Props) => {\n  return null;\n});\n\n"
        "const Shape = class {\n  area(): number {\n    return 0;\n  }\n};\n\n"
        "const short = compute(1, 2);\nconst other = {\n  a: 1 };\n"
    )
    chunks = chunk_text("src/schemas.ts", "typescript", source)
    by_symbol = {c.symbol: c for c in chunks}
    assert (by_symbol["$ZodString"].kind, by_symbol["$ZodString"].start_line) == ("function", 1)
    assert by_symbol["$ZodString"].signature == (
        'const $ZodString: core.$constructor<$ZodString> = core.$constructor( "$ZodString", (inst, def) =>'
    )
    assert by_symbol["Button"].kind == "function"
    assert (by_symbol["Shape"].kind, by_symbol["Shape.area"].kind) == ("class", "method")
    # tables and short values stay in the file's windows
    assert {"defaults", "short", "other"}.isdisjoint(by_symbol)


def test_go_units(repo: Path) -> None:
    chunks = _chunks(repo, "cmd/server.go")
    assert _units(chunks) == {
        ("Server", "class"),
        ("Server.Start", "method"),
        ("geocodeAddress", "function"),
    }
    start = next(c for c in chunks if c.symbol == "Server.Start")
    assert start.docstring == "Start listens on the configured port."


def test_rust_units(repo: Path) -> None:
    chunks = _chunks(repo, "crates/lib.rs")
    units = _units(chunks)
    assert {("Point", "class"), ("Point.distance", "method"), ("origin", "function")} <= units
    distance = next(c for c in chunks if c.symbol == "Point.distance")
    assert distance.docstring == "Euclidean distance to another point."


def test_java_units(repo: Path) -> None:
    chunks = _chunks(repo, "java/Greeter.java")
    units = _units(chunks)
    assert {
        ("Greeter", "class"),
        ("Greeter.greet", "method"),
        ("Greeter.Greeter", "method"),
    } <= units
    greet = next(c for c in chunks if c.symbol == "Greeter.greet")
    assert greet.docstring == "Say hello to someone."
    assert greet.start_line == 7  # its Javadoc line


def test_doc_comments_and_attributes_open_the_definition_chunk() -> None:
    rust = (
        "//! The crate's own docs, not the trait's.\n"
        "/// A data structure that can be serialized.\n"
        "#[diagnostic::on_unimplemented(message = \"not serializable\")]\n"
        "pub trait Serialize {\n"
        "    fn serialize(&self);\n"
        "}\n\n"
        "// Licensed under MIT.\n\n"
        "fn helper() {}\n"
    )
    chunks = {c.symbol: c for c in chunk_text("src/ser.rs", "rust", rust)}
    trait_ = chunks["Serialize"]
    assert (trait_.start_line, trait_.docstring) == (2, "A data structure that can be serialized.")
    assert chunks["helper"].start_line == 10  # a comment a blank line away documents nothing
    kotlin = (
        "package x\n\n"
        "/**\n * Interface common to all column types.\n */\n"
        "@Suppress(\"TooManyFunctions\")\n"
        "interface IColumnType<T> {\n    fun sqlType(): String\n}\n"
    )
    (column,) = [c for c in chunk_text("Column.kt", "kotlin", kotlin) if c.symbol == "IColumnType"]
    assert column.start_line == 3 and column.docstring == "Interface common to all column types."


def test_markdown_windows_cover_text(repo: Path) -> None:
    chunks = _chunks(repo, "docs/guide.md")
    assert chunks and all(c.kind == "text" for c in chunks)
    joined = "\n".join(c.content for c in chunks)
    assert "refund policy" in joined and "network proxy" in joined


def test_long_text_is_windowed_and_long_functions_split() -> None:
    text = "\n\n".join(f"Paragraph {i} " + "word " * 60 for i in range(40))
    chunks = chunk_text("notes.md", "markdown", text)
    assert len(chunks) > 3
    assert chunks[0].start_line == 1 and chunks[-1].end_line == len(text.splitlines())
    body = "\n".join(f"    x{i} = {i}" for i in range(500))
    code = f"def huge():\n{body}\n"
    parts = chunk_text("big.py", "python", code)
    assert len(parts) > 1 and all(p.symbol == "huge" for p in parts)
    assert parts[0].start_line == 1 and parts[-1].end_line == 501
    # Parts tile the function without gaps.
    for before, after in itertools.pairwise(parts):
        assert after.start_line == before.end_line + 1


def test_every_fixture_file_chunks(repo: Path) -> None:
    for rel in FILES:
        language = detect_language(rel)
        if language is None or rel.endswith(".bin"):
            continue
        text = (repo / rel).read_text()
        for chunk in chunk_text(rel, language, text):
            assert 1 <= chunk.start_line <= chunk.end_line <= len(text.splitlines())
            assert chunk.embed_hash and chunk.embed_text


def test_a_file_of_one_line_is_a_chunk_but_a_stray_line_between_definitions_is_not() -> None:
    [only] = chunk_text("pkg/_version.py", "python", '__version__ = "1.2.3"\n')
    assert (only.start_line, only.end_line, only.content) == (1, 1, '__version__ = "1.2.3"')
    code = "def a():\n    return 1\n\nimport os\n\ndef b():\n    return 2\n"
    assert [(c.symbol, c.start_line) for c in chunk_text("m.py", "python", code)] == [("a", 1), ("b", 6)]
