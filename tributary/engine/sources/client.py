"""One supervised MCP client for one configured server.

A single asyncio task (the *owner*) holds the connection's context managers
(the connector's transport and the SDK ``ClientSession``) for their whole
life, so no anyio cancel scope is ever entered in one task and left in
another. Callers run requests on the live session from their own tasks — the
SDK correlates responses — and each request carries its own timeout; on a
timeout or a caller's cancellation the SDK sends ``notifications/cancelled``
and the session stays up. A given-up request winds down in the background, so
a wedged transport (whose courtesy cancel cannot be written) never holds the
caller past its timeout.

The owner starts the server on first use, initialises it, lists its tools and
picks the query tool (:mod:`tributary.engine.sources.tools`). When the server exits or
fails to start it records the error, waits with exponential backoff
(:class:`Backoff`; reset after the server stayed up ``stable_s``) and starts it
again; a caller arriving while a restart is due before its deadline waits for
it, otherwise it gets an immediate error. A server that is not coming up — its
last start failed, or a caller already waited a whole deadline on the start still
under way — is not waited on at all (not through its restart either): the caller gets an immediate error, so a dead
server (no such program, one that exits at once or never speaks MCP, an HTTP address
with nothing behind it) costs the queries nothing while it is retried in the
background, and its breaker opens after ``failure_threshold`` of them. Every call passes the
:class:`~tributary.engine.sources.health.CircuitBreaker` first; answered and timed-out
calls on a running server feed the latency estimate the fan-out orders its
requests by (:mod:`tributary.engine.sources.latency`).

A server that is alive but silent — it left ``health.failure_threshold``
requests in a row unanswered, sent nothing meanwhile, and then did not answer a
ping either (:class:`~tributary.engine.sources.health.Silence`) — is replaced: a stdio
server's process group is terminated, killed after a grace period and reaped,
an HTTP session is dropped, and the owner task starts it again through the same
backoff as after a crash. ``last_error`` and ``restart_reason`` say so, the
breaker lets the new process take the trial call at once, and the log keeps
the whole story.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

import anyio
import pydantic
from mcp import ClientSession, types
from mcp.client.session import IncomingMessage
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from tributary.engine.config.schema import ServerConfig
from tributary.engine.config.secrets import mask_secrets
from tributary.engine.errors import TributaryError
from tributary.engine.model import NAME_ONLY, START_FAILED, STARTING_AGAIN, Hit, SourceStatus
from tributary.engine.sources.connect import Connector, SourceRefused
from tributary.engine.sources.health import BreakerState, CircuitBreaker, Clock, Silence
from tributary.engine.sources.latency import LatencyEstimate
from tributary.engine.sources.normalize import (
    UNASKED_NOTE,
    Normalized,
    NormalizeError,
    NormalizeLimits,
    merged,
    normalize_result,
    rank_after_answers,
    rank_by_glob_words,
    rank_by_keywords,
    rank_by_pattern_words,
)
from tributary.engine.sources.start_gate import StartGate, Ticket
from tributary.engine.sources.start_record import FailedStart, StartRecord
from tributary.engine.sources.state import ProbeReport, ServerState, ServerStatus, SourceOutcome
from tributary.engine.sources.stderr import StderrLog
from tributary.engine.sources.tools import (
    ToolSelection,
    ToolSelectionError,
    select_tool,
    unsafe_reason,
)
from tributary.engine.version import package_version

CLIENT_INFO = types.Implementation(name="tributary", version=package_version())
CLOSE_GRACE_S = 10.0  # the SDK's own stdio shutdown is bounded at about 6 s
_BACKSTOP_S = 0.25  # slack over the SDK's request timeout before we cancel ourselves
_MAX_TOOL_PAGES = 20
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Backoff:
    """Restart delays: ``initial_s * factor**(n-1)``, at most ``max_s``."""

    initial_s: float = 0.5
    factor: float = 2.0
    max_s: float = 30.0
    stable_s: float = 10.0  # up this long → the next crash starts from initial_s again

    def delay(self, attempt: int) -> float:
        return float(min(self.max_s, self.initial_s * self.factor ** max(0, attempt - 1)))


class SourceUnavailable(TributaryError):
    """The server is not running now (crashed and waiting to restart, or stopped)."""


class StartTimeout(TributaryError):
    """The server did not become ready before the caller's deadline."""


class HandshakeTimeout(TributaryError):
    """The server did not answer ``initialize`` and ``tools/list`` within its own timeout."""


class ToolCallFailed(TributaryError):
    """A pass-through tool call that got no result (the message names the server)."""


class _WatchedReadStream:
    """Passes the transport's read stream through and reports its end (server gone)."""

    def __init__(
        self, inner: ReadStream[SessionMessage | Exception], on_end: Callable[[], None],
        on_message: Callable[[], None],
    ) -> None:
        self._inner = inner
        self._on_end = on_end
        self._on_message = on_message

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            message = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise
        self._on_message()
        return message

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class SourceClient:
    """Supervises one server. Create, use, and :meth:`aclose` (idempotent)."""

    def __init__(
        self,
        config: ServerConfig,
        connector: Connector,
        *,
        backoff: Backoff | None = None,
        limits: NormalizeLimits | None = None,
        start_timeout_s: float = 30.0,
        log_lines: int = 500,
        clock: Clock = time.monotonic,
        gate: StartGate | None = None,
        starts: StartRecord | None = None,
    ) -> None:
        self.config = config
        self._gate = gate
        self._starts = starts
        # Its start failed in an earlier process lately: not waited for beyond a query's
        # own timeout (``start_record``), until it starts.
        self._failed_before = _recorded_failure(starts, config)
        self._noted_failure = False  # this process wrote a failed start down
        self.log = StderrLog(log_lines)
        self.breaker = CircuitBreaker(config.health, clock)
        self.latency = LatencyEstimate()
        self._connector = connector
        self._backoff = backoff or Backoff()
        self._limits = limits or NormalizeLimits()
        self._start_timeout = start_timeout_s
        self._clock = clock
        self._status = ServerStatus.IDLE if config.enabled else ServerStatus.DISABLED
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._closing = False
        self._session: ClientSession | None = None
        self._tools: list[types.Tool] = []
        self._selection: ToolSelection | None = None
        self._selection_error: str | None = None
        self._server_info: str | None = None
        self._pid: int | None = None
        self._restarts = 0
        self._last_error: str | None = None
        self._retry_at: float | None = None
        self._up_since: float | None = None
        self._lost = False  # the connection ended; its restart is not counted yet
        self._last_ping_ms: float | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._winding_down: set[asyncio.Future[Any]] = set()  # given-up requests (``_within``)
        self._silence = Silence(clock)
        self._checking = False  # a ping deciding whether a silent server is frozen is out
        self._replace = asyncio.Event()  # set: the running connection is to be replaced
        self._replace_reason: str | None = None
        self._fresh_trial = False  # replaced a silent server: its successor gets the trial
        self._restarted_at: float | None = None
        self._restart_reason: str | None = None
        self._killable = False  # the running connection has a process to kill (stdio)
        self._start_missed = False  # a caller timed out waiting for this start
        self._start_failed = False  # the last connection ended before it was ready
        # Set when retrying cannot help (the command does not exist): the owner stops,
        # and calls say why, until the config changes (the pool then makes a new client).
        self._gave_up: str | None = None

    # ------------------------------------------------------------------ public

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def status(self) -> ServerStatus:
        return self._status

    def state(self) -> ServerState:
        now = self._clock()
        retry = (max(0.0, self._retry_at - now)
                 if self._status is ServerStatus.BACKOFF and self._retry_at is not None else None)
        return ServerState(
            name=self.name,
            transport=self.config.transport,
            status=self._status,
            pid=self._pid if self._status is ServerStatus.READY else None,
            restarts=self._restarts,
            last_error=self._last_error,
            tools=[t.name for t in self._tools],
            sendable=tuple(t.name for t in self._tools if unsafe_reason(t) is None),
            tool=self._selection.describe() if self._selection else None,
            tool_error=self._selection_error,
            breaker=self.breaker.snapshot(),
            retry_in_s=retry,
            server_info=self._server_info,
            uptime_s=(now - self._up_since) if self._up_since is not None
            and self._status is ServerStatus.READY else None,
            last_ping_ms=self._last_ping_ms,
            latency_ms=self.latency.ms,
            restarted_at=self._restarted_at,
            restart_reason=self._restart_reason,
        )

    def ensure_started(self) -> None:
        """Start the owner task if it is not running (servers start on first use)."""
        if self._task is None and not self._closing and self.config.enabled:
            self._set_status(ServerStatus.STARTING)
            self._task = asyncio.create_task(self._supervise(), name=f"tributary-source-{self.name}")

    async def call(
        self, query: str, top_k: int, *, timeout: float | None = None,
        scope: Mapping[str, Any] | None = None,
    ) -> SourceOutcome:
        """Run the query tool once; never raises except for the caller's own cancellation.
        ``scope`` (``repos``) goes to the tool only where it takes such an argument."""
        start = self._clock()
        timeout = self.config.timeout if timeout is None else timeout
        if not self.config.enabled:
            return SourceOutcome(self.name, SourceStatus.SKIPPED, 0.0, error="disabled")
        if not self.breaker.allow():
            snap = self.breaker.snapshot()
            return SourceOutcome(
                self.name, SourceStatus.CIRCUIT_OPEN, 0.0,
                error=f"not asked after {snap.consecutive_failures} failures in a row; "
                f"tried again in {self.breaker.retry_in():.0f} s",
            )
        trial = self.breaker.state is BreakerState.HALF_OPEN
        # A call that waits for the server to start says how slow start-up is, not a query.
        warm = self._status is ServerStatus.READY and self._session is not None
        try:
            outcome, counts = await self._call(query, top_k, start, start + timeout, scope)
        except asyncio.CancelledError:
            self.breaker.release_trial()
            raise
        if warm and outcome.status in (SourceStatus.OK, SourceStatus.TIMEOUT):
            self.latency.add(outcome.latency_ms)
        if outcome.status is SourceStatus.OK:
            self.breaker.record_success()
        elif counts:
            self.breaker.record_failure()
        else:
            self.breaker.release_trial()
        if trial:
            outcome.detail = _join(outcome.detail, f"trial call; circuit {self.breaker.state}")
        return outcome

    @property
    def start_limit(self) -> float:
        """How long a caller waits by default for this server to start: its start-up
        timeout (at most the pool's start-up limit, which bounds the handshake itself)."""
        if self._failed_before is not None:
            return min(self._start_timeout, self.config.startup_timeout, self.config.timeout)
        return min(self._start_timeout, self.config.startup_timeout)

    async def tools(self, timeout: float | None = None) -> list[types.Tool]:
        """The server's tools (starting it if needed; waiting at most its start limit)."""
        limit = self.start_limit if timeout is None else timeout
        try:
            await self._wait_session(self._clock() + limit)
        except StartTimeout:
            if timeout is None:  # its whole start-up timeout, waited in vain
                # A search right after (a one-shot CLI's) does not wait all over again.
                self._start_missed = True
                if self._failed_before is None:
                    self._note_missed_start(limit)
            raise
        return list(self._tools)

    async def call_named(
        self, tool: str, arguments: Mapping[str, Any], *, timeout: float | None = None,
    ) -> types.CallToolResult:
        """Call ``tool`` with ``arguments`` as given (a pass-through for ``tributary serve``),
        starting the server if needed, within the server's timeout once it is ready. The
        upstream's result comes back as it is, an ``isError`` one included, with the
        values the connection was given masked; no answer raises :class:`ToolCallFailed`."""
        if not self.config.enabled:
            raise ToolCallFailed(f"{self.name}: the server is disabled")
        try:
            session = await self._wait_session(self._clock() + self.start_limit)
        except TributaryError as exc:
            raise ToolCallFailed(f"{self.name}: {self.log.scrub(str(exc))}") from None
        limit = self.config.timeout if timeout is None else timeout
        try:
            result = await self._within(
                session.call_tool(tool, dict(arguments), read_timeout_seconds=limit),
                limit + _BACKSTOP_S,
            )
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            self._missed(session)
            raise ToolCallFailed(f"{self.name}: {tool}: no answer within {limit:g}s") from None
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                self._missed(session)
                raise ToolCallFailed(f"{self.name}: {tool}: no answer within {limit:g}s") from None
            text = self._exit_text("call") if exc.code == types.CONNECTION_CLOSED else str(exc)
            raise ToolCallFailed(f"{self.name}: {tool}: {self.log.scrub(text)}") from None
        except Exception as exc:
            raise ToolCallFailed(f"{self.name}: {tool}: {self.log.scrub(_describe(exc))}") from None
        for block in result.content:
            if isinstance(block, types.TextContent):
                block.text = self.log.scrub(block.text)
        return result

    async def ping(self, timeout: float | None = None) -> bool | None:
        """A health check of a running server: True ok, False failed, None not running."""
        session = self._session
        if session is None or self._status is not ServerStatus.READY:
            return None
        start = self._clock()
        limit = self.config.timeout if timeout is None else timeout
        try:
            await self._within(session.send_ping(), limit)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._last_ping_ms = None
            timed_out = _is_timeout(exc)
            self.log.event(f"ping: no answer within {limit:g}s" if timed_out
                           else f"health check failed: {_describe(exc)}")
            self.breaker.record_failure(call=False)
            if timed_out:
                self._missed(session, ping=True)
            return False
        self._last_ping_ms = (self._clock() - start) * 1000
        self.breaker.record_alive()  # clears a run of failed pings, not of failed calls
        return True

    async def probe(self, query: str, top_k: int = 5) -> ProbeReport:
        """Start (if needed), list tools, run one query: what ``servers test NAME`` shows."""
        start = self._clock()
        try:
            # A connection test waits out a slow start (the pool's limit), unlike a search.
            tools = await self.tools(self._start_timeout)
        except Exception as exc:
            return ProbeReport(self.name, False, None, [], None, None, _describe(exc), self.state())
        startup_ms = (self._clock() - start) * 1000
        outcome = await self.call(query, top_k)
        listed = [
            {"name": t.name, "description": t.description or "", "input_schema": t.input_schema,
             "sendable": unsafe_reason(t) is None}
            for t in tools
        ]
        return ProbeReport(
            self.name, outcome.status is SourceStatus.OK, startup_ms, listed,
            self._selection.describe() if self._selection else None,
            outcome, outcome.error or self._selection_error, self.state(),
        )

    async def aclose(self) -> None:
        """Stop the server and the owner task. Idempotent."""
        self._closing = True
        if self._scope is not None:
            self._scope.cancel()
        task = self._task
        for background in list(self._background):
            background.cancel()
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), CLOSE_GRACE_S)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._winding_down:  # the session is closed: their writes fail at once now
            await asyncio.wait(list(self._winding_down), timeout=CLOSE_GRACE_S)
        self._set_status(ServerStatus.STOPPED)

    # ---------------------------------------------------------------- calling

    async def _within(self, request: Coroutine[Any, Any, _T], limit: float) -> _T:
        """``request`` run as a task of its own and given up after ``limit`` seconds
        (TimeoutError) or on the caller's cancellation, without waiting for it to wind
        down. When the transport is wedged (an HTTP server stopped mid-request) the SDK's
        courtesy ``notifications/cancelled`` of a given-up request waits up to 5 s for a
        write that cannot happen, shielded from cancellation; that wait now happens in
        the background instead of holding the search past the source's timeout."""
        task = asyncio.ensure_future(request)
        try:
            done, _ = await asyncio.wait({task}, timeout=limit)
        except asyncio.CancelledError:
            self._let_go(task)
            raise
        if not done:
            self._let_go(task)
            raise TimeoutError(f"no answer within {limit:g}s")
        return task.result()

    def _let_go(self, task: asyncio.Future[Any]) -> None:
        """Cancel a request and keep it until it has wound down (``aclose`` waits for it)."""
        task.cancel()
        self._winding_down.add(task)
        task.add_done_callback(self._wound_down)

    def _wound_down(self, task: asyncio.Future[Any]) -> None:
        self._winding_down.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a given-up request's error is no one's business

    async def _call(
        self, query: str, top_k: int, start: float, deadline: float,
        scope: Mapping[str, Any] | None = None,
    ) -> tuple[SourceOutcome, bool]:
        """The outcome, and whether it counts as a failure for the breaker."""
        ready_at_entry = self._status is ServerStatus.READY and self._session is not None
        ready_ms: float | None = None  # when the server was ready, if the call waited for it

        def outcome(status: SourceStatus, **kw: Any) -> SourceOutcome:
            if kw.get("error"):  # a server's error text may echo its own token
                kw["error"] = self.log.scrub(kw["error"])
            took = (self._clock() - start) * 1000
            startup = None if ready_at_entry else ready_ms if ready_ms is not None else took
            return SourceOutcome(self.name, status, took, startup_ms=startup, **kw)

        start_deadline = self._start_deadline(start, deadline)
        try:
            session = await self._wait_session(start_deadline)
        except StartTimeout as exc:
            # The caller waited its whole timeout for a start: a failure like any other
            # timeout, so a server that never answers opens its breaker. Once the start
            # completes, the breaker lets the next call try at once (``_on_ready``).
            self._start_missed = True
            if start_deadline > deadline:  # it waited out the whole start-up timeout
                self._note_missed_start(start_deadline - start)
            return outcome(SourceStatus.TIMEOUT, error=str(exc)), True
        except SourceUnavailable as exc:
            return outcome(SourceStatus.ERROR, error=str(exc)), True
        if not ready_at_entry:
            # The start is not the query's time: it gets its own timeout from here.
            ready_ms = (self._clock() - start) * 1000
            deadline = max(deadline, self._clock() + (deadline - start))
        selection = self._selection
        if selection is None:
            # A server none of whose tools a search may call is left out, saying why, as
            # routing leaves it out of every later search (``Engine._skip_toolless``).
            status = SourceStatus.SKIPPED if self._selection_error else SourceStatus.ERROR
            return outcome(status, error=self._selection_error or "no tool"), False
        remaining = max(0.001, deadline - self._clock())
        tool = selection.tool
        try:
            texts = selection.query_texts(query)  # what each call's query argument gets

            async def each() -> list[types.CallToolResult | BaseException]:
                # one call, or (a substring search) one for each word, side by side
                return list(await asyncio.gather(*(
                    session.call_tool(tool, selection.arguments(query, top_k, scope, text),
                                      read_timeout_seconds=remaining)
                    for text in texts), return_exceptions=True))

            normalized = merged(self._answered(await self._within(each(), remaining + _BACKSTOP_S), tool))
            self._scrub_hits(normalized.hits)
            asked_with = selection.query_argument
            if asked_with is None:
                rank_after_answers(normalized.hits, top_k)
            elif len(texts) > 1:
                rank_by_keywords(normalized.hits, texts)
            elif selection.query_mode == "pattern":  # the expression it was sent
                rank_by_pattern_words(normalized.hits, texts[0])
            elif selection.query_mode == "glob":
                rank_by_glob_words(normalized.hits, texts[0])
            if selection.query_mode == "glob":  # a file-name search: names matched, not contents
                for hit in normalized.hits:
                    hit.metadata[NAME_ONLY] = True
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            self._missed(session)
            return outcome(SourceStatus.TIMEOUT, tool=tool, error=self._timeout_text()), True
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                self._missed(session)
                return outcome(SourceStatus.TIMEOUT, tool=tool, error=self._timeout_text()), True
            if exc.code == types.CONNECTION_CLOSED:
                return outcome(SourceStatus.ERROR, tool=tool, error=self._exit_text("call")), True
            if exc.code == types.INVALID_PARAMS:  # the request's fault, not the server's
                return outcome(SourceStatus.ERROR, tool=tool, error=f"refused the request: {exc}"), False
            return outcome(SourceStatus.ERROR, tool=tool, error=f"server error: {exc}"), True
        except NormalizeError as exc:
            return outcome(SourceStatus.ERROR, tool=tool, error=str(exc)), True
        except pydantic.ValidationError as exc:
            return outcome(SourceStatus.ERROR, tool=tool,
                           error=f"malformed result from server: {_describe(exc)}"), True
        except Exception as exc:  # a server's bad data must never fail the search
            return outcome(SourceStatus.ERROR, tool=tool, error=_describe(exc)), True
        warnings = [self.log.scrub(w) for w in normalized.warnings]
        return outcome(SourceStatus.OK, tool=tool, hits=normalized.hits,
                       detail=_join_all(normalized.note, *warnings, UNASKED_NOTE if asked_with is None else None),
                       warnings=warnings, degraded=normalized.degraded), False

    def _answered(self, results: list[types.CallToolResult | BaseException], tool: str) -> list[Normalized]:
        """The calls of one search, normalized: those that failed are left out while
        another answered (a substring search asked word by word), else the first
        failure is raised, as a single call's would be."""
        answers: list[Normalized] = []
        failures: list[BaseException] = []
        for result in results:
            if isinstance(result, BaseException):
                failures.append(result)
                continue
            try:
                answers.append(normalize_result(result, source=self.name, tool=tool, limits=self._limits))
            except NormalizeError as exc:
                failures.append(exc)
        if not answers:
            raise failures[0]
        if failures:
            answers[0].warnings.append(f"{len(failures)} of {len(results)} calls failed: {_describe(failures[0])}")
        return answers

    def _scrub_hits(self, hits: list[Hit]) -> None:
        """A server that echoes its own token or key in a result must not put it in the
        context, cache or history: the values the connection was given are masked."""
        scrub = self.log.scrub
        for hit in hits:
            hit.title, hit.content = scrub(hit.title), scrub(hit.content)
            if hit.path is not None:
                hit.path = scrub(hit.path)
            if hit.uri is not None:
                hit.uri = scrub(hit.uri)

    def _timeout_text(self) -> str:
        return f"no answer within {self.config.timeout:g}s (request cancelled, session kept)"

    # ------------------------------------------------------------ silence

    def _missed(self, session: ClientSession, *, ping: bool = False) -> None:
        """A request to ``session`` timed out. Replace the server once the run is long
        enough and a ping has confirmed it (a ping that timed out ends the run)."""
        if session is not self._session or self._status is not ServerStatus.READY:
            return  # already replaced, or going
        run = self._silence.missed()
        if run < self.config.health.failure_threshold or not self.config.health.restart_unresponsive:
            return
        if ping:
            self._replace_silent(run)
        elif not self._checking:
            self._checking = True
            task = asyncio.create_task(self._confirm_silence(), name=f"tributary-check-{self.name}")
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _confirm_silence(self) -> None:
        try:
            await self.ping()
        finally:
            self._checking = False

    def _replace_silent(self, run: int) -> None:
        silent = self._silence.seconds()
        # A process of ours is killed and started again; HTTP and in-memory servers,
        # with nothing to kill, are only connected to again.
        action = "restarted" if self._killable else "reconnected"
        self._replace_reason = (f"{action}: no answer for {silent:.0f} s "
                                f"({run} requests in a row timed out)")
        self.log.event(f"no answer for {silent:.1f}s ({run} requests in a row timed out): "
                       + ("reconnecting" if action == "reconnected" else "restarting the server"))
        self._fresh_trial = True
        # The estimate described the frozen process; the next one starts without history.
        self.latency = LatencyEstimate()
        self._mark_lost()
        self._replace.set()

    def _exit_text(self, during: str) -> str:
        """Why the server is gone, with its last words; a program that exited during its
        start-up saying nothing (``npx`` whose package's install failed) is named, so it
        can be run where it shows what it did."""
        stdio = self.config.transport == "stdio"
        text = f"{'server exited' if stdio else 'connection closed'} during the {during}"
        last = self.log.last_output()
        if last:
            return f"{text}: {last}"
        if stdio and during == "start-up":
            shown = mask_secrets(self.config)
            command = shlex.join([shown.command or "", *shown.args])
            return f"{text} and printed nothing; run `{command}` in a terminal to see why"
        return text

    def _start_deadline(self, start: float, deadline: float) -> float:
        """How long a call waits for the server to be ready. A server still making its
        first start (nothing failed yet) is waited for up to its start-up timeout, so a
        slow start on a busy machine is not reported as a failed query; after a missed or
        failed start, only the call's own deadline."""
        first_start = (self._status in (ServerStatus.IDLE, ServerStatus.STARTING)
                       and self._restarts == 0 and not self._start_missed and self._failed_before is None)
        if not first_start:
            return deadline
        return max(deadline, start + min(self.config.startup_timeout, self._start_timeout))

    async def _wait_session(self, deadline: float) -> ClientSession:
        self.ensure_started()
        # A crash already noticed but not yet counted is not a new crash during our wait.
        restarts_at_entry = self._restarts + (1 if self._lost else 0)
        while True:
            status = self._status
            if status is ServerStatus.READY and self._session is not None:
                return self._session
            now = self._clock()
            if status in (ServerStatus.STOPPED, ServerStatus.DISABLED):
                raise SourceUnavailable(self._gave_up or f"server is {status}")
            if status is ServerStatus.BACKOFF and self._start_failed:
                # Its last start failed: the next one most likely will too.
                wait = max(0.0, (self._retry_at or now) - now)
                raise SourceUnavailable(
                    f"{START_FAILED}retrying in {wait:.1f}s (restart #{self._restarts}): "
                    f"{self._last_error}")
            if status is ServerStatus.STARTING and self._start_failed:
                # Starting again after a failed start: not waited on.
                raise SourceUnavailable(
                    f"{STARTING_AGAIN}{self._restarts}) after: {self._last_error}")
            if status is ServerStatus.STARTING and self._start_missed:
                # A caller already waited its whole deadline on this start: not again.
                raise StartTimeout("not ready: still starting after an earlier wait of "
                                   "its whole deadline" + self._failed_note())
            # Wait through one restart that is due before the deadline, not a crash loop.
            if status is ServerStatus.BACKOFF and (
                (self._retry_at or 0.0) >= deadline or self._restarts > restarts_at_entry
            ):
                wait = max(0.0, (self._retry_at or now) - now)
                raise SourceUnavailable(
                    f"restarting in {wait:.1f}s (restart #{self._restarts}) after: {self._last_error}"
                )
            if now >= deadline:
                raise StartTimeout(f"not ready within the deadline (server is {status})" + self._failed_note())
            changed = self._changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), deadline - now)

    # ------------------------------------------------------------ supervision

    def _set_status(self, status: ServerStatus) -> None:
        self._status = status
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def _supervise(self) -> None:
        attempt = 0
        while not self._closing:
            self._set_status(ServerStatus.STARTING)
            await self._attempt()
            if self._closing:
                break
            if self._gave_up is not None:
                self.log.event(f"not restarting: {self._gave_up} (fix the config to try again)")
                break
            stayed_up = (self._up_since is not None
                         and self._clock() - self._up_since >= self._backoff.stable_s)
            attempt = 1 if stayed_up else attempt + 1
            delay = self._backoff.delay(attempt)
            self._restarts += 1
            self._restarted_at = time.time()
            self._restart_reason = self._last_error
            self._lost = False
            self._retry_at = self._clock() + delay
            self._up_since = None
            self.log.event(f"restart #{self._restarts} in {delay:.1f}s")
            self._set_status(ServerStatus.BACKOFF)
            with anyio.CancelScope() as scope:
                self._scope = scope
                if not self._closing:
                    await anyio.sleep(delay)
            self._scope = None
        self._set_status(ServerStatus.STOPPED)

    async def _attempt(self) -> None:
        """One connection's life: start, serve until stopped or lost. Records errors."""
        lost = False
        ready = False
        self._replace = replace = asyncio.Event()
        self._replace_reason = None

        with anyio.CancelScope() as scope:
            def on_end() -> None:
                nonlocal lost
                if not self._closing:
                    lost = True
                    self._mark_lost()
                scope.cancel()

            self._scope = scope
            if self._closing:
                scope.cancel()
            ticket: Ticket | None = None
            try:
                ticket = await self._start_turn()
                async with (
                    self._connector(self.config, self.log) as conn,
                    (_OwnServerSession if self.config.builtin else ClientSession)(
                        _WatchedReadStream(conn.read, on_end, self._silence.heard), conn.write,
                        message_handler=self._on_message, logging_callback=self._on_log,
                        client_info=CLIENT_INFO,
                    ) as session,
                ):
                    init, tools = await self._handshake(session)
                    if ticket is not None:
                        ticket.release()
                    self._killable = conn.kill is not None
                    self._on_ready(session, init, tools, conn.pid)
                    ready = True
                    await replace.wait()
                    if conn.kill is not None:
                        with anyio.CancelScope(shield=True):
                            await conn.kill()
                    # Leave cancelled, as after a crash: closing must not wait on the server.
                    scope.cancel()
            except Exception as exc:
                if not self._closing:
                    self._gave_up = _unstartable(exc, self.config)
                    self._last_error = self._gave_up or self.log.scrub(_describe(exc))
                    self.log.event(f"error: {self._last_error}")
            finally:
                if ticket is not None:
                    ticket.release()
                self._session = None
                self._scope = None
        self._start_failed = not ready and not self._closing
        if self._replace_reason is not None:
            self._last_error = self._replace_reason
        elif lost:
            self._last_error = self._exit_text("session" if ready else "start-up")
            self.log.event(self._last_error)
        if self._start_failed and self._starts is not None and self.config.builtin is None:
            self._noted_failure = True
            self._starts.later(self._starts.note_failed, self.config,
                               self._last_error or "it ended before it was ready")

    def _failed_note(self) -> str:
        failed = self._failed_before
        return f"; not waited for longer: {failed.describe()}" if failed is not None else ""

    def _note_missed_start(self, waited_s: float) -> None:
        """A caller waited this server's whole start-up timeout in vain: the next
        process waits less for it (``start_record``), unless it gets ready meanwhile."""
        if self._starts is not None and self.config.builtin is None:
            self._noted_failure = True
            self._starts.later(self._starts.note_failed, self.config,
                               f"not ready within its start-up timeout of {waited_s:.0f} s")

    async def _start_turn(self) -> Ticket | None:
        """Wait for the pool's start gate (local processes only; built-in servers
        first): a server's start is mostly CPU, and many at once delay every one."""
        if self._gate is None or self.config.transport != "stdio":
            return None
        if self._gate.full:
            self.log.event(f"waiting to start: {self._gate.running} servers are starting")
        return await self._gate.enter(0 if self.config.builtin else 1)

    async def _handshake(
        self, session: ClientSession
    ) -> tuple[types.InitializeResult, list[types.Tool]]:
        try:
            with anyio.fail_after(self._start_timeout):
                return await session.initialize(), await _list_tools(session)
        except TimeoutError:
            raise HandshakeTimeout(
                f"no answer to initialize within {self._start_timeout:g}s") from None

    def _mark_lost(self) -> None:
        """The server is gone: from now on, not after the owner task has unwound.

        The SDK fails the requests in flight right after this, and their callers may
        issue the next call before the owner task runs again: that call must wait for
        the restart, not be handed the dead session, and ``state()`` must not say ready.
        """
        self._session = None
        self._lost = True
        self._retry_at = None  # known once the owner task has counted the restart
        if self._status is ServerStatus.READY:
            self._set_status(ServerStatus.BACKOFF)

    def _on_ready(
        self, session: ClientSession, init: types.InitializeResult, tools: list[types.Tool],
        pid: int | None,
    ) -> None:
        self._session = session
        self._tools = tools
        self._pid = pid
        info = init.server_info
        self._server_info = f"{info.name} {info.version}".strip() if info else None
        try:
            self._selection, self._selection_error = select_tool(self.config, tools), None
        except ToolSelectionError as exc:
            self._selection, self._selection_error = None, str(exc)
        self._up_since = self._clock()
        self._silence.heard()
        if (self._failed_before is not None or self._noted_failure) and self._starts is not None:
            self._starts.later(self._starts.note_started, self.config)
        self._failed_before, self._noted_failure = None, False
        if self._fresh_trial or self._start_missed:
            self._fresh_trial = self._start_missed = False
            self.breaker.trial_now()  # a fresh process: no reason to wait out the open period
        self.log.event(f"ready: {len(tools)} tools"
                       + (f", using {self._selection.describe()}" if self._selection else ""))
        self._set_status(ServerStatus.READY)

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            # Not awaited here: the answer to list_tools arrives through this same read loop.
            task = asyncio.create_task(self._refresh_tools())
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        elif isinstance(message, Exception):
            # Garbage on stdout or invalid JSON-RPC: the SDK skips it; we keep a trace.
            self.log.event(f"invalid message from server: {_describe(message)[:300]}")

    async def _refresh_tools(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            async with asyncio.timeout(self.start_limit):
                tools = await _list_tools(session)
        except Exception as exc:
            self.log.event(f"tool list refresh failed: {_describe(exc)}")
            return
        if session is not self._session:
            return  # the session was replaced meanwhile
        self._tools = tools
        try:
            self._selection, self._selection_error = select_tool(self.config, tools), None
        except ToolSelectionError as exc:
            self._selection, self._selection_error = None, str(exc)
        self.log.event(f"tool list changed: {len(tools)} tools")

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.log.append(f"[log {params.level}] {params.data}")


class _OwnServerSession(ClientSession):
    """A session with one of Tributary's own servers (``files``, ``tasks``). Their answers
    are built from typed models on the other side, so the SDK's second check of each
    answer against the tool's output schema, a JSON-schema walk over every hit run in
    the event loop, is skipped: it cost more CPU than the rest of a search."""

    async def validate_tool_result(self, name: str, result: types.CallToolResult) -> None:
        return None


async def _list_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or (
        isinstance(exc, MCPError) and exc.code == types.REQUEST_TIMEOUT)


def _unstartable(exc: BaseException, config: ServerConfig) -> str | None:
    """Why ``config`` can never start as it is (a missing command or working directory),
    or None when a retry might succeed."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, SourceRefused):
        return str(exc)
    if config.transport != "stdio" or not isinstance(exc, FileNotFoundError):
        return None
    missing = str(exc.filename) if exc.filename is not None else None
    if config.cwd and missing == config.cwd:
        return f"working directory not found: {config.cwd}"
    return f"command not found: {config.command or missing}"


def _describe(exc: BaseException) -> str:
    """A one-line message; task-group exception groups are unwrapped to their first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _join(a: str | None, b: str) -> str:
    return f"{a}; {b}" if a else b


def _join_all(*parts: str | None) -> str | None:
    return "; ".join(p for p in parts if p) or None


def _recorded_failure(starts: StartRecord | None, config: ServerConfig) -> FailedStart | None:
    """A third-party server's recent failed start (the built-in servers are always
    waited for: their start is the index they serve, slow only on a busy machine)."""
    if starts is None or not config.enabled or config.builtin is not None:
        return None
    return starts.failed(config)
