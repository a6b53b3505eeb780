"""``tributary config``: where the config is, whether it is valid, show it, import servers."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from engine import paths
from engine.cli.common import config_path, fail
from engine.config.errors import ConfigError
from engine.config.load import load_config
from engine.config.secrets import server_summary


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
        help="add the servers of a Claude Desktop / Cursor / VS Code config",
        description="Read the mcpServers (or VS Code servers) entries of FILE and add them "
        "to the config; the file is validated and saved atomically, with a backup.",
    )
    imp.add_argument("file")
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
    from engine.config.dump import config_to_yaml
    from engine.config.secrets import mask_secrets, mask_url

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
    from engine.config.importer import import_mcp_servers, merge_imported
    from engine.config.save import update_config

    try:
        result = import_mcp_servers(Path(args.file).expanduser())
    except ConfigError as exc:
        print(exc)
        return 1
    except OSError as exc:
        return fail(f"{args.file}: {exc.strerror or exc}")
    for warning in result.warnings:
        print(f"warning: {warning}")
    if not result.servers:
        return fail(f"{args.file}: no MCP servers found")
    try:
        if args.dry_run:
            before = load_config(config_path(args))
            after = merge_imported(before, result.servers)
        else:  # merged into the file as it is when the lock is held: concurrent imports all stay
            before, after = update_config(config_path(args), lambda now: merge_imported(now, result.servers))
    except ConfigError as exc:
        print(exc)
        return 1
    added = [name for name in after.servers if name not in before.servers]
    for name in added:
        print(f"+ {name} ({after.servers[name].transport}): {server_summary(after.servers[name])}")
    if args.dry_run:
        print(f"{len(added)} servers would be added (dry run: nothing saved)")
    else:
        print(f"{len(added)} servers added to {after.path}")
    return 0
