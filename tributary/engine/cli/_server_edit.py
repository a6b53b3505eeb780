"""``tributary servers add``, ``set`` and ``remove``: one server into, changed in or out
of the config file from the command line, as the app's server form does.

The change is made under the config file's lock to what is on disk then, validated
and written atomically with a backup (``tributary.engine.config.save.update_config``),
so a running app or ``serve`` picks it up by its own reload. A literal secret given
with ``--env`` or ``--header`` goes to the keyring, never into the file, as an import's
does.
"""

from __future__ import annotations

import argparse
import copy
import re
from collections.abc import Callable
from typing import Any, get_args

import yaml

from tributary.engine.cli.common import config_path, fail
from tributary.engine.config.errors import ConfigError
from tributary.engine.config.importer import known_settings, twin_of
from tributary.engine.config.load import load_config
from tributary.engine.config.schema import (
    REMOTE_TRANSPORTS,
    Config,
    QueryMode,
    ServerConfig,
    Transport,
)
from tributary.engine.config.secrets import server_summary
from tributary.engine.config.validate import BUILTIN_SERVER_NAMES
from tributary.engine.errors import TributaryError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# Settings ``servers set --reset`` puts back to their defaults.
RESETTABLE = ("tool", "query_mode", "arguments", "cwd", "timeout", "weight")
# What a built-in server's tuning entry may hold besides its name (``ServerConfig.tunes_builtin``).
_TUNABLE = ("timeout", "weight", "enabled")


class _Refused(TributaryError):
    """A change the config as found under its lock does not allow; nothing written."""


def register(servers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add = servers.add_parser(
        "add", help="add an MCP server to the config",
        usage="tributary servers add NAME [options] -- COMMAND [ARG ...]\n"
              "       tributary servers add NAME --url URL [options]",
        description="Add a server that Tributary starts (`tributary servers add NAME "
        "[options] -- COMMAND [ARG ...]`) or one it reaches at a URL (`tributary servers add "
        "NAME --url URL [options]`). The config is validated and saved atomically, with a backup; a "
        "running app or `tributary serve` picks it up. Check it with `tributary servers "
        "test NAME`. A package known to search otherwise than by question (server-filesystem "
        "by file-name glob in its first folder, server-memory by words, mcp-ripgrep by its "
        "search tool at weight 0.25, so its literal matches do not outvote an index) is set "
        "to be asked so unless --tool, --query-mode or --arguments is given.")
    add.add_argument("name", help="its name: letters, digits, '-', '_' or '.'")
    add.set_defaults(command=[])  # the program after ``--`` (``tributary.engine.cli.main``)
    add.add_argument("--url", help="the server's address (streamable HTTP, or SSE with --transport sse)")
    add.add_argument("--transport", choices=REMOTE_TRANSPORTS, default=None,
                     help="for --url: http (default) or sse")
    _setting_options(add)
    add.add_argument("--disabled", action="store_true", help="add it switched off")
    add.set_defaults(func=run_add)

    change = servers.add_parser(
        "set", help="change a configured server's settings",
        usage="tributary servers set NAME [options] [-- COMMAND [ARG ...]]",
        description="Change the settings named and keep the others (`tributary servers set rg "
        "--timeout 10 --arguments '{path: /src}'`); a command after -- replaces the program "
        "it starts. For the built-in servers (files, tasks) only --timeout, --weight, "
        "--enable and --disable apply. Saved as `servers add` saves.")
    change.add_argument("name")
    change.set_defaults(command=[])  # the program after ``--`` (``tributary.engine.cli.main``)
    change.add_argument("--url", help="a new address, for a server reached at a URL")
    _setting_options(change)
    change.add_argument("--unset-env", action="append", default=[], metavar="KEY",
                        help="remove one environment variable (repeatable)")
    switch = change.add_mutually_exclusive_group()
    # ``--enabled``/``--disabled`` too: ``servers add`` spells its switch ``--disabled``.
    switch.add_argument("--enable", "--enabled", dest="enabled", action="store_const", const=True,
                        default=None, help="let searches ask it")
    switch.add_argument("--disable", "--disabled", dest="enabled", action="store_const", const=False,
                        help="switch it off (kept in the config)")
    change.add_argument("--reset", action="append", default=[], choices=RESETTABLE, metavar="SETTING",
                        help=f"put a setting back to its default (repeatable: {', '.join(RESETTABLE)})")
    change.set_defaults(func=run_set)

    remove = servers.add_parser(
        "remove", help="remove an MCP server from the config",
        description="Remove a server from the config and from the routing rules that ask it; "
        "a rule that asks only that server is left for you to change first.")
    remove.add_argument("name")
    remove.set_defaults(func=run_remove)


def _setting_options(parser: argparse.ArgumentParser) -> None:
    """The settings ``servers add`` and ``servers set`` both take."""
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="an environment variable for the server (repeatable; ${VAR} is read "
                        "from your environment when it starts)")
    parser.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="an HTTP header for a --url server (repeatable)")
    parser.add_argument("--cwd", metavar="DIR", help="working directory of the started server")
    parser.add_argument("--timeout", type=float, metavar="S", help="seconds a search waits for its answer")
    parser.add_argument("--weight", type=float, help="its share in the fused ranking (default 1)")
    parser.add_argument("--tool", help="the tool that answers searches (default: auto-detected)")
    parser.add_argument("--query-mode", choices=get_args(QueryMode), default=None,
                        help="what the tool is sent: the whole question, each of its words in turn, a "
                             "glob, or a regex of its names")
    parser.add_argument("--arguments", metavar="YAML",
                        help="fixed tool arguments as a YAML mapping, e.g. '{path: /srv/docs}'")


def run_add(args: argparse.Namespace) -> int:
    try:
        server, known = _server(args)
    except ValueError as exc:
        return fail(str(exc))
    try:
        current = load_config(config_path(args))
    except ConfigError as exc:
        print(exc)
        return 1
    if args.name in current.servers:  # checked before any secret goes to the keyring
        return fail(f"a server named '{args.name}' is already configured "
                    f"({server_summary(current.servers[args.name])}); choose another name, "
                    f"or `tributary servers remove {args.name}` first")
    from tributary.engine.config.secret_move import move_imported_secrets

    [server], secrets_note = move_imported_secrets([server])

    def added(config: Config) -> Config:
        if server.name in config.servers:  # written by another process meanwhile
            raise _Refused(f"a server named '{server.name}' was added meanwhile; nothing changed")
        changed = copy.deepcopy(config)
        changed.servers[server.name] = server
        return changed

    saved = _saved(args, added, "added")
    if isinstance(saved, int):
        return saved
    _, after = saved
    print(f"+ {server.name} ({server.transport}): {server_summary(after.servers[server.name])}")
    if (twin := twin_of(after, after.servers[server.name])) is not None:
        print(f"  note: '{twin}' starts the same server with the same tool: both answer every "
              f"search, and their hits count as two sources agreeing (remove one with "
              f"`tributary servers remove NAME`)")
    if known:
        print(f"  asked the way this package searches: {_asking(known)} "
              f"(change it with `tributary servers set {server.name}`)")
    if secrets_note is not None:
        print(secrets_note)
    print(f"saved to {after.path}; check it with `tributary servers test {server.name}`")
    return 0


def run_set(args: argparse.Namespace) -> int:
    try:
        asked = _changes(args)
    except ValueError as exc:
        return fail(str(exc))
    if not asked and not args.reset:
        return fail(f"nothing to change: name a setting (tributary servers set {args.name} "
                    "--timeout 10), or see `tributary servers set --help`")
    try:
        current = load_config(config_path(args))
    except ConfigError as exc:
        print(exc)
        return 1
    try:
        builtin = _builtin_default(current, args.name)
        if builtin is not None:
            _check_tunable(args.name, asked, args.reset)
    except ValueError as exc:
        return fail(str(exc))
    secrets_note = None
    if "env" in asked or "headers" in asked:  # moved before the lock, as `add` does
        from tributary.engine.config.secret_move import move_imported_secrets

        holder = ServerConfig(name=args.name, command="-", env=asked.get("env", {}),
                              headers=asked.get("headers", {}))
        [moved], secrets_note = move_imported_secrets([holder])
        asked = {**asked, **({"env": moved.env} if "env" in asked else {}),
                 **({"headers": moved.headers} if "headers" in asked else {})}

    was: list[ServerConfig] = []  # the entry as found under the lock, or the untuned built-in

    def changed(config: Config) -> Config:
        default = _builtin_default(config, args.name)
        untuned = _tuning(default) if default is not None else ServerConfig(name=args.name)
        entry = config.servers.get(args.name)
        if entry is None:
            if default is None and args.name in BUILTIN_SERVER_NAMES:
                raise _Refused(f"'{args.name}' is a built-in server, run once a repository is "
                               "indexed (`tributary index add PATH`); none is yet")
            if default is None:
                known = ", ".join(sorted(config.servers)) or "none"
                raise _Refused(f"no server named '{args.name}' in the config (configured: {known}); "
                               f"add it with `tributary servers add {args.name}`")
            entry = untuned
        was[:] = [entry]
        updated = copy.deepcopy(config)
        updated.servers[args.name] = _applied(copy.deepcopy(entry), asked, args.reset, args.unset_env,
                                              default=untuned)
        return updated

    saved = _saved(args, changed, "changed")
    if isinstance(saved, int):
        return saved
    _, after = saved
    differences = _differences(was[0], after.servers[args.name])
    print(f"~ {args.name}: {'; '.join(differences) or 'no setting changed'}")
    if secrets_note is not None:
        print(secrets_note)
    print(f"saved to {after.path}; check it with `tributary servers test {args.name}`")
    return 0


def _changes(args: argparse.Namespace) -> dict[str, Any]:
    """The settings ``servers set`` was given, as ServerConfig fields; ValueError saying
    which argument is wrong."""
    asked: dict[str, Any] = {}
    command = list(args.command)
    if args.url and command:
        raise ValueError("give either --url or a command after --, not both")
    if command:
        asked.update(command=command[0], args=command[1:])
    if args.url:
        asked["url"] = args.url
    if args.env:
        asked["env"] = _pairs(args.env, "=", "--env", "KEY=VALUE")
    if args.header:
        asked["headers"] = _pairs(args.header, ":", "--header", "NAME: VALUE")
    for name in ("cwd", "tool"):  # ``--tool ""`` reads as "auto-detect again"
        if getattr(args, name) == "":
            raise ValueError(f"--{name} '': to go back to the default, give --reset {name}")
    for name in ("cwd", "timeout", "weight", "tool", "query_mode", "enabled"):
        if (value := getattr(args, name)) is not None:
            asked[name] = value
    if args.arguments is not None:
        asked["arguments"] = _mapping(args.arguments)
    if args.unset_env:
        asked.setdefault("env", {})
    clash = sorted(set(args.reset) & set(asked))
    if clash:
        raise ValueError(f"--reset {clash[0]} and a new value for it: give one of the two")
    return asked


def _builtin_default(config: Config, name: str) -> ServerConfig | None:
    """The built-in server ``name`` as it runs untuned, if ``name`` is one the config at
    most tunes; else None."""
    from tributary.engine.repos.builtins import with_builtin_servers

    entry = config.servers.get(name)
    if entry is not None and not entry.tunes_builtin:
        return None
    bare = copy.deepcopy(config)
    bare.servers.pop(name, None)
    return with_builtin_servers(bare).servers.get(name)


def _tuning(builtin: ServerConfig) -> ServerConfig:
    """An entry tuning ``builtin`` that changes nothing yet."""
    return ServerConfig(name=builtin.name, builtin=builtin.builtin, command=None,
                        **{key: getattr(builtin, key) for key in _TUNABLE})


def _check_tunable(name: str, asked: dict[str, Any], reset: list[str]) -> None:
    other = sorted((set(asked) | set(reset)) - set(_TUNABLE))
    if other:
        option = "a command" if other[0] in ("command", "args") else "--" + other[0].replace("_", "-")
        raise ValueError(f"'{name}' is a built-in server: only --timeout, --weight, --enable and "
                         f"--disable apply to it, not {option}")


def _applied(
    server: ServerConfig, asked: dict[str, Any], reset: list[str], unset_env: list[str], *,
    default: ServerConfig,
) -> ServerConfig:
    """``server`` with ``reset`` settings as in ``default`` and ``asked`` ones applied."""
    for key in reset:
        setattr(server, key, copy.deepcopy(getattr(default, key)))
    for key, value in asked.items():
        if key in ("env", "headers"):
            getattr(server, key).update(value)
        else:
            setattr(server, key, value)
    for key in unset_env:
        server.env.pop(key, None)
    # A server started by command and one reached at a URL take different settings:
    # switching drops the other kind's (the summary lists them as removed).
    if "command" in asked and server.transport != "stdio":
        server.url, server.headers, server.transport = None, {}, "stdio"
    elif "url" in asked and server.transport == "stdio":
        server.command, server.args, server.env, server.cwd = None, [], {}, None
        server.transport = "http"
    return server


def _differences(before: ServerConfig, after: ServerConfig) -> list[str]:
    """``timeout 3.0 → 10.0``, one per setting that changed; secret values never shown."""
    from dataclasses import fields

    said: list[str] = []
    for item in fields(ServerConfig):
        old, new = getattr(before, item.name), getattr(after, item.name)
        if old == new or item.name == "health":
            continue
        if item.name in ("env", "headers"):
            for key in sorted(set(old) | set(new)):
                if key not in new:
                    said.append(f"{item.name} {key} removed")
                elif old.get(key) != new[key]:
                    said.append(f"{item.name} {key} set")
        else:
            said.append(f"{item.name} {_shown(old)} → {_shown(new)}")
    return said


def _shown(value: Any) -> str:
    if value is None or value == [] or value == {}:
        return "(none)"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def run_remove(args: argparse.Namespace) -> int:
    def removed(config: Config) -> Config:
        if args.name not in config.servers:
            known = ", ".join(sorted(config.servers)) or "none"
            raise _Refused(f"no server named '{args.name}' in the config (configured: {known})")
        only = [rule.name for rule in config.routing.rules if rule.servers == [args.name]]
        if only:
            raise _Refused(
                f"routing rule{'s' if len(only) > 1 else ''} {', '.join(repr(n) for n in only)} "
                f"ask{'' if len(only) > 1 else 's'} only '{args.name}': remove or change "
                f"{'them' if len(only) > 1 else 'it'} first (nothing changed)")
        changed = copy.deepcopy(config)
        del changed.servers[args.name]
        for rule in changed.routing.rules:
            rule.servers = [name for name in rule.servers if name != args.name]
        if changed.routing.fallback:
            changed.routing.fallback = [n for n in changed.routing.fallback if n != args.name] or None
        return changed

    saved = _saved(args, removed, "removed")
    if isinstance(saved, int):
        return saved
    before, after = saved
    rules = [rule.name for rule in before.routing.rules if args.name in rule.servers]
    print(f"- {args.name}: {server_summary(before.servers[args.name])}")
    if rules:
        print(f"no longer asked by routing rule{'s' if len(rules) > 1 else ''}: {', '.join(rules)}")
    if before.routing.fallback and args.name in before.routing.fallback:
        print("no longer a fallback server" + ("" if after.routing.fallback else
                                               ": questions no rule matches now ask every enabled server"))
    print(f"saved to {after.path}")
    return 0


def _saved(
    args: argparse.Namespace, change: Callable[[Config], Config], done: str
) -> tuple[Config, Config] | int:
    """The config file (before, after) ``change``, made under its lock and saved; else
    the exit status, having said why nothing was ``done``."""
    from tributary.engine.config.save import update_config

    try:
        return update_config(config_path(args), change)
    except _Refused as exc:
        return fail(str(exc))
    except ConfigError as exc:
        print(f"not {done} (the config file is unchanged): {exc}")
        return 1


def _server(args: argparse.Namespace) -> tuple[ServerConfig, dict[str, Any]]:
    """The server the arguments describe, and the search settings its package brought
    (``_known``); ValueError saying which argument is wrong."""
    if not _NAME.fullmatch(args.name):
        raise ValueError(f"server name {args.name!r}: use letters, digits, '-', '_' or '.' "
                         "(it is typed in filters such as source:NAME), at most 64")
    command = list(args.command)
    if args.url and command:
        raise ValueError("give either --url or a command after --, not both")
    if not args.url and not command:
        raise ValueError(f"say how to reach '{args.name}': a command after -- "
                         f"(tributary servers add {args.name} -- npx -y some-mcp-server) or --url URL")
    if args.header and not args.url:
        raise ValueError("--header is for a server reached at a --url")
    if args.transport and not args.url:
        raise ValueError("--transport is for a server reached at a --url")
    fields: dict[str, Any] = {"name": args.name, "enabled": not args.disabled}
    known: dict[str, Any] = {}
    if args.url:
        transport: Transport = args.transport or "http"
        fields.update(transport=transport, url=args.url, headers=_pairs(args.header, ":", "--header", "NAME: VALUE"))
    else:
        known = _known(args, command)
        fields.update(command=command[0], args=command[1:], **known)
    fields["env"] = _pairs(args.env, "=", "--env", "KEY=VALUE")
    for name in ("cwd", "timeout", "weight", "tool", "query_mode"):
        if (value := getattr(args, name)) is not None:
            fields[name] = value
    if args.arguments is not None:
        fields["arguments"] = _mapping(args.arguments)
    return ServerConfig(**fields), known


def _asking(known: dict[str, Any]) -> str:
    parts = [f"tool {known['tool']}"] if "tool" in known else []
    parts += [f"arguments {known['arguments']}"] if "arguments" in known else []
    parts += [f"query mode {known['query_mode']}"] if "query_mode" in known else []
    parts += [f"weight {known['weight']:g} (its literal matches would outvote an index's ranking)"] \
        if "weight" in known else []
    return ", ".join(parts)


def _known(args: argparse.Namespace, command: list[str]) -> dict[str, Any]:
    """How a server known by its package is asked (server-filesystem: ``search_files``
    in its first folder, by glob), as an import sets it; {} when any of those settings
    is given, which then says it all."""
    if args.tool is not None or args.query_mode is not None or args.arguments is not None:
        return {}
    return known_settings(command[0], command[1:])


def _pairs(items: list[str], separator: str, option: str, form: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(separator)
        if not found or not key.strip():
            raise ValueError(f"{option} {item!r}: expected {form}")
        pairs[key.strip()] = value.strip() if separator == ":" else value
    return pairs


def _mapping(text: str) -> dict[str, Any]:
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem", None) or "not YAML"
        raise ValueError(f"--arguments {text!r}: {where}") from None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"--arguments {text!r}: expected a mapping such as '{{path: /srv/docs}}'")
    return value
