"""An engine in the background, so one-shot commands answer with warm servers.

``tributary search`` and ``context`` ask the app's or ``serve``'s engine when one runs
(:mod:`tributary.engine.attach`). When none does, a one-shot command pays for starting
Python, the engine and every source it asks, each time. The first such command starts
this engine instead, detached from the terminal, and asks it; the next ones attach to
it at once. It listens on the same socket, answers only its own user, applies config
edits as ``serve`` does, and stops after ``cli.background_minutes`` without a request,
on ``tributary engine stop``, or when the app or ``serve`` starts and takes the socket
over. Its log is ``background-engine.log`` in the data folder (0600).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tributary.engine import paths

log = logging.getLogger(__name__)

LOG_NAME = "background-engine.log"
ENV_MINUTES = "TRIBUTARY_BACKGROUND_MINUTES"  # overrides cli.background_minutes (0: never)
READY_WAIT_S = 60.0  # how long a command waits for the engine it started to listen
_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class Started:
    """An engine started in the background, or why none answers."""

    pid: int | None
    reason: str = ""
    already: bool = False  # another command started it a moment ago


def minutes_from(configured: float) -> float:
    """The idle minutes in effect: ``$TRIBUTARY_BACKGROUND_MINUTES`` when set to a number,
    else the config's ``cli.background_minutes``."""
    value = os.environ.get(ENV_MINUTES, "").strip()
    if value:
        try:
            number = float(value)
        except ValueError:
            log.warning("%s=%r is not a number of minutes; using the config's %g", ENV_MINUTES, value, configured)
        else:
            if number >= 0:
                return number
    return configured


def log_path() -> Path:
    return paths.data_dir() / LOG_NAME


def command(config_file: Path | None, minutes: float) -> list[str]:
    """The command line of ``tributary engine run`` for this config."""
    from tributary.engine.runtime.spawn import cli_command

    chosen = ["--config", str(config_file)] if config_file is not None else []
    return cli_command(*chosen, "engine", "run", "--minutes", f"{minutes:g}")


async def start(config_file: Path | None, minutes: float) -> Started:
    """Start ``tributary engine run`` detached (its own session, no terminal), and wait
    until it answers on the socket, it exits, or ``READY_WAIT_S`` pass. Commands that
    find no engine at the same moment start one between them: the others wait for it."""
    import fcntl

    from tributary.engine import attach
    from tributary.engine.config.selfref import nested_refusal

    if not attach.supported():
        return Started(None, "this platform has no Unix sockets")
    if nested_refusal() is not None:  # run by a Tributary as its source: no engines of engines
        return Started(None, "run as a source of another Tributary")
    try:
        lock = os.open(attach.socket_path().with_name("background.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except (attach.AttachError, OSError) as exc:
        return Started(None, f"no lock to start it under: {exc}")
    try:
        await asyncio.to_thread(fcntl.flock, lock, fcntl.LOCK_EX)
        answering = await attach.running()
        if answering is not None:
            pid = answering.get("pid")
            return Started(pid if isinstance(pid, int) else None, already=True)
        return await _spawn(config_file, minutes)
    finally:
        os.close(lock)  # releases the lock


async def _spawn(config_file: Path | None, minutes: float) -> Started:
    from tributary.engine import attach

    target = log_path()
    try:
        paths.private_dir(target.parent)
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(descriptor, 0o600)
    except OSError as exc:
        return Started(None, f"cannot write its log {target}: {exc.strerror or exc}")
    try:
        process = subprocess.Popen(
            command(config_file, minutes), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=descriptor, start_new_session=True, close_fds=True,
        )
    except OSError as exc:
        return Started(None, f"could not start it: {exc}")
    finally:
        os.close(descriptor)
    deadline = time.monotonic() + READY_WAIT_S
    while time.monotonic() < deadline:
        status = process.poll()
        if status is not None:
            return Started(None, _exited(status, target))
        answering = await attach.running()
        if answering is not None:
            pid = answering.get("pid")
            return Started(pid if isinstance(pid, int) else process.pid)
        await asyncio.sleep(_POLL_S)
    return Started(None, f"it did not listen within {READY_WAIT_S:g} s (still starting: pid {process.pid})")


def _exited(status: int, log_file: Path) -> str:
    """Why the engine exited before listening: the last line of its log."""
    with contextlib.suppress(OSError):
        lines = [line for line in log_file.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
        if lines:
            return f"it exited ({status}): {lines[-1].strip()}"
    return f"it exited with status {status}"


async def run(config_file: Path | None, minutes: float) -> int:
    """Be the background engine until ``minutes`` pass without a request, a client asks
    it to stop, or a shutdown signal arrives. Exit status 1 when another engine already
    answers for this home (nothing to do)."""
    from tributary.engine.engine import Engine
    from tributary.engine.model import EngineKind
    from tributary.engine.repos.freshness import Freshness
    from tributary.engine.servers.inprocess import in_process_builtins

    # The built-in servers run in this process, as in a one-shot command: starting it
    # costs no more than the one-shot it replaces, and the model is loaded once.
    engine = await Engine.open(config_file, connector=in_process_builtins(), freshness=Freshness())
    stop = asyncio.Event()
    try:
        engine.supervise()
        engine.watch_config()
        if not await engine.listen(config_file, kind=EngineKind.BACKGROUND, on_stop=stop.set):
            print("tributary engine: another engine already answers for this home", file=sys.stderr)
            return 1
        print(f"tributary engine: pid {os.getpid()} answering; stops after {minutes:g} minutes unused",
              file=sys.stderr, flush=True)
        limit = minutes * 60.0
        while not stop.is_set():
            left = limit - (engine.idle_s() or 0.0)
            if left <= 0:
                print("tributary engine: unused, stopping", file=sys.stderr, flush=True)
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), left)
        else:
            print("tributary engine: asked to stop", file=sys.stderr, flush=True)
        return 0
    finally:
        await engine.aclose()
