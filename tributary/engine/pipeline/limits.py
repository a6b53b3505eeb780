"""Result limits: top 30 by default, at most 100.

A request's own ``top_k`` is honoured down to 1 (an agent asking Tributary's MCP tool
for 3 hits gets 3); the config's ``fusion.top_k`` and the command line keep their
10..100 range, checked where they are read.
"""

from __future__ import annotations

from tributary.engine.config.schema import TOP_K_MAX

DEFAULT_TOP_K = 30


def clamp_top_k(top_k: int | None) -> int:
    """``top_k`` within ``1..TOP_K_MAX``; None or non-positive means the default."""
    if top_k is None or top_k <= 0:
        return DEFAULT_TOP_K
    return max(1, min(TOP_K_MAX, int(top_k)))
