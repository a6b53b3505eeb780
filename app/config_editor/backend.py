"""The engine's config services the editor uses — it never re-implements them.

Validation (``engine.config.validate``), the validated atomic writer with backup
(``engine.config.save``), routing-pattern checks and the routing explanation for the
rule tester (``engine.routing``), and the Claude Desktop / Cursor / VS Code importer
(``engine.config.importer``). This module adapts their results to what the editor
shows. It is imported when the editor page is first opened, not at start.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.builtins import with_builtin_servers
from engine.config.errors import ConfigError, ConfigIssue
from engine.config.importer import import_mcp_servers as _import_mcp_servers
from engine.config.save import save_config as _save_config
from engine.config.schema import Config, ServerConfig
from engine.config.validate import BUILTIN_SERVER_NAMES
from engine.config.validate import validate as _validate
from engine.patterns import check_pattern as _check_pattern
from engine.routing import RoutingExplanation
from engine.routing import explain_routing as _explain_routing

__all__ = ["BUILTIN_SERVER_NAMES", "ConfigError", "Issue", "check_pattern", "explain_routing", "import_mcp_servers",
           "save_config", "validate"]


@dataclass(frozen=True, slots=True)
class Issue:
    """One validation problem, as the editor shows it."""

    key: str
    message: str
    severity: str = "error"

    @classmethod
    def of(cls, raw: ConfigIssue | Any) -> Issue:
        key = str(getattr(raw, "key_path", "") or getattr(raw, "key", "") or "")
        message = str(getattr(raw, "message", None) or raw)
        return cls(key, message)


def validate(config: Config) -> list[Issue]:
    return [Issue.of(issue) for issue in _validate(config)]


def check_pattern(pattern: str) -> str | None:
    """None when ``pattern`` is a usable routing regex, else what is wrong with it."""
    return _check_pattern(pattern)


def explain_routing(config: Config, query: str) -> RoutingExplanation:
    """The engine's own routing of ``query`` under ``config`` as the engine would run it:
    with the built-in servers for what is indexed (``Engine.route`` routes over the
    same ``with_builtin_servers`` config)."""
    return _explain_routing(with_builtin_servers(config), query)


def save_config(config: Config, path: Path) -> Path:
    """Validate and write atomically (with a backup); raises ConfigError, writing nothing."""
    return _save_config(config, path)


@dataclass(slots=True)
class Imported:
    servers: list[ServerConfig]
    warnings: list[str]


def import_mcp_servers(path: Path, existing: Config | None = None) -> Imported:
    result = _import_mcp_servers(path, existing=existing)
    return Imported(list(result.servers), list(result.warnings))


def describe(error: BaseException) -> str:
    """A ConfigError lists its issues (key: message); anything else its text."""
    if isinstance(error, ConfigError):
        return "; ".join(f"{i.key_path}: {i.message}" if i.key_path else i.message for i in error.issues)
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__

