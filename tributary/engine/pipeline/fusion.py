"""Fusion: one score per unique hit from many sources' ranks and scores, explained.

Every strategy fills a fresh ``ScoreParts`` on every hit and sets ``Hit.score``; ``fuse``
then adds the definition boost (``defines``: ``definitions.py``) and the hints boost (its
own ``hint`` part) and returns the hits best first, ties
broken by best source rank, then source name, then id — so equal input gives equal
order. A hit that stands for a dedup group speaks for all its members: each source in
the group contributes its best rank, so agreement between sources raises the score.

Strategies (``STRATEGIES``):

* ``rrf``       Σ over sources w_s / (k + rank_s); parts ``rrf:<source>``.
* ``weighted``  Σ over sources w_s × 2·reputation_s × (min-max normalised source score,
                per source; a source without scores falls back to 1 - (rank-1)/n);
                parts ``weighted:<source>``. Unknown reputation counts as neutral (×1).
* ``composite`` 0.4 keyword + 0.3 freshness + 0.2 reputation + 0.1 length
                (``composite.py``).
* ``cascade``   sources in priority order, each source's hits after the previous one's.
* ``vote``      number of agreeing sources, ties by normalised RRF.

In ``rrf`` and ``weighted`` a hit whose source matched only its file's name (``NAME_ONLY``)
counts for ``NAME_ONLY_SHARE`` of a content match: a file-name search's first file is
one whose name holds a word of the question, which says less than code that holds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from tributary.engine.model import ROLE_FACTOR, DedupGroup, Hit, ScoreParts, evidence_share, is_task

from .composite import composite
from .definitions import apply_definitions
from .hints import HintScorer
from .params import DEFAULT_HINT_WEIGHT, DEFAULT_REPUTATION, FusionParams, set_parts

__all__ = [
    "DEFAULT_HINT_WEIGHT",
    "DEFAULT_REPUTATION",
    "STRATEGIES",
    "FusionParams",
    "Strategy",
    "fuse",
]

Strategy = Callable[[Sequence[Hit], Mapping[str, DedupGroup], FusionParams], None]


def appearances(hit: Hit, groups: Mapping[str, DedupGroup]) -> dict[str, Hit]:
    """Source -> that source's best-ranked hit for this item (the hit itself, or group members)."""
    best: dict[str, Hit] = {hit.source: hit}
    group = groups.get(hit.id)
    if group is not None:
        for member in group.members:
            seen = best.get(member.hit.source)
            if seen is None or _rank(member.hit) < _rank(seen):
                best[member.hit.source] = member.hit
    return best


def _rank(hit: Hit) -> int:
    return hit.source_rank if hit.source_rank > 0 else 1 << 20


def rrf(hits: Sequence[Hit], groups: Mapping[str, DedupGroup], params: FusionParams) -> None:
    k = params.rrf_k
    weights = params.source_weights  # params.weight(source), without a call per part
    names: dict[str, str] = {}  # source -> part name, built once per source
    for hit in hits:
        source = hit.source
        if hit.id not in groups:  # most hits: one source, one part
            rank = _rank(hit)
            name = names.get(source) or names.setdefault(source, f"rrf:{source}")
            value = 0.0 + weights.get(source, 1.0) * evidence_share(hit) / (k + rank)
            set_parts(hit, ScoreParts({name: value}, {name: float(rank)}, "sum", value))
            continue
        # What ScoreParts.add would build part by part (0.0 + each), built at once.
        contributions: dict[str, float] = {}
        raw: dict[str, float] = {}
        seen = appearances(hit, groups)
        for source in sorted(seen) if len(seen) > 1 else seen:
            rank = _rank(seen[source])
            name = names.get(source) or names.setdefault(source, f"rrf:{source}")
            contributions[name] = 0.0 + weights.get(source, 1.0) * evidence_share(seen[source]) / (k + rank)
            raw[name] = float(rank)
        set_parts(hit, ScoreParts(contributions, raw, "sum", sum(contributions.values())))


def _scale(hit: Hit) -> str:
    """What a hit's score is comparable with: its source's other hits of its kind (a
    tasks server scores its files and its tasks on two scales)."""
    return hit.source + "\x00task" if is_task(hit) else hit.source


def _source_normalisers(
    hits: Sequence[Hit], groups: Mapping[str, DedupGroup]
) -> dict[str, tuple[float, float, int]]:
    """Per source (and kind, ``_scale``): (min score, max score, hit count), over every
    hit the source returned."""
    stats: dict[str, tuple[float, float, int]] = {}
    everything = list(hits) + [m.hit for g in groups.values() for m in g.members]
    for hit in everything:
        scale = _scale(hit)
        lo, hi, n = stats.get(scale, (float("inf"), float("-inf"), 0))
        if hit.source_score is not None:
            lo, hi = min(lo, hit.source_score), max(hi, hit.source_score)
        stats[scale] = (lo, hi, max(n, hit.source_rank, 1))
    return stats


def _normalised(hit: Hit, stats: tuple[float, float, int]) -> float:
    lo, hi, n = stats
    if hit.source_score is None or lo > hi:
        return 1.0 - (_rank(hit) - 1) / max(n, 1) if hit.source_rank > 0 else 0.0
    if hi == lo:
        return 1.0
    return (hit.source_score - lo) / (hi - lo)


def weighted(hits: Sequence[Hit], groups: Mapping[str, DedupGroup], params: FusionParams) -> None:
    stats = _source_normalisers(hits, groups)
    for hit in hits:
        parts = ScoreParts(combine="sum")
        for source, seen in sorted(appearances(hit, groups).items()):
            value = _normalised(seen, stats[_scale(seen)])
            factor = params.weight(source) * _reputation_factor(params, source) * evidence_share(seen)
            parts.add(f"weighted:{source}", factor * value, raw=value)
        set_parts(hit, parts)


def _reputation_factor(params: FusionParams, source: str) -> float:
    """2 × reputation when one is known (neutral 0.5 -> 1.0), so feedback scales a source."""
    reputation = params.reputation.get(source)
    return 1.0 if reputation is None else 2.0 * max(0.0, min(1.0, reputation))


def cascade(hits: Sequence[Hit], groups: Mapping[str, DedupGroup], params: FusionParams) -> None:
    sources = sorted({h.source for h in hits} | {m.hit.source for g in groups.values() for m in g.members})
    order = [s for s in params.order if s in sources]
    order += sorted((s for s in sources if s not in order), key=lambda s: (-params.weight(s), s))
    tiers = {source: len(order) - i for i, source in enumerate(order)}
    for hit in hits:
        seen = appearances(hit, groups)
        top = max(seen, key=lambda s: (tiers[s], -_rank(seen[s])))
        parts = ScoreParts(combine="tier + 1/(1+rank)")
        parts.add("cascade_tier", float(tiers[top]), raw=float(tiers[top]))
        parts.add("rank", 1.0 / (1 + _rank(seen[top])), raw=float(_rank(seen[top])))
        set_parts(hit, parts)


def vote(hits: Sequence[Hit], groups: Mapping[str, DedupGroup], params: FusionParams) -> None:
    k = params.rrf_k
    for hit in hits:
        seen = appearances(hit, groups)
        fused = sum(params.weight(s) / (k + _rank(h)) for s, h in seen.items())
        ceiling = sum(params.weight(s) / (k + 1) for s in seen) or 1.0
        parts = ScoreParts(combine="votes + rrf/max_rrf")
        parts.add("votes", float(len(seen)), raw=float(len(seen)))
        parts.add("rrf", fused / ceiling * 0.999, raw=fused)  # < 1: never outweighs a vote
        set_parts(hit, parts)


def apply_hints(hits: Sequence[Hit], params: FusionParams) -> None:
    """Add the ``hint`` part: signal × hint_weight × the best base score, so it is on scale."""
    if params.hints.is_empty() or not hits:
        return
    scorer = HintScorer(params.hints)
    scale = max((h.score for h in hits), default=0.0) or 1.0
    for hit in hits:
        signal = scorer.score(hit)
        if signal > 0.0:
            hit.parts.add("hint", signal * params.hint_weight * scale, raw=signal)
            hit.score = hit.parts.total


def sort_key(hit: Hit) -> tuple[float, int, str, str]:
    return (-hit.score, _rank(hit), hit.source, hit.id)


STRATEGIES: dict[str, Strategy] = {
    "rrf": rrf,
    "weighted": weighted,
    "composite": composite,
    "cascade": cascade,
    "vote": vote,
}
# Its keys are ``model.FUSION_STRATEGIES``, in that order (a test holds them together).


def fuse(
    hits: Sequence[Hit],
    groups: Sequence[DedupGroup] | Mapping[str, DedupGroup] = (),
    strategy: str = "rrf",
    params: FusionParams | None = None,
) -> list[Hit]:
    """Score ``hits`` (the kept hit of each item) with ``strategy``; best first."""
    try:
        scorer = STRATEGIES[strategy]
    except KeyError:
        raise ValueError(f"unknown fusion strategy {strategy!r}; known: {', '.join(STRATEGIES)}") from None
    params = params or FusionParams()
    by_kept = groups if isinstance(groups, Mapping) else {g.kept.id: g for g in groups}
    scorer(hits, by_kept, params)
    apply_definitions(hits, params.names, params.definition_weight, params.query)
    apply_hints(hits, params)
    apply_roles(hits, by_kept)
    return diversify(sorted(hits, key=sort_key), params.same_file_decay)


def apply_roles(hits: Sequence[Hit], groups: Mapping[str, DedupGroup]) -> None:
    """Add the ``role`` part: what a source found in a file whose role (a test, a
    changelog, a lock file) it marked (``ROLE_FACTOR``) keeps that share. Where the
    score has a part per source (``rrf``, ``weighted``) only the marked sources' parts
    are scaled: another source found the item unmarked because it weighed the role
    itself. Otherwise the whole score is scaled when every source marked it."""
    for hit in hits:
        seen = appearances(hit, groups)
        marked = {source: kept for source, member in seen.items() if (kept := _role_factor(member)) < 1.0}
        if not marked:
            continue
        own = {source: _source_part(hit, source) for source in marked}
        if all(part is not None for part in own.values()):
            cut = sum((part or 0.0) * (1.0 - marked[source]) for source, part in own.items())
        elif len(marked) == len(seen):
            cut = hit.score * (1.0 - max(marked.values()))
        else:
            continue
        if cut > 0.0:
            hit.parts.add("role", -cut, raw=max(marked.values()))
            hit.score = hit.parts.total


def _source_part(hit: Hit, source: str) -> float | None:
    """The part of ``hit``'s score that ``source`` gave, where the strategy keeps one."""
    parts = hit.parts.parts
    for name in (f"rrf:{source}", f"weighted:{source}"):
        if name in parts:
            return parts[name]
    return None


def _role_factor(hit: Hit) -> float:
    value = hit.metadata.get(ROLE_FACTOR)
    return float(value) if isinstance(value, (int, float)) and 0.0 < value < 1.0 else 1.0


ROLE_SLACK = 0.999  # a built-in score this close to its unscaled one was not scaled


def role_demoted(hit: Hit) -> bool:
    """Whether ``hit``'s score was scaled down for its file's role: marked so for the
    fusion (a third-party source's test or changelog, ``ROLE_FACTOR``), or scored so by
    a built-in server (its ``fused`` score, before the role's prior, above the one it
    ranked by)."""
    if _role_factor(hit) < 1.0:
        return True
    before = hit.metadata.get("fused")
    return isinstance(before, (int, float)) and hit.source_score is not None and hit.source_score < before * ROLE_SLACK


def diversify(ranked: list[Hit], decay: float) -> list[Hit]:
    """Scale the n-th further hit of an already-ranked file by ``decay**n`` and re-sort.

    Without it the chunks of one strongly matching file crowd out every other file;
    the penalty is its own score part (``same_file``) so the breakdown shows it.
    """
    if decay >= 1.0:
        return ranked
    earlier: dict[str, int] = {}
    for hit in ranked:
        if not hit.path:
            continue
        n = earlier.get(hit.path, 0)
        earlier[hit.path] = n + 1
        if n:
            penalty = hit.score * (1.0 - decay**n)
            hit.parts.add("same_file", -penalty)
            hit.score -= penalty
    return sorted(ranked, key=sort_key)
