"""A one-line progress bar on stderr (redrawn in place on a terminal, sparse otherwise)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from tributary.engine.wording import counted

if TYPE_CHECKING:
    from tributary.engine.index.progress import IndexProgress


class ProgressBar:
    def __init__(self, label: str, stream: TextIO | None = None, width: int = 28) -> None:
        self.label = label
        # Looked up now, not at import: tests and callers may have swapped sys.stderr since.
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.tty = self.stream.isatty()
        self._last_draw = 0.0

    def update(
        self, done: int, total: int, note: str = "", eta_s: float | None = None, unit: str = "files"
    ) -> None:
        now = time.monotonic()
        # Off a terminal, a line every few seconds is enough for a log.
        if now - self._last_draw < (0.1 if self.tty else 5.0):
            return
        self._last_draw = now
        if not total:  # still walking the tree: nothing to measure a bar against yet
            line = f"{self.label}: finding files…"
        else:
            filled = int(done / total * self.width)
            eta = f", ETA {eta_s:.0f}s" if eta_s is not None else ""
            said = f", {note}" if note else ""
            line = (f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] "
                    f"{done}/{total} {unit}{said}{eta}")
        if self.tty:
            self.stream.write("\r\x1b[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self, summary: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"{self.label}: {summary}\n")
        self.stream.flush()


def index_progress(name: str, stream: TextIO | None = None) -> Callable[[IndexProgress], None]:
    """A progress callback for an indexing run: a "chunking" bar (files; keyword search
    works when it ends), then an "embedding" bar (chunks given their vectors)."""
    bars: dict[str, ProgressBar] = {}
    started = time.monotonic()

    def on_progress(event: IndexProgress) -> None:
        if event.phase == "chunk" and event.files_total:
            bar = bars.setdefault("chunk", ProgressBar(f"chunking {name}", stream))
            bar.update(event.files_done, event.files_total, f"{event.chunks_done} chunks", event.eta_s)
        elif event.phase == "keyword" and "chunk" in bars and "keyword" not in bars:
            bars["keyword"] = bars.pop("chunk")
            bars["keyword"].finish(
                f"{counted(event.chunks_done, 'chunk')} in {time.monotonic() - started:.1f}s: "
                "keyword and symbol search ready"
            )
        elif event.phase == "embed" and (event.vectors_total > event.vectors_done or "embed" in bars):
            if "embed" not in bars:
                bars["embed"] = ProgressBar(f"embedding {name}", stream)
            bars["embed"].update(
                event.vectors_done, event.vectors_total, f"{event.rate:.0f} chunks/s",
                event.eta_s, unit="chunks",
            )

    return on_progress
