"""The ``tributary`` command line: one sub-command module per feature.

Each module in ``tributary.engine.cli`` that offers commands has ``register(subparsers)``,
which adds its parsers and sets ``func`` to a handler ``(args) -> int`` (the exit
status). Handlers run their own event loop with ``asyncio.run`` when they need one.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from tributary.engine.errors import TributaryError, disk_full, disk_full_message
from tributary.engine.runtime.spawn import RUN_COMMAND, run_module

# Sub-command modules, in the order their commands appear in --help.
COMMAND_MODULES = (
    "tributary.engine.cli.search_cmd",
    "tributary.engine.cli.context_cmd",
    "tributary.engine.cli.servers_cmd",
    "tributary.engine.cli.config_cmd",
    "tributary.engine.cli.secrets_cmd",
    "tributary.engine.cli.index_cmd",
    "tributary.engine.cli.tasks_cmd",
    "tributary.engine.cli.serve_cmd",
    "tributary.engine.cli.engine_cmd",
    "tributary.engine.cli.client_cmd",
    "tributary.engine.cli.stats_cmd",
    "tributary.engine.cli.eval_cmd",
    "tributary.engine.cli.gui_cmd",
)


def version_text() -> str:
    """``tributary X.Y.Z`` and whether its pipeline runs compiled (see ``setup.py``)."""
    from tributary import engine
    from tributary.engine._compiled import describe
    from tributary.engine.version import UNKNOWN, package_version

    number = package_version()
    if number == UNKNOWN:  # (run from a source tree, not installed)
        number = "(not installed)"
    return f"tributary {number}; pipeline: {describe(engine.COMPILED)}"


def named_command(arguments: Sequence[str]) -> str | None:
    """The module of the command ``arguments`` name (``search`` → its ``search_cmd``),
    so only that one is imported: a search answered by a running engine then loads
    nothing the other commands need. None when no known command is named."""
    rest = _past_global_options(arguments)
    if not rest:
        return None
    module = f"tributary.engine.cli.{rest[0]}_cmd"
    return module if module in COMMAND_MODULES else None


def _past_global_options(arguments: Sequence[str]) -> list[str]:
    """``arguments`` from the command's name on: the top level's options (``--config
    FILE``, ``--version``) left out."""
    rest = list(arguments)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option == "--config" and rest:
            rest.pop(0)  # its FILE
    return rest


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (``only``) the top level with that one command."""
    parser = argparse.ArgumentParser(
        prog="tributary",
        description="Ask many context sources one question; get one ranked, budgeted answer.",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="config file to use (default: $TRIBUTARY_CONFIG or the platform config dir)",
    )
    parser.add_argument("--version", action="store_true", help="show the version and which pipeline runs, and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES if only is None else (only,):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real import error inside an existing module
                raise
            continue
        module.register(sub)
    return parser


# Commands whose arguments after ``--`` are a program to run and its own arguments, kept
# whole: argparse would take them for its options or drop them after an option.
PROGRAM_AFTER_DASHES = (("servers", "add"), ("servers", "set"))


def _program_after_dashes(arguments: list[str]) -> tuple[list[str], list[str] | None]:
    """``arguments`` up to ``--`` and the program after it, for those commands; else
    ``arguments`` as they are and None."""
    if "--" not in arguments or tuple(_past_global_options(arguments)[:2]) not in PROGRAM_AFTER_DASHES:
        return arguments, None
    at = arguments.index("--")
    return arguments[:at], arguments[at + 1 :]


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == [RUN_COMMAND]:  # a module of ours, as ``python -m`` (tributary.engine.runtime.spawn)
        return run_module(arguments[1:])
    parser = build_parser(named_command(arguments))
    arguments, program = _program_after_dashes(arguments)
    args = parser.parse_args(arguments)
    if program is not None:
        args.command = program
    if args.version:
        print(version_text())
        return 0
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    try:
        status: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    except TributaryError as exc:  # a refusal with its reason, not a bug: no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        if not disk_full(exc):
            raise
        print(f"error: {disk_full_message(exc)}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
