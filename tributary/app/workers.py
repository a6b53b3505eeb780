"""Index workers: child processes that index a repository and report as JSON lines.

``tributary.app.index_worker`` does the work; this runs it from the app's event loop. Qt-free,
so the shell can start watchers without building the Indexes page.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tributary.engine.api import module_command

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # holds the ``tributary`` package


def worker_command(path: Path) -> list[str]:
    return module_command("tributary.app.index_worker", str(path))


def embed_command(path: Path) -> list[str]:
    return module_command("tributary.app.index_worker", "--embed", str(path))


def watch_command(path: Path) -> list[str]:
    return module_command("tributary.app.index_worker", "--watch", str(path))


async def run_worker(
    command: list[str], on_event: Callable[[dict[str, Any]], None], *, stop_grace_s: float = 0.0
) -> dict[str, Any]:
    """Run an index worker; feed its progress events; return its final ``done`` event.

    Cancelled, it closes the worker's stdin (a watcher's cue to stop), waits up to
    ``stop_grace_s`` for it to finish what it is writing, then kills it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    stderr_task = asyncio.ensure_future(process.stderr.read())
    final: dict[str, Any] = {}
    try:
        async for raw in process.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                continue  # a stray line (a library printing): not ours to parse
            if event.get("event") == "done":
                final = event
            else:
                on_event(event)
        status = await process.wait()
    except asyncio.CancelledError:
        await _stop(process, stop_grace_s)
        raise
    finally:
        stderr = (await stderr_task).decode(errors="replace").strip()
    if status != 0:
        raise RuntimeError(stderr.splitlines()[-1] if stderr else f"indexer exited with {status}")
    return final


async def _stop(process: asyncio.subprocess.Process, grace_s: float) -> None:
    assert process.stdin is not None
    process.stdin.close()
    if grace_s > 0:
        try:
            await asyncio.wait_for(process.wait(), grace_s)
            return
        except TimeoutError:
            pass
    if process.returncode is None:
        process.kill()
    await process.wait()
