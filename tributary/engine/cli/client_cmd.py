"""``tributary client add CLIENT``: put ``tributary serve`` into another MCP client's config."""

from __future__ import annotations

import argparse
from pathlib import Path

from tributary.engine.cli.common import config_path, fail


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("client", help="add Tributary to an MCP client (Claude, Cursor, ...)")
    actions = parser.add_subparsers(dest="client_command", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add",
        help="write `tributary serve` into a client's MCP config",
        description="Add Tributary as an MCP server to CLIENT's user-level config file, at its "
        "standard place. Everything else in the file stays; the file is replaced atomically "
        "and the old one kept as FILE.bak. Running it again adds nothing; an existing "
        "different entry of that name is left alone unless --force. TRIBUTARY_HOME and "
        "TRIBUTARY_CONFIG, when set, go into the entry's env.",
    )
    add.add_argument("client", metavar="CLIENT", help="one of: claude, claude-code, cursor, vscode, windsurf, codex, zed")
    add.add_argument("--name", default="tributary", help="the entry's name (default: tributary)")
    add.add_argument("--force", action="store_true",
                     help="replace a different entry of that name; add even if Tributary is "
                     "already there under another name")
    add.add_argument("--print", dest="print_only", action="store_true",
                     help="show the entry and the file it belongs in; write nothing")
    add.add_argument("--home", metavar="DIR", default=None,
                     help="the home folder whose client configs to change (default: yours)")
    add.set_defaults(func=run_add)


def run_add(args: argparse.Namespace) -> int:
    from tributary.engine.config.client_setup import (
        ClientSetupError,
        add_to_client,
        entry_for,
        place_env,
        resolve_client,
        serve_command,
        snippet,
        target_for,
    )

    name = " ".join(args.name.split())
    if not name:
        return fail("--name must not be empty")
    try:
        client = resolve_client(args.client)
    except ClientSetupError as exc:
        return fail(str(exc))
    home = Path(args.home).expanduser() if args.home else None
    # With --home, only that folder counts (not $XDG_CONFIG_HOME or $CODEX_HOME).
    target = target_for(client, home, environ={} if home is not None else None)
    command, arguments = serve_command(config_path(args))
    entry = entry_for(client, command, arguments, place_env())
    if args.print_only:
        print(f"# in {target.path}")
        print(snippet(target, name, entry), end="")
        return 0
    try:
        result = add_to_client(target, name, entry, force=args.force)
    except (ClientSetupError, OSError) as exc:
        return fail(str(exc))
    print(result.message)
    if result.backup is not None:
        print(f"the previous file is kept as {result.backup}")
    if result.status in ("added", "replaced"):
        print("restart the client (or reload its MCP servers) to use Tributary")
    return 1 if result.status == "different" else 0
