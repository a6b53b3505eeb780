"""``tributary context``: fused, budgeted context for an LLM, printed ready to paste."""

from __future__ import annotations

import argparse
import sys

from tributary.engine.cli.common import (
    add_request_options,
    ask_background_engine,
    ask_running_engine,
    config_path,
    fail,
    load_cli_config,
    request_from_args,
    say_what_to_add,
    tokens,
)
from tributary.engine.cli.render import source_line
from tributary.engine.cli.repo_setup import (
    NOT_ANSWERED,
    add_repo_option,
    run_with_repo,
    scope_to_repo,
)
from tributary.engine.model import ContextFormat


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "context",
        help="assemble budgeted context for an LLM from every routed source",
        description="Search, de-duplicate, rank, fit into a token budget and print the "
        "assembled context (attribution per chunk). Source status goes to stderr.",
    )
    add_request_options(parser)
    add_repo_option(parser)
    parser.add_argument("--max-tokens", type=tokens(1), default=None, metavar="N",
                        help="tokens for the prompt as a whole; the context gets N minus "
                        "--reserved-tokens (default from config, 8000)")
    parser.add_argument("--reserved-tokens", type=tokens(0), default=None, metavar="N",
                        help="of those, tokens kept free for your question and the answer "
                        "(default from config, 1000; its share of a smaller --max-tokens)")
    parser.add_argument("--format", choices=[f.value for f in ContextFormat], default=None,
                        help="how each chunk is framed (default from config, markdown): its location, "
                        "source and score, and its repository when the answer holds several")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_with_repo(args, lambda refreshing: _context(args, refreshing=refreshing))


def _reserved(reserved: int, whole: int, asked: int) -> int:
    """The tokens kept free of a prompt of ``asked`` tokens: the configured number, or,
    when ``--max-tokens`` asks for less than that, the configured share of it."""
    return reserved if reserved < asked else asked * reserved // max(whole, reserved + 1)


async def _context(args: argparse.Namespace, *, refreshing: bool = False) -> int:
    """``refreshing``: a running engine brings ``--repo`` up to date (``NOT_ANSWERED``
    when none answers)."""
    config = await load_cli_config(args)
    request = request_from_args(args, config.fusion.top_k)
    if args.max_tokens is None:
        request.max_tokens = config.budget.max_tokens
    if args.reserved_tokens is None:
        request.reserved_tokens = _reserved(config.budget.reserved_tokens, config.budget.max_tokens,
                                            request.max_tokens)
    if args.format is None:
        request.format = ContextFormat(config.budget.format)
    if request.reserved_tokens >= request.max_tokens:
        return fail(f"--reserved-tokens ({request.reserved_tokens}) must be below "
                    f"--max-tokens ({request.max_tokens})")
    if refreshing:
        response = await ask_running_engine(args, request, refresh_repo=True)
        if response is None:
            return NOT_ANSWERED
    else:
        if args.repo:
            scope_to_repo(request, args.repo, config)
        response = await ask_running_engine(args, request) or await ask_background_engine(args, request, config)
    if response is None:  # none answers: a one-shot engine (its slow imports only now)
        from tributary.engine.engine import Engine
        from tributary.engine.servers.inprocess import in_process_builtins

        engine = await Engine.open(config_path(args), config=config, warm=False,
                                   connector=in_process_builtins())
        try:
            await engine.start_sources(engine.route(request.query, request.sources).servers)
            response = await engine.search(request)
        finally:
            await engine.aclose()
    for note in response.notes:
        print(f"note: {note}", file=sys.stderr)
    for report in response.sources:
        print(source_line(report), file=sys.stderr)
    if response.error:
        say_what_to_add(response)
        return fail(response.error)
    context = response.context
    if context is None:
        return fail("no context was assembled")
    sys.stdout.write(context.text)
    if not context.text.endswith("\n"):
        sys.stdout.write("\n")
    print(
        f"{context.token_count} of {context.budget} tokens ({context.utilisation:.0%}), "
        f"{len(context.chunks)} chunks, {context.dropped} dropped",
        file=sys.stderr,
    )
    return 0
