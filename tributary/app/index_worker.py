"""Index one repository in a child process; progress goes to stdout as JSON lines.

    python -m tributary.app.index_worker PATH            index the code, then the git history
    python -m tributary.app.index_worker --watch PATH    index the code, then apply every change
    python -m tributary.app.index_worker --embed PATH    finish the vectors of an index made before

The index manager page runs ``python -m tributary.app.index_worker PATH`` instead of indexing
in the GUI process: the embedding model (torch) never loads there, and indexing's
CPU work cannot stall the event loop through the GIL. This module imports no Qt.

Words before vectors, for the code and the history alike, so that a new repository
answers by its words in seconds and by meaning when the vectors are in: the code's
keyword tier, then the git history's commits (``tributary.engine.repos.manage.
update_history``: the built-in tasks server's) without vectors, then the code's
vectors, then the history's. Each line is one JSON object: ``{"event": "progress",
...IndexProgress fields}`` while indexing the code and embedding it, ``{"event":
"history"}`` as it starts reading the git history, ``{"event": "history-ready",
"history": "<one line>"}`` once its commits can be searched by their words (not for a
folder outside git, which has none),
``{"event": "history-embed", "done": N, "total": M, "rate": R, "eta_s": S}`` while
their vectors are made (past tasks a second, seconds left),
then ``{"event": "done", ...IndexStats fields, "history": "<one line on the history>"}``;
failures exit non-zero with the reason on stderr. A history that could not be read or
embedded does not fail the worker: the code index is good, and the line says why.

With ``--embed`` the worker only gives the chunks and past tasks that wait for a vector
theirs (an index whose first pass was stopped: the app quit, a ``--repo`` search's
background pass killed), at the lower priority from the start, then sends ``"done"``.

With ``--watch`` (the app's live watcher of a repository) the worker brings the history
up to date, indexes the code, then keeps applying changes
(``tributary.engine.index.manager.watch_repository``). It sends ``{"event": "update",
...IndexStats fields}`` after the first pass and after each batch of changes, and
``{"event": "update", "history": "<one line>"}`` when new commits were imported, until
its stdin closes: the app closes it to stop watching, and the pipe closes by itself if
the app dies, so no watcher outlives it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

MIN_INTERVAL_S = 0.1  # at most ~10 progress lines a second: the GUI needs no more
WORKER_NICENESS = 10


class _Pace:
    """Whether a progress line goes out: at most one per ``MIN_INTERVAL_S`` after the
    last one (or after ``since``), and every final one."""

    def __init__(self, since: float = 0.0) -> None:
        self.last = since

    def due(self, final: bool) -> bool:
        now = time.monotonic()
        if final or now - self.last >= MIN_INTERVAL_S:
            self.last = now
            return True
        return False


def _emit(event: str, payload: Any = None, **extra: Any) -> None:
    data = {"event": event, **(dataclasses.asdict(payload) if payload is not None else {}), **extra}
    sys.stdout.write(json.dumps(data, default=str) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    mode = args[0] if args[:1] in (["--watch"], ["--embed"]) else None
    if mode is not None:
        args = args[1:]
    if len(args) != 1:
        print("usage: python -m tributary.app.index_worker [--watch | --embed] PATH", file=sys.stderr)
        return 2
    watch = mode == "--watch"
    import os

    # Background work at a lower priority, so the embedding threads yield the CPU to the
    # GUI the moment it has something to do (2 cores, both busy embedding, otherwise).
    # A new repository's keyword tier is what the person waits for: it runs at the
    # normal priority, and the process (and the threads it starts from then on) steps
    # down once it is written. A watcher is background work from the start.
    lowered = False

    def step_down() -> None:
        nonlocal lowered
        if not lowered and hasattr(os, "nice"):
            os.nice(WORKER_NICENESS)
        lowered = True

    if mode is not None:
        step_down()

    from tributary.engine.api import (
        embed_repository,
        index_repository,
        repository_pass,
        update_history,
    )

    pace = _Pace()

    def on_progress(progress: Any) -> None:
        if progress.phase in ("keyword", "embed"):
            step_down()
        if pace.due(progress.phase in ("keyword", "done")):
            _emit("progress", progress)

    root = Path(args[0]).expanduser().resolve()
    if watch:
        return _watch(root, on_progress)
    if mode == "--embed":
        return _finish_vectors(root, on_progress)
    started = time.perf_counter()
    try:
        with repository_pass(root):  # a search meanwhile takes the index as far as it is written
            stats = index_repository(root, on_progress=on_progress, embed=False)
            step_down()  # (an index already up to date reports no keyword phase)
            _emit("history")
            history = update_history(root, embed=False)
            if history.stats is not None:  # not for a folder outside git or a failed read: no history to search
                _emit("history-ready", history=history.summary())
        embedded = embed_repository(root, on_progress=on_progress)
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    summary = history.summary() + _embed_history(root)[0]
    stats = dataclasses.replace(stats, chunks_embedded=embedded.chunks_embedded,
                                model_reset=embedded.model_reset, seconds=time.perf_counter() - started)
    _emit("done", stats, history=summary)
    return 0


def _finish_vectors(root: Path, on_progress: Any) -> int:
    """Embed what waits in ``root``'s code index, then in its history (``--embed``);
    nothing when another process embeds it already (``"elsewhere": true``)."""
    from tributary.engine.api import embed_repository, embedding_underway

    if embedding_underway(root):
        _emit("done", elsewhere=True)
        return 0
    started = time.perf_counter()
    try:
        stats = embed_repository(root, on_progress=on_progress)
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    summary, tasks = _embed_history(root)
    _emit("done", dataclasses.replace(stats, seconds=time.perf_counter() - started),
          history=summary.removeprefix("; "), tasks_embedded=tasks)
    return 0


def _embed_history(root: Path) -> tuple[str, int]:
    """Give the history's new commits their vectors, saying how far it got ("" when all
    went well, else what the history's line should add: its words still answer), and
    how many it embedded."""
    from tributary.engine.api import embed_history

    started = time.monotonic()
    pace = _Pace(since=started)
    first: list[tuple[int, float]] = []  # the first report: the rate is measured from it

    def on_progress(done: int, total: int) -> None:
        if not first:
            first.append((done, time.monotonic()))
        if pace.due(done == total):
            now = pace.last
            since, at = first[0]
            rate = (done - since) / (now - at) if now > at and done > since else None
            eta = (total - done) / rate if rate else None
            _emit("history-embed", done=done, total=total, rate=rate, eta_s=eta)

    try:
        embedded = embed_history(root, on_progress=on_progress)
    except Exception as exc:  # the model or the store: the commits stay searchable by words
        return f"; its vectors were not made ({type(exc).__name__}: {exc}), so it is searched by its words", 0
    return "", embedded


def _watch(root: Path, on_progress: Any) -> int:
    """Index, then apply every change under ``root`` until stdin closes."""
    import threading

    from tributary.engine.api import update_history, watch_repository

    stop = threading.Event()

    def until_stdin_closes() -> None:
        sys.stdin.buffer.read()  # returns at end of file: the app is done with this watcher
        stop.set()

    def history() -> None:
        update = update_history(root)
        if update.failed or (update.stats is not None and update.stats.changed):
            _emit("update", history=update.summary())

    threading.Thread(target=until_stdin_closes, name="stdin", daemon=True).start()
    try:
        history()
        watch_repository(root, on_progress=on_progress, on_update=lambda stats: _emit("update", stats),
                         on_git_change=history, stop_event=stop)
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
