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

    def on_signal(signum: int) -> None:
        received.append(signum)
        _restore_defaults(loop)
        task.cancel()

    installed = _install(loop, on_signal)
    try:
        return await task
    except asyncio.CancelledError:
        if not received:
            raise
        return 128 + received[0]
    finally:
        if installed:
            _restore_defaults(loop)


def _install(loop: asyncio.AbstractEventLoop, handler: Callable[[int], None]) -> bool:
    try:
        for signum in SHUTDOWN_SIGNALS:
            loop.add_signal_handler(signum, handler, signum)
    except (NotImplementedError, RuntimeError):  # pragma: no cover - Windows, or not the main thread
        return False
    return True


def _restore_defaults(loop: asyncio.AbstractEventLoop) -> None:
    for signum in SHUTDOWN_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signum)
            signal.signal(signum, signal.SIG_DFL)


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
