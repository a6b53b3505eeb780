"""Shutdown signals for the long-running commands: stop the sources, then exit.

``SIGTERM``, ``SIGINT`` and ``SIGHUP`` cancel the command's coroutine, so its cleanup
(``Engine.aclose``: stdin closed, then the process groups terminated) runs before the
process exits with ``128 + signal``. A second signal is not waited on: it ends the
process at once, and on Linux each source's reaper still stops that source's tree.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

SHUTDOWN_SIGNALS: tuple[signal.Signals, ...] = (
    (signal.SIGINT, signal.SIGTERM) if sys.platform == "win32"
    else (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
)


def run_until_signalled(main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """``asyncio.run(main())``, cancelled by the first shutdown signal (exit 128 + signal)."""
    return asyncio.run(_guarded(main))


async def _guarded(main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(main())
    received: list[int] = []
    previous = {signum: signal.getsignal(signum) for signum in SHUTDOWN_SIGNALS}

    def on_signal(signum: int) -> None:
        received.append(signum)
        _uninstall(loop, dict.fromkeys(SHUTDOWN_SIGNALS, signal.SIG_DFL))  # a second one kills
        task.cancel()

    installed = _install(loop, on_signal)
    try:
        return await task
    except asyncio.CancelledError:
        if not received:
            raise
        return 128 + received[0]
    finally:
        if installed and not received:
            _uninstall(loop, previous)


def _install(loop: asyncio.AbstractEventLoop, handler: Callable[[int], None]) -> bool:
    try:
        for signum in SHUTDOWN_SIGNALS:
            loop.add_signal_handler(signum, handler, signum)
    except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - Windows, a thread
        return False
    return True


def _uninstall(loop: asyncio.AbstractEventLoop, handlers: dict[signal.Signals, Any]) -> None:
    for signum, handler in handlers.items():
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


@contextlib.contextmanager
def hangup_as_terminate() -> Iterator[None]:
    """While inside, ``SIGHUP`` is turned into ``SIGTERM`` (for servers that handle only that)."""
    if sys.platform == "win32":  # pragma: no cover - no SIGHUP
        yield
        return
    previous = signal.signal(signal.SIGHUP, lambda *_: signal.raise_signal(signal.SIGTERM))
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)
