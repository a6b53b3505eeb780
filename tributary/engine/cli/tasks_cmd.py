"""``tributary tasks``: import a repository's task history and search it.

tributary tasks import --repo PATH [--jsonl FILE] [--no-embed]   git log (or a JSONL export)
tributary tasks search --repo PATH QUERY [--files] [--top-k N]   similar tasks / their files
tributary tasks stats --repo PATH                                what the history holds
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tributary.engine.cli.common import config_path, forget_cached_answers
from tributary.engine.cli.render import dump_json, one_line, table, terminal_width
from tributary.engine.query.check import unicode_problem

if TYPE_CHECKING:
    from tributary.engine.tasks.model import ImportStats

# tributary.engine.tasks (and numpy with it) is imported inside the handlers: every command builds
# this parser, and `tributary search` asking a running engine should not pay for it.


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "tasks",
        help="import and search a repository's task history (commits, issues)",
        description="The task history behind the built-in tasks server.",
    )
    tasks = parser.add_subparsers(dest="tasks_command", metavar="ACTION")

    imp = tasks.add_parser("import", help="import git history, or a JSONL export with --jsonl")
    imp.add_argument("--repo", required=True, help="the repository")
    imp.add_argument("--jsonl", metavar="FILE", help='{"id","date","title","body","files"} a line')
    imp.add_argument("--full", action="store_true", help="re-read all of git history")
    imp.add_argument("--no-embed", action="store_true", help="BM25 only (no embedding model)")
    imp.add_argument("--index-dir", help="where task databases live (default: Tributary's)")
    imp.set_defaults(func=run_import)

    search = tasks.add_parser("search", help="similar past tasks (or, with --files, files)")
    search.add_argument("query", help="the question, in quotes")
    search.add_argument("--repo", required=True, help="the repository")
    search.add_argument("--files", action="store_true", help="rank files instead of tasks")
    search.add_argument("--top-k", type=int, default=10, metavar="N")
    search.add_argument("--as-of", type=_date, metavar="DATE", help="ignore tasks after DATE")
    search.add_argument(
        "--prefer-code",
        type=float,
        default=1.0,
        metavar="W",
        help="with --files: weight of non-code files (1 = no preference, 0 = code only)",
    )
    search.add_argument("--json", action="store_true", help="print JSON")
    search.add_argument("--index-dir", help="where task databases live (default: Tributary's)")
    search.set_defaults(func=run_search)

    stats = tasks.add_parser("stats", help="what the repository's task history holds")
    stats.add_argument("--repo", required=True, help="the repository")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.add_argument("--index-dir", help="where task databases live (default: Tributary's)")
    stats.set_defaults(func=run_stats)

    def usage(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=usage)


def _date(text: str) -> datetime:
    from tributary.engine.tasks.model import parse_date

    try:
        return parse_date(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO date: {text}") from exc


def _progress() -> Callable[[str, int, int], None]:
    """A bar for the tasks being written: redrawn in place on a terminal, a line every
    few seconds in a log (it ran a thousand counts together on one line there)."""
    from tributary.engine.cli.progress import ProgressBar

    bar = ProgressBar("writing tasks")

    def on_progress(phase: str, done: int, total: int) -> None:
        if phase != "write" or not total:
            return
        if done >= total:
            bar.finish(f"{total} written")
        else:
            bar.update(done, total, unit="tasks")

    return on_progress


def run_import(args: argparse.Namespace) -> int:
    from tributary.engine.tasks import import_git_history, import_tasks_jsonl
    from tributary.engine.tasks.sources import GitError

    repo = Path(args.repo).expanduser()
    if not repo.is_dir():
        print(f"tributary: no such folder: {repo}", file=sys.stderr)
        return 2
    try:
        if args.jsonl:
            stats = import_tasks_jsonl(
                repo,
                args.jsonl,
                indexes_dir=args.index_dir,
                embed=not args.no_embed,
                on_progress=_progress(),
            )
        else:
            stats = import_git_history(
                repo,
                indexes_dir=args.index_dir,
                embed=not args.no_embed,
                full=args.full,
                on_progress=_progress(),
            )
    except (GitError, OSError) as exc:
        print(f"tributary: {exc}", file=sys.stderr)
        return 1
    _print_import(stats)
    if stats.changed:
        forget_cached_answers(repo.resolve(), config_path(args))
    return 0


def _print_import(stats: ImportStats) -> None:
    print(
        f"{stats.source}: read {stats.read}, added {stats.added}, updated {stats.updated}, "
        f"unchanged {stats.unchanged}, skipped {stats.skipped}, embedded {stats.embedded} "
        f"in {stats.seconds:.1f} s"
    )
    for error in stats.errors:
        print(f"  skipped: {error}", file=sys.stderr)
    if stats.skipped > len(stats.errors):
        print(f"  … and {stats.skipped - len(stats.errors)} more", file=sys.stderr)


def run_search(args: argparse.Namespace) -> int:
    problem = unicode_problem(args.query)
    if problem is not None:
        print(f"tributary: {problem}", file=sys.stderr)
        return 2
    try:
        if args.files:
            return _search_files(args)
        return _search_tasks(args)
    except FileNotFoundError as exc:
        print(f"tributary: {exc}", file=sys.stderr)
        return 1


def _search_tasks(args: argparse.Namespace) -> int:
    from tributary.engine.tasks import search_tasks

    hits = search_tasks(
        args.repo, args.query, args.top_k, as_of=args.as_of, indexes_dir=args.index_dir
    )
    if args.json:
        dump_json(
            [
                {
                    "id": h.task.id,
                    "date": h.task.date.isoformat(),
                    "title": h.task.title,
                    "score": h.score,
                    "files": list(h.task.files),
                    "body": h.task.body,
                }
                for h in hits
            ],
            sys.stdout,
        )
        return 0
    width = terminal_width()
    rows = [
        [
            str(h.rank),
            f"{h.score:.4f}",
            h.task.date.date().isoformat(),
            h.task.id[:10],
            one_line(h.task.title, max(20, width - 60)),
            str(len(h.task.files)),
        ]
        for h in hits
    ]
    print(table(rows, ["#", "score", "date", "id", "title", "files"], width))
    return 0


def _search_files(args: argparse.Namespace) -> int:
    from tributary.engine.tasks import files_for_task
    from tributary.engine.tasks.ranking import DEFAULT_FILE_RANK

    files = files_for_task(
        args.repo,
        args.query,
        args.top_k,
        as_of=args.as_of,
        indexes_dir=args.index_dir,
        file_params=replace(DEFAULT_FILE_RANK, non_code_weight=args.prefer_code),
    )
    if args.json:
        dump_json(
            [
                {
                    "path": f.path,
                    "score": f.score,
                    "exists": f.exists,
                    "why": f.why(),
                    "tasks": [h.task.id for h in f.tasks],
                    "functions": f.likely_functions(),
                }
                for f in files
            ],
            sys.stdout,
        )
        return 0
    width = terminal_width()
    rows = [
        [str(i), f"{f.score:.4f}", f.path, one_line(f.why(2), max(20, width - 70))]
        for i, f in enumerate(files, start=1)
    ]
    print(table(rows, ["#", "score", "file", "why"], width))
    return 0


def run_stats(args: argparse.Namespace) -> int:
    from tributary.engine.tasks import task_stats

    info = task_stats(args.repo, indexes_dir=args.index_dir)
    data: dict[str, Any] = {
        "database": info.db_path,
        "tasks": info.tasks,
        "files": info.files,
        "by_source": info.by_source,
        "first": info.first.isoformat() if info.first else None,
        "last": info.last.isoformat() if info.last else None,
        "embedder": info.embedder,
        "last_git_commit": info.last_git_commit,
        "with_functions": info.with_functions,
    }
    if args.json:
        dump_json(data, sys.stdout)
    else:
        for key, value in data.items():
            print(f"{key:16} {value}")
    return 0
