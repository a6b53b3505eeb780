"""Tributary as an MCP server: fused, budgeted context from one tool.

Tools (descriptions are short on purpose: tool lists eat the client's context):

* ``search(query, top_k, sources, …hints, details)`` — ranked hits, compact by default
  (path, lines, score, a snippet); ``details: true`` adds the whole content, the score
  parts, each source's view and the dedup group.
* ``get_context(query, max_tokens, task_type, format, …hints)`` — the assembled
  context, ready to put in a prompt.
* ``feedback(hit_id, source, useful, query)`` — teach the ranking which sources to trust.
* ``<server>__<tool>`` — an upstream server's own tool, passed through as it is, for each
  tool named in that server's ``expose`` list (opt-in; see :class:`FaceServer`).

Run over stdio (``tributary serve``) or streamable HTTP (``tributary serve --http PORT``,
on 127.0.0.1 by default). Binding any address but the MCP SDK's protected names
(127.0.0.1, localhost, ::1) requires a bearer token (``--token`` or ``TRIBUTARY_TOKEN``),
checked on every request, and every bind gets the SDK's Host/Origin allow-list (DNS
rebinding protection): see :func:`bind_policy`.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
from mcp import types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field, ValidationError

from tributary.engine.config.errors import did_you_mean
from tributary.engine.config.schema import MAX_CONTEXT_TOKENS, TOP_K_MAX
from tributary.engine.config.validate import exposed_name
from tributary.engine.engine import Engine
from tributary.engine.errors import TributaryError
from tributary.engine.localsearch.longquery import TASK_NOTE_OPENING
from tributary.engine.model import (
    ANSWERED,
    ContextFormat,
    Hints,
    Hit,
    SearchFilters,
    SearchRequest,
    SearchResponse,
    TaskType,
    hits_said,
)
from tributary.engine.pipeline.confidence import source_views
from tributary.engine.pipeline.formats import query_attribute, shown_name
from tributary.engine.pipeline.tokens import count_tokens
from tributary.engine.repos.freshness import Freshness
from tributary.engine.runtime.heap import settle
from tributary.engine.runtime.shutdown import hangup_as_terminate, run_until_signalled
from tributary.engine.servers.stdio_serve import serve_stdio
from tributary.engine.version import package_version

SERVER_NAME = "tributary"
# Sent once, at initialisation: how to ask, which the tools' one-line descriptions leave out.
INSTRUCTIONS = (
    "Fused, de-duplicated, budgeted context from many sources: the indexed repositories' "
    "code, their history of past changes, and other configured servers. For a task, pass "
    "the whole task text (an issue, a bug report with its traceback) as the query of "
    "get_context: its file paths, names and messages all count, and the answer puts the "
    "code most likely to change first, within max_tokens. Use search for a ranked list "
    "of locations, and filter by repos when several repositories are indexed."
)
log = logging.getLogger("tributary.serve")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class GroupMemberOut(BaseModel):
    source: str
    location: str
    reason: str
    similarity: float


class HitOut(BaseModel):
    """One hit. The fields after ``snippet`` are only sent when ``details`` asks."""

    id: str = Field(description="pass to feedback")
    rank: int
    score: float
    source: str
    location: str
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    snippet: str = Field(description="the start of the content")
    title: str | None = Field(default=None, description=(
        "what it is: the function or class a chunk defines (Option.get_help_extra), a "
        "past task's subject"))
    sources: list[str] | None = Field(default=None, description="every source that returned this item")
    uri: str | None = None
    content: str | None = None
    confidence: float | None = Field(default=None, description="how likely this hit is relevant, 0..1")
    score_parts: dict[str, float] | None = None
    source_views: list[str] | None = Field(default=None, description="each source's own rank and score")
    duplicates: list[GroupMemberOut] | None = None


class SourceOut(BaseModel):
    name: str
    status: str
    latency_ms: float | None
    hits: int
    error: str | None = None


class SearchOut(BaseModel):
    query: str = Field(description="the question answered, its first 200 characters on one line")
    strategy: str
    confident: bool = Field(description="false when no hit is likely relevant")
    confidence: float
    hits: list[HitOut]
    sources: list[SourceOut]
    notes: list[str] = Field(default_factory=list)
    error: str | None = None


class ContextOut(BaseModel):
    context: str
    confident: bool = Field(description="false: nothing relevant found, the context says so")
    confidence: float
    tokens: int
    budget: int
    format: str
    chunks: int
    sources: list[SourceOut]
    notes: list[str] = Field(default_factory=list, description="what was done to the query (cut)")
    error: str | None = None


class FeedbackOut(BaseModel):
    source: str
    reputation: float


def _hints(
    related_files: list[str] | None,
    language: str | None,
    framework: str | None,
    related_issues: list[str] | None = None,
) -> Hints:
    return Hints(
        related_files=list(related_files or []),
        related_issues=list(related_issues or []),
        language=language,
        framework=framework,
    )


def _sources_out(response: SearchResponse) -> list[SourceOut]:
    return [
        SourceOut(
            name=r.name,
            status=str(r.status),
            latency_ms=round(r.latency_ms, 1) if r.latency_ms is not None else None,
            hits=r.hits,
            error=r.error or (skip_reason(r.detail) if r.status == "skipped" else None),
        )
        for r in response.sources
    ]


_SETUP_ADVICE = re.compile(r" \(|; | — |, so ")


def skip_reason(detail: str | None) -> str | None:
    """Why a source was not asked, without the setup advice a person gets in the app
    and ``tributary servers test`` (``its tool takes no query``, not the tools it saw
    and the setting to change): every answer repeats it, in the client's tokens."""
    if not detail:
        return detail
    return _SETUP_ADVICE.split(detail, maxsplit=1)[0]


SNIPPET_LINES = 6
SNIPPET_CHARS = 400


def snippet(content: str) -> str:
    """The first few lines of ``content``, cut at a line (or word) where it is longer."""
    lines = content.strip("\n").splitlines()
    text = "\n".join(lines[:SNIPPET_LINES])
    if len(text) > SNIPPET_CHARS:
        text = text[:SNIPPET_CHARS].rsplit(" ", 1)[0]
    return text + ("…" if len(text) < len(content.strip("\n")) else "")


def _hit_out(rank: int, hit: Hit, response: SearchResponse, details: bool = True) -> HitOut:
    compact = HitOut(id=hit.id, rank=rank, score=round(hit.score, 6), source=hit.source,
                     location=hit.location, path=hit.path, start_line=hit.start_line,
                     end_line=hit.end_line, snippet=snippet(hit.content),
                     title=shown_name(hit))
    if not details:
        return compact
    group = response.group_of(hit.id)
    members = group.members if group else []
    return compact.model_copy(update=dict(
        sources=group.sources if group else [hit.source],
        title=hit.title,
        uri=hit.uri,
        content=hit.content,
        confidence=hit.confidence,
        score_parts={k: round(v, 6) for k, v in hit.parts.parts.items()},
        source_views=[view.text() for view in source_views(hit, group)],
        duplicates=[
            GroupMemberOut(
                source=m.hit.source,
                location=m.hit.location,
                reason=str(m.reason),
                similarity=round(m.similarity, 4),
            )
            for m in members
        ],
    ))


_E = TypeVar("_E", TaskType, ContextFormat)


def _choice(kind: type[_E], value: str, name: str) -> _E:
    try:
        return kind(value)
    except ValueError:
        options = ", ".join(str(member.value) for member in kind)
        raise ToolError(f"{name}: unknown value {value[:40]!r} (one of {options})") from None


def search_out(response: SearchResponse, details: bool = True) -> SearchOut:
    """The answer a client gets. The question is named by its start: the caller sent it,
    and a pasted issue repeated whole was most of the answer's tokens."""
    return SearchOut(
        query=query_attribute(response.request.query),
        strategy=response.strategy,
        confident=response.confident,
        confidence=response.confidence,
        hits=[_hit_out(i, h, response, details) for i, h in enumerate(response.hits, 1)],
        sources=_sources_out(response),
        notes=response.notes,
        error=response.error,
    )


class FaceServer(MCPServer[Any]):
    """The SDK's server plus the upstream tools the config exposes (``expose``).

    Each is listed as ``<server>__<tool>`` with the upstream's description (after the
    server's name), input and output schema and annotations, read from the running
    server at every ``tools/list`` — so an edit of ``expose`` applies to the next listing
    (no ``list_changed`` notification is sent). A call goes through the source pool with
    the server's timeout and returns the upstream's result unchanged.
    """

    def __init__(self, engine: Callable[[], Engine | None], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._engine = engine

    async def _exposed(self) -> dict[str, tuple[str, types.Tool]]:
        """``{exposed name: (server, upstream tool)}`` for every exposed tool now offered."""
        engine = self._engine()
        if engine is None:
            return {}
        wanted = {name: server.expose for name, server in engine.config.servers.items()
                  if server.expose and server.enabled and name in engine.pool.names()}

        async def tools_of(name: str) -> list[types.Tool]:
            try:
                return await engine.pool.list_tools(name)
            except Exception as exc:  # a server that does not start offers nothing
                log.warning("%s: exposed tools left out: %s", name, exc)
                return []

        listed = await asyncio.gather(*(tools_of(name) for name in wanted))
        exposed: dict[str, tuple[str, types.Tool]] = {}
        for name, tools in zip(wanted, listed, strict=True):
            for tool in tools:
                if tool.name in wanted[name]:
                    exposed.setdefault(exposed_name(name, tool.name), (name, tool))
        return exposed

    async def list_tools(self) -> list[types.Tool]:
        # Tributary's own tools take no arguments but those listed: a misspelt one is an
        # error (``unknown_arguments``), and the schema says so to the client.
        own = [tool.model_copy(update={"input_schema": {**tool.input_schema, "additionalProperties": False}})
               for tool in await super().list_tools()]
        taken = {tool.name for tool in own}
        passed = [
            types.Tool(
                name=public,
                title=tool.title,
                description=f"[{server}] {tool.description or tool.name}",
                input_schema=tool.input_schema,
                output_schema=tool.output_schema,
                annotations=tool.annotations,
            )
            for public, (server, tool) in (await self._exposed()).items() if public not in taken
        ]
        return [*own, *passed]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        engine = self._engine()
        if "__" in name and engine is not None and self._tool_manager.get_tool(name) is None:
            target = await self._target(engine, name)
            if target is not None:
                server, tool = target
                with user_errors():
                    result = await engine.pool.call_tool(server, tool, arguments)
                if result.is_error:  # the upstream's own error, said to come from it
                    result.content = [types.TextContent(type="text", text=f"{server}: "),
                                      *result.content]
                return result
        own = self._tool_manager.get_tool(name)
        if own is not None and (problem := unknown_arguments(name, own.parameters, arguments)):
            raise ToolError(problem)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if own is not None and isinstance(exc.__cause__, ValidationError):
                raise ToolError(invalid_arguments(name, exc.__cause__)) from exc.__cause__
            raise

    async def _target(self, engine: Engine, name: str) -> tuple[str, str] | None:
        """The (server, tool) an exposed name stands for, from the config alone (a call
        needs no listing first); None when no server exposes it."""
        for server, config in engine.config.servers.items():
            if config.enabled and server in engine.pool.names():
                for tool in config.expose:
                    if exposed_name(server, tool) == name:
                        return server, tool
        return None


def build_server(
    engine_factory: Callable[[], Awaitable[Engine]],
    *,
    listen: bool = False,
    config_path: Path | None = None,
) -> MCPServer[Any]:
    """The MCP server; ``engine_factory`` opens the engine inside the server's loop.
    With ``listen`` the engine also answers the command line over the local socket
    (``tributary.engine.attach``); ``config_path`` is the config file it was opened with."""
    state: dict[str, Engine] = {}

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Any]) -> AsyncIterator[None]:
        state["engine"] = await engine_factory()
        state["engine"].supervise()
        state["engine"].watch_config()  # hot reload; an invalid edit is logged, not applied
        if listen:
            await state["engine"].listen(config_path)
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):  # a shutdown signal still stops the sources
                await state["engine"].aclose()

    server: MCPServer[Any] = FaceServer(
        lambda: state.get("engine"),
        SERVER_NAME,
        version=package_version(),
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
    )

    @server.tool(annotations=_READS)
    async def search(
        query: Query,
        top_k: Annotated[int, Field(ge=1, le=TOP_K_MAX, description="how many hits to return")] = 10,
        sources: Annotated[list[str] | None, Field(
            description="only these sources, by name (default: the routed ones)")] = None,
        related_files: RelatedFiles = None,
        language: Language = None,
        framework: Framework = None,
        repos: Repos = None,
        details: Annotated[bool, Field(
            description="also send each hit's whole content, score parts and duplicates")] = False,
    ) -> Annotated[types.CallToolResult, SearchOut]:
        """Search every routed source at once; ranked, de-duplicated hits with attribution."""
        request = SearchRequest(
            query=query,
            top_k=top_k,
            sources=sources,
            assemble=False,
            hints=_hints(related_files, language, framework),
            filters=SearchFilters(repos=list(repos or [])),
        )
        with user_errors():  # "busy" (tributary.engine.runtime.admission.Busy) included
            return _compact_result(search_out(await state["engine"].search(request), details))

    @server.tool(annotations=_READS)
    async def get_context(
        query: Query,
        max_tokens: Annotated[int, Field(ge=1, le=MAX_CONTEXT_TOKENS,
                                         description="the context's token budget")] = 8000,
        task_type: Annotated[str, Field(
            description="what the context is for; it shapes the ranking",
            json_schema_extra={"enum": [t.value for t in TaskType]})] = "implementation",
        format: Annotated[str, Field(
            description="how the context is laid out",
            json_schema_extra={"enum": [f.value for f in ContextFormat]})] = "markdown",
        related_files: RelatedFiles = None,
        language: Language = None,
        framework: Framework = None,
        repos: Repos = None,
    ) -> Annotated[types.CallToolResult, ContextOut]:
        """Context for a prompt: ranked, de-duplicated, fitted to max_tokens, attributed."""
        engine = state["engine"]
        request = SearchRequest(
            query=query,
            task_type=_choice(TaskType, task_type, "task_type"),
            top_k=engine.config.fusion.top_k,
            max_tokens=max_tokens,
            reserved_tokens=footer_reserve(max_tokens),
            format=_choice(ContextFormat, format, "format"),
            hints=_hints(related_files, language, framework),
            filters=SearchFilters(repos=list(repos or [])),
        )
        with user_errors():
            response = await engine.search(request)
        context = response.context
        return context_result(ContextOut(
            context=context.text if context else "",
            confident=response.confident,
            confidence=response.confidence,
            tokens=context.token_count if context else 0,
            budget=max_tokens,
            format=str(request.format),
            chunks=len(context.chunks) if context else 0,
            sources=_sources_out(response),
            notes=response.notes,
            error=response.error,
        ), request.reserved_tokens)

    @server.tool(annotations=types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False))
    async def feedback(
        hit_id: Annotated[str, Field(description="the hit's id, from search")],
        source: Annotated[str, Field(description="the source that returned it")],
        useful: Annotated[bool, Field(description="whether the hit helped")],
        query: Annotated[str, Field(description="the query it answered (optional)")] = "",
    ) -> FeedbackOut:
        """Mark a hit useful or not; adjusts that source's reputation."""
        engine = state["engine"]
        if engine.reputation is None:
            raise ToolError("feedback is not stored in this session (no persistent state)")
        with user_errors():
            reputations = await engine.record_feedback({source: hit_id}, useful, query)
        return FeedbackOut(source=source, reputation=reputations[source])

    return server


# search and get_context only read (they reach out to the configured sources)
_READS = types.ToolAnnotations(read_only_hint=True, destructive_hint=False,
                               idempotent_hint=True, open_world_hint=True)
Query = Annotated[str, Field(description=(
    "what to look for: a question, or the whole task as it is (an issue or bug report "
    "with its traceback and code; every part of it is read)"))]
RelatedFiles = Annotated[list[str] | None, Field(
    description="files the task is about (paths); hits near them rank higher")]
Language = Annotated[str | None, Field(description="the programming language, e.g. python")]
Framework = Annotated[str | None, Field(description="the framework in use, e.g. django")]
Repos = Annotated[list[str] | None, Field(
    description="only these indexed repositories (owner/name)")]


def _compact_result(out: SearchOut) -> types.CallToolResult:
    """The answer without the hit fields left empty: compact unless ``details`` filled them."""
    data = out.model_dump(mode="json")
    data["hits"] = [hit.model_dump(mode="json", exclude_none=True) for hit in out.hits]
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=data)


# What ``get_context``'s text says after the context, at most this many tokens of the
# budget (kept for it when the budget is this many times larger).
FOOTER_TOKENS = 80
FOOTER_SHARE = 10


def footer_reserve(max_tokens: int) -> int:
    """The tokens of ``max_tokens`` kept for the footer ``context_result`` writes."""
    return FOOTER_TOKENS if max_tokens >= FOOTER_TOKENS * FOOTER_SHARE else 0


def context_result(out: ContextOut, room: int) -> types.CallToolResult:
    """``get_context``'s answer: every field as structured content, and as the text a
    model reads, the context itself and a short footer (what the sources did, the
    notes, the error). The SDK's default text is the fields as JSON, which escapes
    every newline and quote of the code: a model read about a quarter more tokens than
    the budget it asked for. The footer takes at most ``room`` tokens, whole lines."""
    data = out.model_dump(mode="json")
    text = out.context
    lines = context_footer(out)
    if lines and room:
        kept: list[str] = []
        for line in lines:
            if count_tokens("\n".join([*kept, line])) <= room:
                kept.append(line)  # one that does not fit is left to the structured content
        if kept:
            text = f"{text}\n\n---\n" + "\n".join(kept)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data)


def context_footer(out: ContextOut) -> list[str]:
    """The lines after the context, what most changes how it reads first: the error,
    the notes (the filters left out every hit; keyword-only), the sources (those that
    did not answer with the first clause of why: the footer's room is small, and a
    skipped server's whole reason took all of it), and last how a task was read."""
    said = [f"{s.name} ({hits_said(s.hits)})" if s.status in ANSWERED
            else f"{s.name} ({s.status}: {_first_clause(s.error or 'no answer')})" for s in out.sources]
    lines = [f"Error: {out.error}"] if out.error else []
    reading = [note for note in out.notes if note.startswith(TASK_NOTE_OPENING)]  # the client knows its task
    lines.extend(f"Note: {note}" for note in out.notes if note not in reading)
    if said:
        lines.append(f"Sources: {', '.join(said)}")
    lines.extend(f"Note: {note}" for note in reading)
    return lines


_CLAUSE_END = re.compile(r";\s| \(")


def _first_clause(reason: str) -> str:
    """``no read-only search tool`` of "no read-only search tool; set `tool:` to …"."""
    found = _CLAUSE_END.search(reason)
    return reason[: found.start()] if found else reason


_ARGUMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


def unknown_arguments(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """What is wrong with a call that names arguments ``tool`` does not take (None when
    it names none): such an argument would otherwise be dropped without a word, and a
    client that wrote ``maxTokens`` would get the default budget believing it got its
    own. Names that are not identifier-shaped are not echoed."""
    known = list(schema.get("properties", {}))
    unknown = [key for key in arguments if key not in known]
    if not unknown:
        return None
    said = [
        f"'{key}'{did_you_mean(key, known)}" if _ARGUMENT_NAME.fullmatch(key) else "one whose name is not shown"
        for key in unknown[:5]
    ]
    more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
    noun = "argument" if len(unknown) == 1 else "arguments"
    return f"{tool}: unknown {noun} {', '.join(said)}{more}; it takes {', '.join(known)}"


def invalid_arguments(tool: str, error: ValidationError) -> str:
    """A rejected call's arguments as ``tool: argument 'x': what is wrong``, each on a
    line, without the values given or the validator's links."""
    lines = []
    for problem in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        lines.append(f"{tool}: argument '{where}': {problem['msg']}")
    return "\n".join(lines) or f"{tool}: invalid arguments"


@contextmanager
def user_errors() -> Iterator[None]:
    """A :class:`TributaryError` reaches the client as its message: the SDK reports any
    other exception as "Error executing tool" alone, which hides the reason."""
    try:
        yield
    except TributaryError as exc:
        raise ToolError(str(exc)) from exc


# The bind addresses the MCP SDK itself treats as local. Every other one — another 127/8
# address included — may be reachable from elsewhere or by a name a page controls.
PROTECTED_HOSTS = ("127.0.0.1", "localhost", "::1")
_WILDCARDS = ("", "0.0.0.0", "::")


@dataclass(frozen=True, slots=True)
class BindPolicy:
    """What an HTTP bind demands: a token or not, and the Host names clients may use."""

    needs_token: bool
    security: TransportSecuritySettings


def _host_names(host: str, allow_hosts: Sequence[str]) -> list[str]:
    """Names a legitimate client may put in its Host header for a server bound to ``host``."""
    if host in PROTECTED_HOSTS:
        names = list(PROTECTED_HOSTS)
    elif host in _WILDCARDS:  # every interface: every local address and this machine's names
        import psutil

        names = [*PROTECTED_HOSTS, socket.gethostname(), socket.getfqdn()]
        names += [addr.address.split("%")[0] for addrs in psutil.net_if_addrs().values()
                  for addr in addrs if addr.family in (socket.AF_INET, socket.AF_INET6)]
    else:
        names = [host]
    return list(dict.fromkeys([*names, *allow_hosts]))


def _netloc(name: str) -> str:
    try:
        return f"[{name}]" if ipaddress.ip_address(name).version == 6 else name
    except ValueError:
        return name


def bind_policy(host: str, allow_hosts: Sequence[str] = ()) -> BindPolicy:
    """The protections for ``serve --http`` bound to ``host``.

    Decided by what the socket is reachable from, not by whether the address looks local:
    only the SDK's protected names skip the token; every bind checks Host and Origin
    against the names clients use for it (``allow_hosts`` adds names, e.g. a proxy's), so
    a page whose DNS name points at the address cannot talk to the server.
    """
    netlocs = [_netloc(name) for name in _host_names(host, allow_hosts)]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[form for loc in netlocs for form in (loc, f"{loc}:*")],
        allowed_origins=[f"{scheme}://{loc}{port}" for loc in netlocs
                         for scheme in ("http", "https") for port in ("", ":*")],
    )
    return BindPolicy(needs_token=host not in PROTECTED_HOSTS, security=security)


def require_token(app: ASGIApp, token: str) -> ASGIApp:
    """Reject HTTP requests without ``Authorization: Bearer <token>`` (constant-time check)."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http":
            headers = dict(scope.get("headers") or [])
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b"missing or wrong token\n"})
                return
        await app(scope, receive, send)

    return guarded


def default_factory(config_path: Path | None) -> Callable[[], Awaitable[Engine]]:
    async def factory() -> Engine:
        engine = await Engine.open(config_path, freshness=Freshness())  # the client edits what it asks about
        settle()  # start-up is over: later full GC passes skip what it loaded
        return engine

    return factory


def run_stdio(config_path: Path | None) -> int:
    """Serve over stdio until the client leaves or a shutdown signal arrives (its exit status)."""
    server = build_server(default_factory(config_path), listen=True, config_path=config_path)
    return run_until_signalled(lambda: serve_stdio(server))


async def serve_http(
    config_path: Path | None,
    *,
    host: str,
    port: int,
    token: str | None,
    allow_hosts: Sequence[str] = (),
) -> None:
    """Streamable HTTP on ``host:port`` with the protections of :func:`bind_policy`."""
    import uvicorn

    policy = bind_policy(host, allow_hosts)
    if policy.needs_token and not token:
        raise ValueError(
            f"refusing to bind {host}: this address needs a token (--token or "
            f"TRIBUTARY_TOKEN); only {', '.join(PROTECTED_HOSTS)} serve without one, since "
            "other addresses can be reachable from elsewhere"
        )
    server = build_server(default_factory(config_path), listen=True, config_path=config_path)
    app: ASGIApp = server.streamable_http_app(host=host, transport_security=policy.security)
    if token:
        app = require_token(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    with hangup_as_terminate():  # uvicorn shuts down gracefully on SIGTERM and SIGINT
        await uvicorn.Server(config).serve()
