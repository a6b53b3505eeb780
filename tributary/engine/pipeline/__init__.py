"""The fusion pipeline: plain functions from many sources' hits to one budgeted context.

Stages, one module each: ``dedup`` (hash, fuzzy, semantic, overlap groups; with
``blocking`` for candidate pairs and ``unionfind``), ``fusion`` (the registry, rrf,
weighted, cascade, vote; ``composite``, ``hints``, ``quality`` for web sources,
``params``), ``limits``, ``tokens``, ``budget`` (+ ``overflow``, ``compress``),
``assemble`` (+ ``formats``); ``text`` holds shared text helpers; ``run.run_pipeline``
chains them and is what the engine calls.
"""

from __future__ import annotations

from .assemble import assemble
from .budget import BudgetResult, allocate, default_role, plan_budget
from .dedup import DedupResult, Embedder, deduplicate
from .fusion import STRATEGIES, FusionParams, fuse
from .limits import DEFAULT_TOP_K, clamp_top_k
from .run import PipelineResult, run_pipeline
from .tokens import count_tokens, count_tokens_batch, fill_tokens

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
