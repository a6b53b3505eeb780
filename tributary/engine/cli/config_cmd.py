"""``tributary config``: where the config is, whether it is valid, show it, import servers."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tributary.engine import paths
from tributary.engine.cli.common import config_path, fail
from tributary.engine.config.errors import ConfigError
from tributary.engine.config.load import load_config
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.config.secrets import server_summary

if TYPE_CHECKING:
    from tributary.engine.config.clients import ClientConfig


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("config", help="validate, show or import configuration")
    actions = parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)

    path = actions.add_parser("path", help="print the config file in effect")
    path.set_defaults(func=run_path)

    validate = actions.add_parser("validate", help="check a config file; list every problem")
    validate.add_argument("file", nargs="?", help="file to check (default: the one in effect)")
    validate.set_defaults(func=run_validate)

    show = actions.add_parser("show", help="print the config in effect, secrets masked")
    show.set_defaults(func=run_show)

    imp = actions.add_parser(
        "import",
        help="add the servers of other MCP clients (found, or from FILE)",
        description="With FILE: read its mcpServers (or VS Code servers) entries. Without: "
        "list the configs of Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Zed, "
        "Codex and Continue found on this machine and import the ones chosen (asked, or "
        "--all / --client). The config is validated and saved atomically, with a backup.",
    )
    imp.add_argument("file", nargs="?")
    imp.add_argument("--all", action="store_true", help="import every config found")
    imp.add_argument("--client", action="append", default=[], metavar="NAME",
                     help="import the configs of this client (repeatable): "
                     "claude-desktop, claude-code, cursor, vscode, windsurf, zed, codex, continue")
    imp.add_argument("--workspace", metavar="DIR", default=None,
                     help="also look for DIR's .vscode/.cursor/.mcp.json (default: the current folder)")
    imp.add_argument("--dry-run", action="store_true", help="show what would be added; save nothing")
    imp.set_defaults(func=run_import)


def _target(args: argparse.Namespace) -> Path:
    return config_path(args) or paths.default_config_path()


def run_path(args: argparse.Namespace) -> int:
    target = _target(args)
    print(target)
    if not target.exists():
        print("(no file yet: the defaults are in effect; saving from the GUI or "
              "`tributary config import` creates it)")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    target = Path(args.file).expanduser() if args.file else _target(args)
    if not target.exists():
        return fail(f"{target}: no such file")
    try:
        config = load_config(target)
    except ConfigError as exc:
        print(exc)
        return 1
    print(f"{target}: valid — {len(config.servers)} servers, {len(config.routing.rules)} routing rules")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from tributary.engine.config.dump import config_to_yaml
    from tributary.engine.config.secrets import mask_secrets, mask_url

    try:
        config = load_config(config_path(args))
    except ConfigError as exc:
        print(exc)
        return 1
    dsn = config.index.dsn
    masked = replace(config, servers={n: mask_secrets(s) for n, s in config.servers.items()},
                     index=replace(config.index, dsn=mask_url(dsn, dsn) if dsn else dsn))
    print(f"# {config.path}")
    print(config_to_yaml(masked), end="")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from tributary.engine.config.importer import ImportResult, import_mcp_servers

    try:
        config = load_config(config_path(args))
    except ConfigError as exc:
        print(exc)
        return 1
    if args.file is None:
        return _import_found(args, config)
    try:
        result: ImportResult = import_mcp_servers(Path(args.file).expanduser())
    except ConfigError as exc:
        print(exc)
        return 1
    except OSError as exc:
        return fail(f"{args.file}: {exc.strerror or exc}")
    for warning in result.warnings:
        print(f"warning: {warning}")
    if not result.servers:
        return fail(f"{args.file}: no MCP servers found")
    return _add(args, config, result.servers)


def _add(args: argparse.Namespace, config: Config, servers: list[ServerConfig]) -> int:
    """Merge the ``servers`` not already configured the same way into the config file,
    under its lock (concurrent imports all stay); ``config`` is the file as first read."""
    from tributary.engine.config.importer import already_configured, merge_imported
    from tributary.engine.config.save import update_config
    from tributary.engine.config.secret_move import move_imported_secrets

    # Literal secrets go to the keyring before the config is saved, never into it.
    new = [i for i, s in enumerate(servers) if not already_configured(config, s)]
    moved, secrets_note = move_imported_secrets([servers[i] for i in new], store=not args.dry_run)
    servers = list(servers)
    for i, server in zip(new, moved, strict=True):
        servers[i] = server

    def merged(now: Config) -> Config:
        return merge_imported(now, [s for s in servers if not already_configured(now, s)])

    if not args.dry_run and all(already_configured(config, s) for s in servers):
        before = after = config  # nothing new: the file is left alone
    else:
        try:
            if args.dry_run:
                before, after = config, merged(config)
            else:
                before, after = update_config(config_path(args), merged)
        except ConfigError as exc:
            print(exc)
            return 1
    added = [name for name in after.servers if name not in before.servers]
    for name in added:
        print(f"+ {name} ({after.servers[name].transport}): {server_summary(after.servers[name])}")
    from tributary.engine.config.importer import configured_as

    for server in servers:
        if (known := configured_as(before, server)) is not None:
            print(f"skipped {server.name}: already configured as '{known}' (same "
                  f"{'command and arguments' if server.transport == 'stdio' else 'url'})")
    if secrets_note is not None and (added or args.dry_run):
        print(secrets_note)
    if args.dry_run:
        print(f"{len(added)} servers would be added (dry run: nothing saved)")
    elif not added:
        print("nothing to add")
    else:
        print(f"{len(added)} servers added to {after.path}")
    return 0


def _import_found(args: argparse.Namespace, config: Config) -> int:
    import sys

    from tributary.engine.config.clients import choose, discover_client_configs

    workspace = Path(args.workspace).expanduser() if args.workspace else Path.cwd()
    found = discover_client_configs(workspace=workspace)
    if not found:
        print("no MCP client configs found on this machine (looked for Claude Desktop, Claude "
              "Code, Cursor, VS Code, Windsurf, Zed, Codex and Continue); give a FILE instead")
        return 0
    for number, client in enumerate(found, 1):
        names = ", ".join(s.name for s in client.servers) or "-"
        print(f"{number:>2}. {client.label}: {client.path}")
        print(f"      {client.error}" if client.error else f"      servers: {names}")
    try:
        if args.all:
            chosen = found
        elif args.client:
            chosen = choose(found, args.client)
        elif sys.stdin.isatty():
            chosen = _ask(found)
        else:
            print("choose with --all or --client NAME (or run this in a terminal to pick)")
            return 0
    except ValueError as exc:
        return fail(str(exc))
    servers: list[ServerConfig] = []
    for client in chosen:
        for warning in client.warnings:
            print(f"warning: {client.label}: {warning}")
        servers.extend(client.servers)
    if not servers:
        print("nothing chosen to import")
        return 0
    # Identical servers from several clients are imported once.
    unique: list[ServerConfig] = []
    for server in servers:
        if not any(replace(u, description="") == replace(server, description="") for u in unique):
            unique.append(server)
    return _add(args, config, unique)


def _ask(found: list[ClientConfig]) -> list[ClientConfig]:
    answer = input("Import which? numbers separated by spaces or commas, 'all', or Enter for none: ")
    text = answer.strip().lower()
    if text == "all":
        return found
    picked: list[ClientConfig] = []
    for part in text.replace(",", " ").split():
        if not part.isdigit() or not 1 <= int(part) <= len(found):
            raise ValueError(f"{part!r} is not one of the numbers 1..{len(found)}")
        picked.append(found[int(part) - 1])
    return picked
