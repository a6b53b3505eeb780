"""Several repositories' answers to one question, in one list.

Each index ranks its own chunks (or past tasks) and fuses the ranks, so every index's
first hit scores about alike however well it matches: a question about one repository
got the other repositories' best guesses (a chunk holding one of its words) interleaved
with its answer. Before the lists are merged, each index's scores are scaled by how
well its first hits hold the question's words, against the best-matching index's. The
words are the evidence comparable between indexes: BM25 depends on each corpus's
statistics, and a repository still being embedded has few cosines. One index is left as
it ranked itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import PurePath

from tributary.engine.index.search import SearchHit
from tributary.engine.pipeline.confidence import KEYWORD_ONLY_MODEL, query_words
from tributary.engine.tasks.model import TaskHit

STRENGTH_HITS = 5  # an index's first hits, whose best says how well the index matches
STRENGTH_CHARS = 20_000  # of a hit's text, searched for the question's words
UNNAMED_SHARE = 0.5  # an index's strength when the question names others but not it
NAMED_CHARS = 20_000  # of the question, searched for the repositories' names

# What one hit shows of its match: its text, whether keyword search found it, and whether
# it defines a name the question looks up.
Evidence = tuple[str, bool, bool]


def index_factors(
    evidence: Sequence[Iterable[Evidence]], query: str, names: Sequence[Iterable[str]] = ()
) -> list[float]:
    """For each index, by its first hits' evidence (best first), the factor its scores
    are scaled by: its strength (``strength``) over the strongest index's. When the
    question names some of the repositories but not all (``pytest --collect-only …``;
    ``names``: each index's, from ``repository_names``), the strength of each one it does
    not name is multiplied by ``UNNAMED_SHARE``. All 1 for one index, or when none holds
    a word of the question."""
    if len(evidence) < 2:
        return [1.0] * len(evidence)
    words = query_words(query)
    strengths = [strength(hits, words) for hits in evidence]
    named = [any(_names(query, name) for name in own) for own in names]
    if any(named) and not all(named) and len(named) == len(strengths):
        strengths = [s if said else s * UNNAMED_SHARE for s, said in zip(strengths, named, strict=True)]
    best = max(strengths)
    return [s / best if best > 0 else 1.0 for s in strengths]


def repository_names(name: str, root: str | PurePath) -> set[str]:
    """The words a question may call a repository by: the last part of its index name
    (``pallets/click`` -> ``click``) and of its folder, and of either the part after a
    ``__`` (``pytest-dev__pytest`` -> ``pytest``); three letters or more."""
    found: set[str] = set()
    for written in (name, str(root)):
        last = written.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
        found.update(part for part in (last, last.rsplit("__", 1)[-1]) if len(part) >= 3)
    return found


def _names(query: str, name: str) -> bool:
    """Whether ``query`` holds ``name`` as a word of its own (``pytest.raises`` names
    pytest; ``_pytest`` and ``pytest-dev`` do not)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", query[:NAMED_CHARS], re.IGNORECASE) is not None


def strength(evidence: Iterable[Evidence], words: frozenset[str]) -> float:
    """The best of the hits (an index's first ``STRENGTH_HITS``, as its callers take
    them) by the keyword-only confidence model: the share of the question's words a hit's
    text holds (as parts of words too: ``finaliz`` in ``addfinalizer``), whether keyword
    search matched it, whether it defines a looked-up name."""
    best = 0.0
    for text, keyword, defines in evidence:
        lowered = text[:STRENGTH_CHARS].lower()
        coverage = sum(word in lowered for word in words) / len(words) if words else 0.0
        signals = {"coverage": coverage, "keyword": float(keyword), "symbol": float(defines)}
        best = max(best, KEYWORD_ONLY_MODEL.probability(signals))
    return best


def merged_chunks(
    answers: Sequence[Sequence[SearchHit]], query: str, names: Sequence[Iterable[str]] = ()
) -> list[SearchHit]:
    """The code hits of every index, best first, each index's scaled (``index_factors``;
    ``names``: each index's ``repository_names``); ties keep the indexes' order."""
    evidence = [chunk_evidence(hits) for hits in answers]
    merged = [
        hit if factor >= 1.0 else replace(hit, score=round(hit.score * factor, 6))
        for hits, factor in zip(answers, index_factors(evidence, query, names), strict=True)
        for hit in hits
    ]
    merged.sort(key=lambda hit: -hit.score)  # stable
    return merged


def chunk_evidence(hits: Sequence[SearchHit]) -> list[Evidence]:
    """An index's first code hits as evidence: the name, path and text of each."""
    return [(f"{h.symbol or ''}\n{h.path}\n{h.content}", h.keyword_rank is not None, h.symbol_match)
            for h in hits[:STRENGTH_HITS]]


def task_evidence(hits: Sequence[TaskHit]) -> list[Evidence]:
    """A history's first task hits as evidence: the task's title and message."""
    return [(hit.task.text, hit.bm25_rank is not None, False) for hit in hits[:STRENGTH_HITS]]
