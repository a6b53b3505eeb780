"""Token budget: choose, and if need be shrink, the ranked hits that fit the context.

Effective budget = max tokens − reserved tokens (``SearchRequest.effective_budget``).
It is first shared among the sources present in proportion to their role's priority for
the task type (``ROLE_PRIORITIES``), then filled in relevance order:

1. each hit that fits whole in its source's share is taken;
2. what is left of every share is pooled, and the hits passed over are reconsidered in
   relevance order: taken whole if they fit, else shrunk by the overflow strategy
   (``drop``, ``truncate``, ``compress``, ``summarise``) to fit, if at least
   ``MIN_CHUNK_TOKENS`` remain. With ``compress``, code larger than a quarter of the
   budget is compressed even when it would fit.

Sources are MCP servers, so each source has a role (a ``roles`` mapping, else
``default_role`` from its name). The usual kinds of context source map onto roles:
vector_db -> ``code`` (indexed code search), rag -> ``tasks`` (retrieved history),
mcp -> ``docs`` (third-party documentation/tool servers), web_search -> ``web``,
live_api -> ``memory`` (live/session state such as a memory server).
Costs include each chunk's frame (``formats.frame_pieces``), so the assembled text fits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from tributary.engine.model import (
    OVERFLOW_STRATEGIES,
    ContextFormat,
    Hit,
    TaskType,
    several_repositories,
)

from .formats import body, frame_pieces, wrapper
from .overflow import fit
from .text import is_code
from .tokens import count_tokens, count_tokens_batch

MIN_CHUNK_TOKENS = 32
ROLES = ("code", "tasks", "docs", "web", "memory")

ROLE_PRIORITIES: dict[TaskType, dict[str, float]] = {
    TaskType.ANALYSIS: {"code": 3, "tasks": 2, "docs": 1, "web": 0.5, "memory": 0.5},
    TaskType.PLANNING: {"code": 2, "tasks": 3, "docs": 2, "web": 1, "memory": 0.5},
    TaskType.IMPLEMENTATION: {"code": 4, "tasks": 2, "docs": 2, "web": 1, "memory": 0.5},
    TaskType.REVIEW: {"code": 4, "tasks": 2, "docs": 1, "web": 0.5, "memory": 0.5},
    TaskType.TESTING: {"code": 3, "tasks": 2, "docs": 1, "web": 1, "memory": 0.5},
    TaskType.DOCUMENTATION: {"code": 2, "tasks": 2, "docs": 1, "web": 3, "memory": 0.5},
}

_ROLE_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tasks", ("task", "issue", "history", "commit", "git", "jira", "linear", "ticket")),
    ("code", ("file", "code", "repo", "serena", "symbol", "grep", "source")),
    ("web", ("web", "search", "tavily", "brave", "exa", "fetch", "browser", "google", "bing")),
    ("memory", ("memory", "mem0", "note", "session")),
)


@lru_cache(maxsize=1024)
def default_role(source: str) -> str:
    """A role from the source's name: built-in ``files`` -> code, ``tasks`` -> tasks, …; else docs."""
    name = source.lower()
    for role, words in _ROLE_WORDS:
        if any(word in name for word in words):
            return role
    return "docs"


def allocate(
    sources: Sequence[str], task_type: TaskType, budget: int, roles: Mapping[str, str] | None = None
) -> dict[str, int]:
    """Each source's share of ``budget`` by its role's priority for ``task_type``."""
    priorities = ROLE_PRIORITIES[task_type]
    weights = {s: priorities.get((roles or {}).get(s) or default_role(s), 1.0) for s in sorted(set(sources))}
    total = sum(weights.values())
    if not total or budget <= 0:
        return {s: 0 for s in weights}
    return {s: int(budget * w / total) for s, w in weights.items()}


@dataclass(slots=True)
class Selected:
    """One hit as it goes into the context: its (possibly shrunk) body and exact cost."""

    hit: Hit
    head: str
    body: str
    tail: str
    treatment: str
    tokens: int  # head + body + tail
    body_tokens: int


@dataclass(slots=True)
class BudgetResult:
    selected: list[Selected]  # relevance order
    dropped: list[Hit]
    budget: int
    used: int
    allocation: dict[str, int] = field(default_factory=dict)
    tokens_per_source: dict[str, int] = field(default_factory=dict)

    @property
    def utilisation(self) -> float:
        return self.used / self.budget if self.budget else 0.0


def _priced(hit: Hit, content: str, treatment: str, fmt: ContextFormat, named: bool = False) -> Selected:
    text = body(content, fmt)
    pieces = frame_pieces(hit, fmt, treatment, text, named)
    body_tokens = hit.tokens if treatment == "full" and text == hit.content and hit.tokens > 0 else count_tokens(text)
    framing = sum(count_tokens_batch(pieces))
    return Selected(hit, "".join(pieces[:3]), text, pieces[3], treatment, framing + body_tokens, body_tokens)


def _priced_whole(hits: Sequence[Hit], fmt: ContextFormat, named: bool = False) -> list[Selected]:
    """``_priced(hit, hit.content, "full", fmt)`` for each hit, every count in one batch
    (a batch costs the tokenizer less than a call per piece). Heads are counted in
    pieces (``formats.frame_pieces``): the score is new in each query, the rest of a
    chunk's head is the same whenever the chunk comes back, and so remembered."""
    bodies = [body(hit.content, fmt) for hit in hits]
    frames = [frame_pieces(hit, fmt, "full", text, named) for hit, text in zip(hits, bodies, strict=True)]
    known = [hit.tokens if text == hit.content and hit.tokens > 0 else -1 for hit, text in zip(hits, bodies, strict=True)]
    uncounted = [text for text, n in zip(bodies, known, strict=True) if n < 0]
    counts = iter(count_tokens_batch([piece for pieces in frames for piece in pieces] + uncounted))
    frame_tokens = [next(counts) + next(counts) + next(counts) + next(counts) for _ in frames]
    items: list[Selected] = []
    for hit, text, pieces, n, framing in zip(hits, bodies, frames, known, frame_tokens, strict=True):
        body_tokens = n if n >= 0 else next(counts)
        head = pieces[0] + pieces[1] + pieces[2]
        items.append(Selected(hit, head, text, pieces[3], "full", framing + body_tokens, body_tokens))
    return items


def _shrunk(
    hit: Hit, room: int, overflow: str, fmt: ContextFormat, query: str, named: bool = False
) -> Selected | None:
    """The hit shrunk by ``overflow`` to cost at most ``room`` tokens, or None."""
    frame_cost = _priced(hit, "", overflow_treatment(overflow), fmt, named).tokens
    limit = room - frame_cost
    for _ in range(3):  # escaping can add a few tokens: retry with the excess taken off
        if limit < MIN_CHUNK_TOKENS:
            return None
        result = fit(hit.content, limit, overflow, hit.path, query)
        if result is None:
            return None
        candidate = _priced(hit, result[0], result[1], fmt, named)
        if candidate.tokens <= room:
            return candidate
        limit -= candidate.tokens - room
    return None


def overflow_treatment(overflow: str) -> str:
    return {"truncate": "truncated", "compress": "compressed", "summarise": "summarised"}.get(overflow, "full")


def plan_budget(
    ranked: Sequence[Hit],
    *,
    budget: int,
    overflow: str = "truncate",
    task_type: TaskType = TaskType.IMPLEMENTATION,
    fmt: ContextFormat = ContextFormat.MARKDOWN,
    query: str = "",
    roles: Mapping[str, str] | None = None,
    then: Sequence[Hit] = (),
) -> BudgetResult:
    """Choose and shrink ``ranked`` (best first, ``Hit.tokens`` filled) to fit ``budget``;
    then, in order, each of ``then`` that fits whole in what is left (further reading,
    which never takes room from ``ranked``)."""
    if overflow not in OVERFLOW_STRATEGIES:
        raise ValueError(f"unknown overflow strategy {overflow!r}; known: {', '.join(OVERFLOW_STRATEGIES)}")
    head, tail = wrapper(fmt, query)
    available = budget - count_tokens(head) - count_tokens(tail)
    shares = allocate([h.source for h in ranked], task_type, max(0, available), roles)
    left = dict(shares)
    chosen: dict[int, Selected] = {}
    whole: dict[int, Selected] = {}
    passed: list[int] = []
    large = max(MIN_CHUNK_TOKENS, available // 4)
    # With hits of several indexed repositories, each chunk's head names its own.
    named = several_repositories((*ranked, *then))
    for pos, (hit, item) in enumerate(zip(ranked, _priced_whole(ranked, fmt, named), strict=True)):
        if overflow == "compress" and item.body_tokens > large and is_code(hit.path, hit.content):
            item = _shrunk(hit, min(item.tokens, large), overflow, fmt, query, named) or item
        whole[pos] = item  # for compress, large code stays compressed in the second pass too
        if item.tokens <= left[hit.source]:
            chosen[pos] = item
            left[hit.source] -= item.tokens
        else:
            passed.append(pos)
    spare = max(0, available) - sum(s.tokens for s in chosen.values())
    for pos in passed:
        if whole[pos].tokens <= spare:
            fitted: Selected | None = whole[pos]
        elif spare >= MIN_CHUNK_TOKENS:
            fitted = _shrunk(ranked[pos], spare, overflow, fmt, query, named)
        else:
            continue
        if fitted is not None and fitted.tokens <= spare:
            chosen[pos] = fitted
            spare -= fitted.tokens
    if then and spare >= MIN_CHUNK_TOKENS:
        for pos, item in enumerate(_priced_whole(then, fmt, named), len(ranked)):
            if item.tokens <= spare:
                chosen[pos] = item
                spare -= item.tokens
    selected = [chosen[pos] for pos in sorted(chosen)]
    per_source: dict[str, int] = {}
    for item in selected:
        per_source[item.hit.source] = per_source.get(item.hit.source, 0) + item.tokens
    wrapping = budget - available
    used = sum(s.tokens for s in selected) + (wrapping if selected or wrapping <= budget else 0)
    return BudgetResult(
        selected=selected,
        dropped=[h for pos, h in enumerate(ranked) if pos not in chosen],
        budget=budget,
        used=used,
        allocation=shares,
        tokens_per_source=per_source,
    )
