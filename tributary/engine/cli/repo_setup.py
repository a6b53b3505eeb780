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
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tributary.engine.cli.common import config_path, forget_cached_answers, run_async, wants_history
from tributary.engine.cli.progress import ProgressBar

if TYPE_CHECKING:
    from tributary.engine.config.schema import Config, RepoConfig
    from tributary.engine.model import SearchRequest


def add_repo_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", metavar="PATH",
                        help="ask this repository only (indexed on first use), by the built-in servers")


NOT_ANSWERED = -1  # no exit status: no running engine answered, the command does the work itself


def run_with_repo(args: argparse.Namespace, command: Callable[[bool], Awaitable[int]]) -> int:
    """Run a command that may have ``--repo``. ``command(True)`` asks a running engine
    to bring the repository up to date and answer, and returns ``NOT_ANSWERED`` when
    none does (none runs, or the repository is new); then the repository is brought up
    to date here, with a progress bar, and ``command(False)`` runs."""
    if args.repo and not args.no_attach and Path(args.repo).expanduser().is_dir():
        status = run_async(lambda: command(True))
        if status != NOT_ANSWERED:
            return status
    return prepare_repo(args) or run_async(lambda: command(False))


def prepare_repo(args: argparse.Namespace, embed_later: Callable[[Path], None] | None = None) -> int:
    """0 when the command's ``--repo`` (if any) is indexed and ready; an exit status
    otherwise. Its vectors are left to ``embed_later`` (a background ``index embed``)."""
    if not args.repo:
        return 0
    return ensure_repo_indexed(Path(args.repo), config_path(args), history=wants_history(args),
                               embed_later=embed_later)


def scope_to_repo(request: SearchRequest, repo: str, config: Config) -> None:
    """``request`` asks ``repo`` only, by the built-in servers unless ``--sources``
    named others."""
    from tributary.engine.repos.builtins import scope_to_repository, with_builtin_servers

    scope_to_repository(request, Path(repo).expanduser().resolve(), with_builtin_servers(config).servers)


def ensure_repo_indexed(
    path: Path,
    config_file: Path | None = None,
    *,
    history: bool = True,
    embed_later: Callable[[Path], None] | None = None,
) -> int:
    """0 when the repository's indexes are ready; an exit status otherwise. Cached
    answers from before a change are dropped (``config_file``: the config in use).
    ``history=False`` leaves the task history alone (only the files source is asked).
    Chunks without a vector are handed to ``embed_later`` (default: a background
    ``tributary index embed``)."""
    from tributary.engine.index.progress import IndexProgress
    from tributary.engine.repos.manage import embed_in_background, refresh_repository

    root = path.expanduser().resolve()
    if not root.is_dir():
        print(f"tributary: --repo {path}: not a folder", file=sys.stderr)
        return 2
    bar = ProgressBar(f"indexing {root.name}")

    def on_progress(event: IndexProgress) -> None:
        if event.phase == "chunk":
            bar.update(event.files_done, event.files_total, f"{event.chunks_done} chunks", event.eta_s)

    refresh = refresh_repository(root, history=history, on_progress=on_progress, config=_entry(root, config_file),
                                 embed_later=embed_later or embed_in_background)
    bar.finish(refresh.code_summary())
    for line in refresh.notes():
        print(line, file=sys.stderr)
    if refresh.changed:
        forget_cached_answers(root, config_file)
    return 0


def _entry(root: Path, config_file: Path | None) -> RepoConfig | None:
    """The config's entry for ``root`` (which files its include and exclude patterns
    index); None when it has none or the config cannot be read (the index is still made)."""
    from tributary.engine.config.load import load_config
    from tributary.engine.repos.manage import repo_entry

    try:
        return repo_entry(load_config(config_file).repos, root)
    except Exception as exc:
        print(f"tributary: config not used for {root.name}: {exc}", file=sys.stderr)
        return None
