"""The source pool: every configured MCP server, supervised, behind one object.

Public API (the Engine facade, CLI and GUI build on these names)::

    pool = SourcePool(config.servers.values(), connector=default_connector)
    outcome = await pool.call("docs", "how to retry", top_k=10)  # -> SourceOutcome
    tools = await pool.list_tools("docs")        # -> list[mcp.types.Tool]
    result = await pool.call_tool("docs", "fetch", {"url": u})  # -> CallToolResult
    report = await pool.probe("docs", "test")    # -> ProbeReport ("servers test NAME")
    state = pool.state("docs")                   # -> ServerState (status, pid, restarts,
                                                 #    last_error, tools, breaker …)
    lines = pool.stderr_lines("docs")            # -> list[str] (last 500 lines)
    states = await pool.warm_up()                # start all now, wait for ready/failed
    await pool.start(["docs"])                   # start now, don't wait
    pool.states(); pool.names(); pool.config("docs"); await pool.ping("docs")
    await pool.reconfigure(new_servers)          # add / remove / restart changed only
    pool.dispatch_order(["docs", "code"])        # slowest expected first (fan-out sends so)
    pool.start_health(); await pool.stop_health()
    await pool.aclose()                          # idempotent; no process survives

Servers start lazily on first use and stay up between queries; local ones start at
most as many at once as there are cores, built-in servers first
(:mod:`tributary.engine.sources.start_gate`). ``call`` never
raises for a server's failure: the outcome's status says ok / timeout / error /
circuit_open / skipped, with the error text. Unknown names raise ``KeyError``.
Construct and use it inside a running event loop (health checks are tasks).
Bigger stdout lines than 16 MiB are refused: pass
``connector=make_connector(max_line_bytes=...)`` to change that.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from mcp import types

from tributary.engine.config.schema import ServerConfig
from tributary.engine.sources.client import Backoff, SourceClient
from tributary.engine.sources.connect import Connector, default_connector
from tributary.engine.sources.health import HealthMonitor
from tributary.engine.sources.latency import dispatch_order
from tributary.engine.sources.normalize import NormalizeLimits
from tributary.engine.sources.start_gate import StartGate
from tributary.engine.sources.start_record import StartRecord
from tributary.engine.sources.state import ProbeReport, ServerState, SourceOutcome


class SourcePool:
    def __init__(
        self,
        servers: Iterable[ServerConfig],
        *,
        connector: Connector = default_connector,
        backoff: Backoff | None = None,
        limits: NormalizeLimits | None = None,
        start_timeout_s: float = 30.0,
        log_lines: int = 500,
        gate: StartGate | None = None,
        starts: StartRecord | None = None,
    ) -> None:
        self._connector = connector
        self._starts = starts
        self._gate = gate if gate is not None else StartGate()
        self._backoff = backoff
        self._limits = limits
        self._start_timeout_s = start_timeout_s
        self._log_lines = log_lines
        self._clients: dict[str, SourceClient] = {}
        self._health = HealthMonitor()
        self._health_on = False
        self._closed = False
        for config in servers:
            self._clients[config.name] = self._new_client(config)

    # ---------------------------------------------------------------- queries

    def names(self) -> list[str]:
        return list(self._clients)

    def config(self, name: str) -> ServerConfig:
        return self._client(name).config

    async def call(
        self, name: str, query: str, *, top_k: int, timeout: float | None = None,
        scope: Mapping[str, Any] | None = None,
    ) -> SourceOutcome:
        """One query to one server, within its timeout (``ServerConfig.timeout`` by default);
        ``scope`` limits the servers whose tools take it (``repos``)."""
        return await self._client(name).call(query, top_k, timeout=timeout, scope=scope)

    def dispatch_order(self, names: Iterable[str]) -> list[str]:
        """``names`` slowest expected first (see :mod:`tributary.engine.sources.latency`)."""
        return dispatch_order(names, lambda name: self._client(name).latency.ms)

    async def list_tools(self, name: str, timeout: float | None = None) -> list[types.Tool]:
        """Start the server if needed and return its tools. Raises on failure to start."""
        return await self._client(name).tools(timeout)

    async def call_tool(
        self, name: str, tool: str, arguments: Mapping[str, Any], *, timeout: float | None = None,
    ) -> types.CallToolResult:
        """Call one named tool of a server with ``arguments`` (``tributary serve``'s
        pass-through); the upstream's result, or :class:`ToolCallFailed` naming the server."""
        return await self._client(name).call_named(tool, arguments, timeout=timeout)

    async def probe(self, name: str, query: str, *, top_k: int = 5) -> ProbeReport:
        return await self._client(name).probe(query, top_k)

    async def ping(self, name: str, timeout: float | None = None) -> bool | None:
        return await self._client(name).ping(timeout)

    def state(self, name: str) -> ServerState:
        return self._client(name).state()

    def states(self) -> list[ServerState]:
        return [c.state() for c in self._clients.values()]

    def stderr_lines(self, name: str) -> list[str]:
        return self._client(name).log.lines()

    # ------------------------------------------------------------- lifecycle

    async def start(self, names: Iterable[str] | None = None) -> None:
        """Start servers now instead of on first use (does not wait for them)."""
        for name in self._start_order(names if names is not None else self._clients):
            self._client(name).ensure_started()

    async def warm_up(
        self, names: Iterable[str] | None = None, timeout: float | None = None
    ) -> dict[str, ServerState]:
        """Start servers and wait until each is ready or has failed; their states."""
        chosen = self._start_order(names if names is not None else self._clients)

        async def one(name: str) -> None:
            with contextlib.suppress(Exception):
                await self._client(name).tools(timeout)

        await asyncio.gather(*(one(n) for n in chosen))
        return {n: self.state(n) for n in chosen}

    async def reconfigure(self, servers: Iterable[ServerConfig]) -> None:
        """Apply a new server list: unchanged servers keep running; changed ones restart,
        except for a new weight or description, which the running server takes as it is."""
        wanted = {s.name: s for s in servers}
        stale = [c for n, c in self._clients.items()
                 if n not in wanted or not _same(c.config, wanted[n])]
        for name, client in self._clients.items():
            if name in wanted and client not in stale:
                client.config = wanted[name]
        for client in stale:
            self._health.unwatch(client.name)
            del self._clients[client.name]
        await asyncio.gather(*(c.aclose() for c in stale))
        for name, config in wanted.items():
            if name not in self._clients:
                self._clients[name] = self._new_client(config)
                if self._health_on:
                    self._watch(self._clients[name])
        # Keep the configured order.
        self._clients = {n: self._clients[n] for n in wanted}

    def start_health(self) -> None:
        """Begin periodic health checks (every ``health.interval_s`` per server)."""
        self._health_on = True
        for client in self._clients.values():
            self._watch(client)

    async def stop_health(self) -> None:
        self._health_on = False
        await self._health.stop()

    async def aclose(self) -> None:
        """Stop health checks and every server. Idempotent."""
        self._closed = True
        await self.stop_health()
        await asyncio.gather(*(c.aclose() for c in self._clients.values()))

    async def __aenter__(self) -> SourcePool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --------------------------------------------------------------- private

    def _client(self, name: str) -> SourceClient:
        try:
            return self._clients[name]
        except KeyError:
            raise KeyError(f"unknown server {name!r}; configured: {', '.join(self._clients)}") from None

    def _new_client(self, config: ServerConfig) -> SourceClient:
        return SourceClient(
            config, self._connector, backoff=self._backoff, limits=self._limits,
            start_timeout_s=self._start_timeout_s, log_lines=self._log_lines, gate=self._gate,
            starts=self._starts,
        )

    def _start_order(self, names: Iterable[str]) -> list[str]:
        """``names`` with the built-in servers first: the start gate admits in the
        order starts are asked for while it has room."""
        return sorted(names, key=lambda name: not self._client(name).config.builtin)

    def _watch(self, client: SourceClient) -> None:
        if client.config.enabled:
            self._health.watch(client.name, client.config.health.interval_s, client.ping)


def _same(a: ServerConfig, b: ServerConfig) -> bool:
    """Whether ``a`` and ``b`` run and are asked alike: only the fusion's weight and the
    description, which the engine reads from its own config, may differ."""
    return _how_run(a) == _how_run(b)


def _how_run(config: ServerConfig) -> dict[str, object]:
    fields = dataclasses.asdict(config)
    for settled_elsewhere in ("weight", "description"):
        fields.pop(settled_elsewhere)
    return fields
