"""Observability that outlives a search: the local query history and source reputation.

``HistoryStore`` records every response's metrics and summarises them (``tributary
stats``, the GUI's insights page); ``ReputationStore`` keeps users' feedback on hits
and turns it into a per-source reputation for the fusion strategies. Both live in
one SQLite file, ``engine.paths.history_path()``.
"""

from __future__ import annotations

from engine.history.reputation import BetaPrior, Feedback, ReputationStore, SourceReputation
from engine.history.store import (
    HistoryEntry,
    HistoryStore,
    HistorySummary,
    SourceCall,
    SourceSummary,
    parse_since,
)

__all__ = [
    "BetaPrior",
    "Feedback",
    "HistoryEntry",
    "HistoryStore",
    "HistorySummary",
    "ReputationStore",
    "SourceCall",
    "SourceReputation",
    "SourceSummary",
    "parse_since",
]
