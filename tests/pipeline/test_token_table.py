"""The numpy word table behind token counts, against the tokenizer's full ``encode``.

Counts of a batch of new text come from one pass over the joined batch and a hash table
of known words (``tributary.engine.pipeline.wordtable``), with words the table does not hold
going to the dict memo or the model. These tests force that path (it normally starts
at ``_VECTOR_BYTES``) and compare with ``encode`` on real files (whole, in chunks, line
by line), on words at the key-size boundaries, on unicode, control characters and
special tokens mixed in one batch, and on random text; with the table cold, learning,
after words move from the dict into it, grown, cleared, restarted at the cache bound,
full, and under threads.
"""

from __future__ import annotations

import itertools
import random
import site
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tributary.engine.pipeline import tokens, wordtable
from tributary.engine.pipeline.wordtable import KEY_BYTES, WordTable, fold_table, word_keys

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _encoded(text: str) -> int:
    return len(tokens.get_tokenizer().encode(text, add_special_tokens=False).ids)


@pytest.fixture(autouse=True)
def vector_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every uncached batch and multi-line text takes the numpy path; caches start empty."""
    tokens.get_tokenizer()
    monkeypatch.setattr(tokens, "_VECTOR_BYTES", 0)
    tokens.clear_cache()
    yield
    tokens.clear_cache()


def _site_packages() -> Path:
    return next(Path(p) for p in site.getsitepackages() if (Path(p) / "pluggy").is_dir())


def _real_files() -> list[str]:
    """Python, Markdown and emoji-laden files installed in the venv (~300 KB)."""
    root = _site_packages()
    paths = sorted((root / "pluggy").glob("*.py")) + sorted(root.glob("**/*.md"))[:30]
    paths += [root / "click" / "_winconsole.py", root / "click" / "utils.py"]
    texts = [p.read_text("utf-8", errors="replace") for p in paths if p.is_file()]
    emoji = root / "rich" / "_emoji_codes.py"
    if emoji.is_file():
        texts.append(emoji.read_text("utf-8")[:30_000])
    return [t for t in texts if t]


@pytest.fixture(scope="module")
def real_files() -> list[str]:
    return _real_files()


def _chunks(text: str, lines: int = 40) -> list[str]:
    split = text.split("\n")
    return ["\n".join(split[i : i + lines]) for i in range(0, len(split), lines)]


def test_real_files_whole_in_chunks_and_by_line(real_files: list[str]) -> None:
    assert len(real_files) > 10 and any(not t.isascii() for t in real_files)
    chunks = [c for text in real_files for c in _chunks(text)]
    assert tokens.count_tokens_batch(real_files) == [_encoded(t) for t in real_files]
    tokens.clear_cache(words=False)  # counted again, now from the table
    assert tokens.count_tokens_batch(chunks) == [_encoded(c) for c in chunks]
    for text in real_files[:6]:
        tokens.clear_cache(words=False)
        assert tokens.line_token_counts(text) == tokens._encoded_line_counts(text, text.split("\n"))


def _boundary_words() -> list[str]:
    """Words of 1 to 26 bytes and 100, ASCII (mixed case, digits) and multi-byte UTF-8
    straddling the 8- and 16-byte windows."""
    rng = random.Random(5)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    words = ["".join(rng.choice(alphabet) for _ in range(n)) for n in [*range(1, 27), 100] for _ in range(3)]
    words += ["a" * n for n in (7, 8, 9, 15, 16, 17, 23, 24, 25, 100)]
    words += ["x" * (n - 2) + "é" for n in (8, 9, 16, 17, 24, 25)]  # the 2-byte letter at a window edge
    words += ["ab" * 4 + "日本", "Straße" * 3, "naïve" * 4, "ＡＢＣ", "ﬁx", "İstanbul", "e\u0301" * 5]
    words += ["getFixtureValue", "parse_HTTPResponse", "SQLAlchemyURL1234", "0x7FFFFFFFFFFFFFFF"]
    return words


def test_words_at_the_window_boundaries() -> None:
    words = _boundary_words()
    line = " ".join(words)
    texts = [line, line.upper(), ".".join(words), "\n".join(words), *words]
    assert tokens.count_tokens_batch(texts) == [_encoded(t) for t in texts]
    tokens.clear_cache(words=False)  # now known: from the table (or the dict, for long ones)
    assert tokens.count_tokens_batch(texts[::-1]) == [_encoded(t) for t in texts[::-1]]


_MIXED = [
    "", "def f(x):\n    return x  # é", "naïve café — Zürich", "日本語のテキスト", "emoji 😀👍🏽 here",
    "e\u0301\u0301 combining", "nbsp\u00a0and\u2003em\u3000ideographic", "zero\u200bwidth\ufeffbom",
    "digits 0123456789 3.14159 1e-10", "bell\x07here", "tab\tvt\x0bff\x0c", "nul\x00byte", "del\x7fchar",
    "run [CLS] and [SEP] here", "[MASK]", "lower [cls] is plain",
    "\r\n windows \r\n", "   ", "\n\n\n", "a" * 300, "x" * 30 + "\u0301", "ΣΑΣ σας", "ﬁﬂ ligatures",
]


@pytest.mark.parametrize("distinct_from", [1, 10**9])  # repeats of missing words found in numpy, or not
def test_one_batch_mixing_everything(monkeypatch: pytest.MonkeyPatch, distinct_from: int) -> None:
    monkeypatch.setattr(tokens, "_DISTINCT_FROM", distinct_from)
    texts = _MIXED + [t + " " + u for t, u in itertools.pairwise(_MIXED)]
    texts += [" ".join(_boundary_words()) * 2, "\n".join(_MIXED) * 3]
    expected = [_encoded(t) for t in texts]
    assert tokens.count_tokens_batch(texts) == expected
    tokens.clear_cache(words=False)
    assert tokens.count_tokens_batch(texts) == expected
    tokens.clear_cache(words=False)
    assert tokens.count_tokens_batch(texts[::-1]) == expected[::-1]


def test_line_counts_of_text_the_shortcut_cannot_take() -> None:
    for text in ("a\nb [CLS]\nc", "x\x07y\nz\n", "ok\n\x00\n"):
        tokens.clear_cache()
        assert tokens.line_token_counts(text) == tokens._encoded_line_counts(text, text.split("\n"))


_ALPHABET = st.sampled_from(
    [
        *"aZ09_.,;:!?()[]{}<>'\"`~\\/-+=*&^%$#@| \t\n\r",
        *["é", "ü", "日", "😀", "\u0301", "\u00a0", "\u3000", "\u200b", "\x00", "\x07", "\x0b", "\x7f"],
        *["[CLS]", "[SEP]", "[cls]", "def ", "self", "Straße", "a" * 9, "b" * 17, "c" * 25],
    ]
)
_TEXT = st.lists(_ALPHABET, max_size=60).map("".join)


@PROPERTY
@given(st.lists(_TEXT, max_size=10), st.booleans())
def test_random_batches_count_what_encode_counts(texts: list[str], cold: bool) -> None:
    tokens.clear_cache(words=cold)
    assert tokens.count_tokens_batch(texts) == [_encoded(t) for t in texts]


@PROPERTY
@given(_TEXT)
def test_random_line_counts_match_the_encoded_offsets(text: str) -> None:
    tokens.clear_cache(words=False)
    assert tokens.line_token_counts(text) == tokens._encoded_line_counts(text, text.split("\n"))


def test_every_table_state(monkeypatch: pytest.MonkeyPatch, real_files: list[str]) -> None:
    """Cold, learning (words pending in the dict), moved into the table, grown from
    nearly empty, cleared, and restarted at the word cache bound: always exact."""
    chunks = [c for text in real_files for c in _chunks(text, 25)]
    expected = [_encoded(c) for c in chunks]
    monkeypatch.setattr(tokens, "_vocabulary_table", tokens._table_of({b"the": 1, b"def": 1}))
    monkeypatch.setattr(tokens, "_PENDING", 200)
    tokens.clear_cache()
    start = tokens._word_table.hashes.size
    for lo in range(0, len(chunks), 40):  # learning: flushes to the table as words pend
        assert tokens.count_tokens_batch(chunks[lo : lo + 40]) == expected[lo : lo + 40]
    assert tokens._word_table.hashes.size > start and len(tokens._word_table) > 1000  # grown
    tokens.clear_cache(words=False)
    assert not tokens._pending or len(tokens._pending) < 200
    assert tokens.count_tokens_batch(chunks) == expected  # from the table
    tokens.clear_cache()
    assert len(tokens._word_table) == 2 and not tokens._pending
    assert tokens.count_tokens_batch(chunks) == expected  # cleared
    monkeypatch.setattr(tokens, "_WORD_CACHE_SIZE", 500)
    for lo in range(0, len(chunks), 20):  # restarted at the bound, again and again
        tokens.clear_cache(words=False)
        assert tokens.count_tokens_batch(chunks[lo : lo + 20]) == expected[lo : lo + 20]
    assert len(tokens._word_pieces) < len(tokens._whole_words) + 3000  # (started afresh each batch)


def test_recurring_pending_words_move_into_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_RECURRING", 3)
    text = "zyxwvutsrq qponmlkjih hgfedcbazy wvutsrqpon onmlkjihgf " * 40
    tokens.count_tokens_batch([text])
    assert b"zyxwvutsrq" in tokens._pending
    keys = word_keys([b"zyxwvutsrq"], tokens._FOLDED)
    assert tokens._word_table.lookup(keys)[0] == 0
    tokens.clear_cache(words=False)
    assert tokens.count_tokens_batch([text + "!"]) == [_encoded(text + "!")]
    assert not tokens._pending
    assert tokens._word_table.lookup(keys)[0] == tokens._word_pieces[b"zyxwvutsrq"] > 1


def test_a_crowded_table_only_misses(monkeypatch: pytest.MonkeyPatch, real_files: list[str]) -> None:
    """With no slack, buckets overflow and words are left out: counts stay exact."""
    monkeypatch.setattr(wordtable, "_SLACK", 1)
    monkeypatch.setattr(tokens, "_vocabulary_table", tokens._table_of(tokens._whole_words))
    monkeypatch.setattr(tokens, "_PENDING", 64)
    assert len(tokens._vocabulary_table) < len([w for w in tokens._whole_words if len(w) <= KEY_BYTES])
    tokens.clear_cache()
    chunks = [c for text in real_files[:8] for c in _chunks(text)]
    assert tokens.count_tokens_batch(chunks) == [_encoded(c) for c in chunks]
    tokens.clear_cache(words=False)
    assert tokens.count_tokens_batch(chunks) == [_encoded(c) for c in chunks]


def test_threads_counting_at_once_agree(real_files: list[str]) -> None:
    chunks = [c for text in real_files[:10] for c in _chunks(text, 30)]
    expected = [_encoded(c) for c in chunks]
    failures: list[str] = []

    def count(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(6):
            picked = rng.sample(range(len(chunks)), 25)
            got = tokens.count_tokens_batch([chunks[i] + " " * seed for i in picked])
            if got != [expected[i] for i in picked]:
                failures.append(f"thread {seed}")
            if seed == 0:
                tokens.clear_cache(words=rng.random() < 0.5)

    threads = [threading.Thread(target=count, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


_TABLE = fold_table(1, 2)


def test_keys_identify_words_exactly() -> None:
    words = sorted({w.lower().encode("utf-8") for w in _boundary_words() if w.isalnum()})
    keys = word_keys(words, _TABLE)
    short = [i for i, w in enumerate(words) if len(w) <= KEY_BYTES]
    pairs = {(int(keys.hashes[i]), int(keys.second[i])) for i in short}
    assert len(pairs) == len(short)  # distinct words, distinct keys
    assert all(keys.hashes[i] == 0 for i, w in enumerate(words) if len(w) > KEY_BYTES)
    assert all(keys.second[i] == 0 for i, w in enumerate(words) if len(w) <= 8)
    upper = word_keys([w.upper() for w in words if w.isascii()], _TABLE)  # folding lower-cases
    lower = word_keys([w for w in words if w.isascii()], _TABLE)
    assert np.array_equal(upper.hashes, lower.hashes) and np.array_equal(upper.second, lower.second)


def test_table_lookup_add_and_growth() -> None:
    rng = random.Random(3)
    words = sorted({"".join(rng.choice("abcdefghij0123456789") for _ in range(rng.randint(1, 20))).encode()
                    for _ in range(3000)})
    counts = {w: rng.randint(1, 300) for w in words}
    table = WordTable.empty(1)
    for lo in range(0, len(words), 500):
        batch = words[lo : lo + 500]
        table.add(word_keys(batch, _TABLE), np.array([counts[w] for w in batch], dtype=np.int64))
    got = table.lookup(word_keys(words, _TABLE)).tolist()
    assert table.hashes.size >= 4 * len(table)  # grew, and stays at most a quarter full
    assert all(g in (0, counts[w]) for g, w in zip(got, words, strict=True))  # a miss, never a wrong count
    held = [w for g, w in zip(got, words, strict=True) if g]
    assert all(len(w) <= KEY_BYTES and counts[w] <= 127 for w in held)
    assert len(held) > 0.9 * sum(1 for w in words if len(w) <= KEY_BYTES and counts[w] <= 127)
    others = word_keys([w + b"q" for w in words[:200]], _TABLE)
    assert not table.lookup(others).any()


def test_equal_hash_with_another_second_window_misses() -> None:
    table = WordTable.empty(8)
    long_word = word_keys([b"abcdefghijkl"], _TABLE)
    table.add(long_word, np.array([4], dtype=np.int64))
    assert table.lookup(long_word).tolist() == [4]
    forged = wordtable.Words(
        long_word.starts, long_word.ends, long_word.hashes, long_word.second + np.uint64(1), long_word.third
    )
    assert table.lookup(forged).tolist() == [0]
    forged = wordtable.Words(
        long_word.starts, long_word.ends, long_word.hashes, long_word.second, long_word.third + np.uint64(1)
    )
    assert table.lookup(forged).tolist() == [0]


def test_equal_hash_of_a_short_and_a_longer_word_misses() -> None:
    """A word of at most 8 bytes is keyed by its hash alone: a longer word whose hash
    collides with it (forged here) must not take its count, nor the other way round."""
    table = WordTable.empty(8)
    short = word_keys([b"abcdefgh"], _TABLE)
    table.add(short, np.array([2], dtype=np.int64))
    assert table.lookup(short).tolist() == [2]
    one = np.ones(1, dtype=np.uint64)
    longer = wordtable.Words(short.starts, short.ends, short.hashes, one, np.zeros(1, dtype=np.uint64))
    assert table.lookup(longer).tolist() == [0]
    held_long = word_keys([b"abcdefghijklmnopqrs"], _TABLE)
    table.add(held_long, np.array([5], dtype=np.int64))
    zero = np.zeros(1, dtype=np.uint64)
    as_short = wordtable.Words(held_long.starts, held_long.ends, held_long.hashes, zero, zero)
    assert table.lookup(held_long).tolist() == [5]
    assert table.lookup(as_short).tolist() == [0]


def test_repeats_of_missing_words_are_grouped_by_their_whole_key() -> None:
    """Occurrences group only when hash and both other windows agree (forged collisions
    here: equal hashes, windows differing in one place)."""
    n = tokens._DISTINCT_FROM + 4
    zero = np.zeros(n, dtype=np.uint64)
    hashes = np.full(n, 7, dtype=np.uint64)
    second, third = zero.copy(), zero.copy()
    second[1], third[2] = 1, 1  # three different words of one hash
    hashes[3], hashes[4] = 0, 0  # two words too long to key: each its own
    starts = np.arange(n, dtype=np.int64)
    words = wordtable.Words(starts, starts + 1, hashes, second, third)
    picked, repeats = tokens._distinct(words, np.arange(n, dtype=np.int64))
    assert repeats is not None
    occurrences, spread = repeats
    groups = {int(i): int(picked[g]) for i, g in zip(occurrences, spread, strict=True)}
    assert len({groups[0], groups[1], groups[2]}) == 3 and groups[3] == 3 and groups[4] == 4
    assert all(groups[i] == groups[0] for i in range(5, n))


def test_fold_table_rejects_codes_that_look_like_words() -> None:
    with pytest.raises(ValueError):
        fold_table(1, ord("a"))
    with pytest.raises(ValueError):
        fold_table(3, 3)
    table = fold_table(1, 2)
    assert b"Ab9 ,\x07\xc3".translate(table) == b"ab9\x00\x01\x02\xc3"
