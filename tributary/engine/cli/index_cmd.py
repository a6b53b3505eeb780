"""``tributary index``: add, update, remove, list and inspect local repository indexes.

A repository's index is its code (the built-in ``files`` server) and its git history
(the ``tasks`` server): ``add`` and ``update`` bring both up to date, ``remove`` deletes
both (``tributary.engine.repos.manage``); ``--no-history`` leaves the history alone."""

from __future__ import annotations

import argparse
import shlex
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tributary.engine.cli.common import config_path, forget_cached_answers
from tributary.engine.cli.progress import ProgressBar, index_progress
from tributary.engine.config.schema import RepoConfig
from tributary.engine.index.backend import IndexBackend, configured_backend
from tributary.engine.wording import counted

if TYPE_CHECKING:
    from tributary.engine.index.manager import IndexInfo


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "index",
        help="index local repositories for the built-in files and tasks servers",
        description="Index local repositories for search: code (chunks, embeddings, BM25) and git "
        "history (each commit and the files it touched; for a folder inside a repository, "
        "the commits that changed that folder).",
    )
    commands = parser.add_subparsers(dest="index_command", metavar="ACTION", required=True)

    add = commands.add_parser("add", help="index a repository (incremental when already indexed)")
    add.add_argument("path", type=Path)
    add.add_argument("--watch", action="store_true", help="keep running and apply live changes")
    add.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="index only paths matching (repeatable)",
    )
    add.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip paths matching (repeatable)",
    )
    add.add_argument("--no-history", action="store_true", help="index the code only, not the git history")
    add.set_defaults(func=_add)

    embed = commands.add_parser(
        "embed", help="give the chunks and past tasks of an index that wait for a vector their vector"
    )
    embed.add_argument("path", type=Path)
    embed.add_argument("--quiet", action="store_true", help="no progress bar (a background run)")
    embed.set_defaults(func=_embed)

    update = commands.add_parser("update", help="re-index changed files (one repo, or all)")
    update.add_argument("path", type=Path, nargs="?")
    update.add_argument("--no-history", action="store_true", help="update the code only, not the git history")
    update.set_defaults(func=_update)

    remove = commands.add_parser("remove", help="delete a repository's index (code and history)")
    remove.add_argument("path", type=Path, help="the repository's folder, or its name as `index list` shows it")
    remove.set_defaults(func=_remove)

    listing = commands.add_parser("list", help="list indexed repositories")
    listing.set_defaults(func=_list)

    status = commands.add_parser("status", help="show index details (one repo, or all)")
    status.add_argument("path", type=Path, nargs="?")
    status.set_defaults(func=_status)


def _repo_config(args: argparse.Namespace, root: Path) -> RepoConfig | None:
    """The config's entry for ``root`` (include/exclude globs), merged with CLI globs."""
    include = list(getattr(args, "include", []) or [])
    exclude = list(getattr(args, "exclude", []) or [])
    try:
        from tributary.engine.config.load import load_config

        value = getattr(args, "config", None)
        config = load_config(Path(value).expanduser() if value else None)
        for repo in config.repos:
            if Path(repo.path).expanduser().resolve() == root:
                return RepoConfig(
                    repo.path,
                    repo.name,
                    [*repo.include, *include],
                    [*repo.exclude, *exclude],
                    repo.watch,
                    repo.tasks,
                )
    except Exception as exc:  # an unreadable config must not stop indexing
        print(f"tributary: config not used: {exc}", file=sys.stderr)
    if include or exclude:
        return RepoConfig(str(root), None, include, exclude)
    return None


def _backend(args: argparse.Namespace) -> IndexBackend:
    """The index backend the config names: SQLite files here, or a shared PostgreSQL."""
    return configured_backend(config_path(args))


def _index_one(root: Path, args: argparse.Namespace) -> int:
    from tributary.engine.repos.manage import repository_pass

    with repository_pass(root, backend=_backend(args)):  # a search meanwhile takes what is written
        return _index_in_turn(root, args)


def _index_in_turn(root: Path, args: argparse.Namespace) -> int:
    from tributary.engine.index.manager import index_repository

    bar = ProgressBar(f"indexed {root.name}")
    on_progress = index_progress(root.name)

    config = _repo_config(args, root)
    stats = index_repository(root, on_progress=on_progress, config=config, backend=_backend(args))
    bar.finish(
        f"{counted(stats.files_total, 'file')}, {counted(stats.chunks_total, 'chunk')}; "
        f"{stats.files_indexed:,} new or changed, {stats.files_deleted:,} removed, "
        f"{counted(stats.chunks_embedded, 'chunk')} embedded in {stats.seconds:.1f}s"
    )
    for warning in stats.warnings[:10]:
        print(f"  warning: {warning}", file=sys.stderr)
    for error in stats.errors[:10]:
        print(f"  skipped: {error}", file=sys.stderr)
    _update_history(root, args)
    forget_cached_answers(root, config_path(args))
    return 0


def _update_history(root: Path, args: argparse.Namespace) -> None:
    """Bring the repository's task history up to date too, unless ``--no-history``."""
    if getattr(args, "no_history", False):
        return
    from tributary.engine.repos.manage import update_history

    update = update_history(root, backend=_backend(args))
    print(f"{root.name}: {update.summary()}", file=sys.stderr)
    if update.stats is not None:
        for error in update.stats.errors[:5]:
            print(f"  skipped: {error}", file=sys.stderr)


def _root(path: Path) -> Path | None:
    root = path.expanduser().resolve()
    if not root.is_dir():
        print(f"tributary: {path}: not a folder", file=sys.stderr)
        return None
    return root


def _embed(args: argparse.Namespace) -> int:
    from tributary.engine.index.manager import embed_repository
    from tributary.engine.tasks.api import embed_history

    root = _root(args.path)
    if root is None:
        return 2
    started = time.perf_counter()
    try:
        stats = embed_repository(
            root, on_progress=None if args.quiet else index_progress(root.name),
            config=_repo_config(args, root),
        )  # fmt: skip
    except FileNotFoundError as exc:
        print(f"tributary: {exc}", file=sys.stderr)
        return 2
    tasks = embed_history(root, backend=_backend(args))
    if stats.chunks_embedded or tasks:
        forget_cached_answers(root, config_path(args))
    if not args.quiet:
        print(
            f"{root.name}: {stats.chunks_embedded} chunks and {tasks} past tasks embedded "
            f"in {time.perf_counter() - started:.1f}s", file=sys.stderr,
        )  # fmt: skip
    return 0


def _add(args: argparse.Namespace) -> int:
    root = _root(args.path)
    if root is None:
        return 2
    if not args.watch:
        return _index_one(root, args)
    return _watch(root, args)


def _watch(root: Path, args: argparse.Namespace) -> int:
    from tributary.engine.index.manager import watch_repository
    from tributary.engine.index.progress import IndexStats

    on_progress = index_progress(root.name)

    def on_update(stats: IndexStats) -> None:
        forget_cached_answers(root, config_path(args))
        stamp = datetime.now().strftime("%H:%M:%S")
        print(
            f"{stamp} {root.name}: {stats.files_indexed:,} new or changed, {stats.files_deleted:,} "
            f"removed, {counted(stats.chunks_embedded, 'chunk')} embedded in "
            f"{stats.seconds * 1000:.0f} ms ({counted(stats.files_total, 'file')}, "
            f"{counted(stats.chunks_total, 'chunk')})",
            file=sys.stderr,
        )

    config = _repo_config(args, root)
    _update_history(root, args)

    def on_git_change() -> None:  # a commit, checkout or pull: new history, maybe
        _update_history(root, args)
        forget_cached_answers(root, config_path(args))

    stop = threading.Event()
    print(f"watching {root} (Ctrl-C to stop)", file=sys.stderr)
    try:
        watch_repository(
            root, config=config, on_progress=on_progress, on_update=on_update,
            on_git_change=None if args.no_history else on_git_change, stop_event=stop,
            backend=_backend(args),
        )
    except KeyboardInterrupt:
        stop.set()
    return 0


def _update(args: argparse.Namespace) -> int:
    from tributary.engine.index.manager import list_indexes

    if args.path is not None:
        root = _root(args.path)
        return 2 if root is None else _index_one(root, args)
    status = 0
    for info in list_indexes(backend=_backend(args)):
        if not info.exists:
            print(
                f"tributary: {info.root}: folder is gone; `tributary index remove` it",
                file=sys.stderr,
            )
            status = 1
            continue
        status = _index_one(info.root, args) or status
    return status


def _remove(args: argparse.Namespace) -> int:
    from tributary.engine.index.manager import list_indexes
    from tributary.engine.repos.manage import remove_repository

    backend = _backend(args)
    if remove_repository(Path(args.path), backend=backend):
        forget_cached_answers(Path(args.path).expanduser().resolve(), config_path(args))
        print(f"removed the index of {args.path}")
        return 0
    # Not a folder that is indexed: the name `index list` shows, when one index has it.
    named = [info for info in list_indexes(backend=backend) if info.name == str(args.path)]
    if len(named) == 1 and remove_repository(named[0].root, backend=backend):
        forget_cached_answers(named[0].root, config_path(args))
        print(f"removed the index of {named[0].root}")
        return 0
    if len(named) > 1:
        roots = ", ".join(str(info.root) for info in named)
        print(f"tributary: {len(named)} indexes are named {args.path} ({roots}); give the path",
              file=sys.stderr)
        return 1
    print(f"tributary: {args.path} is not indexed (see `tributary index list`)", file=sys.stderr)
    return 1


def _age(stamp: float | None) -> str:
    if stamp is None:
        return "never"
    seconds = max(0.0, time.time() - stamp)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit} ago"
    return f"{seconds:.0f}s ago"


def _list(args: argparse.Namespace) -> int:
    from tributary.engine.repos.manage import list_repositories

    infos = list_repositories(backend=_backend(args))
    if not infos:
        print("no repository is indexed; add one with `tributary index add PATH`")
        return 0
    print(f"{'repository':<28} {'files':>7} {'chunks':>8} {'tasks':>7} {'updated':>10}  path")
    for info in infos:
        gone = "" if info.exists else "  (folder missing)"
        tasks = f"{info.tasks}" if info.history else "-"  # no history: not "0 tasks"
        print(
            f"{info.name[:28]:<28} {info.files:>7} {info.chunks:>8} {tasks:>7} "
            f"{_age(info.updated_at):>10}  {info.root}{gone}"
        )
    return 0


def _vectors(info: IndexInfo, underway: bool | None = None) -> str:
    """How many chunks meaning-based search covers, after the chunk count, and for an
    index still waiting for vectors whether a pass embeds it now (``underway``; None:
    not asked) or what finishes it: a stopped pass leaves it waiting."""
    if info.embedded is None or not info.chunks:
        return ""
    if info.embedded >= info.chunks:
        return " (every one embedded: meaning-based search covers them all)"
    return f" ({info.embedded} embedded: {info.status}; keyword and symbol search cover every file{_pass(info, underway)})"


def _pass(info: IndexInfo, underway: bool | None) -> str:
    """Whether a pass embeds ``info``'s repository now, or the command that finishes it."""
    if underway is None:
        return ""
    return "; embedding now" if underway else f"; no pass runs: `tributary index embed {shlex.quote(str(info.root))}` finishes it"


def _history_line(info: IndexInfo, backend: IndexBackend, underway: bool | None = None) -> str:
    from tributary.engine.tasks.api import task_stats

    stats = task_stats(info.root, backend=backend)
    if not stats.tasks:
        return "none imported"
    last = f", newest {stats.last:%Y-%m-%d}" if stats.last else ""
    embedded = info.history_embedded
    waiting = (f" ({embedded} embedded: meaning-based matches of it {int(100 * embedded / stats.tasks)} % ready"
               f"{_pass(info, underway)})" if embedded is not None and embedded < stats.tasks else "")
    return f"{stats.tasks} tasks touching {stats.files} files{last}{waiting}"


def _status(args: argparse.Namespace) -> int:
    from tributary.engine.repos.manage import embedding_underway, list_repositories

    backend = _backend(args)
    infos = list_repositories(backend=backend)
    if args.path is not None:
        wanted = Path(args.path).expanduser().resolve()
        infos = [i for i in infos if i.root == wanted]
        if not infos:
            print(f"tributary: {args.path} is not indexed", file=sys.stderr)
            return 1
    for info in infos:
        underway = embedding_underway(info.root, backend=backend)
        print(
            f"{info.name}\n  root:    {info.root}{'' if info.exists else ' (missing)'}\n"
            f"  index:   {info.location or f'{info.index_path} ({info.size_bytes / 1e6:.1f} MB)'}\n"
            f"  files:   {info.files}\n  chunks:  {info.chunks}{_vectors(info, underway)}\n"
            f"  model:   {info.model}\n  updated: {_age(info.updated_at)}\n"
            f"  history: {_history_line(info, backend, underway)}"
        )
    if not infos:
        print("no repository is indexed")
    return 0
