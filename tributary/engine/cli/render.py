"""Plain-text rendering of engine outcomes for the terminal.

Hit content is data from outside: control characters are made visible before they
reach the terminal, so a hostile server cannot move the cursor or recolour the screen,
and neither can a file name reorder what is shown (bidi overrides are escaped too).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from tributary.engine.model import (
    ANSWERED,
    NOT_ASKED,
    SearchResponse,
    SourceReport,
    SourceStatus,
    hits_said,
    is_task,
    repository_of,
    several_repositories,
)
from tributary.engine.pipeline.formats import commit_line

_CONTROL = {c: f"\\x{c:02x}" for c in range(32) if c not in (9, 10)} | {127: "\\x7f"}
# C1 controls, and the invisible characters that reorder or hide text on screen (bidi
# overrides and isolates, zero-width ones, line separators): a file named
# "invoice\u202egnp.exe" must not show as "invoiceexe.png".
_CONTROL |= {c: f"\\x{c:02x}" for c in range(0x80, 0xA0)}
_CONTROL |= {c: f"\\u{c:04x}" for c in (0x061C, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F,
                                        *range(0x202A, 0x202F), *range(0x2066, 0x206A),
                                        0x2028, 0x2029, 0xFEFF)}
_STATUS_MARK = {
    SourceStatus.OK: "ok",
    SourceStatus.CACHED: "cached",
    SourceStatus.TIMEOUT: "TIMEOUT",
    SourceStatus.ERROR: "ERROR",
    SourceStatus.SKIPPED: "skipped",
    SourceStatus.CIRCUIT_OPEN: "circuit open",
    SourceStatus.PENDING: "…",
}


def safe(text: str) -> str:
    """``text`` with terminal control characters escaped."""
    return text.translate(_CONTROL)


def one_line(text: str, width: int) -> str:
    flat = " ".join(safe(text).split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def terminal_width(stream: TextIO | None = None) -> int:
    if not (stream if stream is not None else sys.stdout).isatty():
        return 120
    return max(60, shutil.get_terminal_size((120, 24)).columns)


def table(rows: Sequence[Sequence[str]], headers: Sequence[str], width: int) -> str:
    """Columns sized to their content; the last column takes what is left."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths[i], len(cell))
    fixed = sum(widths[:-1]) + 2 * (len(headers) - 1)
    last = max(20, width - fixed)
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers[:-1], widths, strict=False)) + "  " + headers[-1]]
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row[:-1], widths, strict=False)]
        lines.append("  ".join(cells) + "  " + one_line(row[-1], last))
    return "\n".join(line.rstrip() for line in lines)


def source_line(report: SourceReport) -> str:
    parts = [f"{report.name}: {_STATUS_MARK.get(report.status, str(report.status))}"]
    if report.latency_ms is not None and report.status not in NOT_ASKED:
        parts.append(f"{report.latency_ms:.0f} ms")
    if report.status in ANSWERED:
        parts.append(hits_said(report.hits))
    if report.tokens:
        parts.append(f"{report.tokens} tokens")
    text = ", ".join(parts)
    note = report.error or report.detail
    return f"{text} — {one_line(note, 160)}" if note else text


def results_table(response: SearchResponse, width: int) -> str:
    """One row a hit; with hits from several indexed repositories, a column says whose
    each is (``tests/test_basic.py`` alone does not)."""
    several = several_repositories(response.hits)
    rows = []
    for rank, hit in enumerate(response.hits, 1):
        group = response.group_of(hit.id)
        sources = ",".join(group.sources) if group else hit.source
        # a past task: its commit (hash, date, author) where a location goes, its title after
        where = [one_line(commit_line(hit) if is_task(hit) else hit.location, 60)]
        summary = hit.title if is_task(hit) else hit.headline
        if several:
            where.append(_tail(repository_of(hit) or "", REPO_COLUMN))
        rows.append([str(rank), f"{hit.score:.4f}", f"{hit.confidence:.2f}", sources, *where, summary])
    headers = ["#", "score", "conf", "sources", "location", *(["repository"] if several else []), "summary"]
    return table(rows, headers, width)


REPO_COLUMN = 24


def _tail(text: str, width: int) -> str:
    """``text`` on one line, its end kept when it is too long (a folder's own name)."""
    flat = " ".join(safe(text).split())
    return flat if len(flat) <= width else "…" + flat[len(flat) - width + 1 :]


def _is_task(query: str) -> bool:
    from tributary.engine.localsearch.longquery import is_task_question  # only when printing one

    return is_task_question(query)


def response_text(response: SearchResponse, width: int) -> str:
    lines: list[str] = [f"note: {safe(note)}" for note in response.notes]
    if response.hits:
        if not response.confident:
            lines.append(f"no confident results (best confidence {response.confidence:.2f}); "
                         "the closest matches:")
        lines.append(results_table(response, width))
    else:
        lines.append("no results")
    lines.append("")
    route = response.route
    rule = ", ".join(route.matched_rules) if route.matched_rules else "fallback (no rule matched)"
    query_class = route.query_class or "-"
    if _is_task(response.request.query):  # routed by its class, but read as a task
        query_class += " (read as a task)"
    lines.append(f"route: {rule}; class: {query_class}; strategy: {response.strategy}")
    for report in response.sources:
        lines.append("  " + source_line(report))
    m = response.metrics
    lines.append(
        f"{m.raw_hits} hits from sources, {m.unique_hits} after dedup "
        f"({m.dedup_rate:.0%} folded); {m.total_ms:.0f} ms"
        + (f"; cache {m.cache_hits}/{m.cache_lookups}" if m.cache_lookups else "")
    )
    if response.error:
        lines.append(f"error: {response.error}")
    return "\n".join(lines)


def dump_json(obj: Any, stream: TextIO | None = None) -> None:
    from tributary.engine.cache.codec import to_jsonable

    out = stream if stream is not None else sys.stdout  # now, not at import: tests swap it
    json.dump(to_jsonable(obj), out, indent=2, ensure_ascii=False)
    out.write("\n")
