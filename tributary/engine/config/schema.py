"""Typed configuration objects. Loading/validation lives in ``load``; saving in ``save``.

Defaults here are the product's defaults: 3 s per-source timeout, RRF k=10, top 30
results (10..100), fuzzy dedup at 0.80, semantic at 0.90. docs/configuration.md is
generated from this file (scripts/config_reference.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Transport = Literal["stdio", "http", "sse"]
REMOTE_TRANSPORTS = ("http", "sse")  # served at a URL, not spawned
AuthMode = Literal["auto", "oauth", "none"]
AUTH_MODES = ("auto", "oauth", "none")
# What a search sends as the query: the whole question, its content words (for a tool
# that matches its query as one substring, like server-memory's search_nodes), a file-name
# glob of them, or a regular expression for any of its names (a grep tool).
QueryMode = Literal["full", "keywords", "glob", "pattern"]
RoutingMode = Literal["first", "all"]
CacheBackend = Literal["memory", "sqlite", "redis", "off"]
IndexBackendName = Literal["sqlite", "postgres"]
VectorIndexName = Literal["auto", "hnsw", "ivfflat", "exact"]

TOP_K_MIN = 10
TOP_K_MAX = 100
MAX_CONTEXT_TOKENS = 200_000  # the largest token budget a request may ask for


@dataclass(slots=True)
class HealthConfig:
    """Health checks and the circuit breaker (the defaults every server starts with)."""

    interval_s: float = 30.0
    failure_threshold: int = 3
    open_s: float = 30.0
    # Replace a running server that stays silent through failure_threshold requests
    # and one more ping (killed and started again; HTTP: reconnected). Off: it is only
    # skipped by its open breaker, e.g. for a server being stepped through in a debugger.
    restart_unresponsive: bool = True


@dataclass(slots=True)
class ServerConfig:
    name: str
    transport: Transport = "stdio"
    # stdio
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # may hold ${VAR} references
    cwd: str | None = None
    # streamable HTTP ("http") or the older HTTP+SSE transport ("sse")
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # OAuth 2.1 sign-in: "auto" uses it when the server asks and no Authorization
    # header is configured; "oauth" always; "none" never (tributary.engine.sources.oauth)
    auth: AuthMode = "auto"
    # behaviour
    timeout: float = 3.0
    # seconds a query waits for the server to start before it is reported as not
    # started; the query then has its own `timeout` from the moment the server is ready
    startup_timeout: float = 30.0
    weight: float = 1.0
    enabled: bool = True
    # which tool answers a query; auto-detected when None
    tool: str | None = None
    query_argument: str | None = None
    top_k_argument: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)  # fixed extra arguments
    query_mode: QueryMode = "full"
    health: HealthConfig = field(default_factory=HealthConfig)
    builtin: str | None = None  # "files" | "tasks" for Tributary's own servers
    description: str = ""
    # upstream tools `tributary serve` offers its clients as `<server>__<tool>` (opt-in)
    expose: list[str] = field(default_factory=list)

    @property
    def tunes_builtin(self) -> bool:
        """Whether this entry only tunes a built-in server (its weight, timeout, on/off)
        and has no command or URL of its own: no server to run by itself."""
        return self.builtin is not None and self.command is None and self.url is None


@dataclass(slots=True)
class RoutingRule:
    name: str
    pattern: str
    servers: list[str]
    priority: int = 0
    weights: dict[str, float] = field(default_factory=dict)
    strategy: str | None = None
    query_class: str | None = None  # match only queries of this class (see tributary.engine.routing)
    enabled: bool = True


@dataclass(slots=True)
class RoutingConfig:
    mode: RoutingMode = "first"
    rules: list[RoutingRule] = field(default_factory=list)
    fallback: list[str] | None = None  # None: every enabled server


@dataclass(slots=True)
class CompositeWeights:
    keyword: float = 0.4
    freshness: float = 0.3
    reputation: float = 0.2
    length: float = 0.1


@dataclass(slots=True)
class FusionConfig:
    strategy: str = "rrf"
    # 10, not the customary 60: chosen across seven history benchmarks (docs/benchmarks.md).
    rrf_k: int = 10
    top_k: int = 30
    composite: CompositeWeights = field(default_factory=CompositeWeights)


@dataclass(slots=True)
class DedupConfig:
    enabled: bool = True
    fuzzy_threshold: float = 0.80
    semantic: bool = True
    semantic_threshold: float = 0.90
    merge_overlaps: bool = True


@dataclass(slots=True)
class BudgetConfig:
    max_tokens: int = 8000
    reserved_tokens: int = 1000
    overflow: str = "truncate"  # one of model.OVERFLOW_STRATEGIES
    format: str = "markdown"


@dataclass(slots=True)
class CacheConfig:
    backend: CacheBackend = "sqlite"
    ttl_s: float = 300.0
    redis_url: str = "redis://127.0.0.1:6379/0"
    max_entries: int = 1000
    max_mb: float = 50.0  # the SQLite file's size limit: oldest entries go, space is returned


@dataclass(slots=True)
class IndexConfig:
    """Where repository indexes live: one SQLite file per repository on this machine, or
    a PostgreSQL + pgvector database shared by a team (``dsn`` may hold ``${VAR}``s)."""

    backend: IndexBackendName = "sqlite"
    dsn: str = ""
    vector_index: VectorIndexName = "auto"  # postgres: hnsw, ivfflat or exact; auto picks


@dataclass(slots=True)
class RepoConfig:
    path: str
    name: str | None = None
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    watch: bool = False
    tasks: list[str] = field(default_factory=list)  # JSONL task-history imports


@dataclass(slots=True)
class CliConfig:
    # A one-shot search or context starts an engine in the background that answers the
    # next ones with its servers warm; it stops after this many minutes unused (0: never start one).
    background_minutes: float = 10.0


@dataclass(slots=True)
class Config:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    routing: RoutingConfig = field(default_factory=RoutingConfig)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    dedup: DedupConfig = field(default_factory=DedupConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    repos: list[RepoConfig] = field(default_factory=list)
    cli: CliConfig = field(default_factory=CliConfig)
    path: Path | None = field(default=None, compare=False)  # where it was loaded from; not saved

    def enabled_servers(self) -> list[ServerConfig]:
        return [s for s in self.servers.values() if s.enabled]
