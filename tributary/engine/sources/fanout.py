"""Fan-out: ask many sources at once; stream each source's outcome as it arrives.

Public API::

    async with contextlib.aclosing(fan_out(pool, names, query, top_k=30)) as stream:
        async for result in stream:          # SourceResult, in order of arrival
            ...                              # result.report (SourceReport), result.hits

    results = await gather_all(pool, names, query, top_k=30)   # in ``names`` order
    error = all_failed(results)              # text when no source answered, else None

Requests go out slowest expected source first (:mod:`tributary.engine.sources.latency`:
the pool's latency estimates; sources without history first, in the given
order), so the answer everyone waits for starts soonest. Every source runs
concurrently with its own timeout (``ServerConfig.timeout``
or the ``timeout`` given here); one slow, hung or crashed source never delays
the others beyond its own deadline. Closing the stream early (``aclose``, a
``break`` inside ``aclosing``, or cancelling the consuming task — a superseded
query) cancels the calls still in flight; the SDK sends MCP
``notifications/cancelled`` for each and the sessions stay up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tributary.engine.model import ANSWERED, Hit, SourceReport, SourceStatus
from tributary.engine.sources.pool import SourcePool
from tributary.engine.sources.state import SourceOutcome

__all__ = ["SourceResult", "all_failed", "fan_out", "fan_out_rounds", "gather_all"]


@dataclass(slots=True)
class SourceResult:
    """One source's answer to one query."""

    report: SourceReport
    hits: list[Hit] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.report.name

    @property
    def ok(self) -> bool:
        return self.report.status in ANSWERED


async def fan_out(
    pool: SourcePool,
    names: Iterable[str],
    query: str,
    *,
    top_k: int,
    timeout: float | None = None,
    scope: Mapping[str, Any] | None = None,
) -> AsyncGenerator[SourceResult, None]:
    """Yield a :class:`SourceResult` per source as soon as that source is done."""
    async with contextlib.aclosing(
        fan_out_rounds(pool, names, query, top_k=top_k, timeout=timeout, scope=scope)
    ) as rounds:
        async for batch, _pending in rounds:
            for result in batch:
                yield result


async def fan_out_rounds(
    pool: SourcePool,
    names: Iterable[str],
    query: str,
    *,
    top_k: int,
    timeout: float | None = None,
    scope: Mapping[str, Any] | None = None,
) -> AsyncGenerator[tuple[list[SourceResult], int], None]:
    """Like :func:`fan_out`, but the sources that finished together come as one list,
    with the number still pending: a consumer that fuses after each answer can fuse
    once per round, and knows which round is the last."""
    ordered = list(dict.fromkeys(names))
    known = set(pool.names())
    tasks: dict[asyncio.Task[SourceOutcome], str] = {}
    pending: set[asyncio.Task[SourceOutcome]] = set()
    unknown = [
        SourceResult(SourceReport(name=name, status=SourceStatus.ERROR, latency_ms=0.0,
                                  error="unknown server"))
        for name in ordered if name not in known
    ]
    try:
        # Slowest expected source first, and each call gets to run up to its send
        # before the next one is prepared: the request everyone waits for leaves
        # first, and the later requests' client-side work overlaps its wait.
        for name in pool.dispatch_order(n for n in ordered if n in known):
            task = asyncio.create_task(pool.call(name, query, top_k=top_k, timeout=timeout, scope=scope),
                                       name=f"tributary-call-{name}")
            tasks[task] = name
            pending.add(task)
            await asyncio.sleep(0)
        if unknown:
            yield unknown, len(pending)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            batch = [_result(pool, tasks[task], task)
                     for task in sorted(done, key=lambda t: ordered.index(tasks[t]))]
            yield batch, len(pending)
    finally:
        for task in pending:
            task.cancel()
        if pending:
            # Let the cancellations land (and the courtesy cancels go out) before returning.
            await asyncio.gather(*pending, return_exceptions=True)


async def gather_all(
    pool: SourcePool,
    names: Iterable[str],
    query: str,
    *,
    top_k: int,
    timeout: float | None = None,
    scope: Mapping[str, Any] | None = None,
) -> list[SourceResult]:
    """Every source's result, in the order of ``names``."""
    ordered = list(dict.fromkeys(names))
    results = {r.name: r async for r in fan_out(pool, ordered, query, top_k=top_k,
                                                timeout=timeout, scope=scope)}
    return [results[name] for name in ordered]


def all_failed(results: Iterable[SourceResult]) -> str | None:
    """The search-level error when not one asked source answered; ``None`` otherwise.

    Sources skipped on purpose (disabled, routing) do not count as asked.
    """
    asked = [r for r in results if r.report.status is not SourceStatus.SKIPPED]
    if not asked or any(r.ok for r in asked):
        return None
    reasons = "; ".join(f"{r.name}: {r.report.error or r.report.status}" for r in asked)
    return f"all {len(asked)} sources failed — {reasons}"


def _result(pool: SourcePool, name: str, task: asyncio.Task[SourceOutcome]) -> SourceResult:
    weight = pool.config(name).weight
    if task.cancelled():
        report = SourceReport(name=name, status=SourceStatus.ERROR, error="cancelled", weight=weight)
        return SourceResult(report)
    exc = task.exception()
    if exc is not None:  # SourcePool.call does not raise for server faults; this is a bug guard
        report = SourceReport(name=name, status=SourceStatus.ERROR,
                              error=f"{type(exc).__name__}: {exc}", weight=weight)
        return SourceResult(report)
    outcome = task.result()
    report = SourceReport(
        name=name, status=outcome.status, latency_ms=outcome.latency_ms, hits=len(outcome.hits),
        error=outcome.error, tool=outcome.tool, detail=outcome.detail, weight=weight,
        warnings=list(outcome.warnings), degraded=outcome.degraded, startup_ms=outcome.startup_ms,
    )
    return SourceResult(report, outcome.hits)
