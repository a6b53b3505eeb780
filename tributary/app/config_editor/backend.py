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

from tributary.app.background import off_the_gui
from tributary.engine.api import (
    BUILTIN_SERVER_NAMES,
    ConfigError,
    ConfigIssue,
    RoutingExplanation,
    with_builtin_servers,
)
from tributary.engine.api import check_pattern as _check_pattern
from tributary.engine.api import explain_routing as _explain_routing
from tributary.engine.api import import_mcp_servers as _import_mcp_servers
from tributary.engine.api import save_config as _save_config
from tributary.engine.api import validate as _validate
from tributary.engine.config.schema import Config, ServerConfig

__all__ = ["BUILTIN_SERVER_NAMES", "ConfigError", "Issue", "StoredSecrets", "check_pattern", "explain_routing",
           "import_mcp_servers", "save_config", "store_literal_secrets", "validate"]


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



@dataclass(slots=True)
class StoredSecrets:
    """A config whose literal secrets went to the keyring, and where each went."""

    config: Config
    places: list[tuple[str, str]]  # (servers.NAME.env.KEY or .headers.KEY, keyring entry)
    where: str  # the keyring, or the file that stands in for one, for the user


async def store_literal_secrets(config: Config, before: Config | None = None) -> StoredSecrets:
    """``config`` with each literal value under a secret-looking env or header name
    that is not in ``before`` (typed since) stored in the keyring and replaced by its
    ``${keyring:NAME}`` reference, so a save never writes a typed token in plain text.
    A literal the file already had stays (moving those is the user's choice). In a
    worker thread: a keyring may wait for the user to unlock it."""
    import copy
    from dataclasses import replace

    from tributary.engine.api import backend_notice, fallback_path, move_server_secrets

    def typed(server: ServerConfig) -> ServerConfig:
        old = before.servers.get(server.name) if before is not None else None
        if old is None:
            return server
        return replace(server, env={k: v for k, v in server.env.items() if old.env.get(k) != v},
                       headers={k: v for k, v in server.headers.items() if old.headers.get(k) != v})

    def move() -> StoredSecrets:
        picked = [typed(server) for server in config.servers.values() if not server.builtin]
        converted, places, _names = move_server_secrets(picked)
        updated = copy.deepcopy(config)
        for server in converted:
            target = updated.servers[server.name]
            target.env.update(server.env)
            target.headers.update(server.headers)
        where = "the OS keyring"
        if places and backend_notice() is not None:
            where = f"{fallback_path()} (readable only by you, not encrypted)"
        return StoredSecrets(updated, places, where)

    return await off_the_gui(move)


async def move_secrets_to_keyring(server: ServerConfig) -> tuple[ServerConfig, list[str], str | None]:
    """``server`` with its literal secrets moved into the OS keyring (read and written in
    a worker thread: a keyring may wait for the user to unlock it), the names stored,
    and the keyring's fallback notice (None when the OS keyring is used)."""

    from tributary.engine.api import backend_notice, move_server_secrets

    def move() -> tuple[ServerConfig, list[str], str | None]:
        converted, _places, names = move_server_secrets([server])
        return converted[0], names, backend_notice() if names else None

    return await off_the_gui(move)


async def sign_in(server: ServerConfig) -> None:
    """Sign in to a remote server in the system browser (OAuth; the session goes to the
    keyring). Runs on a thread of its own with its own event loop: the loopback callback
    server and the SDK's flow then never share the GUI's loop."""

    from tributary.engine.api import sign_in as _sign_in

    await off_the_gui(_sign_in, server)


async def sign_out(server: ServerConfig) -> bool:

    from tributary.engine.api import sign_out as _sign_out

    return await off_the_gui(_sign_out, server)


async def signed_in(server: ServerConfig) -> bool:
    """Whether a session for ``server`` is stored (the keyring is read off the GUI thread)."""

    from tributary.engine.api import signed_in as _signed_in

    return await off_the_gui(_signed_in, server)
