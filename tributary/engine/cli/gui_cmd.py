"""``tributary gui`` and ``tributary toggle``: start or reach the desktop app.

The desktop app lives in ``app`` (Qt); it is imported only inside the handlers, so
the engine and the rest of the CLI never load Qt. ``toggle`` is meant for a desktop
shortcut (Wayland forbids global hotkeys): it shows or hides a running window, and
starts the app when none runs.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    gui = sub.add_parser("gui", help="open the desktop app (or bring the running one forward)")
    gui.add_argument("--hidden", action="store_true", help="start in the tray, window hidden")
    gui.add_argument("--quick", action="store_true", help="open the quick-query popup")
    gui.set_defaults(func=run_gui)
    toggle = sub.add_parser("toggle", help="show/hide the running desktop app (bind to a shortcut)")
    toggle.add_argument("--quick", action="store_true", help="toggle the quick-query popup instead")
    toggle.set_defaults(func=run_toggle)


def _app_main() -> Any:
    # Imported by name at call time: the engine package must not depend on Qt.
    return importlib.import_module("tributary.app.main")


def _forward(args: argparse.Namespace, *flags: str) -> list[str]:
    argv = [f"--{flag}" for flag in flags if getattr(args, flag, False)]
    config = getattr(args, "config", None)
    if config:
        argv += ["--config", str(config)]
    return argv


def run_gui(args: argparse.Namespace) -> int:
    status: int = _app_main().main(_forward(args, "hidden", "quick"))
    return status


def run_toggle(args: argparse.Namespace) -> int:
    argv = _forward(args, "quick")
    if "--quick" not in argv:
        argv.append("--toggle")
    status: int = _app_main().main(argv)
    return status
