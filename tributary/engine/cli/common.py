"""What the CLI's commands share: request options, opening the engine, error output."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import BinaryIO, TypeVar

from tributary.engine.config.errors import ConfigError
from tributary.engine.config.schema import MAX_CONTEXT_TOKENS, TOP_K_MAX, TOP_K_MIN, Config
from tributary.engine.model import (
    FUSION_STRATEGIES,
    NOTHING_CONFIGURED,
    ContextFormat,
    Hints,
    SearchRequest,
    SearchResponse,
    TaskType,
)
from tributary.engine.query.check import QueryError, check_query

T = TypeVar("T")


def config_path(args: argparse.Namespace) -> Path | None:
    value = getattr(args, "config", None)
    return Path(value).expanduser() if value else None


async def load_cli_config(args: argparse.Namespace) -> Config:
    """The config for ``search`` and ``context``: one that is invalid because it is being
    saved right now (an editor writing in two steps) is waited for briefly, instead of
    failing the command; one that stays invalid fails it as before."""
    from tributary.engine.config.load import load_config_settled

    def waiting() -> None:
        print("tributary: the config file is invalid and was just changed; "
              "waiting for it to be written completely", file=sys.stderr, flush=True)

    return await load_config_settled(config_path(args), on_wait=waiting)


def forget_cached_answers(root: Path, config_file: Path | None) -> None:
    """A repository's index changed: drop the cached answers that drew on it from the
    shared cache (SQLite or Redis: every Tributary process's), so no search replays an
    answer from before the change. Best effort: the index is good either way."""
    from tributary.engine.cache import invalidate_repository_blocking
    from tributary.engine.config.load import load_config

    try:
        invalidate_repository_blocking(load_config(config_file), root)
    except Exception as exc:  # a broken config or cache: say so, and carry on
        print(f"tributary: cached answers about {root} not dropped: {exc}", file=sys.stderr)


def whole_number(low: int, high: int, name: str) -> Callable[[str], int]:
    """An argument type: a whole number from ``low`` to ``high`` (argparse calls a value
    that is no number an "invalid ``name`` value")."""

    def parse(value: str) -> int:
        number = int(value)
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {number}")
        return number

    parse.__name__ = name
    return parse


top_k = whole_number(TOP_K_MIN, TOP_K_MAX, "top_k")


def tokens(low: int) -> Callable[[str], int]:
    """An argument type: a whole number of tokens from ``low`` to the largest budget."""
    return whole_number(low, MAX_CONTEXT_TOKENS, "tokens")


def add_request_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="the question, in quotes; - reads it from standard input "
                        "(an issue, a bug report: `gh issue view 42 | tributary context -`)")
    parser.add_argument("--top-k", type=top_k, default=None, metavar="N",
                        help=f"how many results ({TOP_K_MIN}-{TOP_K_MAX}; default from config, 30)")
    parser.add_argument("--strategy", choices=FUSION_STRATEGIES, help="fusion strategy (default from config)")
    parser.add_argument("--sources", "--source", action="append", metavar="A,B",
                        help="ask only these servers (skips routing; repeatable)")
    parser.add_argument("--no-cache", action="store_true", help="ask the sources even if cached")
    parser.add_argument("--task-type", choices=[t.value for t in TaskType], default="implementation")
    parser.add_argument("--related-file", action="append", default=[], metavar="PATH",
                        help="hint: a file the answer relates to (repeatable)")
    parser.add_argument("--related-issue", action="append", default=[], metavar="ID",
                        help="hint: an issue the answer relates to (repeatable)")
    parser.add_argument("--language", help="hint: the programming language")
    parser.add_argument("--framework", help="hint: the framework")
    parser.add_argument("--no-attach", action="store_true",
                        help="answer with an engine of this command's own: ask no running one (the "
                        "app's, `serve`'s) and start none in the background")


STDIN_QUESTION_BYTES = 1 << 20  # more than any question is searched for (MAX_QUERY_CHARS)


def read_question(stream: BinaryIO) -> str:
    """The question piped in for ``-``: its bytes decoded as a source file's are (UTF-8,
    else a byte-order mark, a coding line or the detected encoding); a
    :class:`QueryError` that says why for input that is too long or not text."""
    from tributary.engine.index.decoding import UndecodableError, decode_source

    data = stream.read(STDIN_QUESTION_BYTES + 1)
    if len(data) > STDIN_QUESTION_BYTES:
        raise QueryError(f"the question on standard input is over {STDIN_QUESTION_BYTES // (1 << 20)} MiB; "
                         "pipe in the issue or report itself")
    try:
        return decode_source(data).text
    except UndecodableError as exc:
        raise QueryError(f"the question on standard input is not text: {exc}") from None


def question_of(args: argparse.Namespace) -> str:
    """The question the arguments give: the text itself, or for ``-`` standard input
    (read once, whichever step asks first)."""
    if args.query == "-":
        if sys.stdin.isatty():
            print("tributary: type the question, then Ctrl-D on a line of its own", file=sys.stderr)
        args.query = read_question(sys.stdin.buffer)
    return str(args.query)


def request_from_args(args: argparse.Namespace, default_top_k: int | None) -> SearchRequest:
    """The request the command's arguments say; ``default_top_k`` (the config's) when
    ``--top-k`` is not given, or the model's default when that is None too."""
    plain = SearchRequest(question_of(args))
    check_query(plain)  # before any source is started for it
    named = [s.strip() for value in args.sources or () for s in value.split(",") if s.strip()]
    sources = list(dict.fromkeys(named)) or None
    request = SearchRequest(
        query=args.query,
        task_type=TaskType(args.task_type),
        top_k=args.top_k or default_top_k or plain.top_k,
        sources=sources,
        strategy=args.strategy,
        use_cache=not args.no_cache,
        hints=Hints(
            related_files=list(args.related_file),
            related_issues=list(args.related_issue),
            language=args.language,
            framework=args.framework,
        ),
    )
    if hasattr(args, "max_tokens") and args.max_tokens is not None:
        request.max_tokens = args.max_tokens
    if hasattr(args, "reserved_tokens") and args.reserved_tokens is not None:
        request.reserved_tokens = args.reserved_tokens
    if hasattr(args, "format") and args.format:
        request.format = ContextFormat(args.format)
    return request


def fail(message: str) -> int:
    print(f"tributary: {message}", file=sys.stderr)
    return 1


def run_async(main: Callable[[], Awaitable[int]]) -> int:
    """Run a command's coroutine; a config error is printed whole, and so is a query
    that cannot be searched (empty, not valid Unicode), exit status 2. A shutdown signal
    cancels it, so it stops its sources (:mod:`tributary.engine.runtime.shutdown`)."""
    from tributary.engine.runtime.shutdown import run_until_signalled

    try:
        return run_until_signalled(lambda: _call(main))
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except QueryError as exc:
        print(f"tributary: {exc}", file=sys.stderr)
        return 2


async def _call(main: Callable[[], Awaitable[int]]) -> int:
    return await main()


async def ask_running_engine(
    args: argparse.Namespace, request: SearchRequest, *, top_k_from_config: bool = False,
    refresh_repo: bool = False,
) -> SearchResponse | None:
    """The answer of the app's or ``tributary serve``'s engine for this home and config,
    with its servers already warm; None when none runs (or ``--no-attach``).
    ``top_k_from_config``: that engine's configured ``top_k`` applies. ``refresh_repo``:
    that engine brings ``--repo`` up to date and asks it only (None when the repository
    is not indexed yet)."""
    if getattr(args, "no_attach", False):
        return None
    from tributary.engine.attach import RepoScope, ask

    repo = RepoScope(Path(args.repo).expanduser().resolve(), wants_history(args)) if refresh_repo else None
    attached = await ask(request, config_path(args), top_k_from_config=top_k_from_config, repo=repo)
    if attached is None:
        return None
    for note in attached.notes:
        print(note, file=sys.stderr)
    print(f"tributary: answered by the running engine (pid {attached.pid})", file=sys.stderr)
    return attached.response


def wants_history(args: object) -> bool:
    """Whether a command's ``--sources`` (none: every source) asks the tasks source."""
    chosen = getattr(args, "sources", None)
    return not chosen or "tasks" in {s.strip() for s in str(chosen).split(",")}


async def ask_background_engine(
    args: argparse.Namespace, request: SearchRequest, config: Config
) -> SearchResponse | None:
    """When no engine runs: start one in the background (:mod:`tributary.engine.background`)
    and ask it, so this command and the next ones share warm servers; None when the
    config turns that off (``cli.background_minutes: 0``), ``--no-attach`` is given, or
    it does not start (the caller then runs a one-shot engine)."""
    if getattr(args, "no_attach", False):
        return None
    from tributary.engine.background import minutes_from, start

    minutes = minutes_from(config.cli.background_minutes)
    if minutes <= 0:
        return None
    started = await start(config_path(args), minutes)  # an engine of another config: already
    if started.pid is None:
        print(f"tributary: note: no background engine ({started.reason}); searching without it", file=sys.stderr)
        return None
    if not started.already:
        print(f"tributary: started an engine in the background (pid {started.pid}) to answer this and "
              f"the next searches with its servers warm; it stops after {minutes:g} minutes unused "
              "(`tributary engine stop`; `cli.background_minutes: 0` in the config turns this off)",
              file=sys.stderr)
    return await ask_running_engine(args, request)


def say_what_to_add(response: SearchResponse) -> None:
    """After a search that had nothing to ask, the commands that give it something."""
    if response.error and response.error.endswith(NOTHING_CONFIGURED):
        print("tributary: index a repository with `tributary index add PATH`, or add an MCP server "
              "with `tributary servers add NAME -- COMMAND` (`tributary config import FILE` takes "
              "an MCP client's)", file=sys.stderr)

