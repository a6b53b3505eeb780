"""Tributary as an MCP server: fused, budgeted context from one tool.

Tools (descriptions are short on purpose: tool lists eat the client's context):

* ``search(query, top_k, sources, …hints)`` — ranked hits with attribution, score
  parts and dedup groups, as structured content.
* ``get_context(query, max_tokens, task_type, format, …hints)`` — the assembled
  context, ready to put in a prompt.
* ``feedback(hit_id, source, useful, query)`` — teach the ranking which sources to trust.

Run over stdio (``tributary serve``) or streamable HTTP bound to loopback
(``tributary serve --http PORT``); binding any other address requires a bearer
token (``--token`` or ``TRIBUTARY_TOKEN``), checked on every request.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from engine.engine import Engine
from engine.heap import settle
from engine.model import ContextFormat, Hints, Hit, SearchRequest, SearchResponse, TaskType
from engine.pipeline.confidence import source_views

SERVER_NAME = "tributary"

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
    id: str
    rank: int
    score: float
    source: str
    sources: list[str] = Field(description="every source that returned this item")
    title: str
    location: str
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    uri: str | None = None
    content: str
    confidence: float = Field(description="how likely this hit is relevant, 0..1")
    score_parts: dict[str, float]
    source_views: list[str] = Field(default_factory=list, description="each source's own rank and score")
    duplicates: list[GroupMemberOut] = Field(default_factory=list)


class SourceOut(BaseModel):
    name: str
    status: str
    latency_ms: float | None
    hits: int
    error: str | None = None


class SearchOut(BaseModel):
    query: str
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
            latency_ms=r.latency_ms,
            hits=r.hits,
            error=r.error or (r.detail if r.status == "skipped" else None),
        )
        for r in response.sources
    ]


def _hit_out(rank: int, hit: Hit, response: SearchResponse) -> HitOut:
    group = response.group_of(hit.id)
    members = group.members if group else []
    return HitOut(
        id=hit.id,
        rank=rank,
        score=round(hit.score, 6),
        source=hit.source,
        sources=group.sources if group else [hit.source],
        title=hit.title,
        location=hit.location,
        path=hit.path,
        start_line=hit.start_line,
        end_line=hit.end_line,
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
    )


def search_out(response: SearchResponse) -> SearchOut:
    return SearchOut(
        query=response.request.query,
        strategy=response.strategy,
        confident=response.confident,
        confidence=response.confidence,
        hits=[_hit_out(i, h, response) for i, h in enumerate(response.hits, 1)],
        sources=_sources_out(response),
        notes=response.notes,
        error=response.error,
    )


def build_server(engine_factory: Callable[[], Awaitable[Engine]]) -> MCPServer[Any]:
    """The MCP server; ``engine_factory`` opens the engine inside the server's loop."""
    state: dict[str, Engine] = {}

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Any]) -> AsyncIterator[None]:
        state["engine"] = await engine_factory()
        state["engine"].supervise()
        try:
            yield
        finally:
            await state["engine"].aclose()

    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        instructions="Fused, de-duplicated, budgeted context from many sources.",
        lifespan=lifespan,
    )

    @server.tool()
    async def search(
        query: str,
        top_k: int = 10,
        sources: list[str] | None = None,
        related_files: list[str] | None = None,
        language: str | None = None,
        framework: str | None = None,
    ) -> SearchOut:
        """Search every routed source at once; ranked, de-duplicated hits with attribution."""
        request = SearchRequest(
            query=query,
            top_k=max(1, min(top_k, 100)),
            sources=sources,
            assemble=False,
            hints=_hints(related_files, language, framework),
        )
        return search_out(await state["engine"].search(request))

    @server.tool()
    async def get_context(
        query: str,
        max_tokens: int = 8000,
        task_type: str = "implementation",
        format: str = "markdown",
        related_files: list[str] | None = None,
        language: str | None = None,
        framework: str | None = None,
    ) -> ContextOut:
        """Context for a prompt: ranked, de-duplicated, fitted to max_tokens, attributed."""
        engine = state["engine"]
        request = SearchRequest(
            query=query,
            task_type=TaskType(task_type),
            top_k=engine.config.fusion.top_k,
            max_tokens=max_tokens,
            reserved_tokens=0,
            format=ContextFormat(format),
            hints=_hints(related_files, language, framework),
        )
        response = await engine.search(request)
        context = response.context
        return ContextOut(
            context=context.text if context else "",
            confident=response.confident,
            confidence=response.confidence,
            tokens=context.token_count if context else 0,
            budget=context.budget if context else request.effective_budget,
            format=str(request.format),
            chunks=len(context.chunks) if context else 0,
            sources=_sources_out(response),
            notes=response.notes,
            error=response.error,
        )

    @server.tool()
    async def feedback(hit_id: str, source: str, useful: bool, query: str = "") -> FeedbackOut:
        """Mark a hit useful or not; adjusts that source's reputation."""
        engine = state["engine"]
        if engine.reputation is None:
            raise ValueError("feedback is not stored in this session (no persistent state)")
        reputations = await engine.record_feedback({source: hit_id}, useful, query)
        return FeedbackOut(source=source, reputation=reputations[source])

    return server


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
        engine = await Engine.open(config_path)
        settle()  # start-up is over: later full GC passes skip what it loaded
        return engine

    return factory


def run_stdio(config_path: Path | None) -> None:
    build_server(default_factory(config_path)).run()


async def serve_http(config_path: Path | None, *, host: str, port: int, token: str | None) -> None:
    """Streamable HTTP on ``host:port``; anything but loopback needs a token."""
    import uvicorn

    if not is_loopback(host) and not token:
        raise ValueError(
            f"refusing to bind {host}: serving beyond this machine needs a token "
            "(--token or TRIBUTARY_TOKEN)"
        )
    server = build_server(default_factory(config_path))
    app: ASGIApp = server.streamable_http_app(host=host)
    if token:
        app = require_token(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()
