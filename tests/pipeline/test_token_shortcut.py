"""The token-count shortcut (per distinct word) against the tokenizer's full ``encode``.

Budgets, frames and assembled contexts all rest on these counts, so the shortcut must
give exactly what ``encode`` gives on any text: hypothesis draws texts rich in what the
normaliser and pre-tokeniser treat specially (case, punctuation, every whitespace and
control character, special tokens, over-long words, non-ASCII), and real source files
are compared whole and line by line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tributary.engine.pipeline import tokens

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_PIECES = st.sampled_from(
    [
        "def", "parse_HTTPResponse", "self.value", "x", "42", "3.14", "Zürich", "naïve", "日本",
        "[CLS]", "[SEP]", "[MASK]", "[cls]", "[", "]", "`", "~", "\\", "'", '"', "_", "__init__",
        " ", "  ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x00", "\x1f", "\x7f", "\u00a0",
        "a" * 120, "antidisestablishmentarianism", "QWERTYUIOPASDFGHJKL", "\ufffd", "é",
        "·", "’", "—", "İ", "Σ", "\u0301", "\u037e", "\u0903", "\x85", "\u200b", "\ufeff", "\u3000",
        "中文", "ＡＢＣ", "ﬁ", "\u2028",
    ]
)
_ANY = st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=40).map("".join)
# Mostly shortcut-eligible text: ASCII pieces, with the odd control character.
_ASCII = st.lists(
    st.one_of(_PIECES.filter(str.isascii), st.text(st.characters(max_codepoint=127), max_size=12)), max_size=40
).map("".join)
_TEXTS = st.one_of(_ASCII, _ANY)


def _encoded(text: str) -> int:
    return len(tokens.get_tokenizer().encode(text, add_special_tokens=False).ids)


@PROPERTY
@given(_TEXTS)
def test_shortcut_counts_what_encode_counts(text: str) -> None:
    tokens.clear_cache()
    assert tokens.count_tokens(text) == _encoded(text)


@PROPERTY
@given(st.lists(_TEXTS, max_size=8))
def test_batch_counts_what_encode_counts(texts: list[str]) -> None:
    tokens.clear_cache()
    assert tokens.count_tokens_batch(texts) == [_encoded(t) for t in texts]


@PROPERTY
@given(_TEXTS)
def test_line_counts_match_the_encoded_offsets(text: str) -> None:
    tokens.clear_cache()
    lines = text.split("\n")
    assert tokens.line_token_counts(text) == tokens._encoded_line_counts(text, lines)


def _source_files() -> list[str]:
    root = Path(pytest.__file__).parent.parent / "_pytest"
    return [p.read_text("utf-8") for p in sorted(root.glob("*.py"))[:12]]


def test_real_code_whole_and_by_line() -> None:
    tokens.clear_cache()
    texts = _source_files()
    assert texts and all(tokens._plain_bytes(t) is not None for t in texts[:3])  # the shortcut is taken
    assert tokens.count_tokens_batch(texts) == [_encoded(t) for t in texts]
    for text in texts[:4]:
        tokens.clear_cache()
        assert tokens.line_token_counts(text) == tokens._encoded_line_counts(text, text.split("\n"))
    chunks = ["\n".join(text.split("\n")[i : i + 40]) for text in texts[:3] for i in range(0, 400, 40)]
    assert all(len(c.encode()) < tokens._VECTOR_BYTES for c in chunks)  # the Python path, line by line
    for chunk in chunks:
        assert tokens.line_token_counts(chunk) == tokens._encoded_line_counts(chunk, chunk.split("\n"))


def test_text_the_shortcut_cannot_mirror_goes_to_the_tokenizer() -> None:
    for text in ("a\x0bb", "run [CLS] here", "bell\x07"):
        assert tokens._plain_bytes(text) is None
        tokens.clear_cache()
        assert tokens.count_tokens(text) == _encoded(text)
    assert tokens._plain_bytes("run [cls] here") is not None  # special tokens match case-sensitively
    assert tokens._plain_bytes("### a.py:1-9\n_files · score 0.0164_") is not None  # frames: non-ASCII words


def test_vocabulary_words_are_one_token() -> None:
    tokens.get_tokenizer()
    words = sorted(tokens._whole_words)
    assert len(words) > 10_000
    assert all(_encoded(w.decode("ascii")) == 1 for w in words[::40])


def test_special_tokens_are_known_before_the_first_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_tokenizer", None)  # as in a fresh process
    monkeypatch.setattr(tokens, "_specials", None)
    tokens.clear_cache()
    assert tokens.count_tokens("a [MASK] b") == _encoded("a [MASK] b")
