"""Query-adaptive weights measured: per-class picks on the tuning half, scored held out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.eval.test_experiment import _run
from tributary.engine.eval.adaptive import (
    ADAPTIVE,
    DEFAULT_SETTING,
    add_adaptive,
    class_candidates,
    pick_per_class,
)
from tributary.engine.eval.experiment import (
    QueryRun,
    Ranker,
    Variant,
    VariantResult,
    run_experiment,
)
from tributary.engine.eval.report import write_report


def _classed_runs() -> list[QueryRun]:
    """Symbol lookups only the files source answers (second, under a miss); how-to
    questions only tasks does; the other source's misses rank level with the answers."""
    runs = []
    for i in range(20):
        rel = f"s{i}.py"
        run = _run(f"s{i}", [rel], files=[f"miss{i}.py", rel], tasks=[f"noise{i}.py"])
        run.query = replace(run.query, query=f"where is parse_args_{i} defined")
        runs.append(run)
    for i in range(20):
        rel = f"h{i}.py"
        run = _run(f"h{i}", [rel], files=[f"other{i}.py"], tasks=[rel])
        run.query = replace(run.query, query=f"how do I fix the crash number {i}")
        runs.append(run)
    return runs


def test_each_class_gets_the_setting_that_wins_on_its_tuning_queries(tmp_path: Path) -> None:
    runs = _classed_runs()
    ranker = Ranker()
    result = run_experiment(runs, ranker, dataset="classes", grid=[])
    add_adaptive(result, runs, ranker)

    picks = result.adaptive["picks"]
    assert picks["conceptual"] == DEFAULT_SETTING  # no tuning queries of that class
    candidates = {v.name: v for v in class_candidates(["files", "tasks"])}
    symbol, howto = candidates[picks["symbol"]].weights, candidates[picks["howto"]].weights
    assert symbol is not None and howto is not None
    assert symbol["files"] > symbol["tasks"] and howto["tasks"] > howto["files"]

    assert result.estimate(ADAPTIVE, "mrr", "test").mean > result.estimate("default", "mrr", "test").mean
    assert result.adaptive["vs_default_test"]["mrr"]["mean_diff"] > 0
    by_class = {c["class"]: c for c in result.adaptive["classes"]}
    for klass in ("symbol", "howto"):
        assert by_class[klass]["adaptive"]["mrr"] > by_class[klass]["default"]["mrr"]
    assert by_class["symbol"]["tune_queries"] + by_class["symbol"]["test_queries"] == 20

    report = write_report(result, tmp_path / "report")["md"].read_text(encoding="utf-8")
    assert "## Query-adaptive weights" in report and "| symbol |" in report


def test_a_class_keeps_the_default_unless_a_candidate_beats_it() -> None:
    default = VariantResult(Variant("default", "default"),
                            {"a": {"recall@10": 1.0, "mrr": 1.0}, "b": {"recall@10": 1.0, "mrr": 0.5}}, {})
    worse = VariantResult(Variant("worse", "class-candidate"),
                          {"a": {"recall@10": 1.0, "mrr": 0.5}, "b": {"recall@10": 1.0, "mrr": 0.5}}, {})
    classes = {"a": "symbol", "b": "symbol"}
    assert pick_per_class([worse], default, classes, ["a", "b"], min_queries=2)["symbol"] == DEFAULT_SETTING
    better = VariantResult(Variant("better", "class-candidate"),
                           {"a": {"recall@10": 1.0, "mrr": 1.0}, "b": {"recall@10": 1.0, "mrr": 1.0}}, {})
    assert pick_per_class([worse, better], default, classes, ["a", "b"], min_queries=2)["symbol"] == "better"
    # too few tuning queries of the class: never trust a pick
    assert pick_per_class([better], default, classes, ["a", "b"], min_queries=3)["symbol"] == DEFAULT_SETTING
