"""Confidence: how likely each hit, and the answer as a whole, is relevant at all.

Fused scores rank hits against each other and say nothing about whether any of them
answers the question: a nonsense query still gets thirty results. Confidence reads
the sources' own raw evidence for one hit and its group (``hit_signals``):

* ``cosine``    the best cosine of query and text any member reports (the files
                server's chunk cosine, the tasks server's task cosine);
* ``coverage``  the share of the query's words found in the hit's text (its title,
                path and content, and its folded members'), the words as BM25 sees them;
* ``keyword``   whether a keyword (BM25) retriever matched the hit at all;
* ``symbol``    whether the hit defines a name the query looks up;
* ``agreement`` how many sources beside the kept one returned it.

A source that reports none of these raw scores is judged on its words alone
(``UNSCORED_COSINE``).

A logistic model over them (``CONFIDENCE_MODEL``, fit by ``bench/confidence.py`` on
real questions of two kinds: relevant hits against every other hit, nonsense
queries' included) gives each hit a probability in [0, 1]; the answer's
confidence is its best hit's, and it is *confident* when that clears ``bar``. An answer
the built-in sources gave on keywords alone has no cosine to weigh, which is not a low
one: ``KEYWORD_ONLY_MODEL`` judges it (``model_for``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from tributary.engine.localsearch.longquery import is_task_question, read_task
from tributary.engine.model import NAME_ONLY, DedupGroup, Hit

SIGNALS = ("cosine", "coverage", "keyword", "symbol", "agreement")
# A hit from a source that reports no cosine and no keyword rank (most third-party
# servers) is judged on the query's words found in it, counted as a keyword match with
# the cosine of a typical relevant hit (the median of the benchmark's relevant hits).
UNSCORED_COSINE = 0.5
_RAW_KEYS = ("cosine", "keyword_rank", "bm25_rank")
TOP_HITS = 10  # the answer's confidence is the best of its first hits'
TASK_NAMES = 8  # an issue's most used code names that count as its words

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ed", "es", "ly", "s")
_STOP = frozenset(["a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "may", "might", "my", "no", "not", "of", "on", "or", "our", "should", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "was", "we", "were", "what", "when", "where", "which", "while", "who", "why", "will", "with", "would", "you", "your", "all", "any", "also", "been", "being", "both", "each", "few", "more", "most", "other", "some", "such", "only", "own", "same", "just", "now", "use", "used", "using", "via", "after", "before", "about", "above", "below", "up", "down", "out", "over", "under", "again", "further", "once", "here", "very", "s", "t", "add", "adds", "added", "fix", "fixes", "fixed", "make", "makes", "made", "new"])


@dataclass(frozen=True, slots=True)
class ConfidenceModel:
    """Logistic weights per signal, the intercept, and the bar the answer must clear."""

    weights: Mapping[str, float]
    intercept: float
    bar: float

    def probability(self, signals: Mapping[str, float]) -> float:
        z = self.intercept + sum(self.weights.get(name, 0.0) * value for name, value in signals.items())
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


# Fit by ``bench/confidence.py --fit`` on the tune halves of two kinds of question: the
# pytest benchmark's commit messages (files and history) and semble's code-search
# questions (files alone, as a repository indexed without its history is asked). A hit's
# value is the chance that its file is relevant; the bar flags 2 % of the real questions.
# Agreement between sources fit below zero (the questions without history have none)
# and is left out.
CONFIDENCE_MODEL = ConfidenceModel(
    weights={"cosine": 3.427, "coverage": 1.516, "keyword": 3.226, "symbol": 1.303},
    intercept=-7.236,
    bar=0.0973,
)
# For answers that hold no meaning-based evidence (keyword search alone: the model is
# loading, the vectors are not made yet, or the index has none) a missing cosine is not
# a low one: the same weights without it, the intercept moved so that the same bar flags
# as few real questions, judged on their keyword hits
# (``bench/confidence.py --keyword-only --fit``).
KEYWORD_ONLY_MODEL = ConfidenceModel(
    weights={"coverage": 1.516, "keyword": 3.226, "symbol": 1.303},
    intercept=-5.935,
    bar=0.0973,
)


def _stem(word: str) -> str:
    if len(word) > 5 and word.endswith("ies"):  # entries -> entry
        return word[:-3] + "y"
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _words(text: str) -> set[str]:
    """The text's words as keyword search matches them: identifiers split at ``_`` and
    case changes, lower-cased, plural and verb endings dropped. Each distinct token is
    read once, and a token seen before (code repeats its names) not again."""
    out: set[str] = set()
    for token in set(_WORD.findall(text)):
        out.update(_token_words(token))
    return out


@lru_cache(maxsize=1 << 16)
def _token_words(token: str) -> tuple[str, ...]:
    stem = _stem(token.lower())
    if token.islower() or token.isupper():
        return (stem,)
    return (stem, *(_stem(piece.lower()) for piece in _CAMEL.findall(token)))


@lru_cache(maxsize=256)
def query_words(query: str) -> frozenset[str]:
    """The words of a query that carry meaning (no stop words, at least three letters);
    of an issue-length task, those of its title and the code names it uses most, since
    no hit holds the words of a whole issue."""
    if is_task_question(query):
        task = read_task(query)
        query = " ".join([task.title, *(name for name, _ in task.names[:TASK_NAMES])])
    return frozenset(w for w in _words(query[:4000]) if len(w) >= 3 and w not in _STOP)


def _members(hit: Hit, group: DedupGroup | None) -> list[Hit]:
    return [hit, *(m.hit for m in group.members)] if group is not None else [hit]


def _cosine(hit: Hit) -> float:
    return max(0.0, min(1.0, float(hit.metadata["cosine"]))) if _reports_cosine(hit) else 0.0


def _reports_cosine(hit: Hit) -> bool:
    """Whether the hit's source gave a cosine for it (a number, not ``None``)."""
    value = hit.metadata.get("cosine")
    return isinstance(value, int | float) and not isinstance(value, bool)


def _keyword(hit: Hit) -> bool:
    meta = hit.metadata
    return meta.get("keyword_rank") is not None or meta.get("bm25_rank") is not None


def hit_signals(hit: Hit, group: DedupGroup | None, words: frozenset[str]) -> dict[str, float]:
    """The raw evidence for one hit and the hits folded into it (see the module docstring)."""
    members = _members(hit, group)
    coverage = 0.0
    if words:
        seen: set[str] = set()
        for member in members:
            seen |= _words(f"{member.title}\n{member.path or ''}\n{member.content[:20000]}") & words
        coverage = len(seen) / len(words)
    if any(_scored(m) for m in members):
        cosine = max(_cosine(m) for m in members)
        keyword = 1.0 if any(_keyword(m) for m in members) else 0.0
    else:  # no source said how well it matched: the words found stand in for both
        cosine = UNSCORED_COSINE if coverage else 0.0
        keyword = 1.0 if coverage else 0.0
    return {
        "cosine": cosine,
        "coverage": coverage,
        "keyword": keyword,
        "symbol": 1.0 if any(m.metadata.get("symbol_match") is True for m in members) else 0.0,
        "agreement": float(len({m.source for m in members}) - 1),
    }


def _scored(hit: Hit) -> bool:
    """Whether the hit's source reported its raw evidence (the built-in servers do)."""
    return any(key in hit.metadata for key in _RAW_KEYS)


@dataclass(frozen=True, slots=True)
class Confidence:
    """The answer's confidence (its best hit's) and whether it clears the bar."""

    overall: float
    confident: bool


def score_confidence(
    hits: Sequence[Hit],
    groups: Mapping[str, DedupGroup],
    query: str,
    model: ConfidenceModel | None = None,
) -> Confidence:
    """Set ``Hit.confidence`` on ``hits`` (best first) and return the answer's; judged by
    ``model``, else by ``model_for(hits)``."""
    model = model or model_for(hits, groups)
    words = query_words(query)
    for hit in hits:
        hit.confidence = round(model.probability(hit_signals(hit, groups.get(hit.id), words)), 4)
    overall = max((h.confidence for h in hits[:TOP_HITS]), default=0.0)
    return Confidence(overall=overall, confident=bool(words) and overall >= model.bar)


def model_for(hits: Sequence[Hit], groups: Mapping[str, DedupGroup]) -> ConfidenceModel:
    """``KEYWORD_ONLY_MODEL`` when sources that report their raw evidence gave no cosine
    for any of the first hits (they searched by keywords alone), else ``CONFIDENCE_MODEL``."""
    members = [m for hit in hits[:TOP_HITS] for m in _members(hit, groups.get(hit.id))]
    scored = [m for m in members if _scored(m)]
    if scored and not any(_reports_cosine(m) for m in scored):
        return KEYWORD_ONLY_MODEL
    return CONFIDENCE_MODEL


def signal_rows(
    hits: Iterable[Hit], groups: Mapping[str, DedupGroup], query: str
) -> list[dict[str, float]]:
    """``hit_signals`` of each hit (what ``bench/confidence.py`` fits the model on)."""
    words = query_words(query)
    return [hit_signals(hit, groups.get(hit.id), words) for hit in hits]


@dataclass(frozen=True, slots=True)
class SourceView:
    """One source's own view of a result: its rank and score, and the raw evidence it
    reported (for the score breakdown)."""

    source: str
    rank: int
    score: float | None
    cosine: float | None = None
    bm25: float | None = None
    name_only: bool = False  # the source matched the file's name, not its contents

    def text(self) -> str:
        parts = [f"{self.source}: rank {self.rank}" + (" by its file name" if self.name_only else "")]
        if self.score is not None:
            parts.append(f"score {self.score:.4g}")
        if self.cosine is not None:
            parts.append(f"cosine {self.cosine:.2f}")
        if self.bm25 is not None:
            parts.append(f"BM25 {self.bm25:.2f}")
        return ", ".join(parts)


def source_views(hit: Hit, group: DedupGroup | None) -> list[SourceView]:
    """Each source's best-ranked hit among ``hit`` and its folded members, as that
    source saw it; the kept hit's source first."""
    best: dict[str, Hit] = {}
    for member in _members(hit, group):
        seen = best.get(member.source)
        if seen is None or 0 < member.source_rank < seen.source_rank:
            best[member.source] = member
    return [
        SourceView(
            source, h.source_rank, h.source_score,
            _number(h.metadata.get("cosine")), _number(h.metadata.get("bm25")),
            h.metadata.get(NAME_ONLY) is True,
        )
        for source, h in best.items()
    ]


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
