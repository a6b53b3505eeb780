"""Context assembly: the budgeted chunks as one text in ``xml``, ``markdown`` or ``plain``.

Chunks keep relevance order and their attribution; the same input gives the same bytes
(no clocks, no ids generated here). ``token_count`` is the exact sum of the counted
pieces, which equals counting the whole text because pieces meet at newlines.
"""

from __future__ import annotations

from tributary.engine.model import AssembledContext, ContextChunk, ContextFormat

from .budget import BudgetResult
from .formats import render, wrapper
from .tokens import count_tokens


def assemble(plan: BudgetResult, fmt: ContextFormat, query: str = "") -> AssembledContext:
    """Render ``plan.selected`` in ``fmt``."""
    head, tail = wrapper(fmt, query)
    chunks: list[ContextChunk] = []
    parts: list[str] = [head] if head else []
    total = 0
    for item in plan.selected:
        parts.append(render(item.head, item.body, item.tail))
        total += item.tokens
        chunks.append(
            ContextChunk(
                hit_id=item.hit.id,
                source=item.hit.source,
                location=item.hit.location,
                score=item.hit.score,
                content=item.body,
                tokens=item.body_tokens,
                treatment=item.treatment,
            )
        )
    if tail:
        parts.append(tail)
    wrapping = count_tokens(head) + count_tokens(tail)
    if chunks or (head and wrapping <= plan.budget):
        total += wrapping
        text = "\n\n".join(parts)
    else:  # nothing fits, not even the wrapper
        text = ""
    return AssembledContext(
        text=text, chunks=chunks, token_count=total, format=fmt, budget=plan.budget, dropped=len(plan.dropped)
    )


NOTHING_FOUND = "Nothing relevant found for this query"


def nothing_found(fmt: ContextFormat, budget: int, query: str, confidence: float) -> AssembledContext:
    """The short context of an answer no hit of which clears the confidence bar: one line
    saying so (with the best hit's confidence) instead of a full budget of noise."""
    line = f"{NOTHING_FOUND} (best match confidence {confidence:.2f})."
    if fmt is ContextFormat.XML:
        head, tail = wrapper(fmt, query)
        text = f"{head}\n<nothing-found>{line}</nothing-found>\n{tail}"
    else:
        text = line
    tokens = count_tokens(text)
    if tokens > budget:
        text, tokens = "", 0
    return AssembledContext(text=text, chunks=[], token_count=tokens, format=fmt, budget=budget)
