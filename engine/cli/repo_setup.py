"""Zero-config ``--repo``: index a repository (code and git history) on first use.

The code index is brought up to date on every call (cheap when nothing changed:
only changed files are re-read), with a progress bar on stderr; the git history is
imported incrementally (only new commits).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from engine.cli.common import forget_cached_answers
from engine.cli.progress import ProgressBar


def ensure_repo_indexed(path: Path, config_file: Path | None = None, *, history: bool = True) -> int:
    """0 when the repository's indexes are ready; an exit status otherwise. Cached
    answers from before a change are dropped (``config_file``: the config in use).
    ``history=False`` leaves the task history alone (only the files source is asked)."""
    from engine.index.manager import index_repository
    from engine.index.progress import IndexProgress

    root = path.expanduser().resolve()
    if not root.is_dir():
        print(f"tributary: --repo {path}: not a folder", file=sys.stderr)
        return 2
    bar = ProgressBar(f"indexing {root.name}")

    def on_progress(event: IndexProgress) -> None:
        bar.update(event.files_done, event.files_total,
                   f"{event.chunks_done} chunks, {event.rate:.0f}/s", event.eta_s)

    started = time.perf_counter()
    stats = index_repository(root, on_progress=on_progress)
    bar.finish(
        f"{stats.files_total} files, {stats.chunks_total} chunks "
        f"({stats.files_indexed} files updated in {time.perf_counter() - started:.1f}s)"
        if stats.files_indexed else f"{stats.files_total} files, up to date"
    )
    for error in stats.errors[:5]:
        print(f"  skipped: {error}", file=sys.stderr)
    if (history and _import_history(root)) or stats.files_indexed or stats.files_deleted:
        forget_cached_answers(root, config_file)
    return 0


def wants_history(args: object) -> bool:
    """Whether a command's ``--sources`` (none: every source) asks the tasks source."""
    chosen = getattr(args, "sources", None)
    return not chosen or "tasks" in {s.strip() for s in str(chosen).split(",")}


def _import_history(root: Path) -> bool:
    """Bring the task history up to date; whether it changed."""
    from engine.repos import update_history

    update = update_history(root)
    changed = update.stats is not None and update.stats.changed > 0
    if update.failed or changed:
        print(f"{root.name}: {update.summary()}", file=sys.stderr)
    return changed
