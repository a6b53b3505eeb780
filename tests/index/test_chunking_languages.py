"""Syntax-aware chunks for every grammar we ship, and Markdown cut at its headings."""

from __future__ import annotations

import pytest

from tributary.engine.index.chunking import chunk_text, grammar_modules
from tributary.engine.index.languages import PARSED_LANGUAGES
from tributary.engine.query.languages import detect_language

# path -> (source, the (symbol, kind) units it must yield)
SAMPLES: dict[str, tuple[str, set[tuple[str, str]]]] = {
    "lib/add.c": (
        "/* Adds two ints. */\nint add(int a, int b) {\n  return a + b;\n}\n\n"
        "static int *ptr(void) {\n  return 0;\n}\nstruct Point {\n  int x;\n};\n",
        {("add", "function"), ("ptr", "function"), ("Point", "class")},
    ),
    "src/shape.cpp": (
        "namespace geo {\nclass Shape {\n public:\n  int area() {\n    return 1;\n  }\n};\n}\n"
        "template <class T>\nT twice(T x) {\n  return x + x;\n}\n"
        "int Shape::perimeter() {\n  return 0;\n}\n",
        {("Shape", "class"), ("Shape.area", "method"), ("twice", "function"),
         ("Shape::perimeter", "function")},
    ),
    "Src/Account.cs": (
        "namespace Bank {\n  /// A bank account.\n  public class Account {\n"
        "    public int Balance() {\n      return 1;\n    }\n    public Account() {}\n  }\n}\n",
        {("Account", "class"), ("Account.Balance", "method"), ("Account.Account", "method")},
    ),
    "app/Router.kt": (
        "/** Routes requests. */\nclass Router {\n    fun route(): Int {\n        return 1\n    }\n}\n"
        "fun helper(): Int = 2\nobject Registry {\n    fun lookup() {}\n}\n",
        {("Router", "class"), ("Router.route", "method"), ("helper", "function"),
         ("Registry", "class"), ("Registry.lookup", "method")},
    ),
    "Sources/Cache.swift": (
        "/// A cache.\nclass Cache {\n    func get() -> Int {\n        return 1\n    }\n"
        "    init() {}\n}\nfunc purge() {}\nprotocol Store {\n    func put()\n}\n",
        {("Cache", "class"), ("Cache.get", "method"), ("Cache.init", "method"),
         ("purge", "function"), ("Store", "class"), ("Store.put", "method")},
    ),
    "lib/parser.rb": (
        "# Parses input.\nclass Parser < Base\n  def parse\n    1\n  end\n  def self.build; end\nend\n"
        "module Util\n  def helper; end\nend\n",
        {("Parser", "class"), ("Parser.parse", "method"), ("Parser.build", "method"),
         ("Util", "class"), ("Util.helper", "method")},
    ),
    "src/Mailer.php": (
        "<?php\n/** Sends mail. */\nfunction send_mail() {\n  return 1;\n}\n"
        "class Mailer {\n  public function deliver() {}\n}\n",
        {("send_mail", "function"), ("Mailer", "class"), ("Mailer.deliver", "method")},
    ),
    "src/Json.scala": (
        "/** JSON. */\nclass Json {\n  def render: String = \"\"\n}\n"
        "object Json {\n  def parse() = 2\n}\ndef top() = 3\n",
        {("Json", "class"), ("Json.render", "method"), ("Json.parse", "method"), ("top", "function")},
    ),
    "lib/phoenix/router.ex": (
        "defmodule Phoenix.Router do\n  @moduledoc \"Routes.\"\n  # Matches a route.\n"
        "  def match(conn), do: conn\n  defp guard(y) when y > 1 do\n    y\n  end\nend\n",
        {("Phoenix.Router", "class"), ("Phoenix.Router.match", "method"),
         ("Phoenix.Router.guard", "method")},
    ),
    "init.lua": (
        "-- Reads a value.\nfunction read(a)\n  return a\nend\nlocal function hidden() end\n"
        "function M.open() end\n",
        {("read", "function"), ("hidden", "function"), ("M.open", "function")},
    ),
    "scripts/deploy.sh": (
        "#!/bin/sh\n# Builds it.\nbuild() {\n  make\n}\nfunction ship {\n  echo 2\n}\n",
        {("build", "function"), ("ship", "function")},
    ),
}


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_each_language_is_cut_at_its_definitions(path: str) -> None:
    source, expected = SAMPLES[path]
    language = detect_language(path)
    assert language in PARSED_LANGUAGES
    chunks = chunk_text(path, language, source)
    units = {(c.symbol, c.kind) for c in chunks if c.kind != "block"}
    assert expected <= units
    lines = source.splitlines()
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert chunk.content == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])


def test_comments_above_a_definition_are_its_docstring() -> None:
    by_symbol = {}
    for path in ("lib/add.c", "init.lua", "scripts/deploy.sh", "lib/phoenix/router.ex"):
        language = detect_language(path)
        assert language is not None
        by_symbol.update({c.symbol: c for c in chunk_text(path, language, SAMPLES[path][0])})
    assert by_symbol["add"].docstring == "Adds two ints."
    assert by_symbol["read"].docstring == "Reads a value."
    assert by_symbol["build"].docstring == "Builds it."  # the shebang is not documentation
    assert by_symbol["Phoenix.Router.match"].docstring == "Matches a route."


def test_elixir_files_are_indexed() -> None:
    assert detect_language("lib/app.ex") == "elixir"
    assert detect_language("test/app_test.exs") == "elixir"


def test_markdown_is_cut_at_headings_and_a_fenced_hash_is_no_heading() -> None:
    text = (
        "# Tool\n\nWhat it is.\n\n## Install\n\n```sh\n# not a heading\npip install tool\n```\n\n"
        "### From source\n\nClone it.\n\n## Usage\n\nRun it.\n"
    )
    chunks = chunk_text("README.md", "markdown", text)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [
        ("Tool", 1, 3),
        ("Tool > Install", 5, 10),
        ("Tool > Install > From source", 12, 14),
        ("Tool > Usage", 16, 18),
    ]
    assert all(c.kind == "text" for c in chunks)
    assert "pip install tool" in chunks[1].content


def test_a_long_markdown_section_is_windowed_and_text_before_any_heading_kept() -> None:
    body = "\n\n".join(f"Paragraph {i} " + "word " * 60 for i in range(30))
    text = f"Preface line.\n\n# Big\n\n{body}\n"
    chunks = chunk_text("notes.md", "markdown", text)
    assert chunks[0].symbol is None and chunks[0].content == "Preface line."
    big = [c for c in chunks if c.symbol == "Big"]
    assert len(big) > 2
    assert big[-1].end_line == len(text.splitlines())


def test_a_header_is_read_with_the_cpp_grammar() -> None:
    header = (
        "namespace fmt {\ntemplate <typename T>\nclass basic_string_view {\n public:\n"
        "  size_t size() const { return size_; }\n};\n}\nint c_function(int x);\n"
    )
    chunks = chunk_text("include/fmt/base.h", "c", header)
    assert ("basic_string_view", "class") in {(c.symbol, c.kind) for c in chunks}
    assert all(c.language == "c" for c in chunks)


def test_the_bundle_is_told_of_every_grammar_module() -> None:
    """The desktop bundle includes exactly the modules ``grammar_modules`` names; a grammar
    imported by name but missing from that list would fail only in the bundle."""
    import importlib
    import sys

    modules = set(grammar_modules())
    for language in PARSED_LANGUAGES:
        chunk_text("x", language, "x\n")
    loaded = {name for name in sys.modules if name.startswith("tree_sitter_")}
    assert {name.split(".")[0] for name in loaded} - {"tree_sitter_markdown"} <= modules
    for name in modules:
        importlib.import_module(name)


def test_a_markdown_heading_is_titled_by_its_words_not_its_markup() -> None:
    text = (
        '# <img alt="chi" src="https://cdn.example/chi.svg" width="220" />\n\nA router.\n\n'
        "## [![CI](https://ci.example/badge.svg)](https://ci.example) Install [pip](https://pip.example)\n\n"
        "Run pip.\n\n## <p align=center><img src=x.png></p>\n\nPictures.\n"
    )
    assert [c.symbol for c in chunk_text("README.md", "markdown", text)] == [
        "chi", "chi > Install pip", "chi",
    ]
