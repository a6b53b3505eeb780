"""Query-adaptive weights, measured: does a fusion setting per query class help?

Routing rules can set source weights and a fusion strategy for one query class
(``symbol``, ``howto``, ``conceptual``; :mod:`tributary.engine.query.kinds`). Whether that is worth
doing is an empirical question, answered here without leaking the held-out half:

1. every candidate setting (strategy × tasks:files weight) is scored on every query;
2. for each class, the candidate with the best objective on that class's *tuning*
   queries is picked — only if it beats the default there, and only if the class has
   at least ``MIN_TUNE_QUERIES`` tuning queries (fewer would pick noise);
3. the adaptive ranking (each query ranked by its class's pick) is compared with the
   default on the *held-out* queries, overall and per class, with paired t-tests.

The candidates are what a routing rule can express: ``weights`` and ``strategy``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tributary.engine.eval.experiment import (
    SUMMARY_METRICS,
    ExperimentResult,
    QueryRun,
    Ranker,
    Variant,
    VariantResult,
    compare,
    objective,
    score_variant,
    summarise,
)
from tributary.engine.eval.stats import PairedTest, paired_test
from tributary.engine.query.kinds import QUERY_CLASSES, classify_query

ADAPTIVE = "query-adaptive"
CANDIDATE_GROUP = "class-candidate"
DEFAULT_SETTING = "default"
CLASS_STRATEGIES = ("rrf", "weighted", "vote")
CLASS_TASK_WEIGHTS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
MIN_TUNE_QUERIES = 8
FILES, TASKS = "files", "tasks"


def class_candidates(sources: Sequence[str]) -> list[Variant]:
    """Strategy × tasks:files weight, the settings a class's routing rule could choose."""
    if not (FILES in sources and TASKS in sources):
        return []
    return [
        Variant(f"class {strategy} tasks={w:.1f}", CANDIDATE_GROUP, strategy=strategy,
                weights={TASKS: w, FILES: round(1.0 - w, 3)})
        for strategy in CLASS_STRATEGIES for w in CLASS_TASK_WEIGHTS
    ]


def query_classes(runs: Sequence[QueryRun]) -> dict[str, str]:
    """Query id → class, as the engine classified it when the query ran."""
    return {run.query.id: run.query_class or classify_query(run.query.query) for run in runs}


def _mean(result: VariantResult, ids: Sequence[str], metric: str) -> float:
    return sum(result.per_query[i][metric] for i in ids) / len(ids) if ids else 0.0


def _objective(result: VariantResult, ids: Sequence[str], metric: str, tiebreak: str) -> tuple[float, float]:
    return (_mean(result, ids, metric), _mean(result, ids, tiebreak))


def pick_per_class(
    candidates: Sequence[VariantResult],
    default: VariantResult,
    classes: Mapping[str, str],
    tune: Sequence[str],
    *,
    metric: str = "recall@10",
    tiebreak: str = "mrr",
    min_queries: int = MIN_TUNE_QUERIES,
) -> dict[str, str]:
    """Class → the candidate's name (or ``default``) chosen on the tuning queries only."""
    picks: dict[str, str] = {}
    for klass in QUERY_CLASSES:
        ids = [i for i in tune if classes.get(i) == klass]
        picks[klass] = DEFAULT_SETTING
        if len(ids) < min_queries or not candidates:
            continue
        best = max(candidates, key=lambda r: _objective(r, ids, metric, tiebreak))
        if _objective(best, ids, metric, tiebreak) > _objective(default, ids, metric, tiebreak):
            picks[klass] = best.variant.name
    return picks


def compose(
    picks: Mapping[str, str],
    settings: Mapping[str, VariantResult],
    classes: Mapping[str, str],
    ids: Sequence[str],
) -> VariantResult:
    """The adaptive ranking: every query scored as its class's pick scored it."""
    def chosen(query_id: str) -> VariantResult:
        return settings[picks.get(classes[query_id], DEFAULT_SETTING)]

    described = ", ".join(f"{k}: {v}" for k, v in picks.items())
    variant = Variant(ADAPTIVE, "adaptive", description=f"per-class setting tuned on the tuning half ({described})")
    return VariantResult(
        variant=variant,
        per_query={i: chosen(i).per_query[i] for i in ids},
        rankings={i: chosen(i).rankings[i] for i in ids},
    )


@dataclass(slots=True)
class ClassOutcome:
    """One class on the held-out half: its pick, its size, and adaptive vs. default."""

    query_class: str
    setting: str
    tune_queries: int
    test_queries: int
    default: dict[str, float]
    adaptive: dict[str, float]
    tests: dict[str, PairedTest]

    def as_dict(self) -> dict[str, Any]:
        return {
            "class": self.query_class, "setting": self.setting,
            "tune_queries": self.tune_queries, "test_queries": self.test_queries,
            "default": self.default, "adaptive": self.adaptive,
            "tests": {m: {"mean_diff": t.mean_diff, "p_value": t.p_value} for m, t in self.tests.items()},
        }


def class_outcomes(
    adaptive: VariantResult,
    default: VariantResult,
    picks: Mapping[str, str],
    classes: Mapping[str, str],
    splits: Mapping[str, Sequence[str]],
    metrics: Sequence[str] = ("recall@10", "mrr"),
) -> list[ClassOutcome]:
    out: list[ClassOutcome] = []
    for klass in QUERY_CLASSES:
        test = [i for i in splits["test"] if classes.get(i) == klass]
        out.append(ClassOutcome(
            query_class=klass,
            setting=picks.get(klass, DEFAULT_SETTING),
            tune_queries=sum(1 for i in splits["tune"] if classes.get(i) == klass),
            test_queries=len(test),
            default={m: _mean(default, test, m) for m in metrics},
            adaptive={m: _mean(adaptive, test, m) for m in metrics},
            tests={m: paired_test(default.values(m, test), adaptive.values(m, test)) for m in metrics},
        ))
    return out


def add_adaptive(result: ExperimentResult, runs: Sequence[QueryRun], ranker: Ranker, *,
                 objective_metric: str = "recall@10", seed: int = 0) -> None:
    """Score the candidates, pick per class on the tuning half, and add the adaptive
    variant (summary, test against the baseline) and the per-class outcome to ``result``."""
    sources = sorted({s for run in runs for s in run.hits})
    by_name = {r.variant.name: r for r in result.variants}
    default = by_name.get(DEFAULT_SETTING)
    candidates = [score_variant(ranker, runs, v) for v in class_candidates(sources)]
    if default is None or not candidates:
        return
    classes = query_classes(runs)
    tiebreak = "mrr" if objective_metric != "mrr" else "recall@10"
    picks = pick_per_class(candidates, default, classes, result.splits["tune"],
                           metric=objective_metric, tiebreak=tiebreak)
    settings = {DEFAULT_SETTING: default, **{c.variant.name: c for c in candidates}}
    adaptive = compose(picks, settings, classes, result.splits["all"])
    result.variants.append(adaptive)
    result.summary[ADAPTIVE] = summarise(adaptive, result.splits, SUMMARY_METRICS, seed)
    result.tests[ADAPTIVE] = compare(adaptive, by_name[result.baseline], result.splits)
    outcomes = class_outcomes(adaptive, default, picks, classes, result.splits)
    result.adaptive = {
        "objective": objective_metric,
        "min_tune_queries": MIN_TUNE_QUERIES,
        "candidates": len(candidates),
        "picks": picks,
        "classes": [o.as_dict() for o in outcomes],
        "vs_default_test": {
            m: {"mean_diff": t.mean_diff, "p_value": t.p_value}
            for m, t in compare(adaptive, default, result.splits)["test"].items()
        },
        "tune_objective": {"default": objective(default.per_query, result.splits["tune"], objective_metric),
                           "adaptive": objective(adaptive.per_query, result.splits["tune"], objective_metric)},
    }
