"""Entry point of the desktop app: ``tributary gui`` and the ``tributary-gui`` script.

A second start does not open a second window: it reaches the running instance over
the local socket (show, or toggle) and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger("tributary.app")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tributary-gui", description="Tributary desktop app")
    parser.add_argument("--config", metavar="FILE", help="config file to use")
    parser.add_argument("--toggle", action="store_true", help="show/hide a running window")
    parser.add_argument("--quick", action="store_true", help="open the quick-query popup")
    parser.add_argument("--hidden", action="store_true", help="start in the tray")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from tributary.app.desktop_libs import display_problem
    from tributary.app.instance import NotAnswering, send_command

    command = "quick" if args.quick else "toggle" if args.toggle else "show"
    try:
        if send_command(command):
            return 0
    except NotAnswering as error:  # one runs: a second app would fight it for the socket
        print(f"tributary gui: {error}", file=sys.stderr)
        return 1
    problem = display_problem(os.environ)
    if problem is not None:
        print(f"tributary gui: {problem}", file=sys.stderr)
        return 2
    return run(config_path=Path(args.config) if args.config else None,
               hidden=args.hidden, quick=args.quick)


def run(*, config_path: Path | None = None, hidden: bool = False, quick: bool = False) -> int:
    """Create the QApplication on a qasync loop, run the shell until quit."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from tributary.app import errors, theme
    from tributary.app.shell import Shell

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Tributary")
    app.setDesktopFileName("tributary")
    app.setQuitOnLastWindowClosed(False)
    theme.apply(app)
    app.setWindowIcon(theme.app_icon())
    from tributary.app.loop import AppEventLoop

    loop = AppEventLoop(app)
    asyncio.set_event_loop(loop)
    errors.install(loop)
    from tributary.app import gc_guard

    gc_guard.install()  # garbage (and so Qt wrappers in it) freed on this thread only

    async def lifetime() -> None:
        shell = Shell(config_path=config_path)
        app.aboutToQuit.connect(shell.request_quit)
        # Python runs signal handlers only between bytecodes: a timer gives it the chance.
        from tributary.engine.api import SHUTDOWN_SIGNALS

        for signum in SHUTDOWN_SIGNALS:  # quit cleanly: the engine stops every source
            signal.signal(signum, lambda *_: shell.request_quit())
        ticker = QTimer(interval=200)
        ticker.timeout.connect(lambda: None)
        ticker.start()
        shell.start(show=not hidden)
        if quick:
            shell.popup.popup()
        await shell.quit_requested.wait()
        await shell.shutdown()
        ticker.stop()

    with loop:
        loop.run_until_complete(lifetime())
    return 0


if __name__ == "__main__":
    sys.exit(main())
