"""``tributary search``: one question to every routed source, one ranked list back."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING

from tributary.engine.cli.common import (
    add_request_options,
    ask_background_engine,
    ask_running_engine,
    config_path,
    fail,
    load_cli_config,
    request_from_args,
    say_what_to_add,
)
from tributary.engine.cli.render import dump_json, response_text, source_line, terminal_width
from tributary.engine.cli.repo_setup import (
    NOT_ANSWERED,
    add_repo_option,
    run_with_repo,
    scope_to_repo,
)
from tributary.engine.model import SearchRequest, SearchResponse

if TYPE_CHECKING:
    from tributary.engine.engine import Engine


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "search",
        help="ask every routed source at once; print one ranked, de-duplicated list",
        description="Ask every routed source at once and print one ranked list, with each "
        "source's status, latency and error.",
    )
    add_request_options(parser)
    add_repo_option(parser)
    parser.add_argument("--json", action="store_true", help="print the whole response as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_with_repo(args, lambda refreshing: _search(args, refreshing=refreshing))


async def _search(args: argparse.Namespace, *, refreshing: bool = False) -> int:
    """``refreshing``: a running engine brings ``--repo`` up to date (``NOT_ANSWERED``
    when none answers)."""
    response = None
    if not args.repo or refreshing:  # a running engine has the config: this process need not read it
        request = request_from_args(args, None)
        response = await ask_running_engine(args, request, top_k_from_config=args.top_k is None,
                                            refresh_repo=refreshing)
        if response is None and refreshing:
            return NOT_ANSWERED
    if response is None:
        config = await load_cli_config(args)
        request = request_from_args(args, config.fusion.top_k)
        if args.repo:
            scope_to_repo(request, args.repo, config)
            response = await ask_running_engine(args, request)
        if response is None:
            response = await ask_background_engine(args, request, config)
    if response is None:  # none answers: a one-shot engine (its slow imports only now)
        from tributary.engine.engine import Engine
        from tributary.engine.servers.inprocess import in_process_builtins

        engine = await Engine.open(config_path(args), config=config, warm=False,
                                   connector=in_process_builtins())
        try:
            await engine.start_sources(engine.route(request.query, request.sources).servers)
            response = await _run_search(engine, request, stream=not args.json)
        finally:
            await engine.aclose()
    elif not args.json and sys.stderr.isatty():
        for report in response.sources:
            print("  " + source_line(report), file=sys.stderr)
    if args.json:
        dump_json(response)
    else:
        print(response_text(response, terminal_width()))
    if response.error:
        say_what_to_add(response)
        return fail(response.error) if args.json else 1
    return 0


async def _run_search(engine: Engine, request: SearchRequest, *, stream: bool) -> SearchResponse:
    final: SearchResponse | None = None
    show = stream and sys.stderr.isatty()
    async with contextlib.aclosing(engine.search_stream(request, partials=show)) as updates:
        async for update in updates:
            if update.source is not None and show:
                print("  " + source_line(update.source), file=sys.stderr)
            if update.final:
                final = update.response
    assert final is not None
    return final
