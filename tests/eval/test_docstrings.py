"""Docstring → function queries, and the stripped corpus that gets indexed."""

from __future__ import annotations

import ast
from pathlib import Path

from tributary.engine.eval.datasets import corpus_root, load_dataset
from tributary.engine.eval.docstrings import (
    build_docstring_dataset,
    documented_functions,
    first_paragraph,
    strip_docstrings,
)

SOURCE = b'''"""Module docstring."""
import os


@decorator
def load_config(path):
    """Read the YAML configuration file and validate it.

    Raises ValueError on bad input.
    """
    with open(path) as f:
        return f.read()


class Store:
    """A key-value store."""

    def put(self, key, value):
        r"""Write one value under a key, replacing the old one."""
        self.data[key] = value
        return value

    def get(self, key):
        # no docstring here
        return self.data[key]


def tiny():
    """Too short to be a query."""
    pass


def test_something():
    """Tests are never queries, whatever they say."""
    assert True
    assert True
'''


def test_documented_functions_with_qualified_names_and_spans() -> None:
    found = {f.name: f for f in documented_functions(SOURCE)}
    assert set(found) == {"load_config", "Store.put", "tiny", "test_something"}
    config = found["load_config"]
    assert (config.start_line, config.end_line) == (5, 12)  # decorator included
    assert config.summary == "Read the YAML configuration file and validate it."
    assert found["Store.put"].summary == "Write one value under a key, replacing the old one."


def test_strip_keeps_code_valid_and_line_numbers_unchanged() -> None:
    stripped, count = strip_docstrings(SOURCE)
    assert count == 6  # module, load_config, Store, put, tiny, test_something
    ast.parse(stripped)
    assert stripped.count(b"\n") == SOURCE.count(b"\n")
    text = stripped.decode()
    for phrase in ("YAML", "key-value", "Write one value", "Module docstring"):
        assert phrase not in text
    assert text.splitlines()[10] == SOURCE.decode().splitlines()[10]  # `with open(path)` still line 11
    assert "# no docstring here" in text


def test_first_paragraph_joins_lines() -> None:
    assert first_paragraph("Do a\n  thing well.\n\nDetails.") == "Do a thing well."


def test_build_dataset(tmp_path: Path) -> None:
    corpus = tmp_path / "src"
    (corpus / "pkg").mkdir(parents=True)
    (corpus / "pkg" / "config.py").write_bytes(SOURCE)
    (corpus / "pkg" / "copy.py").write_bytes(
        b'def other():\n    """Read the YAML configuration file and validate it."""\n    x = 1\n    return x\n'
    )
    (corpus / "README.md").write_text("# readme\n")
    report = build_docstring_dataset(corpus, tmp_path / "ds")
    dataset = load_dataset(tmp_path / "ds")
    queries = {q.query: q for q in dataset.queries}
    # load_config's summary is shared with pkg/copy.py: ambiguous, dropped
    assert set(queries) == {"Write one value under a key, replacing the old one."}
    put = queries["Write one value under a key, replacing the old one."]
    assert dict(put.relevant) == {"pkg/config.py": 1.0}
    assert put.spans[0].name == "Store.put" and put.spans[0].start_line == 18
    root = corpus_root(dataset)
    assert (root / "README.md").is_file()
    indexed = (root / "pkg" / "config.py").read_text()
    assert "Write one value" not in indexed
    assert indexed.splitlines()[17].strip().startswith("def put")
    assert report.dropped["test function"] == 1
    assert list(dataset.tasks()) == []
