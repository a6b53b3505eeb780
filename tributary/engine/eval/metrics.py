"""Retrieval metrics over ranked *files*: per query, per source, and aggregated.

A search returns hits (chunks, tasks, ...); evaluation scores the files they point
at. A file's rank is the rank of its first hit (``ranked_files`` dedupes paths in
order), so a file found three times counts once, where it first appears.

Relevance is a set of paths (binary) or a mapping path → grade (graded, for NDCG);
every other metric treats a grade > 0 as relevant. All functions are pure.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

Relevance = Mapping[str, float] | Collection[str]

DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10, 20)


def ranked_files(paths: Iterable[str | None]) -> list[str]:
    """Paths in order of first appearance; ``None`` (a hit without a file) is skipped."""
    return list(dict.fromkeys(p for p in paths if p))


def grades(relevant: Relevance) -> dict[str, float]:
    """Relevance as path → grade; a plain collection gives every path grade 1."""
    if isinstance(relevant, Mapping):
        return {str(p): float(g) for p, g in relevant.items()}
    return {str(p): 1.0 for p in relevant}


def relevant_set(relevant: Relevance) -> set[str]:
    return {p for p, g in grades(relevant).items() if g > 0}


def hits_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> int:
    """How many relevant files are among the first ``k``."""
    wanted = relevant_set(relevant)
    return sum(1 for path in ranked[:k] if path in wanted)


def precision_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float:
    """Relevant files in the top ``k`` divided by ``k`` (a short list is not rewarded)."""
    if k <= 0:
        raise ValueError("k must be positive")
    return hits_at_k(ranked, relevant, k) / k


def recall_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float:
    """Relevant files in the top ``k`` divided by all relevant files (0 when there are none)."""
    wanted = relevant_set(relevant)
    if not wanted:
        return 0.0
    return hits_at_k(ranked, wanted, k) / len(wanted)


def success_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float:
    """1 when at least one relevant file is in the top ``k``, else 0."""
    return 1.0 if hits_at_k(ranked, relevant, k) > 0 else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: Relevance) -> float:
    """1 / rank of the first relevant file; 0 when none is ranked. Its mean is the MRR."""
    wanted = relevant_set(relevant)
    for rank, path in enumerate(ranked, start=1):
        if path in wanted:
            return 1.0 / rank
    return 0.0


def _dcg(gains: Iterable[float]) -> float:
    return math.fsum((2.0**g - 1.0) / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float:
    """Normalised DCG with gain 2^grade − 1 and discount log2(rank + 1)."""
    graded = grades(relevant)
    ideal = _dcg(sorted((g for g in graded.values() if g > 0), reverse=True)[:k])
    if ideal <= 0.0:
        return 0.0
    return _dcg(graded.get(path, 0.0) for path in ranked[:k]) / ideal


def average_precision(ranked: Sequence[str], relevant: Relevance) -> float:
    """Mean of precision at each relevant file's rank, over all relevant files."""
    wanted = relevant_set(relevant)
    if not wanted:
        return 0.0
    found, total = 0, 0.0
    for rank, path in enumerate(ranked, start=1):
        if path in wanted:
            found += 1
            total += found / rank
    return total / len(wanted)


def query_metrics(
    ranked: Sequence[str], relevant: Relevance, ks: Sequence[int] = DEFAULT_KS
) -> dict[str, float]:
    """Every metric for one query: ``recall@k``, ``precision@k``, ``ndcg@k``, ``success@k``,
    ``mrr`` (this query's reciprocal rank) and ``map`` (its average precision)."""
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall@{k}"] = recall_at_k(ranked, relevant, k)
        out[f"precision@{k}"] = precision_at_k(ranked, relevant, k)
        out[f"ndcg@{k}"] = ndcg_at_k(ranked, relevant, k)
        out[f"success@{k}"] = success_at_k(ranked, relevant, k)
    out["mrr"] = reciprocal_rank(ranked, relevant)
    out["map"] = average_precision(ranked, relevant)
    return out


# --------------------------------------------------------------------------- sources


def complementarity(a: Iterable[str], b: Iterable[str]) -> float:
    """Complementarity: files found by only one of two sources / files found by either."""
    left, right = set(a), set(b)
    union = left | right
    if not union:
        return 0.0
    return len(left ^ right) / len(union)


def overlap(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard overlap of two sources' files: 1 − complementarity when either found any."""
    left, right = set(a), set(b)
    union = left | right
    return len(left & right) / len(union) if union else 0.0


@dataclass(frozen=True, slots=True)
class SourceContribution:
    """For one query: which relevant files each source found within its top ``k``.

    ``found`` maps source → relevant files it found; ``unique`` → those no other
    source found; ``union`` is what any source found (``coverage`` = its share of
    the relevant files, the ceiling any fusion of these lists can reach at depth k).
    """

    k: int
    relevant: frozenset[str]
    found: Mapping[str, frozenset[str]]
    unique: Mapping[str, frozenset[str]]
    union: frozenset[str]
    shared: frozenset[str]  # found by every source

    @property
    def coverage(self) -> float:
        return len(self.union) / len(self.relevant) if self.relevant else 0.0

def source_contribution(
    ranked_by_source: Mapping[str, Sequence[str]], relevant: Relevance, k: int
) -> SourceContribution:
    """Who found which relevant file within the first ``k`` of their own ranking."""
    wanted = frozenset(relevant_set(relevant))
    found = {s: frozenset(p for p in ranked[:k] if p in wanted) for s, ranked in ranked_by_source.items()}
    unique: dict[str, frozenset[str]] = {}
    for source, files in found.items():
        others: set[str] = set()
        for other, other_files in found.items():
            if other != source:
                others |= other_files
        unique[source] = frozenset(files - others)
    union = frozenset().union(*found.values()) if found else frozenset()
    shared = frozenset.intersection(*found.values()) if found else frozenset()
    return SourceContribution(k=k, relevant=wanted, found=found, unique=unique, union=union, shared=shared)


@dataclass(frozen=True, slots=True)
class ContributionSummary:
    """Aggregated over queries: each source's share of all relevant files at depth k."""

    k: int
    relevant_total: int
    found: dict[str, int]  # relevant files each source found
    unique: dict[str, int]  # ... that no other source found
    union: int
    shared: int
    complementarity: float  # mean over queries of the per-query complementarity (all files in top k)

    @property
    def coverage(self) -> float:
        return self.union / self.relevant_total if self.relevant_total else 0.0

    def share(self, source: str) -> float:
        return self.found.get(source, 0) / self.relevant_total if self.relevant_total else 0.0

    def unique_share(self, source: str) -> float:
        return self.unique.get(source, 0) / self.relevant_total if self.relevant_total else 0.0


def summarise_contributions(
    per_query: Sequence[Mapping[str, Sequence[str]]],
    relevant: Sequence[Relevance],
    k: int,
) -> ContributionSummary:
    """Totals of ``source_contribution`` over queries, plus mean pairwise complementarity.

    Complementarity is computed on *all* files in each source's top ``k``,
    relevant or not, averaged over queries and over source pairs.
    """
    if len(per_query) != len(relevant):
        raise ValueError("one relevance set per query is needed")
    sources = sorted({s for by_source in per_query for s in by_source})
    found = dict.fromkeys(sources, 0)
    unique = dict.fromkeys(sources, 0)
    total = union = shared = 0
    comps: list[float] = []
    for by_source, rel in zip(per_query, relevant, strict=True):
        full = {s: by_source.get(s, []) for s in sources}
        c = source_contribution(full, rel, k)
        total += len(c.relevant)
        union += len(c.union)
        shared += len(c.shared)
        for s in sources:
            found[s] += len(c.found[s])
            unique[s] += len(c.unique[s])
        pairs = [(a, b) for i, a in enumerate(sources) for b in sources[i + 1 :]]
        if pairs:
            comps.append(
                sum(complementarity(full[a][:k], full[b][:k]) for a, b in pairs) / len(pairs)
            )
    mean_comp = sum(comps) / len(comps) if comps else 0.0
    return ContributionSummary(
        k=k, relevant_total=total, found=found, unique=unique, union=union, shared=shared,
        complementarity=mean_comp,
    )
