"""Candidate pairs for near-duplicate scoring, without comparing every pair.

Exact edit-distance scoring of every pair is quadratic: all 500,000 pairs of 1,000 hits
would take about a minute (docs/benchmarks.md, "Dedup blocking"). Instead each text is reduced to a sample of its hashed character
5-grams — the grams whose hash falls in a fixed 1/16 of the hash space, plus the few
smallest hashes for short texts — computed for all texts at once with numpy over one
concatenated buffer. Because the sample is chosen by hash value, equal grams are
sampled in every text, so shared samples estimate shared grams (content-defined
sampling, as in winnowing/MinHash). Texts sharing at least ``min_shared`` of the
smaller sample are candidates, counted by sorting. Only the candidates are scored with
rapidfuzz.

A text's sample depends on that text alone, so it is remembered by text (servers return
the same chunks query after query): only texts not met before are hashed.

``bench/dedup_quality.py`` checks the candidates' recall against exhaustive scoring.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

GRAM = 5
SAMPLE_BELOW = np.uint64(1 << 28)  # keep hashes below 2**28 of 2**32: 1/16 of all grams
MIN_SAMPLES = 6  # short texts also keep their smallest hashes up to this many
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: odd, so a bijection mod 2**64
MIN_SHARED = 0.3
MAX_DF = 24  # a feature in more texts than this is boilerplate, not evidence
_WINDOW = 8  # grams are read as big-endian 8-byte words, then cut to GRAM bytes
_BLOCK = 1 << 16  # grams hashed per block: 512 KiB of uint64, cache-sized
_SAMPLED_PRODUCT = SAMPLE_BELOW << np.uint64(32)
_PADDING = b"\x00" * _WINDOW
# Buffers this large are hashed on two threads (when there are two CPUs): ~250 hits.
PARALLEL_BYTES = 4 * _BLOCK if (os.cpu_count() or 1) > 1 else 1 << 62
_HELPER: ThreadPoolExecutor | None = None
_HELPER_LOCK = threading.Lock()


def _gram_hashes(buffer: bytes) -> npt.NDArray[np.uint64]:
    """A 32-bit hash (in a uint64) of the 5-byte window starting at each offset of ``buffer``.

    Overlapping windows are read zero-copy as one strided big-endian uint64 view, so
    the whole buffer is hashed in three vectorised passes (shift, multiply, shift).
    """
    padded = buffer + b"\x00" * _WINDOW
    words = np.ndarray(shape=(len(buffer),), dtype=">u8", buffer=padded, strides=(1,))
    hashed: npt.NDArray[np.uint64] = np.right_shift(words, np.uint64(8 * (_WINDOW - GRAM)))
    np.multiply(hashed, _MULTIPLIER, out=hashed)
    np.right_shift(hashed, np.uint64(32), out=hashed)
    return hashed


def _sampled_grams(
    padded: bytes, excluded: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
    """Offsets in ``padded`` (text followed by ``_WINDOW`` zero bytes) whose gram hash is
    sampled, but not those in ``excluded`` (sorted), and those hashes, by offset.

    Same values as ``_gram_hashes`` filtered by ``SAMPLE_BELOW``, computed a block at a
    time in two reused arrays: fresh buffer-sized temporaries cost more in page faults
    (most of all in a VM) than the arithmetic does, and a block stays in cache. A hash
    is the product's high half, so it is below ``SAMPLE_BELOW`` exactly when the product
    is below ``SAMPLE_BELOW << 32``: only sampled products are shifted.

    numpy releases the GIL while it hashes, so a large buffer is shared with a helper
    thread: both take the next block until none is left, so a helper that gets no CPU
    costs the caller at most the block it is working on.
    """
    length = len(padded) - _WINDOW
    blocks = iter(range(0, length, _BLOCK))
    helper = _helper().submit(_hash_blocks, padded, excluded, blocks) if length >= PARALLEL_BYTES else None
    done = _hash_blocks(padded, excluded, blocks)
    if helper is not None:
        done += helper.result()
        done.sort(key=lambda block: block[0])
    positions = [np.empty(0, dtype=np.int64), *(where for _, where, _ in done)]
    values = [np.empty(0, dtype=np.uint64), *(hashes for _, _, hashes in done)]
    return np.concatenate(positions), np.concatenate(values)


def _hash_blocks(
    padded: bytes, excluded: npt.NDArray[np.int64], blocks: Iterator[int]
) -> list[tuple[int, npt.NDArray[np.int64], npt.NDArray[np.uint64]]]:
    """``(begin, sampled offsets, their hashes)`` for each block taken from ``blocks``."""
    length = len(padded) - _WINDOW
    words = np.ndarray(shape=(length,), dtype=">u8", buffer=padded, strides=(1,))
    size = min(length, _BLOCK)
    products = np.empty(size, dtype=np.uint64)
    sampled = np.empty(size, dtype=bool)
    done: list[tuple[int, npt.NDArray[np.int64], npt.NDArray[np.uint64]]] = []
    for begin in blocks:  # next() on a shared range iterator is atomic under the GIL
        block = min(_BLOCK, length - begin)
        grams, picked = products[:block], sampled[:block]
        np.right_shift(words[begin : begin + block], np.uint64(8 * (_WINDOW - GRAM)), out=grams)
        np.multiply(grams, _MULTIPLIER, out=grams)
        np.less(grams, _SAMPLED_PRODUCT, out=picked)
        picked[excluded[excluded.searchsorted(begin) : excluded.searchsorted(begin + block)] - begin] = False
        where = picked.nonzero()[0]
        hashes = grams[where] >> np.uint64(32)
        where += begin
        done.append((begin, where, hashes))
    return done


def _helper() -> ThreadPoolExecutor:
    """The one helper thread, started on first use."""
    global _HELPER
    with _HELPER_LOCK:
        if _HELPER is None:
            _HELPER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tributary-blocking")
        return _HELPER


# sample_features's memo: the features of texts met in earlier searches (servers return
# the same chunks again and again), as the bytes of their uint64 array — slicing and
# joining bytes costs far less than a numpy call per text — up to a total size of text,
# then started afresh.
_FEATURES: dict[bytes, bytes] = {}
_FEATURE_TEXT_BYTES = [0]
FEATURE_MEMO_BYTES = 8_000_000
_FEATURE_DTYPE = np.dtype(np.uint64)
_FEATURES_LOCK = threading.Lock()


def sample_features(texts: Sequence[bytes]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
    """``(doc, feature)`` pairs: each text's sampled 5-gram hashes (repeats possible).

    A text's features depend on nothing else, so they are remembered by text: only the
    texts not met before are hashed (together, in one pass)."""
    if not texts:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint64)
    joined: bytes | None = None
    with _FEATURES_LOCK:  # (pipelines may run on several threads; the memo may start afresh)
        fresh = [text for text in texts if text not in _FEATURES]
        if fresh:
            if _FEATURE_TEXT_BYTES[0] + sum(map(len, fresh)) > FEATURE_MEMO_BYTES:
                _forget_features()
                fresh = list(texts)
            blobs, joined = _features_of(fresh)
            _FEATURES.update(zip(fresh, blobs, strict=True))
            _FEATURE_TEXT_BYTES[0] += sum(map(len, fresh))
        if len(fresh) < len(texts):  # (when every text is new, the batch is the answer)
            blobs, joined = list(map(_FEATURES.__getitem__, texts)), None
    sizes = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    sizes //= _FEATURE_DTYPE.itemsize
    feats: npt.NDArray[np.uint64] = np.frombuffer(b"".join(blobs) if joined is None else joined, dtype=_FEATURE_DTYPE)
    return np.arange(len(texts), dtype=np.int64).repeat(sizes), feats


def clear_features() -> None:
    """Forget remembered features (benchmarks measure cold and warm runs)."""
    with _FEATURES_LOCK:
        _forget_features()


def _forget_features() -> None:
    _FEATURES.clear()
    _FEATURE_TEXT_BYTES[0] = 0


def _features_of(texts: Sequence[bytes]) -> tuple[list[bytes], bytes | None]:
    """Each text's sampled 5-gram hashes (as the bytes of a uint64 array), all texts
    hashed in one pass over them joined; and those bytes joined, unless a short text's
    were added to (then None)."""
    ends = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)).cumsum()
    # A window starting in the last GRAM-1 bytes of a text runs past its end; whichever
    # text such an offset lies in (a text can be shorter than that), it is too close to
    # that text's end as well.
    tails = np.sort((ends[:, None] - np.arange(1, GRAM, dtype=np.int64)).ravel())
    positions, feats = _sampled_grams(b"".join([*texts, _PADDING]), tails[tails >= 0])
    # Positions ascend: each text's share of them ends where its end would be inserted.
    width = _FEATURE_DTYPE.itemsize
    cuts = [0, *(positions.searchsorted(ends) * width).tolist()]
    blob = feats.tobytes()  # (uint64 already: _FEATURE_DTYPE)
    per_text = [blob[cut:next_cut] for cut, next_cut in itertools.pairwise(cuts)]
    short = [i for i, features in enumerate(per_text) if len(features) < MIN_SAMPLES * width]
    if not short:
        return per_text, blob
    # Short texts (a title, a task's line) have few samples: add their smallest hashes.
    for i, smallest in zip(short, _smallest_hashes([texts[i] for i in short]), strict=True):
        per_text[i] += smallest
    return per_text, None


def _smallest_hashes(texts: Sequence[bytes]) -> list[bytes]:
    """Each text's ``MIN_SAMPLES`` smallest distinct gram hashes, ascending (as the bytes
    of a uint64 array), for all texts in one pass: a numpy call per text costs more
    than these texts' hashing (real queries bring a dozen such texts, task lines)."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    grams = np.maximum(lengths - (GRAM - 1), 0)  # windows that lie inside their text
    starts = lengths.cumsum() - lengths
    inside = np.arange(int(grams.sum()), dtype=np.int64)
    inside += (starts - (grams.cumsum() - grams)).repeat(grams)  # each text's windows from its start on
    owners = np.arange(len(texts), dtype=np.int64).repeat(grams)
    hashes = _gram_hashes(b"".join(texts))[inside].astype(np.int64)  # (< 2**32)
    keys = (owners << 32) | hashes
    if not keys.size:  # (every text shorter than a gram)
        return [b""] * len(texts)
    keys.sort()
    keys = keys[_run_starts(keys)]  # by text, then hash, each once
    owner_of = keys >> 32
    rank = np.arange(keys.size) - owner_of.searchsorted(owner_of, side="left")
    kept = keys[rank < MIN_SAMPLES]
    cuts = [0, *(np.bincount(kept >> 32, minlength=len(texts)).cumsum() * _FEATURE_DTYPE.itemsize).tolist()]
    blob = (kept & 0xFFFFFFFF).astype(_FEATURE_DTYPE).tobytes()
    return [blob[cut:next_cut] for cut, next_cut in itertools.pairwise(cuts)]


def _run_starts(values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Index where each run of equal values starts, in a sorted non-empty array."""
    changes = np.empty(values.size, dtype=bool)
    changes[0] = True
    np.not_equal(values[1:], values[:-1], out=changes[1:])
    return changes.nonzero()[0]


def _run_lengths(starts: npt.NDArray[np.int64], size: int) -> npt.NDArray[np.int64]:
    """Length of each run, from the runs' start indices in an array of ``size``."""
    lengths = np.empty_like(starts)
    np.subtract(starts[1:], starts[:-1], out=lengths[:-1])
    lengths[-1] = size - starts[-1]
    return lengths


def candidate_pairs(texts: Sequence[bytes], min_shared: float = MIN_SHARED) -> npt.NDArray[np.int64]:
    """Index pairs ``(i, j)``, i < j, sharing >= ``min_shared`` of the smaller text's samples.

    Counting is done by sorting (numpy only): (feature, text) cells sorted by feature
    give, for each feature, the run of texts holding it; features held by one text say
    nothing and those held by more than ``MAX_DF`` texts (boilerplate such as
    ``import``) would make the pair count quadratic, so both are dropped; the pairs
    within the remaining runs are then counted. Pairs come sorted by ``(i, j)``.

    Cells and pairs are packed into one int64 each (the text index in the low ``bits``)
    so that unpacking is a shift and a mask, not a division.
    """
    n = len(texts)
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)
    bits = (n - 1).bit_length()
    low = (1 << bits) - 1
    docs, feats = sample_features(texts)
    if not docs.size:
        return np.empty((0, 2), dtype=np.int64)
    cells = (feats.astype(np.int64) << bits) | docs  # feats < 2**32: fits while n < 2**31
    cells.sort()
    cells = cells[_run_starts(cells)]  # each (feature, text) once
    owners = cells & low
    sizes = np.bincount(owners, minlength=n)
    starts = _run_starts(cells >> bits)
    lengths = _run_lengths(starts, cells.size)
    useful = (lengths >= 2) & (lengths <= MAX_DF)
    starts, lengths = starts[useful], lengths[useful]
    if not starts.size:
        return np.empty((0, 2), dtype=np.int64)
    # Every pair of cells within one useful run, without a Python loop: each cell of a
    # run (`lead`) repeated once per later cell of its run, then stepped 1, 2, … ahead.
    cell = (starts - lengths.cumsum() + lengths).repeat(lengths) + np.arange(int(lengths.sum()))
    later = (starts + lengths).repeat(lengths) - cell - 1
    lead = cell.repeat(later)
    step = np.arange(1, lead.size + 1) - (later.cumsum() - later).repeat(later)
    pair_keys = (owners[lead] << bits) | owners[lead + step]  # owners ascend within a run: a < b
    pair_keys.sort()
    first = _run_starts(pair_keys)
    counts = _run_lengths(first, pair_keys.size)
    unique = pair_keys[first]
    a, b = unique >> bits, unique & low
    ok = counts >= np.maximum(1.0, min_shared * np.minimum(sizes[a], sizes[b]))
    return np.stack([a[ok], b[ok]], axis=1)
