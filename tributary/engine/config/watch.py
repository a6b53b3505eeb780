"""Hot reload: watch the config file and apply each valid change.

:func:`watch_config` watches the file's folder (editors and our own atomic writer
replace the file rather than write into it) with ``watchfiles``. When the file's
bytes change it is loaded and validated; a valid config is handed to ``apply`` (the
engine restarts only the servers whose settings changed), an invalid one is
reported with every problem's file, line and key, and the running config stays.
A removed file is reported and changes nothing. Each outcome is one
:class:`ReloadReport` to ``report``.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from tributary.engine.config.errors import ConfigError
from tributary.engine.config.load import load_config
from tributary.engine.config.schema import Config

DEBOUNCE_MS = 200


@dataclass(frozen=True, slots=True)
class ReloadReport:
    ok: bool
    message: str


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


SETTLE_S = 0.15  # a file written in place must read the same twice this far apart


async def _settled_digest(path: Path, tries: int = 20) -> str | None:
    """The file's digest once it stops changing: an editor that writes in place (or a
    script's ``write_text``) can be read half-written, and half a config may be a valid
    one with servers missing, which would stop them."""
    digest = _digest(path)
    for _ in range(tries):
        await asyncio.sleep(SETTLE_S)
        again = _digest(path)
        if again == digest:
            return digest
        digest = again
    return digest


async def watch_config(
    path: Path,
    apply: Callable[[Config], Awaitable[None]],
    report: Callable[[ReloadReport], None],
    *,
    stop: asyncio.Event | None = None,
    ready: asyncio.Event | None = None,
    debounce_ms: int = DEBOUNCE_MS,
) -> None:
    """Until ``stop`` is set (or the task is cancelled), apply every valid change of
    ``path``; ``ready`` is set once the watch is in place."""
    from watchfiles import awatch

    logging.getLogger("watchfiles.main").setLevel(logging.WARNING)  # not "1 change detected"
    path = path.expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    last = _digest(path)
    name = path.name

    def ours(_change: object, changed: str) -> bool:
        return Path(changed).name == name

    watcher = awatch(path.parent, watch_filter=ours, stop_event=stop, debounce=debounce_ms,
                     step=50, yield_on_timeout=True, rust_timeout=500, recursive=False)
    async for _changes in watcher:
        if ready is not None and not ready.is_set():
            ready.set()
        digest = await _settled_digest(path)
        if digest == last:
            continue
        last = digest
        if digest is None:
            report(ReloadReport(False, f"{path} was removed; the running config stays in effect"))
            continue
        report(await reload_once(path, apply))


async def reload_once(path: Path, apply: Callable[[Config], Awaitable[None]]) -> ReloadReport:
    """Load ``path`` and apply it if it is valid; what happened, in one line or a few."""
    try:
        config = await asyncio.to_thread(load_config, path)
    except ConfigError as exc:
        return ReloadReport(False, f"{path} not applied; the running config stays in effect:\n{exc}")
    try:
        await apply(config)
    except Exception as exc:
        return ReloadReport(False, f"{path} is valid but could not be applied: {type(exc).__name__}: {exc}")
    return ReloadReport(True, f"{path} reloaded: {len(config.servers)} servers")
