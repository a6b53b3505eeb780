"""Hybrid search's fusion: the numpy path gives exactly what plain RRF + file signal give."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from tributary.engine.index.search import SearchHit, Weights, _top_fused, cover_files, focus_files
from tributary.engine.localsearch.fusion import rrf


class _Files:
    """The one store method fusion needs: chunk id -> file id."""

    def __init__(self, file_of: dict[int, int]) -> None:
        self.file_of = file_of

    def file_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        return {cid: self.file_of[cid] for cid in chunk_ids if cid in self.file_of}


def _reference(
    files: _Files, lists: list[tuple[float, list[int]]], pools: list[tuple[float, list[tuple[int, float]]]],
    k: int, top_k: int,
) -> list[tuple[int, float]]:
    """The dict-based fusion hybrid search used before, kept here as the specification."""
    fused = rrf(lists, k)
    for weight, pool in pools:
        if not weight or not pool:
            continue
        file_of = files.file_ids(list(fused))
        totals: dict[int, float] = {}
        for cid, score in pool:
            if cid in file_of:
                totals[file_of[cid]] = totals.get(file_of[cid], 0.0) + score
        ranked = sorted(totals, key=lambda f: -totals[f])
        bonus = {f: weight / (k + r) for r, f in enumerate(ranked, 1)}
        for cid in fused:
            fused[cid] += bonus.get(file_of.get(cid, -1), 0.0)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:top_k]


@pytest.mark.parametrize("seed", range(20))
def test_numpy_fusion_matches_the_reference_exactly(seed: int) -> None:
    rng = random.Random(seed)
    chunks = rng.sample(range(1, 5000), 600)
    # Some chunks belong to no known file (deleted meanwhile); many share files.
    files = _Files({cid: rng.randrange(40) for cid in chunks if rng.random() > 0.05})
    dense = [(cid, rng.uniform(-0.2, 0.9)) for cid in rng.sample(chunks, rng.randrange(0, 300))]
    dense.sort(key=lambda hit: -hit[1])
    keyword = [(cid, rng.choice([1.5, 2.0, rng.random() * 9])) for cid in rng.sample(chunks, 250)]
    keyword.sort(key=lambda hit: -hit[1])
    weights = rng.choice([Weights(), Weights(file=0.0), Weights(1.5, 1.0, 1.0, 20), Weights(dense_file=0.0)])
    lists = [(weights.dense, [cid for cid, _ in dense]), (weights.keyword, [cid for cid, _ in keyword])]
    pools = [(weights.file, keyword), (weights.dense_file, dense)]
    top_k = rng.choice([1, 10, 30, 1000])
    assert _top_fused(files, lists, pools, weights.k, top_k) == _reference(  # type: ignore[arg-type]
        files, lists, pools, weights.k, top_k
    )


def test_a_file_whose_chunks_mean_the_question_ranks_higher() -> None:
    """Three middling chunks of one file outrank one good chunk of another file once the
    files' summed cosines count; without the dense file signal they do not."""
    files = _Files({1: 10, 2: 20, 3: 20, 4: 20, 5: 30, 6: 30, 7: 40, 8: 40})
    dense = [(1, 0.6), (2, 0.5), (3, 0.5), (4, 0.5), (5, 0.45), (6, 0.45), (7, 0.45), (8, 0.45)]
    lists = [(1.0, [cid for cid, _ in dense])]
    plain = _top_fused(files, lists, [], 60, 10)  # type: ignore[arg-type]
    whole = _top_fused(files, lists, [(0.5, dense)], 60, 10)  # type: ignore[arg-type]
    assert plain[0][0] == 1
    assert whole[0][0] == 2


def test_nothing_found_gives_nothing() -> None:
    assert _top_fused(_Files({}), [(1.0, []), (1.0, [])], [], Weights().k, 10) == []  # type: ignore[arg-type]


def _hit(path: str, score: float) -> SearchHit:
    return SearchHit(path, "r", 1, 2, None, "block", "python", score, "x")


def test_cover_files_makes_room_for_unlisted_files_in_score_order() -> None:
    crowded = [_hit("big.py", 1.0 - i / 100) for i in range(8)]
    below = [_hit("big.py", 0.5), _hit("a.py", 0.4), _hit("a.py", 0.39), _hit("b.py", 0.3)]
    top = cover_files([*crowded, *below], top_k=8, share=0.5)  # 4 files wanted, 3 there
    assert [h.path for h in top] == ["big.py"] * 6 + ["a.py", "b.py"]
    assert [h.score for h in top] == sorted((h.score for h in top), reverse=True)
    # enough files already, or none to add: the first top_k as they are
    assert cover_files([*crowded, *below], top_k=8, share=0.1) == crowded
    assert cover_files(crowded, top_k=8, share=0.5) == crowded


def _at(path: str, line: int, score: float) -> SearchHit:
    return SearchHit(path, "r", line, line + 5, None, "function", "python", score, "x")


def test_a_task_gives_the_tail_to_the_first_files_next_chunks() -> None:
    candidates = [_at("a.py", 1, 0.9), _at("b.py", 1, 0.8), _at("a.py", 10, 0.7), _at("a.py", 20, 0.6),
                  _at("c.py", 1, 0.5), _at("b.py", 10, 0.45), _at("d.py", 1, 0.4), _at("e.py", 1, 0.3)]
    listed = [candidates[0], candidates[1], candidates[4], candidates[6], candidates[7]]  # one chunk a file
    out = focus_files(listed, candidates, top_k=5, files=2, per_file=2)
    # the listed files keep their places; the last ones make room for a.py's and b.py's next
    assert [(h.path, h.start_line) for h in out] == [("a.py", 1), ("b.py", 1), ("c.py", 1), ("a.py", 10), ("b.py", 10)]
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
    assert out[3].score < listed[2].score  # scored below the rest: no listed file's rank moves
    # a file already listed twice has no room left; nothing to add gives the list back
    assert focus_files([candidates[0], candidates[2]], candidates[:3], top_k=5, files=1, per_file=2) == [
        candidates[0], candidates[2]]


def test_a_task_reads_further_into_its_first_file_after_the_others() -> None:
    a = [_at("a.py", 10 * n + 1, 0.9 - n / 100) for n in range(6)]
    b = [_at("b.py", 1, 0.8), _at("b.py", 11, 0.79)]
    others = [_at(f"f{n}.py", 1, 0.5 - n / 100) for n in range(6)]
    a[1] = _at("a.py", 11, 0.3)  # a.py's second chunk, spread to the end of the list
    listed = [a[0], b[0], *others[:5], a[1]]
    out = focus_files(listed, [*a, *b, *others], top_k=10, files=2, per_file=2, lead=5)
    places = [(h.path, h.start_line) for h in out]
    # b.py's next chunk comes first, then a.py's next three up to five in all; the room is
    # made at the end of the list, but a.py's own listed chunk stays
    assert places[-4:] == [("b.py", 11), ("a.py", 21), ("a.py", 31), ("a.py", 41)]
    assert ("a.py", 11) in places and ("f4.py", 1) not in places
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)


def test_a_focused_files_places_go_to_its_own_best_chunks() -> None:
    """The list's scores rank the files; which of a focused file's functions comes first
    is the file's own order's (``candidates``), at the scores of the places they take."""
    a1, a2, a3 = _at("a.py", 1, 0.9), _at("a.py", 10, 0.5), _at("a.py", 20, 0.0)
    b1 = _at("b.py", 1, 0.8)
    listed = [a1, b1, a2]
    own_order = [a3, a1, a2, b1]  # a.py's function at line 20 is its likeliest
    out = focus_files(listed, own_order, top_k=4, files=1, per_file=3)
    assert [(h.path, h.start_line) for h in out] == [("a.py", 20), ("b.py", 1), ("a.py", 1), ("a.py", 10)]
    assert [h.score for h in out[:3]] == [0.9, 0.8, 0.5]
    assert out[3].score < out[2].score
    # a file outside the focus keeps its chunks as the list ranked them
    assert focus_files([b1, a1], own_order, top_k=2, files=1, per_file=1)[1] is a1
