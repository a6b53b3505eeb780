"""Reciprocal rank fusion: the one formula hybrid search uses on both local indexes.

Each ranked list adds ``weight / (k + rank)`` (rank from 1) to every id it holds; an
id several lists agree on rises above one that tops a single list.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

RRF_K = 60

Id = TypeVar("Id", bound=Hashable)


def rrf(ranked_lists: Iterable[tuple[float, Sequence[Id]]], k: float = RRF_K) -> dict[Id, float]:
    """Weighted reciprocal-rank fusion of ``(weight, ids best first)`` lists. Sums run
    list by list, in each list's order, so equal inputs give the same floats."""
    scores: dict[Id, float] = {}
    for weight, ids in ranked_lists:
        for rank, item in enumerate(ids, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return scores


def best_first(scores: Mapping[int, float]) -> list[tuple[int, float]]:
    """``(id, score)`` pairs, highest score first, ties by id."""
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
