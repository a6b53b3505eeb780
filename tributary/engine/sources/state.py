"""Plain data the source pool hands out: server state, call outcomes, probe reports,
and the engine's "test connection" answer built from a probe."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from tributary.engine.model import Hit, SourceStatus
from tributary.engine.sources.health import BreakerSnapshot


class ServerStatus(StrEnum):
    """Lifecycle of one supervised server."""

    IDLE = "idle"  # configured, never started (servers start on first use)
    STARTING = "starting"
    READY = "ready"
    BACKOFF = "backoff"  # crashed or failed to start; restarting after a delay
    STOPPED = "stopped"  # pool closed or server removed
    DISABLED = "disabled"


@dataclass(frozen=True, slots=True)
class ServerState:
    name: str
    transport: str
    status: ServerStatus
    pid: int | None
    restarts: int
    last_error: str | None
    tools: list[str]
    tool: str | None  # the selected tool and mapping, e.g. "search(query, top_k=top_k)"
    tool_error: str | None
    breaker: BreakerSnapshot
    retry_in_s: float | None  # in BACKOFF: seconds until the next start attempt
    server_info: str | None  # "name version" from initialize
    uptime_s: float | None
    last_ping_ms: float | None
    latency_ms: float | None = None  # typical call latency (EWMA), None before any answer
    restarted_at: float | None = None  # wall-clock time (time.time()) of the last restart
    restart_reason: str | None = None  # why, e.g. "server exited …", "no answer for 9 s …"
    # of ``tools``, those a search may be sent: none that says it writes (``unsafe_reason``)
    sendable: tuple[str, ...] = ()


@dataclass(slots=True)
class SourceOutcome:
    """What one call to one server produced."""

    name: str
    status: SourceStatus
    latency_ms: float  # from the call to its answer, start-up included
    tool: str | None = None
    hits: list[Hit] = field(default_factory=list)
    error: str | None = None
    detail: str | None = None  # a note: output capped, restarted, still starting …
    warnings: list[str] = field(default_factory=list)  # the server's own (Normalized.warnings)
    degraded: bool = False  # the server called this answer weaker than usual
    startup_ms: float | None = None  # of ``latency_ms``, waiting for the server to start


@dataclass(slots=True)
class ProbeReport:
    """``tributary servers test NAME``: start, list tools, one probe query."""

    name: str
    ok: bool
    startup_ms: float | None
    tools: list[dict[str, Any]]  # name, description, input schema
    selection: str | None
    outcome: SourceOutcome | None
    error: str | None = None
    state: ServerState | None = None


@dataclass(slots=True)
class ToolInfo:
    name: str
    description: str = ""
    sendable: bool = True  # a search may be sent to it: nothing says it writes (``unsafe_reason``)


@dataclass(slots=True)
class ServerTest:
    """The answer to "test connection": tools, a probe query's hits, latency."""

    name: str
    ok: bool
    tools: list[ToolInfo] = field(default_factory=list)
    selection: str | None = None
    probe_hits: list[Hit] = field(default_factory=list)
    latency_ms: float | None = None
    startup_ms: float | None = None
    error: str | None = None
    stderr: list[str] = field(default_factory=list)
