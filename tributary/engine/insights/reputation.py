"""Feedback → reputation: what users say about hits teaches the ranking whom to trust.

Each feedback event (hit id, source, query, useful or not, time) is stored in the
insights database. A source's reputation is the mean of a Beta posterior:

    reputation = (α + Σ w·useful) / (α + β + Σ w),   w = 0.5 ** (age / half_life)

With the default prior Beta(2, 2) a source starts at 0.5, one "useful" moves it to
0.6 and one "not useful" to 0.4; the prior keeps a few votes from swinging it to the
extremes, the optional half-life lets old opinions fade, and the result is clamped to
``[floor, ceiling]`` so no source is ever silenced or made untouchable. The fusion
strategies take :meth:`ReputationStore.all_reputations` (composite: the reputation
part; weighted: a source-weight multiplier).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tributary.engine.cache.base import Clock
from tributary.engine.errors import TributaryError
from tributary.engine.insights.db import InsightsStore, QueryRedaction
from tributary.engine.query.check import MAX_QUERY_CHARS, unicode_problem

DEFAULT_HALF_LIFE_DAYS = 90.0
MAX_EVENTS = 100_000  # bounded storage; the oldest events go first
# Feedback arrives from MCP clients as well as the app: bounded so that one call cannot
# store megabytes. Hit ids are 16 hex digits; a query is at most a long prompt.
MAX_HIT_ID_CHARS = 200
MAX_SOURCE_CHARS = 200


class FeedbackError(TributaryError, ValueError):
    """Feedback that is not stored; the message says which field and why."""


def check_feedback(hit_id: str, source: str, query: str, known_sources: Iterable[str] | None = None) -> None:
    """Raise :class:`FeedbackError` unless the feedback is storable: a known source (when
    ``known_sources`` is given), a short printable hit id, a bounded valid query."""
    if not isinstance(source, str) or not source.strip():
        raise FeedbackError("feedback needs the hit's source")
    if len(source) > MAX_SOURCE_CHARS or not source.isprintable():
        raise FeedbackError(f"source: not a source name ({len(source)} characters)")
    if known_sources is not None:
        known = sorted(set(known_sources))
        if source not in known:
            raise FeedbackError(f"source: unknown source {source!r} (known: {', '.join(known) or 'none'})")
    if not isinstance(hit_id, str) or not hit_id.strip():
        raise FeedbackError("hit_id: empty; pass the id of a hit from a search")
    if len(hit_id) > MAX_HIT_ID_CHARS or not hit_id.isprintable():
        raise FeedbackError(f"hit_id: not a hit id ({len(hit_id)} characters, at most {MAX_HIT_ID_CHARS} "
                            "printable ones); pass the id of a hit from a search")
    if not isinstance(query, str):
        raise FeedbackError("query: must be text")
    if len(query) > MAX_QUERY_CHARS:
        raise FeedbackError(f"query: too long ({len(query)} characters, at most {MAX_QUERY_CHARS})")
    problem = unicode_problem(query, "query") or unicode_problem(hit_id, "hit_id") or unicode_problem(source, "source")
    if problem is not None:
        raise FeedbackError(problem)


@dataclass(frozen=True, slots=True)
class BetaPrior:
    alpha: float = 2.0
    beta: float = 2.0

    def __post_init__(self) -> None:
        if self.alpha <= 0 or self.beta <= 0:
            raise ValueError("Beta prior parameters must be positive")

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)


@dataclass(frozen=True, slots=True)
class Feedback:
    id: int
    time: datetime
    hit_id: str
    source: str
    query: str | None
    useful: bool


@dataclass(frozen=True, slots=True)
class SourceReputation:
    """A source's standing: the estimate and the (raw and decayed) votes behind it."""

    source: str
    reputation: float
    useful: int
    not_useful: int
    weight: float  # Σ w over its events after decay

    @property
    def votes(self) -> int:
        return self.useful + self.not_useful


class ReputationStore(InsightsStore):
    """Feedback events and the per-source reputation estimated from them."""

    def __init__(
        self,
        path: Path | str,
        *,
        prior: BetaPrior | None = None,
        half_life_days: float | None = DEFAULT_HALF_LIFE_DAYS,
        floor: float = 0.05,
        ceiling: float = 0.95,
        redaction: QueryRedaction = "keep",
        secrets: Iterable[str] | None = None,
        clock: Clock = time.time,
    ) -> None:
        if not 0.0 <= floor < ceiling <= 1.0:
            raise ValueError("need 0 <= floor < ceiling <= 1")
        if half_life_days is not None and half_life_days <= 0:
            raise ValueError("half_life_days must be positive (or None for no decay)")
        super().__init__(path, redaction=redaction, secrets=secrets, clock=clock)
        self.prior = prior or BetaPrior()
        self.half_life_s = half_life_days * 86400 if half_life_days is not None else None
        self.floor, self.ceiling = floor, ceiling

    @property
    def default(self) -> float:
        """The reputation of a source nobody has rated yet."""
        return self._bounded(self.prior.mean)

    # --- feedback -----------------------------------------------------------------------

    def record(
        self,
        *,
        hit_id: str,
        source: str,
        useful: bool,
        query: str = "",
        at: datetime | float | None = None,
    ) -> Feedback:
        """Store one judgement of a hit from ``source``; :class:`FeedbackError` if it is
        not storable (:func:`check_feedback`)."""
        check_feedback(hit_id, source, query)
        moment = self._clock() if at is None else _epoch(at)
        stored_query = self._scrubber.text(query) if self.redaction == "keep" and query else None
        with self._db.write() as conn:
            cursor = conn.execute(
                "INSERT INTO feedback(ts, hit_id, source, query, useful) VALUES (?, ?, ?, ?, ?)",
                (moment, hit_id, source, stored_query, int(useful)),
            )
            event_id = int(cursor.lastrowid or 0)
            conn.execute("DELETE FROM feedback WHERE id <= ?", (event_id - MAX_EVENTS,))
        return Feedback(
            event_id, datetime.fromtimestamp(moment, UTC), hit_id, source, stored_query, useful
        )

    def events(self, source: str | None = None, limit: int = 100) -> list[Feedback]:
        """The newest feedback events (for one source, or all), newest first."""
        where, args = ("WHERE source = ?", [source]) if source is not None else ("", [])
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT id, ts, hit_id, source, query, useful FROM feedback"
                f" {where} ORDER BY id DESC LIMIT ?",
                [*args, max(0, limit)],
            ).fetchall()
        return [
            Feedback(r[0], datetime.fromtimestamp(r[1], UTC), r[2], r[3], r[4], bool(r[5]))
            for r in rows
        ]

    def reset(self, source: str | None = None) -> int:
        """Forget the feedback for ``source`` (or for every source); returns events dropped."""
        with self._db.write() as conn:
            if source is None:
                return int(conn.execute("DELETE FROM feedback").rowcount)
            return int(conn.execute("DELETE FROM feedback WHERE source = ?", (source,)).rowcount)

    # --- estimates ----------------------------------------------------------------------

    def reputation(self, source: str) -> float:
        """``source``'s reputation in ``[floor, ceiling]`` (the prior mean when unrated)."""
        standing = self.standings([source]).get(source)
        return standing.reputation if standing else self.default

    def all_reputations(self) -> dict[str, float]:
        """Every rated source's reputation (unrated sources: use :attr:`default`)."""
        return {name: s.reputation for name, s in self.standings().items()}

    def standings(self, sources: Iterable[str] | None = None) -> dict[str, SourceReputation]:
        """Reputation with the votes behind it, per rated source (optionally only some)."""
        now = self._clock()
        # Decay weight per event; 1 when decay is off. pow() is built into sqlean's SQLite.
        weight = "pow(0.5, max(0.0, ? - ts) / ?)" if self.half_life_s else "1.0"
        decay_args: list[Any] = [now, self.half_life_s] if self.half_life_s else []
        where, filter_args = "", []
        if sources is not None:
            names = list(sources)
            if not names:
                return {}
            where = f"WHERE source IN ({','.join('?' * len(names))})"
            filter_args = names
        sql = (
            f"SELECT source, SUM(useful), COUNT(*), SUM(useful * {weight}), SUM({weight})"
            f" FROM feedback {where} GROUP BY source ORDER BY source"
        )
        with self._db.read() as conn:
            rows = conn.execute(sql, [*decay_args, *decay_args, *filter_args]).fetchall()
        a, b = self.prior.alpha, self.prior.beta
        return {
            source: SourceReputation(
                source=source,
                reputation=self._bounded((a + w_useful) / (a + b + w_total)),
                useful=int(useful),
                not_useful=int(count - useful),
                weight=float(w_total),
            )
            for source, useful, count, w_useful, w_total in rows
        }

    def _bounded(self, value: float) -> float:
        return min(self.ceiling, max(self.floor, value))


def _epoch(moment: datetime | float) -> float:
    if isinstance(moment, datetime):
        return (moment if moment.tzinfo else moment.astimezone()).timestamp()
    return float(moment)
