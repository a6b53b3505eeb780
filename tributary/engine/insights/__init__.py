"""Observability that outlives a search: the local query log and source reputation.

``QueryLog`` records every response's metrics and summarises them (``tributary
stats``, the GUI's insights page); ``ReputationStore`` keeps users' feedback on hits
and turns it into a per-source reputation for the fusion strategies. Both live in
one SQLite file, ``tributary.engine.paths.insights_path()``.
"""

from __future__ import annotations

from tributary.engine.insights.reputation import (
    BetaPrior,
    Feedback,
    ReputationStore,
    SourceReputation,
)
from tributary.engine.insights.store import (
    QueryLog,
    QueryLogEntry,
    QueryLogSummary,
    SourceCall,
    SourceSummary,
    parse_since,
)

__all__ = [
    "BetaPrior",
    "Feedback",
    "QueryLog",
    "QueryLogEntry",
    "QueryLogSummary",
    "ReputationStore",
    "SourceCall",
    "SourceReputation",
    "SourceSummary",
    "parse_since",
]
