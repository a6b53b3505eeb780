"""MCP sources: one supervised client per configured server, and the pool that holds them.

Modules: :mod:`.pool` (``SourcePool`` — the public face), :mod:`.client` (one
supervised session), :mod:`.connect` (the transport seam and the SDK's stdio /
streamable-HTTP transports), :mod:`.memory` (in-memory connector for tests),
:mod:`.tools` (which tool answers a query), :mod:`.health` (circuit breaker and
health checks), :mod:`.latency` (latency estimates and the fan-out's dispatch
order), :mod:`.env` (the child environment allowlist), :mod:`.stderr`
(each server's stderr ring), :mod:`.state` (the plain data handed out).
"""

from tributary.engine.sources.client import Backoff, SourceClient
from tributary.engine.sources.connect import (
    Connection,
    Connector,
    default_connector,
    make_connector,
)
from tributary.engine.sources.health import BreakerSnapshot, BreakerState, CircuitBreaker
from tributary.engine.sources.pool import SourcePool
from tributary.engine.sources.state import ProbeReport, ServerState, ServerStatus, SourceOutcome
from tributary.engine.sources.tools import ToolSelection, ToolSelectionError, select_tool

__all__ = [
    "Backoff",
    "BreakerSnapshot",
    "BreakerState",
    "CircuitBreaker",
    "Connection",
    "Connector",
    "ProbeReport",
    "ServerState",
    "ServerStatus",
    "SourceClient",
    "SourceOutcome",
    "SourcePool",
    "ToolSelection",
    "ToolSelectionError",
    "default_connector",
    "make_connector",
    "select_tool",
]
