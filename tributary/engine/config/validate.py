"""Semantic validation of a typed Config: ranges, required fields per transport,
cross-references (routing → servers), regex patterns, ``${VAR}`` syntax.

Works on any Config — one parsed from a file (``lines`` then maps key paths to lines)
or one built by the GUI editor (no lines; the editor validates before saving). Every
problem is returned; nothing is raised.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, get_args

from tributary.engine.config.errors import ConfigIssue, did_you_mean
from tributary.engine.config.expand import reference_problems, server_strings
from tributary.engine.config.patterns import check_pattern
from tributary.engine.config.schema import (
    AUTH_MODES,
    REMOTE_TRANSPORTS,
    TOP_K_MAX,
    TOP_K_MIN,
    CacheBackend,
    Config,
    HealthConfig,
    IndexBackendName,
    QueryMode,
    RoutingMode,
    RoutingRule,
    ServerConfig,
    VectorIndexName,
)
from tributary.engine.config.secrets import mask_url
from tributary.engine.model import CONTEXT_FORMATS, FUSION_STRATEGIES, OVERFLOW_STRATEGIES
from tributary.engine.query.kinds import QUERY_CLASSES

# Names a routing rule may use without configuring them: the engine adds its built-in
# servers for indexed repositories at run time.
BUILTIN_SERVER_NAMES: frozenset[str] = frozenset({"files", "tasks"})
BUILTIN_KINDS = ("files", "tasks")
MAX_TIMEOUT_S = 3600.0
MAX_NAME_CHARS = 100
MAX_BACKGROUND_MINUTES = 24 * 60.0  # a day: longer is an engine to run as `serve` or the app
MAX_TOOL_NAME_CHARS = 128  # the MCP specification's limit


def exposed_name(server: str, tool: str) -> str:
    """The name ``tributary serve`` gives an upstream tool it passes through: characters
    a tool name should not hold (MCP allows letters, digits, ``_ - .``) become ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{server}__{tool}")

_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_ENV_NAME = re.compile(r"^[^=\x00]+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class _Validator:
    def __init__(self, config: Config, lines: Mapping[str, int], file: str, known: set[str]) -> None:
        self.config = config
        self.lines = lines
        self.file = file
        self.known = known
        self.issues: list[ConfigIssue] = []

    def add(self, path: str, message: str) -> None:
        self.issues.append(ConfigIssue(self.file, path, _line_for(path, self.lines), message))

    # --- generic checks -----------------------------------------------------------------
    def number(self, path: str, value: Any, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, integer: bool = False) -> None:
        if not _is_number(value) or (integer and not isinstance(value, int)):
            self.add(path, f"must be {'an integer' if integer else 'a finite number'}, not {value!r}")
            return
        if low is not None and (value <= low if low_open else value < low):
            relation = "greater than" if low_open else "at least"
            self.add(path, f"must be {relation} {_fmt(low)} (got {_fmt(value)})")
        elif high is not None and value > high:
            self.add(path, f"must be at most {_fmt(high)} (got {_fmt(value)})")

    def choice(self, path: str, value: Any, choices: Iterable[str], what: str) -> None:
        options = list(choices)
        if value not in options:
            hint = did_you_mean(str(value), options)
            self.add(path, f"unknown {what} {value!r}{hint}; known: {', '.join(options)}")

    def server_ref(self, path: str, name: Any) -> None:
        if name not in self.known:
            hint = did_you_mean(str(name), self.known)
            known = ", ".join(sorted(self.known)) or "none"
            self.add(path, f"unknown server {name!r}{hint}; known servers: {known}")

    # --- sections -----------------------------------------------------------------------
    def run(self) -> list[ConfigIssue]:
        for name, server in self.config.servers.items():
            self.server(f"servers.{name}", name, server)
        self.routing()
        self.fusion()
        self.dedup()
        self.budget()
        self.cache()
        self.index()
        self.repos()
        self.number("cli.background_minutes", self.config.cli.background_minutes, low=0,
                    high=MAX_BACKGROUND_MINUTES)
        return self.issues

    def server(self, base: str, key: str, server: ServerConfig) -> None:
        if not key.strip() or _CONTROL.search(key) or len(key) > MAX_NAME_CHARS:
            self.add(base, f"a server name must be 1..{MAX_NAME_CHARS} printable characters")
        if server.name != key:
            self.add(f"{base}.name", f"must match the server's key {key!r}")
        if server.builtin is not None:
            self.choice(f"{base}.builtin", server.builtin, BUILTIN_KINDS, "built-in server kind")
        if server.transport == "stdio":
            self.stdio(base, server)
        elif server.transport in REMOTE_TRANSPORTS:
            self.http(base, server)
        else:
            self.choice(f"{base}.transport", server.transport, ("stdio", *REMOTE_TRANSPORTS), "transport")
        self.number(f"{base}.timeout", server.timeout, low=0, low_open=True, high=MAX_TIMEOUT_S)
        self.number(f"{base}.startup_timeout", server.startup_timeout, low=0, low_open=True,
                    high=MAX_TIMEOUT_S)
        self.number(f"{base}.weight", server.weight, low=0)
        self.health(f"{base}.health", server.health)
        self.choice(f"{base}.query_mode", server.query_mode, get_args(QueryMode), "query mode")
        for field in ("tool", "query_argument", "top_k_argument"):
            value = getattr(server, field)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                self.add(f"{base}.{field}", "must be a non-empty string or left out (auto-detect)")
        self.expose(base, server)
        for suffix, value in server_strings(server):
            if not isinstance(value, str):
                self.add(f"{base}.{suffix}", f"must be a string, not {value!r}")
                continue
            if "\x00" in value:
                self.add(f"{base}.{suffix}", "contains a NUL character")
            for problem in reference_problems(value, suffix):
                self.add(f"{base}.{suffix}", problem)

    def expose(self, base: str, server: ServerConfig) -> None:
        """Tool names to pass through: non-empty, no repeats, short enough that
        ``<server>__<tool>`` stays a valid MCP tool name."""
        seen: set[str] = set()
        for index, tool in enumerate(server.expose):
            path = f"{base}.expose[{index}]"
            if not isinstance(tool, str) or not tool.strip() or _CONTROL.search(tool):
                self.add(path, "must be a tool's name (a non-empty string)")
            elif tool in seen:
                self.add(path, f"{tool!r} is listed twice")
            elif len(exposed_name(server.name, tool)) > MAX_TOOL_NAME_CHARS:
                self.add(path, f"{exposed_name(server.name, tool)[:60]!r}… is longer than "
                               f"{MAX_TOOL_NAME_CHARS} characters, the limit of a tool name")
            if isinstance(tool, str):
                seen.add(tool)

    def stdio(self, base: str, server: ServerConfig) -> None:
        if not (server.command or "").strip() and server.builtin is None:
            hint = (f"; to tune the built-in {server.name} server, add 'builtin: {server.name}'"
                    if server.name in BUILTIN_KINDS else "")
            self.add(f"{base}.command", f"a stdio server needs 'command' (the program to start){hint}")
        if server.url is not None:
            self.add(f"{base}.url", "only http servers use 'url' (set transport: http, or remove it)")
        if server.headers:
            self.add(f"{base}.headers", "only http servers use 'headers'")
        if server.auth != "auto":
            self.add(f"{base}.auth", "only http and sse servers sign in (remove 'auth')")
        for key in server.env:
            if not isinstance(key, str) or not _ENV_NAME.match(key):
                self.add(f"{base}.env.{key}", "not a valid environment variable name")

    def http(self, base: str, server: ServerConfig) -> None:
        url = (server.url or "").strip()
        if not url:
            endpoint = "SSE endpoint, often ending in /sse" if server.transport == "sse" \
                else "streamable HTTP endpoint"
            self.add(f"{base}.url", f"an {server.transport} server needs 'url' (its {endpoint})")
        elif "${" not in url and not re.match(r"^https?://[^\s/]+", url, re.IGNORECASE):
            self.add(f"{base}.url", f"must be an http:// or https:// URL, not {mask_url(url)[:80]!r}")
        self.choice(f"{base}.auth", server.auth, AUTH_MODES, "auth mode")
        for field in ("command", "cwd"):
            if getattr(server, field) is not None:
                self.add(f"{base}.{field}", f"only stdio servers use '{field}' (remove it, or set transport: stdio)")
        for field in ("args", "env"):
            if getattr(server, field):
                self.add(f"{base}.{field}", f"only stdio servers use '{field}'")
        for key, value in server.headers.items():
            if not isinstance(key, str) or not _HEADER_NAME.match(key):
                self.add(f"{base}.headers.{key}", "not a valid HTTP header name")
            elif isinstance(value, str) and ("\r" in value or "\n" in value):
                self.add(f"{base}.headers.{key}", "a header value cannot contain line breaks")

    def health(self, base: str, health: HealthConfig) -> None:
        self.number(f"{base}.interval_s", health.interval_s, low=0, low_open=True)
        self.number(f"{base}.failure_threshold", health.failure_threshold, low=1, integer=True)
        self.number(f"{base}.open_s", health.open_s, low=0, low_open=True)

    def routing(self) -> None:
        self.choice("routing.mode", self.config.routing.mode, get_args(RoutingMode), "routing mode")
        names: dict[str, int] = {}
        for index, rule in enumerate(self.config.routing.rules):
            self.rule(f"routing.rules[{index}]", rule)
            if rule.name in names:
                self.add(f"routing.rules[{index}].name", f"duplicate rule name {rule.name!r} (also rule {names[rule.name] + 1})")
            names.setdefault(rule.name, index)
        fallback = self.config.routing.fallback
        if fallback is not None:
            for index, name in enumerate(fallback):
                self.server_ref(f"routing.fallback[{index}]", name)

    def rule(self, base: str, rule: RoutingRule) -> None:
        if not isinstance(rule.name, str) or not rule.name.strip():
            self.add(f"{base}.name", "a rule needs a non-empty name")
        if not isinstance(rule.pattern, str):
            self.add(f"{base}.pattern", f"must be a string, not {rule.pattern!r}")
        else:
            problem = check_pattern(rule.pattern)
            if problem:
                self.add(f"{base}.pattern", f"rule {rule.name!r}: the pattern {rule.pattern[:80]!r} {problem}")
        if not rule.servers:
            self.add(f"{base}.servers", "a rule must name at least one server")
        for index, name in enumerate(rule.servers):
            self.server_ref(f"{base}.servers[{index}]", name)
        self.number(f"{base}.priority", rule.priority, integer=True)
        for name, weight in rule.weights.items():
            self.server_ref(f"{base}.weights.{name}", name)
            self.number(f"{base}.weights.{name}", weight, low=0)
        if rule.strategy is not None:
            self.choice(f"{base}.strategy", rule.strategy, FUSION_STRATEGIES, "fusion strategy")
        if rule.query_class is not None:
            self.choice(f"{base}.query_class", rule.query_class, QUERY_CLASSES, "query class")

    def fusion(self) -> None:
        fusion = self.config.fusion
        self.choice("fusion.strategy", fusion.strategy, FUSION_STRATEGIES, "fusion strategy")
        self.number("fusion.rrf_k", fusion.rrf_k, low=1, integer=True)
        self.number("fusion.top_k", fusion.top_k, low=TOP_K_MIN, high=TOP_K_MAX, integer=True)
        weights = fusion.composite
        for field in ("keyword", "freshness", "reputation", "length"):
            self.number(f"fusion.composite.{field}", getattr(weights, field), low=0)
        parts = [getattr(weights, f) for f in ("keyword", "freshness", "reputation", "length")]
        if all(_is_number(p) for p in parts) and not any(p > 0 for p in parts):
            self.add("fusion.composite", "at least one weight must be greater than 0")

    def dedup(self) -> None:
        self.number("dedup.fuzzy_threshold", self.config.dedup.fuzzy_threshold, low=0, high=1)
        self.number("dedup.semantic_threshold", self.config.dedup.semantic_threshold, low=0, high=1)

    def budget(self) -> None:
        budget = self.config.budget
        self.number("budget.max_tokens", budget.max_tokens, low=1, integer=True)
        self.number("budget.reserved_tokens", budget.reserved_tokens, low=0, integer=True)
        if (_is_number(budget.max_tokens) and _is_number(budget.reserved_tokens)
                and budget.max_tokens >= 1 and budget.reserved_tokens >= budget.max_tokens):
            self.add("budget.reserved_tokens", f"must be less than max_tokens ({budget.max_tokens})")
        self.choice("budget.overflow", budget.overflow, OVERFLOW_STRATEGIES, "overflow strategy")
        self.choice("budget.format", budget.format, CONTEXT_FORMATS, "context format")

    def cache(self) -> None:
        cache = self.config.cache
        self.choice("cache.backend", cache.backend, get_args(CacheBackend), "cache backend")
        self.number("cache.ttl_s", cache.ttl_s, low=0)
        self.number("cache.max_entries", cache.max_entries, low=1, integer=True)
        self.number("cache.max_mb", cache.max_mb, low=1)
        if not re.match(r"^(?:rediss?|unix)://", str(cache.redis_url)):
            self.add("cache.redis_url", f"must start with redis://, rediss:// or unix://, not {str(cache.redis_url)[:60]!r}")

    def index(self) -> None:
        index = self.config.index
        self.choice("index.backend", index.backend, get_args(IndexBackendName), "index backend")
        self.choice("index.vector_index", index.vector_index, get_args(VectorIndexName), "vector index")
        dsn = str(index.dsn)
        if index.backend == "postgres" and not re.match(r"^(?:postgres|postgresql)://|^\$\{", dsn):
            self.add("index.dsn", "the postgres backend needs a dsn: postgresql://user:${PASSWORD}@host/db")
        for problem in reference_problems(dsn):
            self.add("index.dsn", problem)

    def repos(self) -> None:
        names: set[str] = set()
        for index, repo in enumerate(self.config.repos):
            base = f"repos[{index}]"
            if not isinstance(repo.path, str) or not repo.path.strip():
                self.add(f"{base}.path", "a repository needs a non-empty 'path'")
            if repo.name is not None:
                if not repo.name.strip():
                    self.add(f"{base}.name", "must be non-empty or left out")
                elif repo.name in names:
                    self.add(f"{base}.name", f"duplicate repository name {repo.name!r}")
                names.add(repo.name)
            for field in ("include", "exclude", "tasks"):
                for i, value in enumerate(getattr(repo, field)):
                    if not isinstance(value, str) or not value.strip():
                        self.add(f"{base}.{field}[{i}]", "must be a non-empty string")


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _line_for(path: str, lines: Mapping[str, int]) -> int | None:
    """The line of ``path``, or of its nearest ancestor that came from the file."""
    current = path
    while current:
        if current in lines:
            return lines[current]
        cut = max(current.rfind("."), current.rfind("["))
        current = current[:cut] if cut > 0 else ""
    return None


def validate(
    config: Config,
    *,
    lines: Mapping[str, int] | None = None,
    file: str | None = None,
    extra_server_names: Iterable[str] = BUILTIN_SERVER_NAMES,
) -> list[ConfigIssue]:
    """Every semantic problem of ``config`` (empty list: valid).

    ``file`` defaults to ``config.path`` (or ``<config>``); ``lines`` maps key paths to
    line numbers when the config came from a file. ``extra_server_names`` may be named by
    routing rules without being configured (the engine's built-in servers).
    """
    source = file or (str(config.path) if config.path is not None else "<config>")
    known = set(config.servers) | set(extra_server_names)
    return _Validator(config, lines or {}, source, known).run()


def merge_issues(structural: list[ConfigIssue], semantic: list[ConfigIssue]) -> list[ConfigIssue]:
    """Structural issues plus the semantic ones that are not a consequence of them
    (a value that could not be read must not also be reported as, say, missing)."""
    reported = {issue.key_path for issue in structural}

    def covered(path: str) -> bool:
        return any(path == p or path.startswith(p + ".") or path.startswith(p + "[") for p in reported if p)

    return structural + [issue for issue in semantic if not covered(issue.key_path)]
