"""``tributary secrets``: keep server secrets in the OS keyring, referred to as
``${keyring:NAME}`` in ``env``, ``headers``, ``args`` and ``url`` values.

``set`` reads the value from a prompt (or from stdin when it is not a terminal), never
from the command line, where it would land in the shell history and the process list.
``move`` takes the literal secrets out of the config file into the keyring.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from tributary.engine.cli.common import config_path, fail
from tributary.engine.config import keystore
from tributary.engine.config.errors import ConfigError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("secrets", help="store server secrets in the OS keyring")
    actions = parser.add_subparsers(dest="secrets_command", metavar="ACTION", required=True)

    put = actions.add_parser(
        "set", help="store a secret (the value is read from a prompt or stdin)",
        description="Store NAME in the keyring; refer to it as ${keyring:NAME} in a server's "
        "env, headers, args or url. The value is asked for (not echoed), or read from stdin when "
        "stdin is not a terminal: `tributary secrets set NAME < file`.")
    put.add_argument("name")
    put.set_defaults(func=run_set)

    listing = actions.add_parser("list", help="the names of the stored secrets (never their values)")
    listing.set_defaults(func=run_list)

    delete = actions.add_parser("delete", help="remove a secret from the keyring")
    delete.add_argument("name")
    delete.set_defaults(func=run_delete)

    move = actions.add_parser(
        "move", help="move literal secrets from the config file into the keyring",
        description="Literal env values and headers under secret-looking names (TOKEN, "
        "API_KEY, Authorization …), secret flags' values in args (--api-key=VALUE, "
        "--token VALUE) and URL passwords and keys are stored in the keyring and replaced "
        "in the config by ${keyring:NAME} references; the config is saved with a backup.")
    move.add_argument("servers", nargs="*", metavar="SERVER", help="only these servers (default: all)")
    move.add_argument("--dry-run", action="store_true", help="show what would move; change nothing")
    move.set_defaults(func=run_move)


def _notice() -> None:
    notice = keystore.backend_notice()
    if notice:
        print(f"note: {notice}", file=sys.stderr)


def _read_value(name: str) -> str:
    if sys.stdin.isatty():
        value = getpass.getpass(f"value of {name} (not shown): ")
    else:
        value = sys.stdin.read()
        value = value[:-1] if value.endswith("\n") else value
        value = value[:-1] if value.endswith("\r") else value
    return value


def run_set(args: argparse.Namespace) -> int:
    try:
        keystore.check_name(args.name)
        value = _read_value(args.name)
        if not value:
            return fail(f"{args.name}: no value given; nothing stored")
        keystore.set_secret(args.name, value)
    except keystore.KeystoreError as exc:
        return fail(str(exc))
    _notice()
    print(f"stored {args.name}; use it as ${{keyring:{args.name}}} in a server's env or headers")
    return 0


def run_list(args: argparse.Namespace) -> int:
    try:
        names = keystore.names()
    except keystore.KeystoreError as exc:
        return fail(str(exc))
    _notice()
    if not names:
        print("no secrets stored (add one with `tributary secrets set NAME`)")
    for name in names:
        print(name)
    return 0


def run_delete(args: argparse.Namespace) -> int:
    try:
        removed = keystore.delete_secret(args.name)
    except keystore.KeystoreError as exc:
        return fail(str(exc))
    if not removed:
        return fail(f"{args.name}: no such secret")
    print(f"deleted {args.name}")
    return 0


def run_move(args: argparse.Namespace) -> int:
    from tributary.engine.config.load import load_config
    from tributary.engine.config.secret_move import move_secrets_to_keyring

    try:
        config = load_config(config_path(args))
        unknown = [n for n in args.servers if n not in config.servers]
        if unknown:
            return fail(f"unknown {'server' if len(unknown) == 1 else 'servers'}: {', '.join(unknown)}")
        moved = move_secrets_to_keyring(config, args.servers or None, dry_run=args.dry_run)
    except (ConfigError, keystore.KeystoreError) as exc:
        return fail(str(exc))
    if not moved.names:
        print("no literal secrets found in the config")
        return 0
    _notice()
    for where, name in moved.places:
        print(f"{where} -> ${{keyring:{name}}}")
    if args.dry_run:
        print(f"{len(moved.names)} secrets would move to the keyring (dry run: nothing changed)")
    else:
        print(f"{len(moved.names)} secrets moved to the keyring; {moved.saved} saved")
    return 0
