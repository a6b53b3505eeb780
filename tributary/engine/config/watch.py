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
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from tributary.engine.config.digest import file_digest
from tributary.engine.config.errors import ConfigError
from tributary.engine.config.load import load_config
from tributary.engine.config.schema import Config

DEBOUNCE_MS = 200
MAX_REPORTED = 10  # problems listed in one report (a wrong file may have thousands)


@dataclass(frozen=True, slots=True)
class ReloadReport:
    ok: bool
    message: str


SETTLE_S = 0.15  # a file written in place must read the same twice this far apart
QUIET_S = 1.0  # and be untouched (by its modification time) this long before it is read
MAX_SETTLE_S = 10.0  # a file still changing (or dated in the future) is read after this


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


async def _settled_digest(path: Path, tries: int = 20) -> str | None:
    """The file's digest once it stops changing: an editor that writes in place (or a
    script's ``write_text``) can be read half-written, and half a config may be a valid
    one with servers missing, which would stop them. Settled means two reads alike,
    ``SETTLE_S`` apart, of a file nobody has written for ``QUIET_S`` (a writer pausing
    mid-file leaves it unchanged for a while, but not untouched)."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + MAX_SETTLE_S
    digest, stamp = file_digest(path), _stamp(path)
    for _ in range(tries * 10):
        quiet = time.time() - stamp[0] / 1e9 if stamp is not None else QUIET_S
        wait = max(SETTLE_S, QUIET_S - quiet)
        await asyncio.sleep(min(wait, max(0.0, give_up - loop.time())) or SETTLE_S)
        again, again_stamp = file_digest(path), _stamp(path)
        still = again == digest and again_stamp == stamp
        untouched = again_stamp is None or time.time() - again_stamp[0] / 1e9 >= QUIET_S
        if (still and untouched) or loop.time() >= give_up:
            return again
        digest, stamp = again, again_stamp
    return digest


async def watch_config(
    path: Path,
    apply: Callable[[Config], Awaitable[None]],
    report: Callable[[ReloadReport], None],
    *,
    stop: asyncio.Event | None = None,
    ready: asyncio.Event | None = None,
    debounce_ms: int = DEBOUNCE_MS,
    in_effect: Callable[[], Config] | None = None,
) -> None:
    """Until ``stop`` is set (or the task is cancelled), apply every valid change of
    ``path``; ``ready`` is set once the watch is in place. ``in_effect``: the config as
    it runs once applied (with the built-in servers), which a report counts."""
    from watchfiles import awatch

    logging.getLogger("watchfiles.main").setLevel(logging.WARNING)  # not "1 change detected"
    path = path.expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    last = file_digest(path)
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
        if digest is None:
            last = digest
            report(ReloadReport(False, f"{path} was removed; the running config stays in effect"))
            continue
        outcome = await reload_once(path, apply, expect=digest, in_effect=in_effect)
        if outcome is None:
            continue  # changed again while it was read: the next event reads it whole
        last = digest
        report(outcome)


async def reload_once(
    path: Path, apply: Callable[[Config], Awaitable[None]], *, expect: str | None = None,
    in_effect: Callable[[], Config] | None = None,
) -> ReloadReport | None:
    """Load ``path`` and apply it if it is valid; what happened, in one line or a few.
    With ``expect`` (the settled file's digest), None when the file no longer has it
    after loading: what was loaded may be a half-written file. The servers counted are
    those of ``in_effect()`` once applied (the built-in ones too, as the server list
    shows them), else the file's own."""
    try:
        config = await asyncio.to_thread(load_config, path)
    except ConfigError as exc:
        if expect is not None and file_digest(path) != expect:
            return None
        issues = exc.issues[:MAX_REPORTED]
        more = len(exc.issues) - len(issues)
        listed = "\n".join(f"  {issue}" for issue in issues) + (f"\n  … and {more} more" if more else "")
        return ReloadReport(False, f"{path} not applied; the running config stays in effect:\n{listed}")
    if expect is not None and file_digest(path) != expect:
        return None
    try:
        await apply(config)
    except Exception as exc:
        return ReloadReport(False, f"{path} is valid but could not be applied: {type(exc).__name__}: {exc}")
    return ReloadReport(True, f"{path} reloaded: {servers_said(in_effect() if in_effect else config)}")


def servers_said(config: Config) -> str:
    """The servers as a reload reports them, those turned off apart (one
    just unchecked in the app is still configured, and "4 servers" read as unchanged):
    ``3 servers``, ``3 servers on, 1 off``."""
    own = [s for s in config.servers.values() if not s.tunes_builtin]
    on = sum(1 for s in own if s.enabled)
    said = f"{on} server{'s' * (on != 1)}"
    return said if on == len(own) else f"{said} on, {len(own) - on} off"
