"""The engine as the desktop app may use it: one seam, checked by mypy.

``EngineLike`` is the facade the app drives (search, routing, servers, config,
feedback); the real :class:`~tributary.engine.engine.Engine` is checked against it
below, and so is the app's threaded host of it. The other names are the engine
functions the app calls for indexing, config editing and import, sign-in and
insights. They are imported on first use (PEP 562 ``__getattr__``), so the window's
first paint loads none of them; mypy sees them through the ``TYPE_CHECKING`` imports.

``tests/test_architecture.py`` allows ``tributary.app`` to import only this module,
the data model (``tributary.engine.model``), the config schema and the errors.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.model import (
    DedupGroup,
    Hit,
    ReputationRow,
    RouteDecision,
    SearchRequest,
    SearchResponse,
    SearchUpdate,
)

if TYPE_CHECKING:
    from tributary.engine.config.clients import CLIENTS, ClientConfig, discover_client_configs
    from tributary.engine.config.errors import ConfigError, ConfigIssue
    from tributary.engine.config.importer import (
        already_configured,
        import_mcp_servers,
        known_settings,
        merge_imported,
        twin_of,
    )
    from tributary.engine.config.keystore import backend_notice, fallback_path
    from tributary.engine.config.load import config_signature
    from tributary.engine.config.patterns import check_pattern
    from tributary.engine.config.save import save_config, update_config
    from tributary.engine.config.secret_move import move_server_secrets
    from tributary.engine.config.secrets import is_secret_name
    from tributary.engine.config.validate import BUILTIN_SERVER_NAMES, validate
    from tributary.engine.engine import Engine
    from tributary.engine.index.manager import (
        embed_repository,
        index_repository,
        list_indexes,
        watch_repository,
    )
    from tributary.engine.insights.store import QueryLog, QueryLogEntry, QueryLogSummary
    from tributary.engine.localsearch.longquery import is_task_question
    from tributary.engine.paths import (
        config_dir,
        data_dir,
        default_config_path,
        indexes_dir,
        moved_once,
        write_private_text,
    )
    from tributary.engine.pipeline.confidence import source_views
    from tributary.engine.pipeline.dedup import fold_label, why_folded
    from tributary.engine.pipeline.formats import commit_line
    from tributary.engine.pipeline.run import quotes_files
    from tributary.engine.pipeline.text import query_terms
    from tributary.engine.query.syntax import format_filters, parse_query
    from tributary.engine.repos.builtins import with_builtin_servers
    from tributary.engine.repos.freshness import Freshness
    from tributary.engine.repos.manage import (
        embedding_underway,
        list_repositories,
        remove_repository,
        repository_pass,
        update_history,
    )
    from tributary.engine.routing import RoutingExplanation, explain_routing
    from tributary.engine.runtime.heap import settle
    from tributary.engine.runtime.shutdown import SHUTDOWN_SIGNALS
    from tributary.engine.runtime.spawn import module_command
    from tributary.engine.sources.oauth import sign_in, sign_out, signed_in
    from tributary.engine.sources.state import ServerState, ServerTest
    from tributary.engine.tasks.api import embed_history
    from tributary.engine.wording import counted


class EngineLike(Protocol):
    """The engine facade the app programs against (the real engine, or its threaded host)."""

    @property
    def config(self) -> Config: ...

    @property
    def effective_config(self) -> Config:
        """The config the engine runs: the file's, plus the built-in servers it added."""
        ...

    async def search(self, request: SearchRequest) -> SearchResponse: ...

    def search_stream(self, request: SearchRequest) -> AsyncIterator[SearchUpdate]: ...

    def route(self, query: str) -> RouteDecision: ...

    async def test_server(self, server: ServerConfig) -> ServerTest: ...

    def server_states(self) -> list[ServerState]: ...

    def stderr_lines(self, name: str) -> list[str]: ...

    async def apply_config(self, config: Config) -> None: ...

    async def repository_changed(self, path: str | Path) -> int: ...

    async def feedback(
        self, hit: Hit, useful: bool, query: str = "", *, group: DedupGroup | None = None
    ) -> dict[str, float]: ...

    async def reputation_rows(self) -> list[ReputationRow]: ...

    async def reset_reputation(self, source: str | None = None) -> int: ...

    async def aclose(self) -> None: ...


if TYPE_CHECKING:

    def _the_engine_is_engine_like(engine: Engine) -> EngineLike:
        """Never called: mypy checks here that the real engine satisfies the seam."""
        return engine


# name -> the module it lives in, imported when the app first asks for the name.
_HOMES: dict[str, str] = {
    "Engine": "tributary.engine.engine",
    "with_builtin_servers": "tributary.engine.repos.builtins",
    "CLIENTS": "tributary.engine.config.clients",
    "ClientConfig": "tributary.engine.config.clients",
    "discover_client_configs": "tributary.engine.config.clients",
    "ConfigError": "tributary.engine.config.errors",
    "ConfigIssue": "tributary.engine.config.errors",
    "already_configured": "tributary.engine.config.importer",
    "import_mcp_servers": "tributary.engine.config.importer",
    "merge_imported": "tributary.engine.config.importer",
    "known_settings": "tributary.engine.config.importer",
    "twin_of": "tributary.engine.config.importer",
    "backend_notice": "tributary.engine.config.keystore",
    "fallback_path": "tributary.engine.config.keystore",
    "config_signature": "tributary.engine.config.load",
    "save_config": "tributary.engine.config.save",
    "update_config": "tributary.engine.config.save",
    "move_server_secrets": "tributary.engine.config.secret_move",
    "is_secret_name": "tributary.engine.config.secrets",
    "BUILTIN_SERVER_NAMES": "tributary.engine.config.validate",
    "validate": "tributary.engine.config.validate",
    "settle": "tributary.engine.runtime.heap",
    "index_repository": "tributary.engine.index.manager",
    "embed_repository": "tributary.engine.index.manager",
    "embed_history": "tributary.engine.tasks.api",
    "list_indexes": "tributary.engine.index.manager",
    "watch_repository": "tributary.engine.index.manager",
    "QueryLog": "tributary.engine.insights.store",
    "QueryLogEntry": "tributary.engine.insights.store",
    "QueryLogSummary": "tributary.engine.insights.store",
    "is_task_question": "tributary.engine.localsearch.longquery",
    "config_dir": "tributary.engine.paths",
    "data_dir": "tributary.engine.paths",
    "default_config_path": "tributary.engine.paths",
    "indexes_dir": "tributary.engine.paths",
    "moved_once": "tributary.engine.paths",
    "write_private_text": "tributary.engine.paths",
    "check_pattern": "tributary.engine.config.patterns",
    "source_views": "tributary.engine.pipeline.confidence",
    "fold_label": "tributary.engine.pipeline.dedup",
    "why_folded": "tributary.engine.pipeline.dedup",
    "commit_line": "tributary.engine.pipeline.formats",
    "quotes_files": "tributary.engine.pipeline.run",
    "query_terms": "tributary.engine.pipeline.text",
    "format_filters": "tributary.engine.query.syntax",
    "parse_query": "tributary.engine.query.syntax",
    "Freshness": "tributary.engine.repos.freshness",
    "list_repositories": "tributary.engine.repos.manage",
    "embedding_underway": "tributary.engine.repos.manage",
    "remove_repository": "tributary.engine.repos.manage",
    "repository_pass": "tributary.engine.repos.manage",
    "update_history": "tributary.engine.repos.manage",
    "RoutingExplanation": "tributary.engine.routing",
    "explain_routing": "tributary.engine.routing",
    "SHUTDOWN_SIGNALS": "tributary.engine.runtime.shutdown",
    "sign_in": "tributary.engine.sources.oauth",
    "sign_out": "tributary.engine.sources.oauth",
    "signed_in": "tributary.engine.sources.oauth",
    "ServerState": "tributary.engine.sources.state",
    "ServerTest": "tributary.engine.sources.state",
    "module_command": "tributary.engine.runtime.spawn",
    "counted": "tributary.engine.wording",
}

__all__ = [
    "BUILTIN_SERVER_NAMES",
    "CLIENTS",
    "SHUTDOWN_SIGNALS",
    "ClientConfig",
    "ConfigError",
    "ConfigIssue",
    "Engine",
    "EngineLike",
    "Freshness",
    "QueryLog",
    "QueryLogEntry",
    "QueryLogSummary",
    "RoutingExplanation",
    "ServerState",
    "ServerTest",
    "already_configured",
    "backend_notice",
    "check_pattern",
    "commit_line",
    "config_dir",
    "config_signature",
    "counted",
    "data_dir",
    "default_config_path",
    "discover_client_configs",
    "embed_history",
    "embed_repository",
    "embedding_underway",
    "explain_routing",
    "fallback_path",
    "fold_label",
    "format_filters",
    "import_mcp_servers",
    "index_repository",
    "indexes_dir",
    "is_secret_name",
    "is_task_question",
    "known_settings",
    "list_indexes",
    "list_repositories",
    "merge_imported",
    "module_command",
    "move_server_secrets",
    "moved_once",
    "parse_query",
    "query_terms",
    "quotes_files",
    "remove_repository",
    "repository_pass",
    "save_config",
    "settle",
    "sign_in",
    "sign_out",
    "signed_in",
    "source_views",
    "twin_of",
    "update_config",
    "update_history",
    "validate",
    "watch_repository",
    "why_folded",
    "with_builtin_servers",
    "write_private_text",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value
