"""``tributary stats``: what the local query log says, and source reputations.

tributary stats [--since 7d] [--json]      summary: latency, rates, per-source table
tributary stats --recent 20                the newest searches
tributary stats --reset-reputation [NAME]  forget feedback (one source, or all)
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from tributary.engine.cli.render import dump_json, table, terminal_width
from tributary.engine.wording import counted

if TYPE_CHECKING:  # every command is registered at start-up: the stores load when used
    from tributary.engine.insights.reputation import ReputationStore, SourceReputation
    from tributary.engine.insights.store import QueryLog, QueryLogEntry, QueryLogSummary

_ALL = "\0all"  # --reset-reputation given without a name


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "stats",
        help="summarise the local query log (latency, cache, dedup, tokens per source)",
        description="Summarise the searches recorded in the local query log.",
    )
    parser.add_argument(
        "--since",
        type=_since,
        metavar="AGE|DATE",
        help="only searches since then: 7d, 12h, 30m, 2w, or an ISO date (default: all)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--recent", type=int, metavar="N", help="list the N newest searches instead"
    )
    parser.add_argument(
        "--reset-reputation",
        nargs="?",
        const=_ALL,
        metavar="SOURCE",
        help="forget the feedback for SOURCE (every source when no name is given)",
    )
    parser.set_defaults(func=run)


def _since(text: str) -> datetime | timedelta:
    from tributary.engine.insights.store import parse_since

    try:
        return parse_since(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from tributary.engine.insights.reputation import ReputationStore
    from tributary.engine.insights.store import QueryLog

    query_log = QueryLog.open()
    reputation = ReputationStore.open(query_log.path)
    try:
        if args.reset_reputation is not None:
            return _reset(reputation, args.reset_reputation)
        if args.recent is not None:
            return _recent(query_log, args.recent, as_json=args.json)
        summary = query_log.summary(args.since)
        standings = reputation.standings()
        if args.json:
            data = summary.as_dict()
            data["reputation"] = {
                name: {"reputation": s.reputation, "useful": s.useful, "not_useful": s.not_useful}
                for name, s in standings.items()
            }
            data["query_log_file"] = str(query_log.path)
            dump_json(data, sys.stdout)
        else:
            print(summary_text(summary, standings, reputation.default, terminal_width()))
        return 0
    finally:
        query_log.close()
        reputation.close()


def _reset(store: ReputationStore, source: str) -> int:
    dropped = store.reset(None if source == _ALL else source)
    whom = "every source" if source == _ALL else source
    print(f"reputation reset for {whom}: {counted(dropped, 'feedback event')} forgotten")
    return 0


def _recent(store: QueryLog, n: int, *, as_json: bool) -> int:
    entries = store.recent(n)
    if as_json:
        dump_json(entries, sys.stdout)
        return 0
    if not entries:
        print(f"no searches recorded yet (history: {store.path})")
        return 0
    print(recent_text(entries, terminal_width()))
    return 0


def summary_text(
    summary: QueryLogSummary,
    standings: dict[str, SourceReputation],
    default_reputation: float,
    width: int,
) -> str:
    """The readable summary: headline figures, then one row per source."""
    if not summary.queries:
        scope = " in that period" if summary.since else ""
        return f"no searches recorded{scope} yet"
    lines = [
        f"{summary.queries} search{'es' * (summary.queries != 1)}, {_when(summary.first)} → {_when(summary.last)}"
        + (f" (since {_when(summary.since)})" if summary.since else ""),
        f"latency    p50 {_ms(summary.p50_ms)}, p95 {_ms(summary.p95_ms)}"
        + (f"; {summary.failed} failed entirely" if summary.failed else ""),
        f"cache      {_pct(summary.cache_hit_rate)} hit rate "
        f"({summary.cache_hits}/{summary.cache_lookups} lookups)",
        f"dedup      {_pct(summary.mean_dedup_rate)} of raw hits folded (mean)",
        f"budget     {_pct(summary.mean_utilisation)} utilisation (mean); "
        f"{summary.tokens_total:,} tokens in total",
    ]
    if summary.stage_mean_ms:
        stages = " · ".join(f"{k} {v:.1f}" for k, v in summary.stage_mean_ms.items())
        lines.append(f"stages     mean ms: {stages}")
    if summary.strategies:
        used = ", ".join(f"{k} {v}" for k, v in sorted(summary.strategies.items()))
        lines.append(f"strategies {used}")
    rows = []
    for name, s in summary.sources.items():
        standing = standings.get(name)
        rep = (
            f"{standing.reputation:.2f} ({standing.useful}+/{standing.not_useful}-)"
            if standing
            else f"{default_reputation:.2f}"
        )
        rows.append(
            [
                name,
                str(s.calls),
                _ms(s.p50_ms),
                _ms(s.p95_ms),
                _pct(s.error_rate),
                _pct(s.timeout_rate),
                str(s.cached),
                str(s.skipped + s.circuit_open),
                str(s.hits),
                f"{s.tokens:,}",
                rep,
            ]
        )
    headers = ["source", "calls", "p50", "p95", "errors", "timeouts", "cached", "skipped",
               "hits", "tokens", "reputation"]  # fmt: skip
    lines += ["", table(rows, headers, width)]
    return "\n".join(lines)


def recent_text(entries: list[QueryLogEntry], width: int) -> str:
    rows = []
    for e in entries:
        failing = [c.source for c in e.sources if c.status in ("error", "timeout")]
        rows.append(
            [
                e.time.astimezone().strftime("%Y-%m-%d %H:%M:%S"),
                _ms(e.total_ms),
                str(e.hits),
                e.strategy or "-",
                f"{e.cache_hits}/{e.cache_lookups}",
                ",".join(failing) or "-",
                e.query if e.query is not None else f"[{e.query_hash[:10]}]",
            ]
        )
    headers = ["time", "latency", "hits", "strategy", "cache", "failed", "query"]
    return table(rows, headers, width)


def _when(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment else "-"


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"
