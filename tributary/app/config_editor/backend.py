"""The engine's config services the editor uses — it never re-implements them.

Validation (``tributary.engine.config.validate``), the validated atomic writer with backup
(``tributary.engine.config.save``), routing-pattern checks and the routing explanation for the
rule tester (``tributary.engine.routing``), and the Claude Desktop / Cursor / VS Code importer
(``tributary.engine.config.importer``). This module adapts their results to what the editor
shows. It is imported when the editor page is first opened, not at start.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tributary.engine.builtins import with_builtin_servers
from tributary.engine.config.errors import ConfigError, ConfigIssue
from tributary.engine.config.importer import import_mcp_servers as _import_mcp_servers
from tributary.engine.config.save import save_config as _save_config
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.config.validate import BUILTIN_SERVER_NAMES
from tributary.engine.config.validate import validate as _validate
from tributary.engine.patterns import check_pattern as _check_pattern
from tributary.engine.routing import RoutingExplanation
from tributary.engine.routing import explain_routing as _explain_routing

__all__ = ["BUILTIN_SERVER_NAMES", "ConfigError", "Issue", "check_pattern", "explain_routing", "import_mcp_servers",
           "save_config", "validate"]


@dataclass(frozen=True, slots=True)
class Issue:
    """One validation problem, as the editor shows it."""

    key: str
    message: str
    severity: str = "error"

    @classmethod
    def of(cls, raw: ConfigIssue) -> Issue:
        return cls(raw.key_path, raw.message or str(raw))


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



async def move_secrets_to_keyring(server: ServerConfig) -> tuple[ServerConfig, list[str], str | None]:
    """``server`` with its literal secrets moved into the OS keyring (read and written in
    a worker thread: a keyring may wait for the user to unlock it), the names stored,
    and the keyring's fallback notice (None when the OS keyring is used)."""
    import asyncio

    from tributary.engine.config import keystore
    from tributary.engine.config.secret_move import move_server_secrets

    def move() -> tuple[ServerConfig, list[str], str | None]:
        converted, _places, names = move_server_secrets([server])
        return converted[0], names, keystore.backend_notice() if names else None

    return await asyncio.to_thread(move)


async def sign_in(server: ServerConfig) -> None:
    """Sign in to a remote server in the system browser (OAuth; the session goes to the
    keyring). Runs on a thread of its own with its own event loop: the loopback callback
    server and the SDK's flow then never share the GUI's loop."""
    import asyncio

    from tributary.engine.sources.oauth import sign_in as _sign_in

    await asyncio.to_thread(asyncio.run, _sign_in(server))


async def sign_out(server: ServerConfig) -> bool:
    import asyncio

    from tributary.engine.sources.oauth import sign_out as _sign_out

    return await asyncio.to_thread(asyncio.run, _sign_out(server))


async def signed_in(server: ServerConfig) -> bool:
    """Whether a session for ``server`` is stored (the keyring is read off the GUI thread)."""
    import asyncio

    from tributary.engine.sources.oauth import signed_in as _signed_in

    return await asyncio.to_thread(_signed_in, server)
