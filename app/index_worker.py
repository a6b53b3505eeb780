"""Index one repository in a child process; progress goes to stdout as JSON lines.

The index manager page runs ``python -m app.index_worker PATH`` instead of indexing
in the GUI process: the embedding model (torch) never loads there, and indexing's
CPU work cannot stall the event loop through the GIL. This module imports no Qt.

Each line is one JSON object: ``{"event": "progress", ...IndexProgress fields}``
while indexing, then ``{"event": "done", ...IndexStats fields}``; failures exit
non-zero with the reason on stderr.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

MIN_INTERVAL_S = 0.1  # at most ~10 progress lines a second: the GUI needs no more
WORKER_NICENESS = 10


def _emit(event: str, payload: Any) -> None:
    data = {"event": event, **dataclasses.asdict(payload)}
    sys.stdout.write(json.dumps(data, default=str) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m app.index_worker PATH", file=sys.stderr)
        return 2
    import os
    import time

    # Background work: at a lower priority the embedding threads yield the CPU to the
    # GUI the moment it has something to do (2 cores, both busy embedding, otherwise).
    if hasattr(os, "nice"):
        os.nice(WORKER_NICENESS)

    from engine.index.manager import index_repository

    last = 0.0

    def on_progress(progress: Any) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= MIN_INTERVAL_S or progress.phase == "done":
            last = now
            _emit("progress", progress)

    try:
        stats = index_repository(Path(args[0]), on_progress=on_progress)
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    _emit("done", stats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
