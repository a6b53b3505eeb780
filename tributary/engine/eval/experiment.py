"""Experiments: many fusion variants scored on the same raw retrieval, with statistics.

Retrieval is done once (``tributary.engine.eval.retrieval``): every source answered every query
once, and its raw hits are kept in ``QueryRun``s. Each ``Variant`` — a subset of
sources, a fusion strategy, source weights, an RRF k, dedup or hints switched off —
is then re-fused in-process with the pipeline's own functions (``deduplicate`` and
``fuse``), so a variant costs milliseconds per query and never asks a server again.

``run_experiment`` scores every variant on every query, aggregates per split (all,
tune, held-out) with bootstrap intervals, compares each variant with the baseline
(paired t-test, Cohen's d), picks the best grid setting on the tuning half and
reports it on the held-out half.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tributary.engine.config.schema import DedupConfig, FusionConfig
from tributary.engine.engine import SOURCE_DEPTH
from tributary.engine.eval.datasets import EvalQuery
from tributary.engine.eval.metrics import (
    DEFAULT_KS,
    ContributionSummary,
    query_metrics,
    ranked_files,
    summarise_contributions,
)
from tributary.engine.eval.stats import Estimate, PairedTest, bootstrap_ci, paired_test
from tributary.engine.localsearch.fusion import rrf
from tributary.engine.model import (
    FUSION_STRATEGIES,
    RRF_K_STRATEGIES,
    Hints,
    Hit,
    ScoreParts,
    SearchRequest,
)
from tributary.engine.pipeline import FusionParams, deduplicate, fuse
from tributary.engine.pipeline.dedup import DedupResult
from tributary.engine.pipeline.limits import clamp_top_k
from tributary.engine.pipeline.run import quotes_files

SPLITS = ("all", "tune", "test")
HEADLINE = ("recall@10", "mrr")
SUMMARY_METRICS = (*(f"recall@{k}" for k in DEFAULT_KS), "precision@10", "ndcg@10",
                   "success@10", "mrr", "map")
FILES, TASKS = "files", "tasks"
FILE_RRF = "file-rrf"  # a reference fusion computed here, over files instead of hits


@dataclass(frozen=True, slots=True)
class Variant:
    """One way to turn the raw hits into a ranking."""

    name: str
    group: str  # default | source | strategy | weights | rrf_k | depth | reference | ablation | grid
    sources: tuple[str, ...] | None = None  # None: every source that answered
    strategy: str | None = None  # None: what the engine would use (route, then config)
    params: Mapping[str, Any] = field(default_factory=dict)  # strategy_params (k, order, ...)
    weights: Mapping[str, float] | None = None  # None: the engine's weights
    dedup: bool = True
    hints: bool = True
    depth: int | None = None  # hits per source fused; None: what the engine asks for (top_k)
    description: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "name": self.name, "group": self.group,
            "sources": list(self.sources) if self.sources is not None else None,
            "strategy": self.strategy, "params": dict(self.params),
            "weights": dict(self.weights) if self.weights is not None else None,
            "dedup": self.dedup, "hints": self.hints, "description": self.description,
        }


@dataclass(slots=True)
class QueryRun:
    """What the sources returned for one query, and how the engine would fuse it."""

    query: EvalQuery
    hits: dict[str, list[Hit]]  # source → hits in the source's order
    strategy: str  # the engine's choice for this query (routing rule or config)
    weights: dict[str, float]  # the engine's per-source weights for this query
    latency_ms: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    query_class: str | None = None


PathMapper = Callable[[str], str | None]


def identity_path(path: str) -> str | None:
    return path


class Ranker:
    """Re-fuses one query's raw hits per variant; dedup results are shared between variants."""

    def __init__(
        self,
        fusion: FusionConfig | None = None,
        dedup: DedupConfig | None = None,
        path_of: PathMapper = identity_path,
        reputation: Mapping[str, float] | None = None,
    ) -> None:
        self.fusion = fusion or FusionConfig()
        self.dedup = dedup or DedupConfig()
        self.path_of = path_of
        self.reputation = dict(reputation or {})
        self._dedup_cache: dict[tuple[str, tuple[str, ...], bool, int], DedupResult] = {}

    def sources(self, run: QueryRun, variant: Variant) -> tuple[str, ...]:
        names = sorted(run.hits) if variant.sources is None else list(variant.sources)
        return tuple(s for s in names if s in run.hits)

    def depth(self, variant: Variant) -> int:
        """Hits per source a variant fuses: as many as the engine asks each source for."""
        if variant.depth is not None:
            return variant.depth
        return max(clamp_top_k(self.fusion.top_k), SOURCE_DEPTH)

    def _deduped(self, run: QueryRun, sources: tuple[str, ...], dedup: bool, depth: int) -> DedupResult:
        key = (run.query.id, sources, dedup, depth)
        cached = self._dedup_cache.get(key)
        if cached is not None:
            return cached
        flat: list[Hit] = []
        for source in sorted(sources):
            for position, hit in enumerate(run.hits[source][:depth], start=1):
                # A private copy: fusion writes scores onto hits, sources keep theirs.
                flat.append(replace(hit, source_rank=hit.source_rank or position,
                                    parts=ScoreParts(), metadata=dict(hit.metadata)))
        result = (
            deduplicate(flat, self.dedup, quote_files=quotes_files(run.query.query))
            if dedup
            else DedupResult(hits=flat, groups=[])
        )
        self._dedup_cache[key] = result
        return result

    def with_paths(self, path_of: PathMapper) -> Ranker:
        """The same ranker mapping paths with ``path_of``; dedup does not look at the
        mapping, so the two share their dedup results."""
        other = Ranker(self.fusion, self.dedup, path_of, self.reputation)
        other._dedup_cache = self._dedup_cache
        return other

    def rank(self, run: QueryRun, variant: Variant) -> list[str]:
        """The files of the fused ranking, each at the rank of its first hit."""
        sources = self.sources(run, variant)
        if not sources:
            return []
        if variant.strategy == FILE_RRF:
            return self._file_rrf(run, variant, sources)
        result = self._deduped(run, sources, variant.dedup, self.depth(variant))
        strategy = variant.strategy or run.strategy or self.fusion.strategy
        weights = dict(run.weights) if variant.weights is None else dict(variant.weights)
        hints = _hints(run.query.hints) if variant.hints else Hints()
        request = SearchRequest(
            query=run.query.query, strategy=strategy, strategy_params=dict(variant.params),
            source_weights=weights, hints=hints, dedup=variant.dedup, assemble=False,
            use_cache=False,
        )
        ranked = fuse(result.hits, result.by_kept, strategy,
                      FusionParams.build(request, self.fusion, self.reputation))
        return ranked_files(self.path_of(p) if p else None for p in _shown_paths(ranked, result))

    def _file_rrf(self, run: QueryRun, variant: Variant, sources: tuple[str, ...]) -> list[str]:
        """Reference, not the product: RRF over each source's *file* ranking, so a file
        both sources found gets both contributions (the bench README's baseline)."""
        k = float(variant.params.get("k", self.fusion.rrf_k))
        weights = dict(run.weights) if variant.weights is None else dict(variant.weights)
        depth = self.depth(variant)
        lists: list[tuple[float, list[str]]] = []
        first_seen: dict[str, tuple[int, str]] = {}
        for source in sources:
            files = ranked_files(self.path_of(h.path) if h.path else None for h in run.hits[source][:depth])
            lists.append((weights.get(source, 1.0), files))
            for rank, path in enumerate(files, start=1):
                first_seen.setdefault(path, (rank, source))
        scores = rrf(lists, k)
        return sorted(scores, key=lambda p: (-scores[p], first_seen[p], p))

    def source_ranking(self, run: QueryRun, source: str) -> list[str]:
        """One source's own file order, untouched by fusion."""
        return ranked_files(self.path_of(h.path) if h.path else None for h in run.hits.get(source, []))


def _hints(raw: Mapping[str, Any]) -> Hints:
    """A query's ``hints`` object as ``Hints`` (unknown keys ignored, lists kept as lists)."""
    return Hints(
        related_files=[str(p) for p in raw.get("related_files") or []],
        related_issues=[str(i) for i in raw.get("related_issues") or []],
        language=str(raw["language"]) if raw.get("language") else None,
        framework=str(raw["framework"]) if raw.get("framework") else None,
    )


# --------------------------------------------------------------------------- variants


def standard_variants(
    sources: Sequence[str],
    *,
    strategies: Sequence[str] = FUSION_STRATEGIES,
    rrf_ks: Sequence[int] = (5, 10, 20, 30, 60, 100),
    task_weights: Sequence[float] = (0.3, 0.5, 0.7),
    has_hints: bool = False,
) -> list[Variant]:
    """The standard A/B set and ablations for the sources at hand."""
    out = [Variant("default", "default", description="the engine's configuration")]
    for source in sources:
        out.append(Variant(f"{source}-only", "source", sources=(source,),
                           description=f"only the {source} source"))
    for strategy in strategies:
        out.append(Variant(f"strategy={strategy}", "strategy", strategy=strategy))
    if TASKS in sources and FILES in sources:
        for w in task_weights:
            out.append(Variant(f"rrf tasks:files={w:.1f}:{1 - w:.1f}", "weights", strategy="rrf",
                               weights={TASKS: w, FILES: 1.0 - w}))
    for k in rrf_ks:
        out.append(Variant(f"rrf k={k}", "rrf_k", strategy="rrf", params={"k": k}))
    if len(sources) > 1:
        out.append(Variant("reference: file-level rrf", "reference", strategy=FILE_RRF,
                           description="not the product: RRF over per-source file rankings"))
        out.append(Variant("reference: file-level rrf depth=100", "reference", strategy=FILE_RRF,
                           depth=100, description="the same over each source's top 100 hits"))
    out.append(Variant("depth=30", "depth", depth=30,
                       description="fuse each source's top 30 instead of the engine's depth"))
    if len(sources) > 1:
        for source in sources:
            rest = tuple(s for s in sources if s != source)
            out.append(Variant(f"without {source}", "ablation", sources=rest,
                               description=f"default minus the {source} source"))
    out.append(Variant("without dedup", "ablation", dedup=False, description="default minus dedup"))
    if has_hints:
        out.append(Variant("without hints", "ablation", hints=False, description="default minus hints"))
    return out


def grid_variants(
    sources: Sequence[str],
    *,
    strategies: Sequence[str] = ("rrf", "weighted"),
    rrf_ks: Sequence[int] = (10, 30, 60, 100),
    task_weights: Sequence[float] = (0.3, 0.5, 0.7),
) -> list[Variant]:
    """Strategy × RRF k × task weight (k only matters for rrf and vote): 15 settings."""
    both = TASKS in sources and FILES in sources
    weight_options: list[float | None] = list(task_weights) if both else [None]
    out: list[Variant] = []
    for strategy, w in itertools.product(strategies, weight_options):
        ks: Sequence[int | None] = rrf_ks if strategy in RRF_K_STRATEGIES else [None]
        for k in ks:
            weights = {TASKS: w, FILES: 1.0 - w} if w is not None else None
            label = [f"{strategy}"]
            if k is not None:
                label.append(f"k={k}")
            if w is not None:
                label.append(f"tasks={w:.2f}")
            out.append(Variant("grid " + " ".join(label), "grid", strategy=strategy,
                               params={"k": k} if k is not None else {}, weights=weights))
    return out


# --------------------------------------------------------------------------- splits


def tune_ids(ids: Sequence[str]) -> list[str]:
    """The tuning half: ids ordered by a hash (deterministic, unrelated to date), first half."""
    ordered = sorted(ids, key=lambda i: hashlib.blake2b(i.encode(), digest_size=8).hexdigest())
    return ordered[: (len(ordered) + 1) // 2]


# --------------------------------------------------------------------------- results


@dataclass(slots=True)
class VariantResult:
    variant: Variant
    per_query: dict[str, dict[str, float]]  # query id → metric → value
    rankings: dict[str, list[str]]  # query id → files (top 20, for the JSON)

    def values(self, metric: str, ids: Sequence[str]) -> list[float]:
        return [self.per_query[i][metric] for i in ids]


@dataclass(slots=True)
class ExperimentResult:
    dataset: str
    queries: list[EvalQuery]
    splits: dict[str, list[str]]  # split → query ids
    variants: list[VariantResult]
    summary: dict[str, dict[str, dict[str, Estimate]]]  # variant → split → metric → estimate
    tests: dict[str, dict[str, dict[str, PairedTest]]]  # variant → split → metric → vs baseline
    ablations: dict[str, dict[str, dict[str, PairedTest]]]  # vs default
    baseline: str
    best: dict[str, Any]  # the grid's pick: name, tuned on tune, reported on test
    contributions: dict[int, ContributionSummary]  # k → per-source contribution
    source_errors: dict[str, int]
    latency_ms: dict[str, list[float]]
    meta: dict[str, Any] = field(default_factory=dict)
    adaptive: dict[str, Any] = field(default_factory=dict)  # see tributary.engine.eval.adaptive

    def variant(self, name: str) -> VariantResult:
        for result in self.variants:
            if result.variant.name == name:
                return result
        raise KeyError(name)

    def estimate(self, variant: str, metric: str, split: str = "all") -> Estimate:
        return self.summary[variant][split][metric]


def objective(per_query: Mapping[str, Mapping[str, float]], ids: Sequence[str],
              metric: str = "recall@10", tiebreak: str = "mrr") -> tuple[float, float]:
    """Mean of ``metric`` over ``ids``, then mean of ``tiebreak`` (higher is better)."""
    n = max(len(ids), 1)
    return (sum(per_query[i][metric] for i in ids) / n, sum(per_query[i][tiebreak] for i in ids) / n)


def score_variant(ranker: Ranker, runs: Sequence[QueryRun], variant: Variant,
                  ks: Sequence[int] = DEFAULT_KS) -> VariantResult:
    per_query: dict[str, dict[str, float]] = {}
    rankings: dict[str, list[str]] = {}
    for run in runs:
        files = ranker.rank(run, variant)
        per_query[run.query.id] = query_metrics(files, run.query.relevant, ks)
        rankings[run.query.id] = files[:20]
    return VariantResult(variant=variant, per_query=per_query, rankings=rankings)


def summarise(result: VariantResult, splits: Mapping[str, Sequence[str]],
               metrics: Sequence[str], seed: int) -> dict[str, dict[str, Estimate]]:
    return {
        split: {m: bootstrap_ci(result.values(m, ids), seed=seed) for m in metrics}
        for split, ids in splits.items()
    }


def compare(candidate: VariantResult, reference: VariantResult,
             splits: Mapping[str, Sequence[str]]) -> dict[str, dict[str, PairedTest]]:
    return {
        split: {m: paired_test(reference.values(m, ids), candidate.values(m, ids)) for m in HEADLINE}
        for split, ids in splits.items()
    }


def run_experiment(
    runs: Sequence[QueryRun],
    ranker: Ranker,
    *,
    dataset: str = "",
    variants: Sequence[Variant] | None = None,
    grid: Sequence[Variant] | None = None,
    baseline: str | None = None,
    seed: int = 0,
    objective_metric: str = "recall@10",
    on_variant: Callable[[str], None] | None = None,
) -> ExperimentResult:
    """Score every variant (and the grid), aggregate, test, and pick the best grid setting."""
    sources = sorted({s for run in runs for s in run.hits})
    has_hints = any(run.query.hints for run in runs)
    variants = list(variants) if variants is not None else standard_variants(sources, has_hints=has_hints)
    grid = list(grid) if grid is not None else grid_variants(sources)
    ids = [run.query.id for run in runs]
    tune = tune_ids(ids)
    tune_set = set(tune)
    splits = {"all": ids, "tune": tune, "test": [i for i in ids if i not in tune_set]}

    results: list[VariantResult] = []
    for variant in [*variants, *grid]:
        if on_variant is not None:
            on_variant(variant.name)
        results.append(score_variant(ranker, runs, variant))
    by_name = {r.variant.name: r for r in results}

    if baseline is None:
        baseline = f"{TASKS}-only" if f"{TASKS}-only" in by_name else results[0].variant.name
    # The grid is only ever compared on the headline metrics: skip the rest's bootstraps.
    summary = {
        r.variant.name: summarise(r, splits, HEADLINE if r.variant.group == "grid" else SUMMARY_METRICS, seed)
        for r in results
    }
    tests = {r.variant.name: compare(r, by_name[baseline], splits) for r in results
             if r.variant.name != baseline and r.variant.group != "grid"}
    ablations = {r.variant.name: compare(r, by_name["default"], splits) for r in results
                 if r.variant.group == "ablation" and "default" in by_name}

    grid_results = [r for r in results if r.variant.group == "grid"]
    best: dict[str, Any] = {}
    if grid_results:
        pick = max(grid_results, key=lambda r: objective(r.per_query, splits["tune"], objective_metric))
        best = {
            "variant": pick.variant.as_dict(),
            "name": pick.variant.name,
            "objective": objective_metric,
            "tune": {m: summary[pick.variant.name]["tune"][m].as_dict() for m in HEADLINE},
            "test": {m: summary[pick.variant.name]["test"][m].as_dict() for m in HEADLINE},
            "grid_size": len(grid_results),
        }
        if "default" in by_name:
            best["vs_default_test"] = {
                m: t.as_dict() for m, t in compare(pick, by_name["default"], splits)["test"].items()
            }

    contributions = {
        k: summarise_contributions(
            [{s: ranker.source_ranking(run, s) for s in sources} for run in runs],
            [run.query.relevant for run in runs], k,
        )
        for k in (10, 100)
    }
    errors = {s: sum(1 for run in runs if s in run.errors) for s in sources}
    latency = {s: [run.latency_ms[s] for run in runs if s in run.latency_ms] for s in sources}
    return ExperimentResult(
        dataset=dataset, queries=[run.query for run in runs], splits=splits, variants=results,
        summary=summary, tests=tests, ablations=ablations, baseline=baseline, best=best,
        contributions=contributions, source_errors=errors, latency_ms=latency,
    )


def _shown_paths(ranked: list[Hit], result: DedupResult) -> list[str | None]:
    """The locations a user is shown, in order: each result's own path, then the paths
    of the duplicates folded into it (the UI lists them under the result, the MCP face
    returns them as ``duplicates``), so folding two files together does not hide one."""
    shown: list[str | None] = []
    for hit in ranked:
        shown.append(hit.path)
        group = result.by_kept.get(hit.id)
        if group is not None:
            shown.extend(member.hit.path for member in group.members if member.hit.path)
    return shown
