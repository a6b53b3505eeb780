"""Metrics against values computed by hand."""

from __future__ import annotations

import math

import pytest

from tributary.engine.eval.metrics import (
    average_precision,
    complementarity,
    ndcg_at_k,
    overlap,
    precision_at_k,
    query_metrics,
    ranked_files,
    recall_at_k,
    reciprocal_rank,
    source_contribution,
    success_at_k,
    summarise_contributions,
)

RANKED = ["a", "b", "c", "d", "e"]
RELEVANT = {"b", "e", "z"}


def test_ranked_files_keeps_first_occurrence_and_skips_missing_paths() -> None:
    assert ranked_files(["a", None, "b", "a", "", "c", "b"]) == ["a", "b", "c"]


def test_precision_divides_by_k_even_past_the_end_of_the_list() -> None:
    assert precision_at_k(RANKED, RELEVANT, 1) == 0.0
    assert precision_at_k(RANKED, RELEVANT, 2) == 0.5
    assert precision_at_k(RANKED, RELEVANT, 5) == pytest.approx(0.4)
    assert precision_at_k(RANKED, RELEVANT, 10) == pytest.approx(0.2)
    with pytest.raises(ValueError):
        precision_at_k(RANKED, RELEVANT, 0)


def test_recall_counts_relevant_files_never_ranked() -> None:
    assert recall_at_k(RANKED, RELEVANT, 1) == 0.0
    assert recall_at_k(RANKED, RELEVANT, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, RELEVANT, 5) == pytest.approx(2 / 3)
    assert recall_at_k(RANKED, set(), 5) == 0.0


def test_reciprocal_rank_and_success() -> None:
    assert reciprocal_rank(RANKED, RELEVANT) == 0.5
    assert reciprocal_rank(RANKED, {"q"}) == 0.0
    assert success_at_k(RANKED, RELEVANT, 1) == 0.0
    assert success_at_k(RANKED, RELEVANT, 2) == 1.0


def test_average_precision_by_hand() -> None:
    # relevant at ranks 2 and 5: (1/2 + 2/5) / 3 relevant files
    assert average_precision(RANKED, RELEVANT) == pytest.approx(0.3)


def test_binary_ndcg_by_hand() -> None:
    dcg = 1 / math.log2(3) + 1 / math.log2(6)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(RANKED, RELEVANT, 5) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(RANKED, RELEVANT, 5) == pytest.approx(0.47763, abs=1e-5)


def test_graded_ndcg_uses_exponential_gain() -> None:
    graded = {"a": 2.0, "c": 1.0}
    dcg = (2**1 - 1) / 1 + (2**2 - 1) / math.log2(3)
    ideal = (2**2 - 1) / 1 + (2**1 - 1) / math.log2(3)
    assert ndcg_at_k(["c", "a"], graded, 2) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(["a", "c"], graded, 2) == pytest.approx(1.0)
    assert ndcg_at_k(["x"], {}, 3) == 0.0


def test_graded_zero_is_not_relevant() -> None:
    graded = {"a": 0.0, "b": 1.0}
    assert recall_at_k(["a", "b"], graded, 1) == 0.0
    assert reciprocal_rank(["a", "b"], graded) == 0.5


def test_query_metrics_has_every_metric() -> None:
    values = query_metrics(RANKED, RELEVANT, ks=(2, 5))
    assert values["recall@5"] == pytest.approx(2 / 3)
    assert values["precision@2"] == 0.5
    assert values["mrr"] == 0.5
    assert values["map"] == pytest.approx(0.3)
    assert set(values) == {"recall@2", "recall@5", "precision@2", "precision@5", "ndcg@2", "ndcg@5",
                           "success@2", "success@5", "mrr", "map"}


def test_complementarity_and_overlap_by_hand() -> None:
    a, b = {"x", "y", "z"}, {"y", "w"}
    assert complementarity(a, b) == pytest.approx(3 / 4)
    assert overlap(a, b) == pytest.approx(1 / 4)
    assert complementarity([], []) == 0.0


def test_source_contribution_splits_found_unique_and_union() -> None:
    c = source_contribution({"files": ["a", "b", "c"], "tasks": ["c", "d"]}, {"a", "c", "d", "q"}, k=2)
    assert c.found == {"files": frozenset({"a"}), "tasks": frozenset({"c", "d"})}
    assert c.unique == {"files": frozenset({"a"}), "tasks": frozenset({"c", "d"})}
    assert c.union == frozenset({"a", "c", "d"})
    assert c.shared == frozenset()
    assert c.coverage == pytest.approx(3 / 4)


def test_summarised_contributions_over_queries() -> None:
    per_query = [
        {"files": ["a", "b"], "tasks": ["a", "c"]},
        {"files": ["x"], "tasks": ["y"]},
    ]
    relevant = [{"a", "c"}, {"y", "z"}]
    s = summarise_contributions(per_query, relevant, k=2)
    assert s.relevant_total == 4
    assert s.found == {"files": 1, "tasks": 3}
    assert s.unique == {"files": 0, "tasks": 2}
    assert s.union == 3 and s.shared == 1
    assert s.coverage == pytest.approx(0.75)
    # query 1: {a,b} vs {a,c} → 2/3; query 2: {x} vs {y} → 1
    assert s.complementarity == pytest.approx((2 / 3 + 1) / 2)
    assert s.share("tasks") == pytest.approx(0.75)
    assert s.unique_share("files") == 0.0
