"""Finding other MCP clients' configs where they keep them, and reading their servers.

:func:`discover_client_configs` looks in the places each client writes its file
(for this platform, under the user's home) and returns one :class:`ClientConfig`
per file *and scope* found, with the servers it defines, already converted:

========================  =====================================================
Claude Desktop            ``claude_desktop_config.json`` (``mcpServers``)
Claude Code               ``~/.claude.json``: ``mcpServers`` (user scope) and
                          ``projects[PATH].mcpServers`` (one entry per project);
                          ``.mcp.json`` of those projects and of the workspace
Cursor                    ``~/.cursor/mcp.json``; the workspace's ``.cursor/mcp.json``
VS Code                   user ``mcp.json`` and ``settings.json`` (``mcp.servers``);
                          the workspace's ``.vscode/mcp.json``
Windsurf                  ``~/.codeium/windsurf/mcp_config.json``
Zed                       ``settings.json`` ``context_servers`` (both the
                          ``command: {path, args, env}`` and the flat form)
Codex                     ``$CODEX_HOME/config.toml`` (``~/.codex``), ``[mcp_servers.NAME]``;
                          ``enabled_tools`` chooses the server's ``tool:``
Continue                  ``~/.continue/config.yaml`` ``mcpServers`` (a list) and the
                          blocks in ``~/.continue/mcpServers/``
========================  =====================================================

Every format is brought to the ``mcpServers`` shape and converted by
:func:`tributary.engine.config.importer.convert_entries` (validation, ``${VAR}`` handling,
SSE kept as ``transport: sse``). A file that cannot be read is still listed, with
its error, so the user sees why its servers are missing.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tributary.engine.config.errors import ConfigError
from tributary.engine.config.importer import (
    ImportResult,
    convert_entries,
    parse_mcp_servers,
    read_text,
)
from tributary.engine.config.jsonc_edit import strip_jsonc
from tributary.engine.config.schema import ServerConfig

CLIENTS = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "cursor": "Cursor",
    "vscode": "VS Code",
    "windsurf": "Windsurf",
    "zed": "Zed",
    "codex": "Codex",
    "continue": "Continue",
}
_CONTINUE_TEMPLATE = re.compile(r"\$\{\{\s*(?:secrets|inputs)\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(slots=True)
class ClientConfig:
    """One client's config file (and scope) found on this machine, with its servers."""

    client: str  # key of CLIENTS, e.g. "claude-code"
    path: Path
    scope: str = "user"  # "user", "workspace", or "project PATH"
    servers: list[ServerConfig] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None  # the file exists but could not be read

    @property
    def label(self) -> str:
        name = CLIENTS.get(self.client, self.client)
        return name if self.scope == "user" else f"{name} ({self.scope})"


@dataclass(frozen=True, slots=True)
class _Place:
    client: str
    path: Path
    scope: str = "user"
    workspace: Path | None = None  # the project folder ${workspaceFolder} means, if any


def _app_dirs(home: Path, platform: str, environ: Mapping[str, str]) -> tuple[Path, Path]:
    """(the folder apps keep settings in, the XDG-style config folder) for ``platform``."""
    if platform == "darwin":
        return home / "Library" / "Application Support", home / ".config"
    if platform.startswith("win"):
        appdata = Path(environ["APPDATA"]) if environ.get("APPDATA") else home / "AppData" / "Roaming"
        return appdata, appdata
    xdg = Path(environ["XDG_CONFIG_HOME"]) if environ.get("XDG_CONFIG_HOME") else home / ".config"
    return xdg, xdg


def _places(home: Path, workspace: Path | None, platform: str, environ: Mapping[str, str]) -> Iterator[_Place]:
    apps, xdg = _app_dirs(home, platform, environ)
    yield _Place("claude-desktop", apps / "Claude" / "claude_desktop_config.json")
    yield _Place("claude-code", home / ".claude.json")
    yield _Place("cursor", home / ".cursor" / "mcp.json")
    for product in ("Code", "Code - Insiders"):
        yield _Place("vscode", apps / product / "User" / "mcp.json")
        yield _Place("vscode", apps / product / "User" / "settings.json")
    yield _Place("windsurf", home / ".codeium" / "windsurf" / "mcp_config.json")
    zed = (apps / "Zed" if platform.startswith("win") else xdg / "zed") / "settings.json"
    yield _Place("zed", zed)
    codex_home = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else home / ".codex"
    yield _Place("codex", codex_home / "config.toml")
    yield _Place("continue", home / ".continue" / "config.yaml")
    blocks = home / ".continue" / "mcpServers"
    if blocks.is_dir():
        for block in sorted(blocks.iterdir()):
            if block.suffix in (".yaml", ".yml", ".json"):
                yield _Place("continue", block, "block")
    if workspace is not None:
        yield _Place("claude-code", workspace / ".mcp.json", "workspace", workspace)
        yield _Place("cursor", workspace / ".cursor" / "mcp.json", "workspace", workspace)
        yield _Place("vscode", workspace / ".vscode" / "mcp.json", "workspace", workspace)


def discover_client_configs(
    home: Path | None = None,
    *,
    workspace: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[ClientConfig]:
    """Every MCP client config present on this machine, with its servers (see the
    module docstring). ``home`` defaults to the user's home, ``workspace`` (a project
    folder whose ``.vscode``/``.cursor``/``.mcp.json`` count) to none, ``platform`` to
    ``sys.platform``. Files without servers are left out; unreadable ones are listed
    with ``error`` set. Never raises for a client's bad file.

    Each file is listed once, by its resolved path, whichever reader found it first:
    the workspace may be the home folder, and a project's ``.mcp.json`` is read both for
    ``~/.claude.json``'s project and as the workspace's own file."""
    home = home if home is not None else Path.home()
    env = os.environ if environ is None else environ
    found: list[ClientConfig] = []
    read: set[Path] = set()
    for place in _places(home, workspace, platform or sys.platform, env):
        if not place.path.is_file() or place.path.resolve() in read:
            continue
        own = place.path.resolve()
        read.add(own)
        for config in _read(place):
            other = config.path.resolve()
            if other != own:  # another file this reader opened (a project's .mcp.json)
                if other in read:
                    continue
                read.add(other)
            if config.servers or config.error or config.warnings:
                found.append(config)
    return found


def _read(place: _Place) -> list[ClientConfig]:
    try:
        text = read_text(place.path)
        return _READERS[place.client](place, text)
    except ConfigError as exc:
        return [ClientConfig(place.client, place.path, place.scope, error=_first(exc))]
    except (ValueError, TypeError, yaml.YAMLError, tomllib.TOMLDecodeError, RecursionError) as exc:
        return [ClientConfig(place.client, place.path, place.scope,
                             error=f"cannot read it: {type(exc).__name__}: {exc}".splitlines()[0])]


def _first(exc: ConfigError) -> str:
    return exc.issues[0].message if exc.issues else str(exc)


def _result(place: _Place, result: ImportResult, scope: str | None = None) -> ClientConfig:
    return ClientConfig(place.client, place.path, scope or place.scope, result.servers, result.warnings)


def _entries(place: _Place, entries: Any, *, scope: str | None = None, fmt: str = "mcpServers",
             workspace: Path | None = None, warnings: list[str] | None = None) -> ClientConfig:
    if not isinstance(entries, dict):
        return ClientConfig(place.client, place.path, scope or place.scope,
                            error="its servers section is not an object")
    result = convert_entries(entries, fmt=fmt, source=str(place.path), workspace=workspace,
                             warnings=warnings or [])
    return _result(place, result, scope)


# ------------------------------------------------------------------ the formats


def _mcp_servers_file(place: _Place, text: str) -> list[ClientConfig]:
    """Claude Desktop, Cursor, Windsurf, VS Code (mcp.json, settings.json): the
    importer's own formats. A settings file without MCP servers is not an error."""
    data = json.loads(strip_jsonc(text))
    if isinstance(data, dict) and not any(k in data for k in ("mcpServers", "servers", "mcp")):
        return []
    try:
        return [_result(place, parse_mcp_servers(text, source=str(place.path), workspace=place.workspace))]
    except ConfigError:
        return []  # e.g. a settings.json with an "mcp" object holding no servers


def _claude_code(place: _Place, text: str) -> list[ClientConfig]:
    """``~/.claude.json`` (user scope and one entry per project) or a ``.mcp.json``."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    out = []
    if "mcpServers" in data:
        out.append(_entries(place, data["mcpServers"], workspace=place.workspace))
    if place.path.name == ".claude.json":
        projects = data.get("projects")
        for folder, project in (projects.items() if isinstance(projects, dict) else []):
            if isinstance(project, dict) and project.get("mcpServers"):
                out.append(_entries(place, project["mcpServers"], scope=f"project {folder}",
                                    workspace=Path(folder)))
            shared = Path(folder) / ".mcp.json"
            if shared.is_file():
                try:
                    shared_data = json.loads(read_text(shared))
                except (ConfigError, ValueError):
                    continue
                if isinstance(shared_data, dict) and shared_data.get("mcpServers"):
                    shared_place = _Place(place.client, shared, f"project {folder}, shared", Path(folder))
                    out.append(_entries(shared_place, shared_data["mcpServers"], workspace=Path(folder)))
    return out


def _zed(place: _Place, text: str) -> list[ClientConfig]:
    data = json.loads(strip_jsonc(text))
    servers = data.get("context_servers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        return []
    entries: dict[str, Any] = {}
    warnings: list[str] = []
    for name, raw in servers.items():
        if not isinstance(raw, dict):
            entries[name] = raw
            continue
        command = raw.get("command")
        if isinstance(command, dict):  # the older form: command: {path, args, env}
            entries[name] = {"command": command.get("path"), "args": command.get("args"),
                             "env": command.get("env")}
        elif command or raw.get("url"):
            entries[name] = {k: raw[k] for k in ("command", "args", "env", "url", "headers") if k in raw}
        else:
            warnings.append(f"skipped '{name}': provided by a Zed extension (no command of its own)")
        if raw.get("enabled") is False and name in entries:
            entries[name]["disabled"] = True
    return [_entries(place, entries, fmt="zed", warnings=warnings)]


def _codex(place: _Place, text: str) -> list[ClientConfig]:
    data = tomllib.loads(text)
    servers = data.get("mcp_servers")
    if not isinstance(servers, dict) or not servers:
        return []
    entries: dict[str, Any] = {}
    warnings: list[str] = []
    tools: dict[str, str] = {}  # server -> the tool its enabled_tools leave for searches
    for name, raw in servers.items():
        if not isinstance(raw, dict):
            entries[name] = raw
            continue
        if "enabled_tools" in raw:
            tool, note = _codex_tool(name, raw["enabled_tools"])
            if tool is not None:
                tools[" ".join(str(name).split())] = tool
            if note:
                warnings.append(note)
        entry = {k: raw[k] for k in ("command", "args", "env", "cwd", "url") if k in raw}
        headers = dict(raw.get("http_headers") or {})
        for header, variable in (raw.get("env_http_headers") or {}).items():
            headers[header] = "${" + str(variable) + "}"
        if raw.get("bearer_token_env_var"):
            headers["Authorization"] = "Bearer ${" + str(raw["bearer_token_env_var"]) + "}"
        if headers:
            entry["headers"] = headers
        if raw.get("enabled") is False:
            entry["disabled"] = True
        ignored = sorted(set(raw) - {"command", "args", "env", "cwd", "url", "http_headers",
                                     "env_http_headers", "bearer_token_env_var", "enabled",
                                     "enabled_tools"})
        if ignored:
            warnings.append(f"{name}: ignored {', '.join(ignored)}")
        entries[name] = entry
    config = _entries(place, entries, fmt="codex", warnings=warnings)
    for server in config.servers:
        server.tool = tools.get(server.name, server.tool)
    return [config]


def _codex_tool(name: str, listed: Any) -> tuple[str | None, str | None]:
    """The tool a Codex server's ``enabled_tools`` leaves for searches, and a note for
    the import report. One tool named: that one, unless its name says it changes
    things (a configured ``tool:`` is called with every search's text). Several: the
    first search-like one; the others are named in the note."""
    from tributary.engine.config.toolnames import looks_like_search, write_verb

    if not isinstance(listed, list) or not all(isinstance(t, str) and t for t in listed):
        return None, f"{name}: enabled_tools is not a list of tool names; ignored"
    if not listed:
        return None, f"{name}: enabled_tools is empty; Tributary picks a search tool itself"
    if len(listed) == 1:
        verb = write_verb(listed[0])
        if verb is not None:
            return None, (f"{name}: enabled_tools names only '{listed[0]}', named with the write "
                          f"verb '{verb}'; not used for searches (set tool: to choose one)")
        return listed[0], None
    chosen = next((t for t in listed if looks_like_search(t) and write_verb(t) is None), None)
    if chosen is None:
        return None, (f"{name}: none of enabled_tools ({', '.join(listed)}) looks like a search; "
                      "Tributary picks a read-only search tool itself")
    rest = [t for t in listed if t != chosen]
    return chosen, (f"{name}: searches with '{chosen}' of its enabled_tools; not used: "
                    f"{', '.join(rest)}")


def _continue_strings(value: Any, warnings: list[str]) -> Any:
    """Continue's ``${{ secrets.NAME }}`` templates become ``${NAME}`` references."""
    if isinstance(value, str):
        def ref(match: re.Match[str]) -> str:
            warnings.append(f"Continue secret {match.group(1)} became ${{{match.group(1)}}}; "
                            f"set {match.group(1)} in the environment or the keyring")
            return "${" + match.group(1) + "}"
        return _CONTINUE_TEMPLATE.sub(ref, value)
    if isinstance(value, list):
        return [_continue_strings(v, warnings) for v in value]
    if isinstance(value, dict):
        return {k: _continue_strings(v, warnings) for k, v in value.items()}
    return value


def _continue(place: _Place, text: str) -> list[ClientConfig]:
    if place.path.suffix == ".json":  # Continue reads Claude/Cursor-style JSON blocks too
        return _mcp_servers_file(place, text)
    data = yaml.safe_load(text)
    listed = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(listed, list) or not listed:
        return []
    warnings: list[str] = []
    entries: dict[str, Any] = {}
    for i, raw in enumerate(listed):
        if not isinstance(raw, dict) or not raw.get("name"):
            warnings.append(f"skipped mcpServers[{i}]: it has no name")
            continue
        entry = {k: v for k, v in raw.items() if k not in ("name", "connectionTimeout", "requestOptions")}
        entries[str(raw["name"])] = _continue_strings(entry, warnings)
    return [_entries(place, entries, fmt="continue", warnings=warnings)]


_READERS = {
    "claude-desktop": _mcp_servers_file,
    "claude-code": _claude_code,
    "cursor": _mcp_servers_file,
    "vscode": _mcp_servers_file,
    "windsurf": _mcp_servers_file,
    "zed": _zed,
    "codex": _codex,
    "continue": _continue,
}


def choose(found: list[ClientConfig], clients: list[str]) -> list[ClientConfig]:
    """The found configs of the clients named (key or label, any case: ``cursor``,
    ``"Claude Code"``); :class:`ValueError` naming an unknown client."""
    wanted: set[str] = set()
    for given in clients:
        norm = given.strip().lower().replace(" ", "-")
        match = next((k for k, label in CLIENTS.items()
                      if norm in (k, label.lower().replace(" ", "-"))), None)
        if match is None:
            raise ValueError(f"unknown client {given!r}; known: {', '.join(CLIENTS)}")
        wanted.add(match)
    return [c for c in found if c.client in wanted]
