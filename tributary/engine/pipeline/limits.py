"""Result limits: top 30 by default, clamped to 10..100."""

from __future__ import annotations

from tributary.engine.config.schema import TOP_K_MAX, TOP_K_MIN

DEFAULT_TOP_K = 30


def clamp_top_k(top_k: int | None) -> int:
    """``top_k`` within ``TOP_K_MIN..TOP_K_MAX``; None or non-positive means the default."""
    if top_k is None or top_k <= 0:
        return DEFAULT_TOP_K
    return max(TOP_K_MIN, min(TOP_K_MAX, int(top_k)))
