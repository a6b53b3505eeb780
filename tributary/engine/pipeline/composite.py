"""The composite heuristic: four signals, each in 0..1, with tunable weights.

score = 0.4 keyword + 0.3 freshness + 0.2 reputation + 0.1 length (``CompositeWeights``)

* keyword: share of the query's terms found in the hit's title, path or content (the
  best of the hit's and its folded members').
* freshness: ``quality.recency_score`` of ``Hit.timestamp`` (undated: 0.6; the best of
  the hit's and its folded members').
* reputation: the source's reputation (feedback-derived, 0..1, default 0.5); for hits
  with an http(s) uri, the mean of that and ``quality.url_quality``.
* length: 1 up to ``ideal_tokens``, then ideal/len (long hits cost context); very
  short hits (under 1/20 of ideal) scale down too, as they rarely carry an answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tributary.engine.model import DedupGroup, Hit, ScoreParts

from .params import DEFAULT_REPUTATION, FusionParams, set_parts
from .quality import is_web_uri, recency_score, url_quality
from .text import query_terms


def keyword_score(hit: Hit, terms: tuple[str, ...]) -> float:
    if not terms:
        return 0.0
    haystack = f"{hit.title}\n{hit.path or ''}\n{hit.content}".lower()
    return sum([term in haystack for term in terms]) / len(terms)


def length_score(hit: Hit, ideal_tokens: int) -> float:
    size = hit.tokens if hit.tokens > 0 else max(1, len(hit.content) // 4)
    if size > ideal_tokens:
        return ideal_tokens / size
    floor = max(1, ideal_tokens // 20)
    return min(1.0, size / floor)


def reputation_score(hit: Hit, params: FusionParams) -> float:
    base = params.reputation.get(hit.source, DEFAULT_REPUTATION)
    if hit.uri and is_web_uri(hit.uri):
        return (base + url_quality(hit.uri, hit.content, hit.timestamp, params.now)) / 2
    return base


def composite(hits: Sequence[Hit], groups: Mapping[str, DedupGroup], params: FusionParams) -> None:
    weights = params.composite
    terms = query_terms(params.query)
    for hit in hits:
        # A group speaks for its members (as in rrf): the words and the date of a history
        # hit folded into a file's chunk count for the chunk that represents the file.
        group = groups.get(hit.id)
        members = [hit, *(m.hit for m in group.members)] if group is not None else [hit]
        keyword = max(keyword_score(m, terms) for m in members)
        freshness = max(recency_score(m.timestamp, params.now) for m in members)
        reputation = reputation_score(hit, params)
        length = max(length_score(m, params.ideal_tokens) for m in members)
        # What four ScoreParts.add calls would build (0.0 + each part), built at once.
        parts = {
            "keyword": 0.0 + weights.keyword * keyword,
            "freshness": 0.0 + weights.freshness * freshness,
            "reputation": 0.0 + weights.reputation * reputation,
            "length_penalty": 0.0 + weights.length * length,
        }
        raw = {"keyword": keyword, "freshness": freshness, "reputation": reputation, "length_penalty": length}
        set_parts(hit, ScoreParts(parts, raw, "weighted sum", sum(parts.values())))
