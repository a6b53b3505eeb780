"""The int8 first pass of dense search: same pool, same exact scores as float32 alone."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tributary.engine.index.store import SearchFilter, _ChunkVectors, _rank_dense
from tributary.engine.localsearch.knn import COARSE_MIN_ROWS, Int8Scorer, _query_scale


def _cache(rows: int, seed: int = 3) -> _ChunkVectors:
    rng = np.random.default_rng(seed)
    # Clustered unit vectors, like embeddings of related code, plus exact duplicates.
    centres = rng.standard_normal((40, 384)).astype(np.float32)
    matrix = centres[rng.integers(0, 40, rows)] + 0.6 * rng.standard_normal((rows, 384)).astype(
        np.float32
    )
    matrix[100:110] = matrix[99]
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = np.arange(1, rows + 1, dtype=np.int64) * 3
    languages = (np.arange(rows) % 3).astype(np.int32)
    return _ChunkVectors(
        ids=ids, matrix=matrix, languages=languages, kinds=np.zeros(rows, dtype=np.int32),
        files=ids // 30, by_id=np.argsort(ids), language_codes={"python": 0, "go": 1, "rst": 2},
        kind_codes={"function": 0}, coarse=Int8Scorer(matrix),
    )  # fmt: skip


def error_bound(scorer: Int8Scorer, matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """The most ``scorer.scores`` can differ from ``matrix @ vector``, row by row.

    Each quantised element is off by at most half its step, so a row's product is off
    by at most ``|v|·s_r/2 + |m|·s_q/2 + dim·s_r·s_q/4`` (L1 norms; ``s_r`` and ``s_q``
    the row's and the query's steps), given exact integer arithmetic.
    """
    row_step, query_step = scorer._row_scales, _query_scale(vector)
    return np.asarray(
        float(np.abs(vector).sum()) * row_step / 2
        + np.abs(matrix).sum(axis=1) * query_step / 2
        + matrix.shape[1] * row_step * query_step / 4
    )


def test_int8_scores_track_the_float32_product() -> None:
    cache = _cache(COARSE_MIN_ROWS)
    assert cache.coarse is not None
    query = cache.matrix[7] + 0.05
    query /= np.linalg.norm(query)
    approx = cache.coarse.scores(query)
    error = np.abs(approx - cache.matrix @ query)
    # The bound is the quantisation's own (rounding of each element), not a CPU's figure:
    # a kernel that saturated or lost precision would break it.
    bound = error_bound(cache.coarse, cache.matrix, query)
    assert np.all(error <= bound * 1.001 + 1e-5)
    assert float(bound.max()) < 0.1  # the bound is tight enough to shortlist with


def test_the_shortlist_gives_the_float32_pool_exactly() -> None:
    cache = _cache(COARSE_MIN_ROWS)
    exact = replace(cache, coarse=None)
    rng = np.random.default_rng(0)
    for n, where in enumerate([SearchFilter(), SearchFilter(languages=("go",))] * 5):
        query = cache.matrix[rng.integers(0, len(cache.ids))] + 0.3 * rng.standard_normal(384)
        query = (query / np.linalg.norm(query)).astype(np.float32)
        k = (10, 800)[n % 2]
        assert _rank_dense(cache, query, k, where) == _rank_dense(exact, query, k, where)


def test_equal_scores_come_back_in_id_order() -> None:
    cache = _cache(COARSE_MIN_ROWS)
    ranked = _rank_dense(cache, cache.matrix[99], 11, SearchFilter())
    assert [cid for cid, _ in ranked] == sorted(cid for cid, _ in ranked)
    assert {cid for cid, _ in ranked} == {int(cache.ids[i]) for i in range(99, 110)}


def test_the_files_of_chunks_come_from_arrays_and_skip_chunks_not_held() -> None:
    cache = _cache(300)
    some = [int(cache.ids[5]), 1, int(cache.ids[-1]), int(cache.ids[0]), 10**9]
    assert cache.files_of(some) == {int(cache.ids[5]): int(cache.ids[5]) // 30,
                                    int(cache.ids[-1]): int(cache.ids[-1]) // 30,
                                    int(cache.ids[0]): int(cache.ids[0]) // 30}  # fmt: skip
    assert cache.files_of([]) == {}


def test_quantising_in_blocks_gives_the_scores_of_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    from tributary.engine.localsearch import knn

    matrix = _cache(COARSE_MIN_ROWS).matrix
    query = matrix[3]
    whole = Int8Scorer(matrix).scores(query)
    monkeypatch.setattr(knn, "QUANTISE_BLOCK", 777)  # blocks that do not divide the rows
    assert np.array_equal(Int8Scorer(matrix).scores(query), whole)
