"""Candidate pairs for near-duplicate scoring, without comparing every pair.

Exact edit-distance scoring costs ~50-120 µs for a pair of 40-line chunks here, so all
500,000 pairs of 1,000 hits would take about a minute (measured: ``process.cdist`` over
1,000 chunks, 55 s). Instead each text is reduced to a sample of its hashed character
5-grams — the grams whose hash falls in a fixed 1/16 of the hash space, plus the few
smallest hashes for short texts — computed for all texts at once with numpy over one
concatenated buffer. Because the sample is chosen by hash value, equal grams are
sampled in every text, so shared samples estimate shared grams (content-defined
sampling, as in winnowing/MinHash). Texts sharing at least ``min_shared`` of the
smaller sample are candidates, counted by sorting. Only the candidates are scored with
rapidfuzz.

``bench/dedup_quality.py`` checks the candidates' recall against exhaustive scoring.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

GRAM = 5
SAMPLE_BELOW = np.uint64(1 << 28)  # keep hashes below 2**28 of 2**32: 1/16 of all grams
MIN_SAMPLES = 6  # short texts also keep their smallest hashes up to this many
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: odd, so a bijection mod 2**64
MIN_SHARED = 0.3
MAX_DF = 24  # a feature in more texts than this is boilerplate, not evidence
_WINDOW = 8  # grams are read as big-endian 8-byte words, then cut to GRAM bytes


def _gram_hashes(buffer: bytes) -> npt.NDArray[np.uint64]:
    """A 32-bit hash (in a uint64) of the 5-byte window starting at each offset of ``buffer``.

    Overlapping windows are read zero-copy as one strided big-endian uint64 view, so
    the whole buffer is hashed in three vectorised passes (shift, multiply, shift).
    """
    padded = buffer + b"\x00" * _WINDOW
    words = np.ndarray(shape=(len(buffer),), dtype=">u8", buffer=padded, strides=(1,))
    grams = words >> np.uint64(8 * (_WINDOW - GRAM))
    hashed: npt.NDArray[np.uint64] = (grams * _MULTIPLIER) >> np.uint64(32)
    return hashed


def sample_features(texts: Sequence[bytes]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
    """``(doc, feature)`` pairs: each text's sampled 5-gram hashes (repeats possible)."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    hashes = _gram_hashes(b"".join(texts))
    positions = np.flatnonzero(hashes < SAMPLE_BELOW)
    docs = np.searchsorted(ends, positions, side="right")
    inside = positions + GRAM <= ends[np.minimum(docs, len(texts) - 1)]  # window within one text
    docs, feats = docs[inside], hashes[positions[inside]]
    sampled = np.bincount(docs, minlength=len(texts))
    all_docs: list[npt.NDArray[np.int64]] = [docs]
    all_feats: list[npt.NDArray[np.uint64]] = [feats]
    for i in np.flatnonzero(sampled < MIN_SAMPLES):  # short texts: few samples, add smallest
        own = hashes[starts[i] : max(starts[i], ends[i] - GRAM + 1)]
        smallest = np.unique(own)[:MIN_SAMPLES]
        all_docs.append(np.full(smallest.size, i, dtype=np.int64))
        all_feats.append(smallest)
    return np.concatenate(all_docs), np.concatenate(all_feats)


def _runs(values: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Start index and length of each run of equal values in a sorted array."""
    starts = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    return starts, np.diff(np.concatenate((starts, [values.size])))


def candidate_pairs(texts: Sequence[bytes], min_shared: float = MIN_SHARED) -> npt.NDArray[np.int64]:
    """Index pairs ``(i, j)``, i < j, sharing >= ``min_shared`` of the smaller text's samples.

    Counting is done by sorting (numpy only): (feature, text) cells sorted by feature
    give, for each feature, the run of texts holding it; features held by one text say
    nothing and those held by more than ``MAX_DF`` texts (boilerplate such as
    ``import``) would make the pair count quadratic, so both are dropped; the pairs
    within the remaining runs are then counted.
    """
    n = len(texts)
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)
    docs, feats = sample_features(texts)
    cells = np.sort(feats.astype(np.int64) * n + docs)  # feats < 2**32: no overflow
    cells = cells[np.concatenate(([True], cells[1:] != cells[:-1]))]  # each (feature, text) once
    owners = cells % n
    sizes = np.bincount(owners, minlength=n)
    starts, lengths = _runs(cells // n)
    useful = (lengths >= 2) & (lengths <= MAX_DF)
    keep = np.repeat(useful, lengths)
    owners, run_of = owners[keep], np.repeat(np.arange(starts.size), lengths)[keep]
    found: list[npt.NDArray[np.int64]] = []
    for offset in range(1, MAX_DF):  # texts at distance `offset` within one feature's run
        same = run_of[offset:] == run_of[:-offset] if offset < run_of.size else np.empty(0, dtype=bool)
        if not same.any():
            break
        idx = np.flatnonzero(same)
        found.append(owners[idx] * n + owners[idx + offset])  # owners ascend within a run: a < b
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    pair_keys = np.sort(np.concatenate(found))
    first, counts = _runs(pair_keys)
    a, b = pair_keys[first] // n, pair_keys[first] % n
    ok = counts >= np.maximum(1.0, min_shared * np.minimum(sizes[a], sizes[b]))
    return np.stack([a[ok], b[ok]], axis=1).astype(np.int64)
