"""The whole pipeline over one search's hits: dedup, fuse, limit, judge, count, budget,
assemble. An answer none of whose hits clears the confidence bar gets a one-line
"nothing relevant found" context.

``run_pipeline`` is what the engine calls once the fan-out has hits. It does no I/O;
each stage's wall time is reported in ``PipelineResult.stage_ms``. Token counts are
taken only for the top-k hits (the ones shown and the only ones that can reach the
context): counting is the costliest step per hit, and counts are cached by content.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tributary.engine.config.schema import BudgetConfig, DedupConfig, FusionConfig
from tributary.engine.localsearch.longquery import is_task_question
from tributary.engine.model import (
    AssembledContext,
    ContextFormat,
    DedupGroup,
    Hit,
    Metrics,
    SearchRequest,
    is_task,
)
from tributary.engine.query.kinds import asks_history

from .assemble import assemble, nothing_found
from .budget import plan_budget
from .confidence import score_confidence
from .dedup import DedupResult, Embedder, deduplicate, merge_group_span
from .docstrings import WHOLE_LEADS, brief_docstrings
from .expand import (
    LEAD_CHUNKS,
    code_leads,
    context_hits,
    focus_functions,
    further_reading,
    history_evidence,
)
from .fusion import FusionParams, fuse
from .hints import HintScorer
from .limits import clamp_top_k
from .tokens import fill_tokens


@dataclass(slots=True)
class PipelineResult:
    hits: list[Hit]  # top-k, best first
    ranked: list[Hit]  # every unique hit, best first (evaluation reads past k)
    groups: list[DedupGroup]
    context: AssembledContext | None
    strategy: str
    top_k: int
    raw_hits: int
    unique_hits: int
    stage_ms: dict[str, float] = field(default_factory=dict)
    tokens_per_source: dict[str, int] = field(default_factory=dict)  # tokens each source put in the context
    allocation: dict[str, int] = field(default_factory=dict)  # each source's budget share
    confidence: float = 0.0  # the best hit's (confidence.py)
    confident: bool = False

    @property
    def total_ms(self) -> float:
        return sum(self.stage_ms.values())

    def fill_metrics(self, metrics: Metrics) -> None:
        """Copy this result's figures into the response's ``Metrics``."""
        metrics.stage_ms.update(self.stage_ms)
        metrics.raw_hits = self.raw_hits
        metrics.unique_hits = self.unique_hits
        metrics.tokens_per_source = dict(self.tokens_per_source)
        metrics.tokens_total = self.context.token_count if self.context else 0
        metrics.budget_utilisation = self.context.utilisation if self.context else 0.0


def flatten(hits_by_source: Mapping[str, Sequence[Hit]]) -> list[Hit]:
    """All hits, sources in name order; a hit without a rank gets its position (1-based)."""
    out: list[Hit] = []
    for source in sorted(hits_by_source):
        for position, hit in enumerate(hits_by_source[source], start=1):
            if hit.source_rank <= 0:
                hit.source_rank = position
            out.append(hit)
    return out


class _Clock:
    def __init__(self) -> None:
        self.stage_ms: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.stage_ms[stage] = round((now - self._last) * 1000.0, 3)
        self._last = now


def quotes_files(query: str) -> bool:
    """Whether dedup keeps a file's chunk rather than the history hit that names the file
    (``deduplicate(quote_files=...)``): for every query but a question about the past
    (``asks_history``), the code is the answer and the history that agrees is evidence
    (a member of the chunk's group, its rank a part of the score)."""
    return not asks_history(query)


def commits_first(ranked: list[Hit]) -> list[Hit]:
    """The past tasks (commits) of a ranking first, each part in its order: the answer
    to a question about the past is its commits, then the files they touched."""
    return [h for h in ranked if is_task(h)] + [h for h in ranked if not is_task(h)]


def run_pipeline(
    hits_by_source: Mapping[str, Sequence[Hit]],
    request: SearchRequest,
    *,
    fusion: FusionConfig | None = None,
    dedup: DedupConfig | None = None,
    budget: BudgetConfig | None = None,
    embed: Embedder | None = None,
    reputation: Mapping[str, float] | None = None,
    roles: Mapping[str, str] | None = None,
    weights: Mapping[str, float] | None = None,
) -> PipelineResult:
    """Dedup, fuse, limit and budget the hits of one search, and assemble the context.

    The request decides strategy (else ``fusion.strategy``), top_k (at most 100),
    token budget (``max_tokens - reserved_tokens``), format and whether to dedup and
    assemble; ``budget.overflow`` picks the overflow strategy. ``weights`` are per-source
    weights (e.g. ``ServerConfig.weight`` or a routing rule's), overridden by
    ``request.source_weights``; ``reputation`` (0..1 per source, from feedback) feeds the
    composite and weighted strategies; ``roles`` maps sources to budget roles
    (code/tasks/docs/web/memory), else ``budget.default_role``. Mutates the given hits:
    rank (when 0), score, parts and token count.
    """
    fusion = fusion or FusionConfig()
    dedup = dedup or DedupConfig()
    budget = budget or BudgetConfig()
    clock = _Clock()
    hits = flatten(hits_by_source)
    quote_files = quotes_files(request.query)
    task = is_task_question(request.query)
    clock.lap("normalise")

    result = (
        deduplicate(hits, dedup, embed, merge_spans=False, quote_files=quote_files)
        if request.dedup
        else DedupResult(hits=list(hits), groups=[])
    )
    clock.lap("dedup")

    strategy = request.strategy or fusion.strategy
    ranked = fuse(result.hits, result.by_kept, strategy, FusionParams.build(request, fusion, reputation, weights))
    if not quote_files:
        ranked = commits_first(ranked)
    elif task:
        leading = code_leads(ranked, result.by_kept, HintScorer(request.hints).score)
        ranked = focus_functions(leading, history=history_evidence(ranked, result.by_kept))
    top_k = clamp_top_k(request.top_k)
    top = ranked[:top_k]
    clock.lap("fuse")

    if request.dedup and dedup.merge_overlaps:  # merge spans only where they will be seen
        top = [merge_group_span(result.by_kept[h.id]) if h.id in result.by_kept else h for h in top]
        ranked[: len(top)] = top
    clock.lap("merge")

    judged = score_confidence(top, result.by_kept, request.query)
    clock.lap("confidence")

    # The context reads more of the best files' code (expand.py); a history question reads
    # commits. A task's context reads code past its first hits with long docstrings cut.
    pool, listed = ranked, top
    if task and request.assemble and quote_files:
        pool = brief_docstrings(ranked, {h.id for h in top[:WHOLE_LEADS]})
        listed = pool[: len(top)]  # ``top`` is ranked's head (merged spans included)
    readable = context_hits(listed, pool, lead=LEAD_CHUNKS if task else None) if request.assemble and quote_files else top
    fill_tokens(readable)
    more = further_reading(readable, pool, request.effective_budget) if task and request.assemble and quote_files else []
    clock.lap("tokens")

    context: AssembledContext | None = None
    tokens_per_source: dict[str, int] = {}
    allocation: dict[str, int] = {}
    if request.assemble:
        fmt = ContextFormat(request.format)
        plan = plan_budget(
            readable,
            budget=request.effective_budget,
            overflow=budget.overflow,
            task_type=request.task_type,
            fmt=fmt,
            query=request.query,
            roles=roles,
            then=more,
        )
        tokens_per_source, allocation = plan.tokens_per_source, plan.allocation
        clock.lap("budget")
        # An issue-length task always gets its best candidates: no hit holds the words
        # of a whole issue, and an agent acting on it is better served by the likeliest
        # code than by nothing (the answer's confidence still says how sure it is).
        if judged.confident or task:
            context = assemble(plan, fmt, request.query)
        else:  # no hit is likely relevant: say so rather than fill the budget with noise
            context = nothing_found(fmt, request.effective_budget, request.query, judged.overall)
            tokens_per_source = {}
        clock.lap("assemble")

    return PipelineResult(
        hits=top,
        ranked=ranked,
        groups=result.groups,
        context=context,
        strategy=strategy,
        top_k=top_k,
        raw_hits=len(hits),
        unique_hits=len(result.hits),
        stage_ms=clock.stage_ms,
        tokens_per_source=tokens_per_source,
        allocation=allocation,
        confidence=judged.overall,
        confident=judged.confident,
    )
