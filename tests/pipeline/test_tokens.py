"""Token counting: the shipped WordPiece tokenizer, batching, caching, per-line counts."""

from __future__ import annotations

from tests.pipeline.helpers import FUNC_A, FUNC_B, hit
from tributary.engine.pipeline import tokens


def test_counts_are_real_tokens_not_words() -> None:
    assert tokens.count_tokens("") == 0
    assert tokens.count_tokens("hello world") == 2
    # an identifier splits into several word pieces
    assert tokens.count_tokens("parse_config_file") > 1


def test_batch_matches_single_and_is_cached() -> None:
    tokens.clear_cache()
    texts = [FUNC_A, FUNC_B, "", "x = 1"]
    batch = tokens.count_tokens_batch(texts)
    assert batch == [tokens.count_tokens(t) for t in texts]
    assert batch[2] == 0
    assert tokens.count_tokens_batch(texts) == batch


def test_line_counts_add_up_to_the_whole() -> None:
    per_line = tokens.line_token_counts(FUNC_A)
    assert len(per_line) == len(FUNC_A.split("\n"))
    assert sum(per_line) == tokens.count_tokens(FUNC_A)


def test_counts_are_additive_over_newline_joins() -> None:
    parts = ["### a.py:1-9", FUNC_A, "```", "<chunk x='1'><![CDATA[", FUNC_B, "]]></chunk>"]
    assert tokens.count_tokens("\n".join(parts)) == sum(tokens.count_tokens(p) for p in parts)


def test_fill_tokens_sets_only_missing_counts() -> None:
    a, b = hit("s", 1, FUNC_A), hit("s", 2, FUNC_B)
    b.tokens = 7
    tokens.fill_tokens([a, b])
    assert a.tokens == tokens.count_tokens(FUNC_A)
    assert b.tokens == 7
