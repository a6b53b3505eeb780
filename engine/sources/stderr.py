"""Each server's stderr, kept as a bounded ring of its last lines for the UI and CLI.

A pipe per process; a daemon thread reads it (portable: asyncio cannot read
pipes on every platform's loop) and appends decoded, length-capped lines.
Tributary's own events about the server (started, exited, protocol garbage)
go into the same ring, prefixed ``[tributary]``, so one log tells the story.
Known secret values (the server's expanded ``${VAR}``s, see :meth:`StderrLog.redact`)
are masked as lines arrive: a server echoing its token never puts it in the log.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Iterable
from typing import TextIO

from engine.config.secrets import scrub

DEFAULT_MAX_LINES = 500
MAX_LINE_CHARS = 2_000
_READ_CHUNK = 65_536


class StderrLog:
    """A thread-safe ring buffer of text lines."""

    def __init__(self, max_lines: int = DEFAULT_MAX_LINES) -> None:
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._lock = threading.Lock()
        self._secrets: frozenset[str] = frozenset()
        self.total = 0  # lines ever appended, so readers can tell what they missed

    def redact(self, secrets: Iterable[str]) -> None:
        """Mask these values in every line appended from now on."""
        self._secrets = frozenset(secrets)

    def also_redact(self, secrets: Iterable[str]) -> None:
        """Mask these values too (e.g. an OAuth token obtained during the connection)."""
        self._secrets = self._secrets | frozenset(secrets)

    def scrub(self, text: str) -> str:
        """``text`` with the known secret values masked."""
        return scrub(text, self._secrets) if self._secrets else text

    def append(self, line: str) -> None:
        line = self.scrub(line)
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"… [{len(line) - MAX_LINE_CHARS} chars cut]"
        with self._lock:
            self._lines.append(line)
            self.total += 1

    def event(self, text: str) -> None:
        """Record something Tributary observed about the server."""
        self.append(f"[tributary {time.strftime('%H:%M:%S')}] {text}")

    def lines(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def last_output(self) -> str | None:
        """The last line the server itself wrote, if any (not Tributary's own events)."""
        with self._lock:
            for line in reversed(self._lines):
                if not line.startswith("[tributary"):
                    return line
        return None


def open_stderr_pipe(log: StderrLog) -> TextIO:
    """A writable file for a child's stderr; a thread copies what arrives into ``log``.

    Close the returned file in the parent once the child is spawned, so the
    reader sees end-of-file when the last process holding the pipe exits.
    """
    read_fd, write_fd = os.pipe()
    thread = threading.Thread(
        target=_pump, args=(read_fd, log), name="tributary-stderr", daemon=True
    )
    thread.start()
    return os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")


def _pump(fd: int, log: StderrLog) -> None:
    partial = b""
    try:
        while chunk := os.read(fd, _READ_CHUNK):
            *complete, partial = (partial + chunk).split(b"\n")
            for raw in complete:
                log.append(_decode(raw))
            if len(partial) > MAX_LINE_CHARS * 4:  # a runaway line: flush what we have
                log.append(_decode(partial))
                partial = b""
    except OSError:
        pass
    finally:
        if partial:
            log.append(_decode(partial))
        os.close(fd)


def _decode(raw: bytes) -> str:
    return raw.rstrip(b"\r").decode("utf-8", errors="replace")
