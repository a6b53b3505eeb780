"""The Engine facade: config → routing → source pool → fan-out → pipeline → response.

The CLI, the desktop app and the MCP face all drive the engine through this one
object and render the outcome objects it returns (``tributary.engine.model``)::

    engine = await Engine.open()                 # loads the config, adds built-in servers
    response = await engine.search(SearchRequest("where is retry handled"))
    async with contextlib.aclosing(engine.search_stream(request)) as updates:
        async for update in updates:             # one per source that answers, then final
            ...
    await engine.aclose()                        # stops every server process; idempotent

Closing a stream early (a superseded query) cancels the calls still in flight;
the servers stay up for the next query.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from tributary.engine.cache import open_response_cache
from tributary.engine.cache.keys import QUERY_PREFIX
from tributary.engine.cache.layers import ResponseCache
from tributary.engine.cache.redact import secret_values
from tributary.engine.config.load import load_config
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.config.watch import ReloadReport
from tributary.engine.errors import disk_full, disk_full_message
from tributary.engine.index.priors import (
    CODE,
    asked_roles,
    factor,
    role_among,
    superseded,
    task_asked_roles,
    translated,
)
from tributary.engine.insights.reputation import ReputationStore, SourceReputation, check_feedback
from tributary.engine.insights.store import QueryLog
from tributary.engine.localsearch.longquery import is_task_question, read_task, task_note
from tributary.engine.model import (
    NOTHING_CONFIGURED,
    ROLE_FACTOR,
    ContextFormat,
    DedupGroup,
    EngineKind,
    Hit,
    ReputationRow,
    RouteDecision,
    SearchRequest,
    SearchResponse,
    SearchUpdate,
    SourceReport,
    SourceStatus,
    is_task,
)
from tributary.engine.paths import indexes_dir, starts_path
from tributary.engine.pipeline.assemble import nothing_found
from tributary.engine.pipeline.run import PipelineResult, run_pipeline
from tributary.engine.pipeline.tokens import get_tokenizer
from tributary.engine.query.check import check_query
from tributary.engine.query.filters import Filters
from tributary.engine.repos.builtins import available_builtins, with_builtin_servers
from tributary.engine.repos.freshness import Freshness
from tributary.engine.routing import route
from tributary.engine.runtime.admission import Admission
from tributary.engine.sources.connect import Connector, default_connector
from tributary.engine.sources.fanout import SourceResult, all_failed, fan_out_rounds
from tributary.engine.sources.local_paths import Root, localised
from tributary.engine.sources.pool import SourcePool
from tributary.engine.sources.start_gate import StartGate
from tributary.engine.sources.start_record import StartRecord
from tributary.engine.sources.state import ServerState, ServerTest, ToolInfo

_T = TypeVar("_T")
log = logging.getLogger(__name__)

Embed = Callable[[list[str]], Any]


# Each source is asked for at least this many hits, however few the caller wants:
# fusion needs depth to see where sources agree; a deeper list raised recall and MRR on
# the held-out half of the pytest benchmark (docs/benchmarks.md, "Fusion depth").
SOURCE_DEPTH = 100


class Engine:
    """One configured engine: a supervised pool of sources plus the fusion pipeline."""

    def __init__(
        self,
        config: Config,
        *,
        connector: Connector = default_connector,
        cache: ResponseCache | None = None,
        query_log: QueryLog | None = None,
        reputation: ReputationStore | None = None,
        embed: Embed | None = None,
        start_gate: StartGate | None = None,
        starts: StartRecord | None = None,
        freshness: Freshness | None = None,
    ) -> None:
        self.config = config
        self._freshness = freshness  # the engine brings the indexes up to date before a search
        self._effective = with_builtin_servers(config)
        self._connector = connector
        self._starts = starts
        self.pool = SourcePool(self._effective.servers.values(), connector=connector, gate=start_gate,
                               starts=starts)
        self.cache = cache
        self.query_log = query_log
        self._log_failed = False
        self._reputation_failed = False
        self.reputation = reputation
        self._embed = embed
        self._closed = False
        self._warm_task: asyncio.Task[None] | None = None
        self._warm = False  # warm_up was asked for: servers added by a reload start at once
        self._watch_task: asyncio.Task[None] | None = None
        self._watch_stop: asyncio.Event | None = None
        self.admission = Admission()
        self._adopting = asyncio.Lock()
        self._roots: tuple[int, list[Root]] | None = None  # (indexes folder stamp, roots)
        self._attach: Any = None  # tributary.engine.attach.AttachServer while listening

    @classmethod
    async def open(
        cls,
        config_path: Path | None = None,
        *,
        config: Config | None = None,
        connector: Connector = default_connector,
        persistent: bool = True,
        warm: bool = True,
        start_gate: StartGate | None = None,
        freshness: Freshness | None = None,
    ) -> Engine:
        """Load the config and open the cache, query log and reputation stores.

        ``persistent=False`` keeps no cache, query log or reputation (tests, one-shot
        tools). ``warm`` starts every enabled server now, in the background, as MCP
        clients do, so the first query does not pay their start-up. ``start_gate``: how
        many local servers start at once (default: ``StartGate()``, one per core).
        ``freshness``: the indexed repositories are brought up to date before each
        search (``serve``, the background engine and the app's engine).
        """
        config = config if config is not None else load_config(config_path)
        use_cache = persistent and config.cache.backend != "off"
        cache = _optional("the response cache", lambda: open_response_cache(config)) if use_cache else None
        secrets = secret_values(config)
        query_log = _optional("the query log", lambda: QueryLog.open(secrets=secrets)) if persistent else None
        reputation = (_optional("source reputations", lambda: ReputationStore.open(secrets=secrets))
                      if persistent else None)
        engine = cls(
            config, connector=connector, cache=cache, query_log=query_log, reputation=reputation,
            start_gate=start_gate, starts=StartRecord(starts_path()) if persistent else None,
            freshness=freshness,
        )
        if warm:
            engine.warm_up()
        return engine

    @property
    def effective_config(self) -> Config:
        """The config plus the built-in servers for indexed repositories."""
        return self._effective

    # ------------------------------------------------------------------ routing

    def route(self, query: str, sources: list[str] | None = None) -> RouteDecision:
        return self._skip_toolless(route(self._effective, query, sources_override=sources))

    def _skip_toolless(self, decision: RouteDecision) -> RouteDecision:
        """Servers that are up but offer no tool a search may call (their tool list is
        known and none fits) are not asked: each search would fail the same way. They
        are skipped with that reason, as routing skips others."""
        for name in list(decision.servers):
            try:
                state = self.pool.state(name)
            except KeyError:  # not a pooled server
                continue
            if state.tool is None and state.tool_error:
                decision.servers.remove(name)
                decision.weights.pop(name, None)
                decision.skipped[name] = state.tool_error
        return decision

    # ------------------------------------------------------------------ search

    async def search(self, request: SearchRequest) -> SearchResponse:
        final: SearchResponse | None = None
        async with contextlib.aclosing(self.search_stream(request, partials=False)) as updates:
            async for update in updates:
                if update.final:
                    final = update.response
        assert final is not None  # search_stream always ends with a final update
        return final

    async def search_stream(
        self, request: SearchRequest, *, partials: bool = True
    ) -> AsyncGenerator[SearchUpdate, None]:
        """An update each time a source answers; the last one has ``final=True``.

        Sources that answer together share one fused response; the last to answer
        gets the final one. Each in-between response carries the context assembled from
        the sources that have answered, so a slow source holds back only its own part.
        ``partials=False`` skips the in-between fusions and yields
        only the final update (what :meth:`search` wants). Past the admission limits
        (:mod:`tributary.engine.runtime.admission`) it raises
        :class:`~tributary.engine.runtime.admission.Busy` at once.
        """
        started = time.perf_counter()
        checked = check_query(request)  # cut, filters parsed; QueryError for a blank query
        request = checked.request
        if not checked.searchable:  # answered at once, taking no admission slot
            yield SearchUpdate(self._unsearchable(request, checked.notes, started), final=True)
            return
        async with (
            self.admission.slot(),
            contextlib.aclosing(
                self._search_stream(request, checked.filters, list(checked.notes), partials=partials)
            ) as updates,
        ):
            async for update in updates:
                yield update

    async def _search_stream(
        self, request: SearchRequest, filters: Filters, notes: list[str], *, partials: bool
    ) -> AsyncGenerator[SearchUpdate, None]:
        """:meth:`search_stream` for a checked request (``notes``: what the check did
        to it), once it holds a slot.

        The request's ``filters`` act here and only here: on the routing decision,
        on the arguments each server is sent, and on the hits before each fusion."""
        started = time.perf_counter()
        await self.adopt_new_indexes()
        if self._freshness is not None:  # before the cache: an answer from before an edit is not replayed
            for root in await self._freshness.refresh(self.config, later=self.repository_changed):
                await self.repository_changed(root)
        decision = filters.route(request.sources, lambda sources: self.route(request.query, sources))
        scope = filters.arguments()
        reports = self._initial_reports(decision)
        if request.use_cache and self.cache is not None:
            cached = await self._cached_response(request)
            if cached is not None:
                cached.metrics.total_ms = (time.perf_counter() - started) * 1000
                await self._log(cached)  # a search all the same (its sources say "cached")
                yield SearchUpdate(cached, final=True)
                return

        hits_by_source: dict[str, list[Hit]] = {}
        lookups, cache_hits = 0, 0
        to_ask: list[str] = []
        for name in decision.servers:
            hits, looked = await self._cached_source_hits(name, request, scope)
            lookups += looked
            if hits is None:
                to_ask.append(name)
                continue
            cache_hits += 1
            hits_by_source[name] = hits
            reports[name] = SourceReport(
                name=name, status=SourceStatus.CACHED, latency_ms=0.0, hits=len(hits),
                weight=self._weight(name, decision),
            )

        last_round: list[SourceResult] = []
        async with contextlib.aclosing(
            fan_out_rounds(self.pool, to_ask, request.query, top_k=source_depth(request),
                           scope=scope)
        ) as rounds:
            async for batch, pending in rounds:
                for result in batch:
                    self._take(result, decision, reports, hits_by_source)
                    await self._store_source_hits(result, request, scope)
                if not pending:
                    last_round = batch  # the final response below covers it
                    continue
                if not partials:
                    continue
                # One fusion per round of answers, however many sources it holds.
                partial = self._respond(
                    request, decision, reports, filters.hits(hits_by_source), started, final=False
                )
                for result in batch:
                    yield SearchUpdate(partial, source=reports[result.name])

        kept = filters.hits(hits_by_source)
        response = self._respond(request, decision, reports, kept, started, final=True)
        read = task_note(request.query)
        emptied = filters.emptied_note(hits_by_source, kept)
        response.notes = (notes + ([read] if read else []) + source_notes(response.sources)
                          + ([emptied] if emptied else []))
        response.metrics.cache_hits, response.metrics.cache_lookups = cache_hits, lookups
        if partials:
            for result in last_round:
                yield SearchUpdate(response, source=reports[result.name])
        await self._finish(request, response)
        yield SearchUpdate(response, final=True)

    def _unsearchable(self, request: SearchRequest, notes: list[str], started: float) -> SearchResponse:
        """The answer to a query with nothing to search for: no hits, the notes, and the
        short "nothing relevant found" context."""
        fmt = ContextFormat(request.format)
        context = nothing_found(fmt, request.effective_budget, request.query, 0.0) if request.assemble else None
        response = SearchResponse(request=request, context=context, notes=list(notes),
                                  strategy=request.strategy or self.config.fusion.strategy)
        response.metrics.total_ms = (time.perf_counter() - started) * 1000
        return response

    def _initial_reports(self, decision: RouteDecision) -> dict[str, SourceReport]:
        reports: dict[str, SourceReport] = {}
        for name in decision.servers:
            reports[name] = SourceReport(name=name, weight=self._weight(name, decision))
        for name, reason in decision.skipped.items():
            reports[name] = SourceReport(name=name, status=SourceStatus.SKIPPED, detail=reason)
        return reports

    def _weight(self, name: str, decision: RouteDecision) -> float:
        if name in decision.weights:  # routing already folded the server's own weight in
            return decision.weights[name]
        server = self._effective.servers.get(name)
        return server.weight if server else 1.0

    def _take(
        self,
        result: SourceResult,
        decision: RouteDecision,
        reports: dict[str, SourceReport],
        hits_by_source: dict[str, list[Hit]],
    ) -> None:
        result.report.weight = self._weight(result.name, decision)
        reports[result.name] = result.report
        if result.ok:
            result.hits = localised(result.hits, self._repository_roots)
            hits_by_source[result.name] = result.hits

    def _repository_roots(self) -> list[Root]:
        """The indexed repositories' folders and names, read again when the indexes'
        folder changes. A shared PostgreSQL index's folders are other machines': none."""
        if self.config.index.backend == "postgres":
            return []
        folder = indexes_dir()
        try:
            stamp = folder.stat().st_mtime_ns
        except OSError:
            return []
        if self._roots is None or self._roots[0] != stamp:
            from tributary.engine.index.manager import list_indexes

            roots = [(str(info.root).rstrip("/") or "/", info.name) for info in list_indexes(folder)]
            self._roots = (stamp, [root for root in roots if root[0] != "/"])
        return self._roots[1]

    def _respond(
        self,
        request: SearchRequest,
        decision: RouteDecision,
        reports: dict[str, SourceReport],
        hits_by_source: dict[str, list[Hit]],
        started: float,
        *,
        final: bool,
    ) -> SearchResponse:
        weights = {name: report.weight for name, report in reports.items()}
        weights.update(request.source_weights)
        strategy = request.strategy or decision.strategy or self.config.fusion.strategy
        effective = replace(
            request,
            strategy=strategy,
            source_weights=weights,
        )
        mark_roles(hits_by_source, request.query, {
            name for name, server in self._effective.servers.items() if server.builtin is None})
        result: PipelineResult = run_pipeline(
            hits_by_source,
            effective,
            fusion=self.config.fusion,
            dedup=self.config.dedup,
            budget=self.config.budget,
            embed=self._embed,
            reputation=self._reputations(),
        )
        for name, tokens in result.tokens_per_source.items():
            if name in reports:
                reports[name].tokens = tokens
        response = SearchResponse(
            request=request,
            hits=result.hits,
            groups=result.groups,
            sources=list(reports.values()),
            route=decision,
            context=result.context,
            strategy=strategy,
            confidence=result.confidence,
            confident=result.confident,
        )
        result.fill_metrics(response.metrics)
        response.metrics.total_ms = (time.perf_counter() - started) * 1000
        if final:
            response.error = all_failed(
                SourceResult(r) for r in reports.values() if r.status is not SourceStatus.PENDING
            )
            if not decision.servers:
                response.error = "no source to ask: " + (
                    "; ".join(f"{n}: {why}" for n, why in decision.skipped.items())
                    or NOTHING_CONFIGURED
                )
        return response

    # ---------------------------------------------------------------- cache & query log

    async def _cached_response(self, request: SearchRequest) -> SearchResponse | None:
        assert self.cache is not None
        try:
            response = await self.cache.get_response(request)
        except Exception as exc:  # a broken cache must never break a search
            log.warning("query cache unavailable: %s", exc)
            return None
        if response is not None:
            response.metrics.cache_hits, response.metrics.cache_lookups = 1, 1
        return response

    async def _cached_source_hits(
        self, name: str, request: SearchRequest, scope: dict[str, list[str]]
    ) -> tuple[list[Hit] | None, int]:
        server = self._effective.servers.get(name)
        if not request.use_cache or self.cache is None or server is None:
            return None, 0
        try:
            hits = await self.cache.get_hits(server, *_source_call(server, request, scope))
        except Exception as exc:
            log.warning("source cache unavailable: %s", exc)
            return None, 1
        return hits, 1

    async def _store_source_hits(
        self, result: SourceResult, request: SearchRequest, scope: dict[str, list[str]]
    ) -> None:
        server = self._effective.servers.get(result.name)
        if self.cache is None or server is None or result.report.status is not SourceStatus.OK:
            return
        if result.report.degraded:  # a keyword-only answer must not outlive the model's load
            return
        try:
            await self.cache.put_hits(server, *_source_call(server, request, scope), result.hits)
        except Exception as exc:
            log.warning("source cache write failed: %s", exc)

    def _reputations(self) -> dict[str, float] | None:
        """Each source's reputation for the fusion, or None when the engine keeps none
        or its file cannot be read: a record of past feedback never fails a search."""
        if self.reputation is None:
            return None
        try:
            return self.reputation.all_reputations()
        except Exception as exc:
            if not _store_failed(exc):
                raise
            if not self._reputation_failed:  # once: every read fails alike
                log.warning("source reputations unreadable, ranking without them: %s", exc)
            self._reputation_failed = True
            return None

    async def _finish(self, request: SearchRequest, response: SearchResponse) -> None:
        if self.cache is not None and request.use_cache:
            try:
                await self.cache.put_response(request, response)
            except Exception as exc:
                log.warning("query cache write failed: %s", exc)
        await self._log(response)

    async def _log(self, response: SearchResponse) -> None:
        """Record the search in the query log (the stats and the Insights page read it)."""
        if self.query_log is not None:
            try:
                await self.query_log.arecord(response)
            except Exception as exc:
                if not self._log_failed:  # once: a full disk fails every write alike
                    log.warning("query log write failed, answering without it: %s", exc)
                self._log_failed = True

    # ------------------------------------------------------------------ feedback & reputation

    async def feedback(
        self, hit: Hit, useful: bool, query: str = "", *, group: DedupGroup | None = None
    ) -> dict[str, float]:
        """Record that ``hit`` was useful (or not) for ``query``; returns the new
        reputation of every source credited.

        A fused hit stands for every source that returned it: pass its dedup
        ``group`` and each distinct source in it is credited (with its own hit's id),
        not only the source whose copy was kept. Whole cached responses are dropped
        afterwards, since their ranking was fused with the old reputations.
        """
        credited: dict[str, str] = {hit.source: hit.id}
        if group is not None:
            credited.setdefault(group.kept.source, group.kept.id)
            for member in group.members:
                credited.setdefault(member.hit.source, member.hit.id)
        return await self.record_feedback(credited, useful, query)

    async def record_feedback(
        self, credited: Mapping[str, str], useful: bool, query: str = ""
    ) -> dict[str, float]:
        """Record feedback for each ``source → hit id`` in ``credited`` (what the MCP
        face's ``feedback`` tool gives); returns the sources' new reputations."""
        store = self.reputation
        if store is None:
            raise RuntimeError(
                "feedback is not stored in this session: the engine was opened without "
                "persistent state (no reputation store)"
            )
        for source, hit_id in credited.items():  # all checked before any is stored
            check_feedback(hit_id, source, query, self._effective.servers)

        def write() -> dict[str, float]:
            for source, hit_id in credited.items():
                store.record(hit_id=hit_id, source=source, useful=useful, query=query)
            return {source: store.reputation(source) for source in credited}

        reputations = await asyncio.to_thread(write)  # the loop never waits on the disk
        if self.cache is not None:
            try:
                await self.cache.cache.invalidate(prefix=QUERY_PREFIX)
            except Exception as exc:  # the feedback is stored; a stale cache is not fatal
                log.warning("could not drop cached responses after feedback: %s", exc)
        return reputations

    def reputations(self) -> list[SourceReputation]:
        """Every configured or rated source's standing, by name (unrated sources at the
        prior); empty when the engine keeps no reputation store."""
        store = self.reputation
        if store is None:
            return []
        standings = store.standings()
        for name in self._effective.servers:
            standings.setdefault(name, SourceReputation(name, store.default, 0, 0, 0.0))
        return [standings[name] for name in sorted(standings)]

    async def reputation_rows(self) -> list[ReputationRow]:
        """Each source's standing and when it was last rated (read in a worker thread:
        the loop never waits on the disk)."""
        store = self.reputation

        def read() -> list[ReputationRow]:
            rows = []
            for standing in self.reputations():
                last = store.events(standing.source, limit=1) if store is not None and standing.votes else []
                rows.append(ReputationRow(standing.source, standing.reputation, standing.useful,
                                          standing.not_useful, last[0].time if last else None))
            return rows

        return await asyncio.to_thread(read)

    async def reset_reputation(self, source: str | None = None) -> int:
        """Forget the feedback for ``source`` (or every source); returns events dropped."""
        store = self.reputation
        if store is None:
            raise RuntimeError("no reputation store in this session (not persistent)")
        dropped = await asyncio.to_thread(store.reset, source)
        if self.cache is not None:
            try:
                await self.cache.cache.invalidate(prefix=QUERY_PREFIX)
            except Exception as exc:
                log.warning("could not drop cached responses after a reset: %s", exc)
        return dropped

    # ------------------------------------------------------------------ servers

    def supervise(self) -> None:
        """Begin periodic health checks of running servers, for a long-lived engine (the
        app, ``tributary serve``): a frozen server is then found and replaced even while
        no query is asking it anything. Checks never start a server."""
        self.pool.start_health()

    def warm_up(self, names: Iterable[str] | None = None) -> None:
        """Start servers (default: every enabled one) without waiting for them, and
        supervise them (``supervise``)."""
        self.supervise()
        self._warm = True
        wanted = list(names) if names is not None else [
            s.name for s in self._effective.servers.values() if s.enabled
        ]
        if wanted:
            # Keep a reference: a task nobody holds may be collected before it runs.
            self._warm_task = asyncio.get_running_loop().create_task(self.pool.start(wanted))

    async def start_sources(
        self, names: Iterable[str], timeout: float | None = None
    ) -> dict[str, ServerState]:
        """Start ``names`` and wait until each is ready or has failed, each at most its
        own timeout unless ``timeout`` is given (a one-shot CLI does this before
        searching, so a cold start is not counted against the per-query timeout). The token
        counter loads meanwhile, on a worker thread: otherwise a cold process's first
        pipeline run loads it, while the servers' start-up left this process idle."""
        states, _tokenizer = await asyncio.gather(
            self.pool.warm_up(names, timeout=timeout), asyncio.to_thread(get_tokenizer)
        )
        return states

    def server_states(self) -> list[ServerState]:
        return self.pool.states()

    def stderr_lines(self, name: str) -> list[str]:
        return self.pool.stderr_lines(name)

    async def test_server(self, server: ServerConfig, query: str = "test") -> ServerTest:
        """Start ``server`` on its own (it may not be saved yet), list tools, probe once."""
        pool = SourcePool([replace(server, enabled=True)], connector=self._connector)
        try:
            report = await pool.probe(server.name, query)
            stderr = pool.stderr_lines(server.name)
        finally:
            await pool.aclose()
        if self._starts is not None and server.builtin is None:  # what the next search waits for
            if report.tools:
                self._starts.later(self._starts.note_started, server)
            elif report.error:
                self._starts.later(self._starts.note_failed, server, report.error)
        outcome = report.outcome
        return ServerTest(
            name=server.name,
            ok=report.ok,
            tools=[ToolInfo(str(t.get("name", "")), str(t.get("description") or ""), t.get("sendable") is not False)
                   for t in report.tools],
            selection=report.selection,
            probe_hits=localised(outcome.hits, self._repository_roots) if outcome else [],  # as a search shows them
            latency_ms=outcome.latency_ms if outcome else None,
            startup_ms=report.startup_ms,
            error=report.error or (outcome.error if outcome else None),
            stderr=stderr,
        )

    async def repository_changed(self, path: str | Path) -> int:
        """An indexed repository's code index or history changed (indexed, updated,
        removed): drop the cached answers that drew on it, so the next search asks the
        built-in servers again; how many were dropped."""
        if self.cache is None:
            return 0
        try:
            return await self.cache.invalidate_repo(path)
        except Exception as exc:  # a broken cache must never break the caller
            log.warning("cache not invalidated for %s: %s", path, exc)
            return 0

    def repository_refreshed(self, root: Path) -> None:
        """The repository at ``root`` was brought up to date just now (a ``--repo``
        search asked for it): the search after it need not check it again."""
        if self._freshness is not None:
            self._freshness.brought_up_to_date(root)

    async def adopt_new_indexes(self) -> None:
        """A repository indexed since the config was applied (by ``tributary index`` or
        another process) is asked from the first search that can see its index file:
        the built-in server it needs is added then, not at the next config change."""
        if self._builtins_known():
            return
        async with self._adopting:
            if not self._builtins_known():
                await self.apply_config(self.config)

    def _builtins_known(self) -> bool:
        """Every built-in with an index to serve has its server (or the user's of that name)."""
        return set(available_builtins(None, self.config.index)) <= set(self._effective.servers)

    async def apply_config(self, config: Config) -> None:
        """Adopt a saved config: unchanged servers keep running (and their sessions),
        removed ones stop, changed ones restart; added and changed ones start at once
        when the engine warms its servers up."""
        before = {name: self.pool.config(name) for name in self.pool.names()}
        self.config = config
        self._effective = with_builtin_servers(config)
        await self.pool.reconfigure(self._effective.servers.values())
        if self.cache is not None:
            await self.cache.apply_config(self._effective)
        if self._warm:
            fresh = [s.name for s in self._effective.servers.values()
                     if s.enabled and before.get(s.name) != s]
            await self.pool.start(fresh)

    def watch_config(
        self, report: Callable[[ReloadReport], None] | None = None,
        path: Path | None = None,
    ) -> asyncio.Event:
        """Hot reload: apply every valid change of the config file (``path``, default
        the one loaded) until the engine closes; ``report`` hears each outcome (default:
        the log). Returns an event set once the file is being watched."""
        from tributary.engine import paths
        from tributary.engine.config.watch import watch_config

        target = path or self.config.path or paths.default_config_path()
        ready = asyncio.Event()
        if self._watch_task is not None:
            ready.set()
            return ready
        self._watch_stop = asyncio.Event()
        self._watch_task = asyncio.get_running_loop().create_task(
            watch_config(target, self.apply_config, report or _log_reload,
                         stop=self._watch_stop, ready=ready, in_effect=lambda: self._effective),
            name="tributary-config-watch")
        return ready

    async def listen(
        self, config_file: Path | None, *, kind: EngineKind = EngineKind.SERVE, on_stop: Callable[[], None] | None = None,
    ) -> bool:
        """Answer the command line's searches over the local socket (``tributary.engine.attach``)
        until closed; ``config_file`` is the config this engine was opened with, ``kind``
        what runs it (``app``, ``serve``, ``background``), ``on_stop`` what a client's
        request to stop calls (None: such requests are refused). False when it cannot (no
        Unix sockets, or another engine for this home answers)."""
        from tributary.engine.attach import AttachServer

        server = AttachServer(self, config_file, kind=kind, on_stop=on_stop)
        if not await server.start():
            return False
        self._attach = server
        return True

    def idle_s(self) -> float | None:
        """Seconds since the command line last asked this engine; None when not listening."""
        return None if self._attach is None else float(self._attach.idle_s())

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._watch_task is not None and self._watch_stop is not None:
            self._watch_stop.set()
            try:
                await asyncio.wait_for(self._watch_task, 5)
            except (TimeoutError, Exception):
                self._watch_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._watch_task
        if self._attach is not None:
            await self._attach.close()
        if self._freshness is not None:
            await self._freshness.close()
        await self.pool.aclose()
        if self.cache is not None:
            await self.cache.close()
        if self.query_log is not None:
            self.query_log.close()
        if self.reputation is not None:
            self.reputation.close()

    async def __aenter__(self) -> Engine:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _log_reload(report: ReloadReport) -> None:
    if report.ok:
        log.info("%s", report.message)
    else:
        log.warning("%s", report.message)


def source_notes(reports: Iterable[SourceReport]) -> list[str]:
    """Each source's own warnings as response notes (``files: embedding model still
    loading: …``): a weaker answer is said to be one wherever the response is shown."""
    return [f"{report.name}: {warning}" for report in reports for warning in report.warnings]


def source_depth(request: SearchRequest) -> int:
    """How many hits to ask each source for."""
    return max(request.top_k, SOURCE_DEPTH)


def _source_call(
    server: ServerConfig, request: SearchRequest, scope: dict[str, list[str]]
) -> tuple[str, dict[str, Any]]:
    """The cache's view of one call: the configured tool (or auto) and its arguments,
    ``scope`` among them (``Filters.arguments``: a scoped answer is not the unscoped one)."""
    return server.tool or "auto", {
        **server.arguments, "query": request.query, "top_k": source_depth(request), **scope,
    }


def _optional(what: str, opener: Callable[[], _T]) -> _T | None:
    """``opener()``, or None with one warning when the disk is full or the file cannot
    be opened: searching goes on without what is only a record of it."""
    try:
        return opener()
    except Exception as exc:
        if not _store_failed(exc):
            raise
        reason = disk_full_message(exc) if disk_full(exc) else str(exc)
        log.warning("%s is unavailable, searching without it: %s", what, reason)
        return None


_SQLITE_ERRORS = frozenset({"OperationalError", "DatabaseError"})


def _store_failed(exc: BaseException) -> bool:
    """Whether ``exc`` is a record's file failing (full disk, I/O, SQLite), which the
    engine answers without, rather than a bug to raise."""
    return disk_full(exc) or isinstance(exc, OSError) or type(exc).__name__ in _SQLITE_ERRORS


def mark_roles(hits_by_source: Mapping[str, Sequence[Hit]], query: str, third_party: Collection[str]) -> None:
    """Mark the file hits of ``third_party`` sources with their file's role factor
    (``metadata["role_factor"]``, below 1 only) for the fusion to scale their scores.

    The built-in servers weigh a file's role themselves (a test, a changelog, a lock
    file keeps part of its score unless the question asks for it); a grep or file-name
    server did not, so its changelogs and docs ranked as high as its code. A question
    read as a task asks for roles by its title, as the built-in servers read it.

    A translation or an older copy is one among the paths every source found: a
    file-name search lists ``docs/de/.../response-model.md`` beside the English page."""
    marked = [hit for name in third_party for hit in hits_by_source.get(name, ())]
    if not marked:  # the built-in servers alone: nothing to mark, no paths to compare
        return
    task = is_task_question(query)
    asked = task_asked_roles(read_task(query).title) if task else asked_roles(query)
    paths = [hit.path for hits in hits_by_source.values() for hit in hits if hit.path]
    copies, older = translated(paths), superseded(paths)
    for hit in marked:
        role = role_among(hit.path, older=older, copies=copies) if hit.path and not is_task(hit) else CODE
        kept = factor(role, asked, task=task)
        if kept < 1.0:
            hit.metadata[ROLE_FACTOR] = kept
        else:  # a hit kept from an earlier question (a cache) may carry its mark
            hit.metadata.pop(ROLE_FACTOR, None)
