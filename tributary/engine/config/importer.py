"""Importing MCP server definitions from other clients' config files.

Formats read (all JSON; VS Code's files may be JSONC, with comments and trailing commas):

- Claude Desktop ``claude_desktop_config.json`` and Cursor ``mcp.json``:
  ``{"mcpServers": {name: {command, args, env, cwd} | {url, headers}}}``; Cline-style
  ``"disabled": true`` is honoured; Windsurf's ``serverUrl`` is read as ``url``.
- VS Code ``.vscode/mcp.json`` (``{"servers": {...}}``) and user ``settings.json``
  (``{"mcp": {"servers": {...}}}``), each entry with ``type``: ``stdio``, ``http`` or
  ``sse``.

Variables (VS Code's, which Cursor and Claude Code files use too): ``${env:NAME}`` becomes
``${NAME}``, ``${userHome}`` becomes ``${HOME}``, ``${workspaceFolder}`` (and
``${workspaceFolderBasename}``) the project folder the file belongs to (the one holding
``.vscode/mcp.json``, ``.cursor/mcp.json`` or ``.mcp.json``). In a user-level file it has
no value here: it is kept as written and the import report says so, rather than becoming
some other variable nobody sets. ``${input:id}`` becomes a ``${ID}`` reference the user
must set (a warning says so). Any other ``${`` that is not one of ours is escaped, so it
stays literal text.

Legacy SSE endpoints (``type: sse``, or a URL ending in ``/sse`` with no type) are
imported as ``transport: sse`` and stay enabled. Entries that cannot
be used are skipped with the reason, and so is Tributary's own entry (a client
config listing ``tributary serve``: see :mod:`tributary.engine.config.selfref`); names that clash are renamed ``name-2`` …
Reading leaves literal secrets where they are; :func:`secrets_to_keyring_refs` moves them out, and ``tributary config import`` does so
before it saves (:func:`tributary.engine.config.secret_move.move_imported_secrets`).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

from tributary.engine.config.errors import ConfigError, ConfigIssue
from tributary.engine.config.expand import has_reference, references
from tributary.engine.config.jsonc_edit import strip_jsonc
from tributary.engine.config.schema import Config, QueryMode, ServerConfig
from tributary.engine.config.secrets import is_secret_name, looks_like_token
from tributary.engine.config.selfref import self_reference
from tributary.engine.config.validate import validate

MAX_IMPORT_BYTES = 8 * 1024 * 1024

_KNOWN_KEYS = {"command", "args", "env", "cwd", "url", "serverUrl", "headers", "type",
               "transport", "disabled", "enabled", "description"}
_VSCODE_VAR = re.compile(
    r"\$\{(env|input):([^}]*)\}|\$\{(workspaceFolder|workspaceFolderBasename|userHome)\}")
_OUR_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}")


@dataclass(slots=True)
class ImportResult:
    servers: list[ServerConfig] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    format: str = ""  # "mcpServers" (Claude Desktop, Cursor) | "vscode"
    source: str = ""


class _Converter:
    def __init__(self, source: str, workspace: Path | None) -> None:
        self.source = source
        self.workspace = workspace
        self.warnings: list[str] = []
        self.inputs: set[str] = set()
        self.unresolved: set[tuple[str, str]] = set()  # (server, variable) warned about

    def text(self, value: Any, name: str, key: str) -> str | None:
        if isinstance(value, bool) or value is None or isinstance(value, dict | list):
            self.warnings.append(f"{name}: {key} is not text; left out")
            return None
        return self._variables(str(value), name)

    def _variables(self, value: str, name: str) -> str:
        def convert(match: re.Match[str]) -> str:
            kind, ident, builtin = match.group(1), match.group(2), match.group(3)
            if builtin == "userHome":
                return "${HOME}"
            if builtin in ("workspaceFolder", "workspaceFolderBasename"):
                if self.workspace is not None:
                    folder = self.workspace if builtin == "workspaceFolder" else self.workspace.name
                    return str(folder).replace("${", "$${")
                if (name, builtin) not in self.unresolved:
                    self.unresolved.add((name, builtin))
                    self.warnings.append(
                        f"{name}: ${{{builtin}}} has no value here ({self.source} belongs to no "
                        f"project folder); kept as written: set {builtin} in the environment "
                        "or replace it with a path")
                return "${" + builtin + "}"
            var = re.sub(r"[^A-Za-z0-9_]", "_", ident).upper() or "INPUT"
            if var[0].isdigit():
                var = "_" + var
            if kind == "input" and var not in self.inputs:
                self.inputs.add(var)
                self.warnings.append(f"{name}: VS Code input '{ident}' became ${{{var}}}; set {var} in the environment")
            return "${" + var + "}"

        pieces: list[str] = []
        last = 0
        for match in _VSCODE_VAR.finditer(value):
            pieces.append(_escape_foreign(value[last : match.start()]))
            pieces.append(convert(match))
            last = match.end()
        pieces.append(_escape_foreign(value[last:]))
        return "".join(pieces)

    def strings(self, value: Any, name: str, key: str) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.warnings.append(f"{name}: {key} is not a list; left out")
            return []
        out = [self.text(item, name, f"{key}[{i}]") for i, item in enumerate(value)]
        return [item for item in out if item is not None]

    def mapping(self, value: Any, name: str, key: str) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.warnings.append(f"{name}: {key} is not an object; left out")
            return {}
        out: dict[str, str] = {}
        for k, v in value.items():
            text = self.text(v, name, f"{key}.{k}")
            if text is not None:
                out[str(k)] = text
        return out

    def server(self, name: str, entry: Any) -> ServerConfig | None:
        if not isinstance(entry, dict):
            self.warnings.append(f"skipped '{name}': its definition is not an object")
            return None
        kind = str(entry.get("type") or entry.get("transport") or "").lower()
        url = entry.get("url") or entry.get("serverUrl")
        command = entry.get("command")
        ignored = sorted(set(entry) - _KNOWN_KEYS)
        if ignored:
            self.warnings.append(f"{name}: ignored {', '.join(ignored)}")
        enabled = not entry.get("disabled", False) and entry.get("enabled", True) is not False
        description = str(entry.get("description") or "")
        if kind in ("", "stdio") and command:
            text = self.text(command, name, "command")
            if not text:
                self.warnings.append(f"skipped '{name}': command is not text")
                return None
            cwd = self.text(entry["cwd"], name, "cwd") if entry.get("cwd") else None
            args = self.strings(entry.get("args"), name, "args")
            server = ServerConfig(name=name, transport="stdio", command=text, args=args,
                                  env=self.mapping(entry.get("env"), name, "env"),
                                  cwd=cwd, enabled=enabled, description=description)
            return replace(server, **known_settings(text, args))
        if kind in ("", "http", "streamable-http", "streamablehttp", "sse") and url:
            text = self.text(url, name, "url")
            if not text:
                self.warnings.append(f"skipped '{name}': url is not text")
                return None
            sse = kind == "sse" or (kind == "" and text.split("?", 1)[0].rstrip("/").endswith("/sse"))
            return ServerConfig(name=name, transport="sse" if sse else "http", url=text,
                                headers=self.mapping(entry.get("headers"), name, "headers"),
                                enabled=enabled, description=description)
        if kind and kind not in ("stdio", "http", "streamable-http", "streamablehttp", "sse"):
            self.warnings.append(f"skipped '{name}': unsupported type '{kind}'")
        else:
            self.warnings.append(f"skipped '{name}': it has neither a command nor a url")
        return None


# Packages whose search tool matches its query as one substring: a whole question
# finds nothing there, its content words can (ServerConfig.query_mode).
SUBSTRING_SEARCH_PACKAGES = ("@modelcontextprotocol/server-memory",)


# Packages whose search tool matches file names against a glob within a folder it must
# be given: the first folder the server is allowed (its first argument after the package).
NAME_GLOB_PACKAGES = {"@modelcontextprotocol/server-filesystem": "search_files"}


# Packages that grep the folder they are given, with their search tool: beside an index
# of the same code, their literal matches outvote the index's ranking at equal weight,
# so they are given a quarter of it (the user's weight, when given, wins).
GREP_PACKAGES = {"mcp-ripgrep": "search"}
GREP_WEIGHT = 0.25


# The command each of those packages installs (``npm install -g``): a server started by
# it, by name or by path, is that package.
PACKAGE_COMMANDS = {
    "@modelcontextprotocol/server-memory": "mcp-server-memory",
    "@modelcontextprotocol/server-filesystem": "mcp-server-filesystem",
    "mcp-ripgrep": "mcp-ripgrep",
}


def _is_package(word: str, package: str) -> bool:
    installed = PACKAGE_COMMANDS.get(package)
    command = word.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".cmd")
    return (word == package or word.startswith(package + "@") or word.endswith(package + "/dist/index.js")
            or command == installed)


def _query_mode(command: str, args: list[str]) -> QueryMode:
    """``keywords`` for a server known to search by substring, else ``full``."""
    known = any(_is_package(w, p) for w in [command, *args] for p in SUBSTRING_SEARCH_PACKAGES)
    return "keywords" if known else "full"


def _name_search(command: str, args: list[str]) -> tuple[str, str] | None:
    """``(tool, folder)`` for a server known to search file names by glob, so that it is
    asked with ``query_mode: glob`` in its first allowed folder (None: not such a server,
    or no folder given)."""
    words = [command, *args]
    for position, word in enumerate(words):
        for package, tool in NAME_GLOB_PACKAGES.items():
            if _is_package(word, package):
                folders = [w for w in words[position + 1 :] if not w.startswith("-")]
                return (tool, folders[0]) if folders else None
    return None


def known_settings(command: str, args: list[str]) -> dict[str, Any]:
    """How a server known by its package is asked, when its config does not say:
    ``query_mode`` for a substring search; ``tool``, ``arguments`` and ``query_mode``
    for a name search in the first folder it is allowed; ``tool`` and ``weight`` for a
    grep server (its folder is the user's to give); {} for any other server."""
    found = _name_search(command, args)
    if found is not None:
        tool, folder = found
        return {"tool": tool, "arguments": {"path": folder}, "query_mode": "glob"}
    for package, tool in GREP_PACKAGES.items():
        if any(_is_package(word, package) for word in [command, *args]):
            return {"tool": tool, "weight": GREP_WEIGHT}
    mode = _query_mode(command, args)
    return {"query_mode": mode} if mode != "full" else {}


def _escape_foreign(text: str) -> str:
    """Escape every ``${`` that is not one of our references, so it stays literal."""
    out: list[str] = []
    i = 0
    while True:
        j = text.find("${", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        match = _OUR_REF.match(text, j)
        if match:
            out.append(match.group(0))
            i = match.end()
        else:
            out.append("$${")
            i = j + 2


def _servers_section(data: Any) -> tuple[str, Mapping[str, Any]] | None:
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("mcpServers"), dict):
        return "mcpServers", data["mcpServers"]
    if isinstance(data.get("servers"), dict):
        return "vscode", data["servers"]
    mcp = data.get("mcp")
    if isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict):
        return "vscode", mcp["servers"]
    return None


def unique_name(name: str, taken: Iterable[str]) -> str:
    """``name``, or ``name-2``, ``name-3`` … whichever is free."""
    used = set(taken)
    if name not in used:
        return name
    n = 2
    while f"{name}-{n}" in used:
        n += 1
    return f"{name}-{n}"


def parse_mcp_servers(
    text: str,
    *,
    source: str = "<import>",
    existing: Iterable[str] = (),
    workspace: Path | None = None,
) -> ImportResult:
    """Servers from the text of an ``mcpServers``/VS Code file (see the module docstring).
    Raises :class:`ConfigError` if the text is not JSON or holds no servers section."""
    try:
        data = json.loads(strip_jsonc(text))
    except (json.JSONDecodeError, RecursionError) as exc:
        line = getattr(exc, "lineno", None)
        message = getattr(exc, "msg", str(exc))
        raise ConfigError([ConfigIssue(source, "", line, f"not valid JSON: {message}")]) from exc
    section = _servers_section(data)
    if section is None:
        raise ConfigError([ConfigIssue(source, "", None, "no MCP servers found: expected an 'mcpServers', 'servers' or 'mcp.servers' object")])
    fmt, entries = section
    return convert_entries(entries, fmt=fmt, source=source, existing=existing, workspace=workspace)


def convert_entries(
    entries: Mapping[str, Any],
    *,
    fmt: str,
    source: str = "<import>",
    existing: Iterable[str] = (),
    workspace: Path | None = None,
    warnings: Iterable[str] = (),
) -> ImportResult:
    """Servers from ``{name: entry}`` in the ``mcpServers`` shape (other clients'
    formats are brought to it first, see :mod:`tributary.engine.config.clients`); each is
    validated, and names in ``existing`` are renamed ``name-2`` …"""
    converter = _Converter(source, workspace)
    converter.warnings.extend(warnings)
    taken = set(existing)
    result = ImportResult(format=fmt, source=source)
    for raw_name, entry in entries.items():
        name = " ".join(str(raw_name).split())
        if not name:
            converter.warnings.append("skipped a server with an empty name")
            continue
        server = converter.server(name, entry)
        if server is None:
            continue
        if (itself := self_reference(server)) is not None:
            converter.warnings.append(f"skipped '{name}': {itself} (it would run itself as a source)")
            continue
        problems = validate(Config(servers={name: server}), file=source)
        if problems:
            reasons = "; ".join(f"{p.key_path.removeprefix(f'servers.{name}.')}: {p.message}" for p in problems)
            converter.warnings.append(f"skipped '{name}': {reasons}")
            continue
        final = unique_name(name, taken)
        if final != name:
            converter.warnings.append(f"'{name}' already exists; imported as '{final}'")
            server = replace(server, name=final)
        taken.add(final)
        result.servers.append(server)
    result.warnings = converter.warnings
    return result


def read_text(path: Path) -> str:
    """A client's config file as text, or :class:`ConfigError` saying why not."""
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError([ConfigIssue(source, "", None, f"cannot read the file: {exc.strerror or exc}")]) from exc
    if len(raw) > MAX_IMPORT_BYTES:
        raise ConfigError([ConfigIssue(source, "", None, "the file is too large to be an MCP config")])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError([ConfigIssue(source, "", None, f"not UTF-8 text (byte {exc.start})")]) from exc


def workspace_of(path: Path, home: Path | None = None) -> Path | None:
    """The project folder a client's config file belongs to, which its
    ``${workspaceFolder}`` means: the folder holding ``.vscode/mcp.json``,
    ``.cursor/mcp.json`` or ``.mcp.json``. None for a user-level file (Cursor's own
    ``~/.cursor/mcp.json`` included): there the variable is whatever project is open."""
    path = path.absolute()
    if path.name == ".mcp.json":
        return path.parent
    if path.name != "mcp.json" or path.parent.name not in (".vscode", ".cursor"):
        return None
    folder = path.parent.parent
    if path.parent.name == ".cursor":
        home = Path.home() if home is None else home
        try:
            if folder.resolve() == home.resolve():
                return None
        except OSError:
            return None
    return folder


def import_mcp_servers(path: Path, *, existing: Config | None = None) -> ImportResult:
    """Read another MCP client's config file. Names already in ``existing`` are renamed;
    ``${workspaceFolder}`` is the file's project folder (:func:`workspace_of`), if any."""
    source = str(path)
    text = read_text(path)
    workspace = workspace_of(path)
    names = existing.servers.keys() if existing is not None else ()
    return parse_mcp_servers(text, source=source, existing=names, workspace=workspace)


def same_server(a: ServerConfig, b: ServerConfig) -> bool:
    """``a`` and ``b`` start the same server: the same command and arguments, or the same
    URL. Names, descriptions, timeouts and how secrets are written do not count, so an
    entry imported before (its secrets since moved to the keyring) is recognised. A
    package fetched by a launcher (``npx -y @modelcontextprotocol/server-filesystem DIR``,
    ``uvx mcp-server-git``) is the same server as the command it installs, by name or
    path, with the same arguments (``_launched``)."""
    if a.transport == "stdio" or b.transport == "stdio":
        if a.transport != b.transport or a.command is None or b.command is None:
            return False
        first, second = (a.command, list(a.args)), (b.command, list(b.args))
        if first[0] != second[0] and (_launcher(first[0]) or _launcher(second[0])):
            first, second = _launched(*first), _launched(*second)
        return (first[0], len(first[1])) == (second[0], len(second[1])) and all(
            _same_text(x, y) for x, y in zip(first[1], second[1], strict=True))
    return _same_text((a.url or "").rstrip("/"), (b.url or "").rstrip("/"))


# Commands that fetch a package and run it; ``pipx run`` and ``pnpm dlx`` name the
# package after their first word. Only flags without a value may come before it.
LAUNCHERS = {"npx": "", "bunx": "", "pnpx": "", "uvx": "", "pipx": "run", "pnpm": "dlx"}
LAUNCHER_FLAGS = {"-y", "--yes", "-q", "--quiet", "--silent"}


def _program(command: str) -> str:
    """A command's program name: its last path part, without a Windows suffix."""
    name = command.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".cmd", ".exe"):
        name = name.removesuffix(suffix)
    return name


def _launcher(command: str) -> bool:
    return _program(command) in LAUNCHERS


def _launched(command: str, args: list[str]) -> tuple[str, list[str]]:
    """The program a command line runs and its arguments: for a launcher, the command
    its package installs (``PACKAGE_COMMANDS``, else the package's own name without a
    version); for a command given by path, its name. Left as it is when the launcher's
    options are not known to take no value."""
    program = _program(command)
    if program not in LAUNCHERS:
        return program, args
    rest = list(args)
    if LAUNCHERS[program]:
        if rest[:1] != [LAUNCHERS[program]]:
            return command, args
        rest = rest[1:]
    while rest and rest[0] in LAUNCHER_FLAGS:
        rest = rest[1:]
    if not rest or rest[0].startswith("-"):
        return command, args
    package = rest[0].split("==", 1)[0]  # uvx name==1.2
    at = package.rfind("@")  # npx @scope/name@1.2, uvx name@1.2
    if at > 0 and "/" not in package[at:]:
        package = package[:at]
    return PACKAGE_COMMANDS.get(package, package), rest[1:]


def _same_text(a: str, b: str) -> bool:
    """Equal, or equal but for the secrets one holds as ``${keyring:NAME}`` where the other
    has them written out (each reference stands for any non-empty text)."""
    if a == b:
        return True
    for written, literal in ((a, b), (b, a)):
        refs = [ref for ref in references(written) if ref.keyring]
        if refs:
            pattern, at = "", 0
            for ref in refs:
                pattern += re.escape(written[at:ref.start]) + ".+?"
                at = ref.end
            if re.fullmatch(pattern + re.escape(written[at:]), literal, re.DOTALL):
                return True
    return False


def configured_as(config: Config, server: ServerConfig) -> str | None:
    """The name ``config`` already has ``server`` under (see :func:`same_server`), if any."""
    if (present := config.servers.get(server.name)) is not None and same_server(present, server):
        return server.name
    return next((name for name, s in config.servers.items() if same_server(s, server)), None)


def twin_of(config: Config, server: ServerConfig) -> str | None:
    """Another enabled server of ``config`` that answers exactly as ``server`` (enabled)
    would: the same server (``same_server``) asked with the same tool and arguments. Both
    would answer every search, and their hits would count as two sources agreeing."""
    if not server.enabled:
        return None
    return next((name for name, other in config.servers.items()
                 if name != server.name and other.enabled and same_server(other, server)
                 and (other.tool, other.arguments) == (server.tool, server.arguments)), None)


def already_configured(config: Config, server: ServerConfig) -> bool:
    """``config`` already has ``server`` (under any name): importing again adds nothing,
    and the same server copied into several clients is imported once."""
    return configured_as(config, server) is not None


def merge_imported(config: Config, servers: Iterable[ServerConfig]) -> Config:
    """A copy of ``config`` with ``servers`` added (renamed ``name-2`` … on a clash)."""
    merged = copy.deepcopy(config)
    for server in servers:
        if self_reference(server) is not None or already_configured(merged, server):
            continue  # never Tributary's own entry, nor one it has already
        name = unique_name(server.name, merged.servers)
        merged.servers[name] = replace(copy.deepcopy(server), name=name)
    return merged


def _env_name(*parts: str) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "_", "_".join(parts)).strip("_").upper()
    return name if name and not name[0].isdigit() else f"_{name}"


def _free_name(first: str, second: str, value: str, chosen: Mapping[str, str],
               taken: Callable[[str], str | None]) -> str:
    """A name for ``value``: ``first``, else ``second``, else ``second_2`` … — one that
    holds nothing yet or already holds this very value."""
    def free(name: str) -> bool:
        current = chosen.get(name)
        if current is None:
            current = taken(name)
        return current is None or current == value

    if free(first):
        return first
    candidates = (second if n == 1 else f"{second}_{n}" for n in range(1, 1000))
    return next(name for name in candidates if free(name))


def _move_literal_secrets(
    servers: Iterable[ServerConfig], reference: Callable[[str], str],
    taken: Callable[[str], str | None],
) -> tuple[list[ServerConfig], dict[str, str]]:
    """Literal secrets replaced by ``reference(name)``: env values and headers that the
    secret rule of :mod:`tributary.engine.config.secrets` calls secret (a secret-looking
    name, or a value shaped like a token under any name), the value of a secret-looking
    flag in ``args`` (``--api-key=VALUE``, or the argument after ``--token``), a
    token-shaped argument, and the password and secret query parameters of URLs (``url``
    or an argument). The new servers and the values to keep elsewhere (name → value)."""
    moved: dict[str, str] = {}
    out: list[ServerConfig] = []

    def keep(first: str, second: str, plain: str) -> str:
        var = _free_name(first, second, plain, moved, taken)
        moved[var] = plain
        return reference(var)

    for server in servers:
        env = dict(server.env)
        for key, value in server.env.items():
            if _literal_secret(key, value):
                plain = value.replace("$${", "${")
                own = key if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else _env_name(key)
                env[key] = keep(own, _env_name(server.name, key), plain)
        headers = dict(server.headers)
        for key, value in server.headers.items():
            if _literal_secret(key, value):
                scheme = re.match(r"^\s*(bearer|basic|token)\s+", value, re.IGNORECASE)
                prefix = scheme.group(0) if scheme else ""
                plain = value[len(prefix):].replace("$${", "${")
                name = _env_name(server.name, key)
                headers[key] = prefix + keep(name, name, plain)

        def in_url(text: str, server: ServerConfig = server) -> str:
            for label, start, end in reversed(_url_secret_spans(text)):
                name = _env_name(server.name, label)
                text = text[:start] + keep(name, name, text[start:end].replace("$${", "${")) + text[end:]
            return text

        args = list(server.args)
        for i, arg in enumerate(server.args):
            flag = server.args[i - 1] if i else ""
            if has_reference(arg) or not arg:
                continue
            if flag.startswith("-") and "=" not in flag and is_secret_name(flag) \
                    and not arg.startswith(("-", *_PATH_START)):
                name = _env_name(server.name, flag)
                args[i] = keep(name, name, arg.replace("$${", "${"))
            elif arg.startswith("-") and "=" in arg:
                option, value = arg.split("=", 1)
                if value and not has_reference(value) and not value.startswith(_PATH_START) and (
                        is_secret_name(option) or looks_like_token(value.replace("$${", "${"))):
                    name = _env_name(server.name, option)
                    args[i] = f"{option}={keep(name, name, value.replace('$${', '${'))}"
                elif "://" in value:
                    args[i] = f"{option}={in_url(value)}"
            elif looks_like_token(arg.replace("$${", "${")):
                name = _env_name(server.name, "TOKEN")
                args[i] = keep(name, name, arg.replace("$${", "${"))
            elif "://" in arg:
                args[i] = in_url(arg)
        url = in_url(server.url) if server.url else server.url
        out.append(replace(server, env=env, headers=headers, args=args, url=url))
    return out, moved


_PATH_START = ("/", "~", ".")  # a key file's path is no secret itself
_URL_START = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _url_secret_spans(url: str) -> list[tuple[str, int, int]]:
    """Where ``url`` holds literal secrets, as written (percent-encoding kept): the
    password of its user info (``PASSWORD``) and the value of each query parameter with
    a secret-looking name or a token-shaped value (named by the parameter). In order."""
    start = _URL_START.match(url)
    if start is None:
        return []
    spans: list[tuple[str, int, int]] = []
    authority_end = len(url)
    for mark in "/?#":
        found = url.find(mark, start.end())
        if found >= 0:
            authority_end = min(authority_end, found)
    at = url.rfind("@", start.end(), authority_end)
    colon = url.find(":", start.end(), at) if at >= 0 else -1
    if colon >= 0 and colon + 1 < at:
        spans.append(("PASSWORD", colon + 1, at))
    query_at = url.find("?", authority_end)
    if query_at >= 0 and (url.find("#", authority_end) < 0 or query_at < url.find("#", authority_end)):
        end = url.find("#", query_at)
        end = len(url) if end < 0 else end
        pos = query_at + 1
        for pair in url[query_at + 1:end].split("&"):
            key, eq, value = pair.partition("=")
            if eq and value:
                plain = unquote_plus(value).replace("$${", "${")
                if is_secret_name(unquote_plus(key)) or looks_like_token(plain):
                    spans.append((unquote_plus(key), pos + len(key) + 1, pos + len(pair)))
            pos += len(pair) + 1
    return [span for span in spans if not has_reference(url[span[1]:span[2]])]


def _literal_secret(key: str, value: str) -> bool:
    if not value or has_reference(value):
        return False
    return is_secret_name(key) or looks_like_token(value.replace("$${", "${"))


def secrets_to_keyring_refs(
    servers: Iterable[ServerConfig], stored: Callable[[str], str | None],
) -> tuple[list[ServerConfig], dict[str, str]]:
    """Replace literal secrets (env values and headers under secret-looking names, secret
    flag values and URL passwords or keys in args and url) with
    ``${keyring:NAME}`` references; ``stored`` reads the keyring, so a name that already
    holds another value is never reused.
    Returns the new servers and the secrets to store (name → value) before saving."""
    return _move_literal_secrets(servers, lambda name: "${keyring:" + name + "}", stored)

