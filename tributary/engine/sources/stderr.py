"""Each server's stderr, kept as a bounded ring of its last lines for the UI and CLI.

A pipe per process; a daemon thread reads it (portable: asyncio cannot read
pipes on every platform's loop) and appends decoded, length-capped lines.
Tributary's own events about the server (started, exited, protocol garbage)
go into the same ring, prefixed ``[tributary]``, so one log tells the story.
Known secret values (the server's expanded ``${VAR}``s, see :meth:`StderrLog.redact`)
are masked as lines arrive: a server echoing its token never puts it in the log.

A server flooding stderr must not cost Tributary a core: the pipe is read in bounded
chunks, only the last lines of each chunk that the ring can hold are decoded (the
rest are counted as skipped), and reading is paced at ``FLOOD_BYTES_PER_S`` — past
that the server's own stderr writes wait, as they would on a slow terminal.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Iterable
from typing import TextIO

from tributary.engine.config.secrets import scrub

DEFAULT_MAX_LINES = 500
MAX_LINE_CHARS = 2_000
_READ_CHUNK = 65_536
FLOOD_BYTES_PER_S = 4 * 1024 * 1024
_PACE_WINDOW_S = 0.25


class StderrLog:
    """A thread-safe ring buffer of text lines."""

    def __init__(self, max_lines: int = DEFAULT_MAX_LINES) -> None:
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._lock = threading.Lock()
        self._secrets: frozenset[str] = frozenset()
        self.total = 0  # lines ever seen (appended or skipped), so readers can tell what they missed
        self.skipped = 0  # lines of a flood never decoded: the ring could not have held them
        self.bytes_read = 0  # from the server's stderr pipe

    @property
    def max_lines(self) -> int:
        return self._lines.maxlen or DEFAULT_MAX_LINES

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

    def skip(self, count: int) -> None:
        """``count`` lines went by unread (a flood): count them, and say so once."""
        with self._lock:
            self.total += count
            self.skipped += count
        self.event(f"{count} lines of stderr skipped (the log keeps the last {self.max_lines})")

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
    pace = _Pace(FLOOD_BYTES_PER_S)
    try:
        while chunk := os.read(fd, _READ_CHUNK):
            log.bytes_read += len(chunk)
            data = partial + chunk
            end = data.rfind(b"\n")
            if end >= 0:
                _append_tail(log, data[:end])
                partial = data[end + 1:]
            else:
                partial = data
            if len(partial) > MAX_LINE_CHARS * 4:  # a runaway line: flush what we have
                log.append(_decode(partial))
                partial = b""
            pace.took(len(chunk))
    except OSError:
        pass
    finally:
        if partial:
            log.append(_decode(partial))
        os.close(fd)


def _append_tail(log: StderrLog, block: bytes) -> None:
    """Append the complete lines of ``block``: only as many as the ring holds (beside
    the note that others were skipped)."""
    keep = max(1, log.max_lines - 1)
    start = len(block)
    for _ in range(keep):
        start = block.rfind(b"\n", 0, start)
        if start < 0:
            break
    if start >= 0:  # more lines than the ring holds: skip the older ones undecoded
        log.skip(block.count(b"\n", 0, start) + 1)
    for raw in block[start + 1:].split(b"\n"):
        log.append(_decode(raw))


class _Pace:
    """Sleeps once more than ``rate`` bytes per second were read (per short window)."""

    def __init__(self, rate: float) -> None:
        self._budget = rate * _PACE_WINDOW_S
        self._start = time.monotonic()
        self._bytes = 0

    def took(self, size: int) -> None:
        self._bytes += size
        if self._bytes < self._budget:
            return
        left = self._start + _PACE_WINDOW_S - time.monotonic()
        if left > 0:
            time.sleep(left)
        self._start, self._bytes = time.monotonic(), 0


def _decode(raw: bytes) -> str:
    return raw.rstrip(b"\r").decode("utf-8", errors="replace")
