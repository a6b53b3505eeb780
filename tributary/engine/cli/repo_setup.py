"""Zero-config ``--repo``: index a repository (code and git history) on first use.

The code index is brought up to date on every call (cheap when nothing changed:
only changed files are re-read), with a progress bar on stderr; the git history is
imported incrementally (only new commits). Only the keyword tiers are waited for: the
chunks and past tasks that need vectors are embedded by a background ``tributary index
embed``, so the first answer comes in seconds and dense matches fill in as vectors
arrive.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from tributary.engine.cli.common import config_path, forget_cached_answers
from tributary.engine.cli.progress import ProgressBar
from tributary.engine.wording import counted

if TYPE_CHECKING:
    from tributary.engine.config.schema import Config
    from tributary.engine.model import SearchRequest


def add_repo_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", metavar="PATH",
                        help="ask this repository only (indexed on first use), by the built-in servers")


def prepare_repo(args: argparse.Namespace, embed_later: Callable[[Path], None] | None = None) -> int:
    """0 when the command's ``--repo`` (if any) is indexed and ready; an exit status
    otherwise. Its vectors are left to ``embed_later`` (a background ``index embed``)."""
    if not args.repo:
        return 0
    return ensure_repo_indexed(Path(args.repo), config_path(args), history=wants_history(args),
                               embed_later=embed_later or embed_in_background)


def scope_to_repo(request: SearchRequest, repo: str, config: Config) -> None:
    """``request`` asks ``repo`` only, by the built-in servers unless ``--sources``
    named others."""
    request.filters.repos.append(str(Path(repo).expanduser().resolve()))
    if request.sources is None:
        from tributary.engine.repos.builtins import with_builtin_servers

        servers = with_builtin_servers(config).servers
        request.sources = [n for n in ("files", "tasks") if n in servers]


def embed_in_background(root: Path) -> None:
    """Start ``tributary index embed ROOT`` detached: it outlives this command."""
    subprocess.Popen(
        [sys.executable, "-m", "tributary", "index", "embed", "--quiet", str(root)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )  # fmt: skip


def ensure_repo_indexed(
    path: Path,
    config_file: Path | None = None,
    *,
    history: bool = True,
    embed_later: Callable[[Path], None] = embed_in_background,
) -> int:
    """0 when the repository's indexes are ready; an exit status otherwise. Cached
    answers from before a change are dropped (``config_file``: the config in use).
    ``history=False`` leaves the task history alone (only the files source is asked).
    Chunks without a vector are handed to ``embed_later``."""
    from tributary.engine.index.manager import index_repository, repository_readiness
    from tributary.engine.index.progress import IndexProgress

    root = path.expanduser().resolve()
    if not root.is_dir():
        print(f"tributary: --repo {path}: not a folder", file=sys.stderr)
        return 2
    bar = ProgressBar(f"indexing {root.name}")

    def on_progress(event: IndexProgress) -> None:
        if event.phase == "chunk":
            bar.update(event.files_done, event.files_total, f"{event.chunks_done} chunks", event.eta_s)

    started = time.perf_counter()
    stats = index_repository(root, on_progress=on_progress, embed=False)
    bar.finish(
        f"{counted(stats.files_total, 'file')}, {counted(stats.chunks_total, 'chunk')} "
        f"({counted(stats.files_indexed, 'file')} updated in {time.perf_counter() - started:.1f}s)"
        if stats.files_indexed else f"{counted(stats.files_total, 'file')}, up to date"
    )
    for warning in stats.warnings[:5]:
        print(f"  warning: {warning}", file=sys.stderr)
    for error in stats.errors[:5]:
        print(f"  skipped: {error}", file=sys.stderr)
    embedded, total = repository_readiness(root)  # (the configured backend's index)
    if embedded < total:
        print(
            f"{root.name}: keyword search ready; embedding {counted(total - embedded, 'chunk')} in the "
            "background (meaning-based matches fill in as it goes)",
            file=sys.stderr,
        )
    new_history = history and _import_history(root)
    if (embedded < total or (history and _history_waits(root))) and not _embedding_underway(root):
        embed_later(root)
    if new_history or stats.files_indexed or stats.files_deleted:
        forget_cached_answers(root, config_file)
    return 0


def wants_history(args: object) -> bool:
    """Whether a command's ``--sources`` (none: every source) asks the tasks source."""
    chosen = getattr(args, "sources", None)
    return not chosen or "tasks" in {s.strip() for s in str(chosen).split(",")}


def _embedding_underway(root: Path) -> bool:
    """Whether a pass embedding ``root`` runs already (started by an earlier search, the
    app or ``index embed``): it takes what waits, so none is started beside it."""
    from tributary.engine.repos.manage import embedding_underway

    return embedding_underway(root)


def _history_waits(root: Path) -> bool:
    """Whether past tasks of the history wait for their vectors (imported just now, or
    left by a background pass that was stopped)."""
    from tributary.engine.tasks.api import open_history

    store = open_history(root, create=False)
    if store is None:
        return False
    with closing(store):
        embedded, total = store.vector_counts()
    return embedded < total


def _import_history(root: Path) -> bool:
    """Bring the task history's keywords up to date (its vectors are the background
    embedder's); whether it changed."""
    from tributary.engine.repos.manage import update_history

    update = update_history(root, embed=False)
    changed = update.stats is not None and update.stats.changed > 0
    if update.failed or changed:
        print(f"{root.name}: {update.summary()}", file=sys.stderr)
    return changed
