"""Which servers failed to start lately, remembered across processes.

A server's first start is waited for up to its start-up timeout, so that a slow start
on a busy machine is not reported as a failed query. A server that never starts (a
command that hangs, a package that cannot be fetched) then costs that whole timeout in
every new process: each one-shot ``tributary search`` waited 30 s for it. So a failed
start is written down (the server's name, when, why, and a digest of how it is
launched; never its environment's values) and for ``REMEMBERED_S`` a new process gives
that server only its query timeout to start. A start that succeeds, or a change to how
the server is launched, forgets it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tributary.engine.config.schema import ServerConfig
from tributary.engine.paths import write_private_text

log = logging.getLogger(__name__)

REMEMBERED_S = 3600.0  # how long a failed start makes a new process wait less for it
REASON_CHARS = 300  # of the failure's text kept in the record
MAX_ENTRIES = 200  # the oldest records go first past this many


@dataclass(frozen=True, slots=True)
class FailedStart:
    at: float  # epoch seconds
    reason: str

    def describe(self) -> str:
        return f"its start failed at {time.strftime('%H:%M', time.localtime(self.at))} ({self.reason})"


def launch_digest(config: ServerConfig) -> str:
    """A digest of everything that decides whether ``config``'s server can start: its
    transport, command, arguments, folder, address, environment and headers."""
    parts = [config.name, config.transport, config.command, list(config.args), config.cwd, config.url,
             sorted(config.env.items()), sorted(config.headers.items())]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:32]


class StartRecord:
    """The failed starts kept in one private JSON file (see the module docstring).
    Reads and writes never raise: this is a hint, and a search never fails for it."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        # Written off the event loop, one note after another in the order given.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="start-record")

    def later(self, note: Callable[..., None], *args: object) -> None:
        """``note(*args)`` on the record's own thread (a file written and synced)."""
        self._writer.submit(note, *args)

    def failed(self, config: ServerConfig) -> FailedStart | None:
        """The recent failed start of ``config``'s server as it is launched now, if any."""
        entry = self._read().get(launch_digest(config))
        if not isinstance(entry, dict):
            return None
        at, reason = entry.get("at"), entry.get("reason")
        if not isinstance(at, (int, float)) or self._clock() - at > REMEMBERED_S:
            return None
        return FailedStart(float(at), str(reason or "no reason given"))

    def note_failed(self, config: ServerConfig, reason: str) -> None:
        self._update(config, {"name": config.name, "at": self._clock(), "reason": reason[:REASON_CHARS]})

    def note_started(self, config: ServerConfig) -> None:
        if launch_digest(config) in self._read():
            self._update(config, None)

    def _update(self, config: ServerConfig, entry: dict[str, object] | None) -> None:
        key = launch_digest(config)
        with self._lock:
            entries = self._read()
            if entry is None:
                entries.pop(key, None)
            else:
                entries[key] = entry
            now = self._clock()
            when = {k: float(at) for k, v in entries.items()
                    if isinstance(v, dict) and isinstance(at := v.get("at"), (int, float))
                    and now - float(at) <= REMEMBERED_S}
            newest = sorted(when, key=when.__getitem__, reverse=True)[:MAX_ENTRIES]
            kept = {k: entries[k] for k in newest}
            try:
                write_private_text(self.path, json.dumps(kept, indent=1))
            except OSError as exc:
                log.debug("could not write %s: %s", self.path, exc)

    def _read(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}
