"""The fusion pipeline: plain functions from many sources' hits to one budgeted context.

Stages, one module each: ``dedup`` (hash, fuzzy, semantic, overlap groups; with
``blocking`` for candidate pairs and ``unionfind``), ``fusion`` (the registry, rrf,
weighted, cascade, vote; ``composite``, ``hints``, ``quality`` for web sources,
``params``), ``limits``, ``tokens``, ``budget`` (+ ``overflow``, ``compress``),
``assemble`` (+ ``formats``); ``text`` holds shared text helpers; ``run.run_pipeline``
chains them and is what the engine calls.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assemble import assemble
    from .budget import BudgetResult, allocate, default_role, plan_budget
    from .dedup import DedupResult, Embedder, deduplicate
    from .fusion import STRATEGIES, FusionParams, fuse
    from .limits import DEFAULT_TOP_K, clamp_top_k
    from .run import PipelineResult, run_pipeline
    from .tokens import count_tokens, count_tokens_batch, fill_tokens

# Each name is imported from its stage on first use: importing one light module of the
# package (``formats`` for the command line's rendering) must not load every stage and
# what they need (numpy, rapidfuzz, the tokenizer).
_HOMES = {
    "assemble": "assemble",
    "BudgetResult": "budget", "allocate": "budget", "default_role": "budget", "plan_budget": "budget",
    "DedupResult": "dedup", "Embedder": "dedup", "deduplicate": "dedup",
    "STRATEGIES": "fusion", "FusionParams": "fusion", "fuse": "fusion",
    "DEFAULT_TOP_K": "limits", "clamp_top_k": "limits",
    "PipelineResult": "run", "run_pipeline": "run",
    "count_tokens": "tokens", "count_tokens_batch": "tokens", "fill_tokens": "tokens",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_TOP_K",
    "STRATEGIES",
    "BudgetResult",
    "DedupResult",
    "Embedder",
    "FusionParams",
    "PipelineResult",
    "allocate",
    "assemble",
    "clamp_top_k",
    "count_tokens",
    "count_tokens_batch",
    "deduplicate",
    "default_role",
    "fill_tokens",
    "fuse",
    "plan_budget",
    "run_pipeline",
]
