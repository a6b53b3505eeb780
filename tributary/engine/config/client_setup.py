"""Adding Tributary (``tributary serve``) to another MCP client's config file.

The reverse of :mod:`tributary.engine.config.clients`: the same files, at their standard
places (Linux paths shown; macOS and Windows use their app folders):

============  ===============================================  ======================
claude        ``~/.config/Claude/claude_desktop_config.json``  ``mcpServers``
claude-code   ``~/.claude.json`` (user scope)                  ``mcpServers``
cursor        ``~/.cursor/mcp.json``                           ``mcpServers``
vscode        ``~/.config/Code/User/mcp.json``                 ``servers``
windsurf      ``~/.codeium/windsurf/mcp_config.json``          ``mcpServers``
codex         ``$CODEX_HOME/config.toml`` (``~/.codex``)       ``[mcp_servers.NAME]``
zed           ``~/.config/zed/settings.json``                  ``context_servers``
============  ===============================================  ======================

Everything else in the file stays. In JSON the one entry is spliced into the text
(:mod:`tributary.engine.config.jsonc_edit`), so a JSONC file's comments, trailing
commas and layout are kept; in TOML the one table is appended or replaced as text and
the result checked with tomllib.
The file is replaced atomically, the old one kept beside it as ``FILE.bak``. Adding
twice adds once; an entry of that name that differs, or Tributary already listed under
another name, is left alone unless ``force``. Importing the file back never brings the
entry in (:mod:`tributary.engine.config.selfref`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tributary.engine.config.clients import _app_dirs
from tributary.engine.config.jsonc_edit import JsoncEditError, set_member, strip_jsonc
from tributary.engine.config.schema import ServerConfig
from tributary.engine.config.selfref import self_reference
from tributary.engine.errors import TributaryError

TARGETS = ("claude", "claude-code", "cursor", "vscode", "windsurf", "codex", "zed")
ALIASES = {"claude-desktop": "claude", "code": "vscode", "vs-code": "vscode"}
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


class ClientSetupError(TributaryError):
    """The client's file cannot be changed safely; the message says why."""


@dataclass(frozen=True, slots=True)
class Target:
    client: str  # one of TARGETS
    path: Path
    section: str  # the JSON key, or "mcp_servers" for Codex's TOML


@dataclass(slots=True)
class AddResult:
    target: Target
    status: str  # "added" | "replaced" | "present" | "different" | "elsewhere"
    message: str
    backup: Path | None = None


def serve_command(config: Path | None = None) -> tuple[str, list[str]]:
    """How a client starts this Tributary: its own ``tributary`` executable by absolute
    path (the bundle's, the one beside this Python, or the one on PATH), else this
    Python with ``-m tributary``; ``--config FILE`` when one was chosen."""
    extra = ["--config", str(config.expanduser().absolute())] if config is not None else []
    if getattr(sys, "frozen", False):
        return sys.executable, [*extra, "serve"]
    scripts = Path(sys.executable).parent
    for candidate in (scripts / "tributary", scripts / "tributary.exe"):
        if candidate.is_file():
            return str(candidate.absolute()), [*extra, "serve"]
    found = shutil.which("tributary")
    if found is not None:
        return str(Path(found).absolute()), [*extra, "serve"]
    return sys.executable, ["-m", "tributary", *extra, "serve"]


def resolve_client(name: str) -> str:
    """The target key for ``name`` (any case; ``claude-desktop`` means ``claude``)."""
    key = name.strip().lower().replace(" ", "-")
    key = ALIASES.get(key, key)
    if key not in TARGETS:
        raise ClientSetupError(f"unknown client {name!r}; known: {', '.join(TARGETS)}")
    return key


def target_for(client: str, home: Path | None = None, *, platform: str | None = None,
               environ: Mapping[str, str] | None = None) -> Target:
    """Where ``client`` keeps its user-level MCP servers (see the module docstring)."""
    home = Path.home() if home is None else home
    env = os.environ if environ is None else environ
    plat = platform or sys.platform
    apps, xdg = _app_dirs(home, plat, env)
    key = resolve_client(client)
    if key == "claude":
        return Target(key, apps / "Claude" / "claude_desktop_config.json", "mcpServers")
    if key == "claude-code":
        return Target(key, home / ".claude.json", "mcpServers")
    if key == "cursor":
        return Target(key, home / ".cursor" / "mcp.json", "mcpServers")
    if key == "vscode":
        return Target(key, apps / "Code" / "User" / "mcp.json", "servers")
    if key == "windsurf":
        return Target(key, home / ".codeium" / "windsurf" / "mcp_config.json", "mcpServers")
    if key == "codex":
        codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        return Target(key, codex_home / "config.toml", "mcp_servers")
    zed = (apps / "Zed" if plat.startswith("win") else xdg / "zed") / "settings.json"
    return Target(key, zed, "context_servers")


def entry_for(client: str, command: str, args: list[str], env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The server entry in ``client``'s own format; ``env``: variables it is started with."""
    extra = {"env": dict(env)} if env else {}
    if client in ("claude-code", "vscode"):
        return {"type": "stdio", "command": command, "args": list(args), **extra}
    if client == "zed":
        return {"source": "custom", "command": command, "args": list(args), "env": dict(env or {})}
    return {"command": command, "args": list(args), **extra}


PLACE_VARIABLES = ("TRIBUTARY_HOME", "TRIBUTARY_CONFIG")  # where this Tributary's config and data are


def place_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables that place this Tributary's config and data, as absolute paths: a
    client starting ``tributary serve`` without them would serve another home's indexes."""
    env = os.environ if environ is None else environ
    return {name: str(Path(env[name]).expanduser().absolute()) for name in PLACE_VARIABLES if env.get(name)}


def snippet(target: Target, name: str, entry: Mapping[str, Any]) -> str:
    """What would go into the file, as the user would paste it."""
    if target.client == "codex":
        return _toml_table(name, entry)
    return json.dumps({target.section: {name: dict(entry)}}, indent=2) + "\n"


def add_to_client(target: Target, name: str, entry: Mapping[str, Any], *,
                  force: bool = False) -> AddResult:
    """Write ``entry`` as ``name`` into ``target``'s file (see the module docstring)."""
    from tributary.engine.config.save import backup_path, write_atomic

    try:
        text = target.path.read_text(encoding="utf-8-sig") if target.path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ClientSetupError(f"{target.path}: cannot read it: {exc}") from None
    if target.client == "codex":
        servers, new_text = _codex_update(target, text, name, entry)
    else:
        servers, new_text = _json_update(target, text, name, entry)
    current = servers.get(name)
    if current == dict(entry):
        return AddResult(target, "present", f"{target.path} already has '{name}'")
    if not force:
        if current is not None:
            return AddResult(target, "different",
                             f"{target.path} already has a different '{name}' entry; left as it "
                             "is (--force replaces it)")
        if (other := _tributary_elsewhere(servers, name)) is not None:
            return AddResult(target, "elsewhere",
                             f"{target.path} already runs Tributary as '{other}'; nothing added "
                             "(--force adds it anyway)")
    existed = target.path.exists()
    write_atomic(target.path, new_text.encode("utf-8"), backup=existed)
    status = "replaced" if current is not None else "added"
    backup = backup_path(target.path) if existed else None
    return AddResult(target, status, f"{status} '{name}' in {target.path}", backup)


def _json_update(target: Target, text: str, name: str,
                 entry: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    try:
        data = json.loads(strip_jsonc(text)) if text.strip() else {}
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ClientSetupError(f"{target.path}: not valid JSON ({exc}); nothing written") from None
    if not isinstance(data, dict):
        raise ClientSetupError(f"{target.path}: not a JSON object; nothing written")
    section = data.get(target.section, {})
    if not isinstance(section, dict):
        raise ClientSetupError(f"{target.path}: '{target.section}' is not an object; nothing written")
    servers = dict(section)
    try:  # spliced into the text: the user's comments and layout stay
        return servers, set_member(text, target.section, name, dict(entry))
    except (JsoncEditError, RecursionError):
        data[target.section] = {**section, name: dict(entry)}
        return servers, json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _toml_key(name: str) -> str:
    return name if _BARE_KEY.match(name) else json.dumps(name)


def _toml_value(value: Any) -> str:
    """A string, list of strings or table of strings as TOML (JSON's strings are TOML's)."""
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {json.dumps(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def _toml_table(name: str, entry: Mapping[str, Any]) -> str:
    lines = [f"[mcp_servers.{_toml_key(name)}]"]
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def _codex_update(target: Target, text: str, name: str,
                  entry: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ClientSetupError(f"{target.path}: not valid TOML ({exc}); nothing written") from None
    section = data.get("mcp_servers", {})
    if not isinstance(section, dict):
        raise ClientSetupError(f"{target.path}: mcp_servers is not a table; nothing written")
    servers = dict(section)
    table = _toml_table(name, entry)
    if name in servers:
        new_text = _replace_table(text, name, table)
        if new_text is None:
            new_text = text  # written another way (inline): checked below, never guessed
    else:
        new_text = text + ("" if not text or text.endswith("\n") else "\n") + ("\n" if text else "") + table
    try:
        written = tomllib.loads(new_text).get("mcp_servers", {}).get(name)
    except tomllib.TOMLDecodeError:
        written = None
    if written != dict(entry) and servers.get(name) != dict(entry):
        if name in servers:
            raise ClientSetupError(f"{target.path}: '{name}' is written in a form this command "
                                   "does not edit; change it by hand")
        raise ClientSetupError(f"{target.path}: the table could not be added safely; nothing written")
    return servers, new_text


def _replace_table(text: str, name: str, table: str) -> str | None:
    """``text`` with the ``[mcp_servers.NAME]`` table (and its sub-tables) replaced by
    ``table``; None when the file does not hold it as such a table."""
    header = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*(?:" + re.escape(name) + "|"
                        + re.escape(json.dumps(name)) + r")\s*(\]|\.)")
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines):
        line = lines[end].lstrip()
        if line.startswith("[") and not header.match(lines[end]):
            break
        end += 1
    rest = "".join(lines[end:])
    return "".join(lines[:start]) + table + ("\n" + rest if rest else "")


def _tributary_elsewhere(servers: Mapping[str, Any], name: str) -> str | None:
    """The name another entry runs Tributary under, if one does."""
    for other, raw in servers.items():
        if other == name or not isinstance(raw, dict):
            continue
        command, args = raw.get("command"), raw.get("args")
        if isinstance(command, dict):  # Zed's older form: command: {path, args}
            args = command.get("args")
            command = command.get("path")
        if not isinstance(command, str):
            continue
        words = [str(a) for a in args] if isinstance(args, list) else []
        if self_reference(ServerConfig(name=str(other), command=command, args=words)) is not None:
            return str(other)
    return None
