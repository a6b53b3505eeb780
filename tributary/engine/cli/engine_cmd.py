"""``tributary engine``: the engine that answers one-shot commands in the background."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable

from tributary.engine.cli.common import config_path, fail, load_cli_config
from tributary.engine.config.errors import ConfigError
from tributary.engine.model import EngineKind


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "engine",
        help="the background engine that answers search and context with warm servers",
        description="When neither the app nor `tributary serve` runs, the first `tributary "
        "search` or `context` starts an engine in the background and asks it; the next "
        "ones attach to it at once. It stops after cli.background_minutes unused (default "
        "10; 0 never starts one), or when the app or serve starts.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    status = actions.add_parser("status", help="say which engine answers the command line, if any")
    status.set_defaults(func=run_status)
    stop = actions.add_parser("stop", help="stop the background engine")
    stop.set_defaults(func=run_stop)
    for name, func, what in (("start", run_start, "start the background engine now"),
                             ("run", run_foreground, "be the background engine in this terminal (what start runs)")):
        action = actions.add_parser(name, help=what)
        action.add_argument("--minutes", type=_minutes, default=None, metavar="M",
                            help="stop after M minutes unused (default: cli.background_minutes)")
        action.set_defaults(func=func)


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of minutes: {text!r}") from None
    if not 0 < value <= 24 * 60:
        raise argparse.ArgumentTypeError(f"minutes must be above 0 and at most a day (1440), not {text}")
    return value


def _with_minutes(args: argparse.Namespace, then: Callable[[float], int]) -> int:
    """``then(minutes)``: ``--minutes``, else the config's ``cli.background_minutes`` (or
    ``$TRIBUTARY_BACKGROUND_MINUTES``); a config error (status 2), or a config that turns
    the background engine off and no ``--minutes`` (status 1), is said instead."""
    from tributary.engine.background import minutes_from

    if args.minutes is not None:
        return then(float(args.minutes))
    try:
        config = asyncio.run(load_cli_config(args))
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    minutes = minutes_from(config.cli.background_minutes)
    if minutes <= 0:
        return fail("cli.background_minutes is 0 in the config (no background engine); give --minutes M")
    return then(minutes)


def _describe(engine: dict[str, object]) -> str:
    owner: dict[str, str] = {EngineKind.APP: "the desktop app's", EngineKind.SERVE: "`tributary serve`'s",
                             EngineKind.BACKGROUND: "the background"}
    line = f"{owner.get(str(engine.get('kind')), 'an')} engine answers: pid {engine.get('pid')}"
    idle = engine.get("idle_s")
    if isinstance(idle, int | float):
        line += f", idle {_duration(float(idle))}"
    return line


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def run_status(args: argparse.Namespace) -> int:
    from tributary.engine import attach

    if not attach.supported():
        return fail("this platform has no Unix sockets: every command runs its own engine")
    engine = asyncio.run(attach.running())
    print(_describe(engine) if engine is not None else "no engine runs: the next search starts one")
    return 0


def run_start(args: argparse.Namespace) -> int:
    return _with_minutes(args, lambda minutes: _start(args, minutes))


def _start(args: argparse.Namespace, minutes: float) -> int:
    from tributary.engine import attach, background

    engine = asyncio.run(attach.running())
    if engine is not None:
        print(_describe(engine))
        return 0
    started = asyncio.run(background.start(config_path(args), minutes))
    if started.pid is None:
        return fail(f"the background engine did not start: {started.reason} (log: {background.log_path()})")
    if started.already:
        print(f"the background engine answers: pid {started.pid} (started by another command)")
    else:
        print(f"started the background engine: pid {started.pid}; it stops after {minutes:g} minutes unused")
    return 0


def run_stop(args: argparse.Namespace) -> int:
    from tributary.engine import attach
    from tributary.engine.background import log_path

    engine = asyncio.run(attach.running())
    if engine is None:
        print("no engine runs")
        return 0
    if engine.get("kind") != EngineKind.BACKGROUND:
        return fail(_describe(engine) + "; it stops with what runs it, not with this command")
    if not asyncio.run(attach.stop_background()):
        return fail(f"the background engine (pid {engine.get('pid')}) did not stop within "
                    f"{attach.TAKE_OVER_S:g} s (log: {log_path()})")
    print(f"stopped the background engine (pid {engine.get('pid')})")
    return 0


def run_foreground(args: argparse.Namespace) -> int:
    from tributary.engine import background
    from tributary.engine.config.selfref import nested_refusal
    from tributary.engine.runtime.shutdown import run_until_signalled

    if (refusal := nested_refusal()) is not None:
        return fail(refusal)
    return _with_minutes(args, lambda minutes: run_until_signalled(lambda: background.run(config_path(args), minutes)))
