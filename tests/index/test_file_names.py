"""File names as evidence: which files a question names, and in what order."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import IndexTarget
from tests.index.index_helpers import HashingEmbedder
from tributary.engine.index.file_names import (
    MAX_NAMED,
    name_words,
    named_ranks,
    query_words,
    singular,
)
from tributary.engine.index.manager import index_repository, open_index_store
from tributary.engine.index.search import Weights, hybrid_search


@pytest.mark.parametrize(
    ("word", "expected"),
    [("builders", "builder"), ("indexes", "index"), ("entries", "entry"), ("types", "type"),
     ("class", "class"), ("status", "status"), ("analysis", "analysis"), ("args", "arg"), ("its", "its")],
)
def test_singular(word: str, expected: str) -> None:
    assert singular(word) == expected


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("src/statements/UpdateStatement.kt", {"update", "statement"}),
        ("binding/multipart_form_mapping.go", {"multipart", "form", "mapping"}),
        ("packages/zod/src/v4/classic/tests/object.test.ts", {"object", "test"}),
        ("src/from-json-schema.ts", {"json", "schema"}),  # "from" is a stopword
        ("include/fmt/args.h", {"arg"}),
        ("Makefile", {"makefile"}),
        (".gitignore", {"gitignore"}),
        ("pkg/__init__.py", {"init"}),
    ],
)
def test_name_words(path: str, words: set[str]) -> None:
    assert name_words(path) == words


def test_a_file_is_named_when_every_word_of_its_name_is_asked() -> None:
    paths = ["core/Table.kt", "statements/UpdateStatement.kt", "statements/DeleteStatement.kt",
             "statements/Statement.kt", "statements/MergeStatement.kt", "tests/UpdateStatementTest.kt"]
    ranks = named_ranks(paths, "update and delete statement builders")
    # two name words before one; among equals the candidates' own order; tests need "test"
    assert ranks == {"statements/UpdateStatement.kt": 1, "statements/DeleteStatement.kt": 2,
                     "statements/Statement.kt": 3}
    assert "tests/UpdateStatementTest.kt" in named_ranks(paths, "tests for update statements")


def test_a_long_enough_name_word_abbreviates_the_question_word() -> None:
    paths = ["serde_core/src/ser/impls.rs", "serde_core/src/de/impls.rs", "src/ser/mod.rs"]
    ranks = named_ranks(paths, "standard library type Serialize implementations")
    assert ranks == {"serde_core/src/ser/impls.rs": 1, "serde_core/src/de/impls.rs": 2}
    # two letters are too few to stand for a word: "de" does not abbreviate "deserialize"
    assert "serde_core/src/de/impls.rs" not in named_ranks(["serde_core/src/de/impls.rs"], "deserialize")


def test_few_files_are_named_and_none_by_an_empty_question() -> None:
    paths = [f"pkg{i}/index.ts" for i in range(MAX_NAMED + 3)]
    assert list(named_ranks(paths, "index signatures").values()) == list(range(1, MAX_NAMED + 1))
    assert named_ranks(paths, "the and of") == {}
    assert query_words("ZodError structure") >= {"zoderror", "zod", "error"}


def test_the_named_file_gains_a_bonus_shown_on_the_hit(
    tmp_path: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    repo = tmp_path / "shop"
    (repo / "pkg").mkdir(parents=True)
    text = "def run(cart):\n    # apply every discount rule to the cart total\n    return cart.total\n"
    (repo / "pkg" / "discount.py").write_text(text, encoding="utf-8")
    (repo / "pkg" / "pricing.py").write_text(text.replace("run", "run_pricing"), encoding="utf-8")
    index_repository(repo, embedder=embedder, **at.kw)  # type: ignore[arg-type]
    store = open_index_store(repo, **at.kw)
    try:
        def hits(weights: Weights) -> dict[str, tuple[float, bool]]:
            query = "how a discount is applied"
            found = hybrid_search(store, query, embedder.encode([query])[0], repo="shop", weights=weights)
            return {hit.path: (hit.score, hit.name_match) for hit in found}

        named, plain = hits(Weights()), hits(Weights(name=0.0))
        assert named["pkg/discount.py"][1] and not plain["pkg/discount.py"][1]
        assert not named["pkg/pricing.py"][1]
        bonus = Weights().name / (Weights().k + 1)
        assert named["pkg/discount.py"][0] == pytest.approx(plain["pkg/discount.py"][0] + bonus, abs=2e-6)
        assert named["pkg/pricing.py"][0] == plain["pkg/pricing.py"][0]
    finally:
        store.close()


def test_a_lookup_names_only_the_file_called_by_the_whole_name() -> None:
    paths = ["src/path.py", "core/ResultRow.kt", "core/result_row.py", "core/Result.kt"]
    assert named_ranks(paths, "MyPathLike", frozenset({"mypathlike"})) == {}
    ranks = named_ranks(paths, "ResultRow", frozenset({"resultrow"}))
    assert ranks == {"core/ResultRow.kt": 1, "core/result_row.py": 2}
