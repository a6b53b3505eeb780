"""Context assembly: the budgeted chunks as one text in ``xml``, ``markdown`` or ``plain``.

Chunks keep relevance order and their attribution; the same input gives the same bytes
(no clocks, no ids generated here). ``token_count`` is the exact sum of the counted
pieces, which equals counting the whole text because pieces meet at newlines.
"""

from __future__ import annotations

from engine.model import AssembledContext, ContextChunk, ContextFormat

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
