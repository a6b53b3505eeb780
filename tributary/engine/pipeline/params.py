"""Fusion parameters shared by every strategy, and how a strategy records a hit's score."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tributary.engine.config.schema import CompositeWeights, FusionConfig
from tributary.engine.model import Hints, Hit, ScoreParts, SearchRequest
from tributary.engine.query.kinds import joined_names, lookup_names

from .definitions import DEFAULT_DEFINITION_WEIGHT
from .hints import with_mentioned_paths

DEFAULT_REPUTATION = 0.5
DEFAULT_HINT_WEIGHT = 0.5
# Each further hit from a file already ranked higher keeps this share of its score per
# earlier hit of that file, so one file cannot fill the top of the list (1.0: off).
DEFAULT_SAME_FILE_DECAY = 0.5


@dataclass(slots=True)
class FusionParams:
    """Everything a strategy may read; build one with ``FusionParams.build``."""

    query: str = ""
    rrf_k: int = 10
    source_weights: dict[str, float] = field(default_factory=dict)
    composite: CompositeWeights = field(default_factory=CompositeWeights)
    reputation: dict[str, float] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # cascade priority; default by weight
    hints: Hints = field(default_factory=Hints)
    hint_weight: float = DEFAULT_HINT_WEIGHT
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    ideal_tokens: int = 400  # composite length penalty starts above this
    same_file_decay: float = DEFAULT_SAME_FILE_DECAY
    names: frozenset[str] = frozenset()  # names a lookup query asks for (case-folded)
    definition_weight: float = DEFAULT_DEFINITION_WEIGHT

    def weight(self, source: str) -> float:
        return self.source_weights.get(source, 1.0)

    @classmethod
    def build(
        cls,
        request: SearchRequest,
        fusion: FusionConfig | None = None,
        reputation: Mapping[str, float] | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> FusionParams:
        """Defaults from config (``weights``: per-server weights), overridden by the request."""
        fusion = fusion or FusionConfig()
        extra = dict(request.strategy_params)
        params = cls(
            query=request.query,
            rrf_k=int(extra.pop("k", extra.pop("rrf_k", fusion.rrf_k))),
            source_weights={**(weights or {}), **request.source_weights},
            composite=fusion.composite,
            reputation=dict(reputation or {}),
            hints=with_mentioned_paths(request.hints, request.query),
            names=lookup_names(request.query) or joined_names(request.query),
        )
        if "order" in extra:
            params.order = [str(s) for s in extra.pop("order")]
        if "hint_weight" in extra:
            params.hint_weight = float(extra.pop("hint_weight"))
        if "definition_weight" in extra:
            params.definition_weight = float(extra.pop("definition_weight"))
        if "ideal_tokens" in extra:
            params.ideal_tokens = int(extra.pop("ideal_tokens"))
        if "same_file_decay" in extra:
            params.same_file_decay = float(extra.pop("same_file_decay"))
        weights = {k: float(extra.pop(k)) for k in ("keyword", "freshness", "reputation", "length") if k in extra}
        if weights:
            base = fusion.composite
            params.composite = CompositeWeights(
                keyword=weights.get("keyword", base.keyword),
                freshness=weights.get("freshness", base.freshness),
                reputation=weights.get("reputation", base.reputation),
                length=weights.get("length", base.length),
            )
        return params


def set_parts(hit: Hit, parts: ScoreParts) -> None:
    hit.parts = parts
    hit.score = parts.total
