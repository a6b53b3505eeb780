"""``tributary serve``: Tributary itself as an MCP server (stdio, or streamable HTTP)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from tributary.engine.cli.common import config_path, fail, load_cli_config
from tributary.engine.config.errors import ConfigError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "serve",
        help="serve fused context over MCP (stdio by default)",
        description="Run Tributary as an MCP server with the tools search, get_context and "
        "feedback. Over stdio by default (for Claude Desktop and IDE agents), or streamable "
        "HTTP with --http PORT, bound to 127.0.0.1.",
    )
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on PORT")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind with --http; any but 127.0.0.1, localhost and ::1 "
                        "needs --token")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="another name HTTP clients may send in Host/Origin (e.g. a proxy's); "
                        "repeatable")
    tokens = parser.add_mutually_exclusive_group()
    tokens.add_argument("--token", default=None,
                        help="bearer token HTTP clients must send; visible to other users in "
                        "the process list, so prefer $TRIBUTARY_TOKEN or --token-file")
    tokens.add_argument("--token-file", default=None, metavar="PATH",
                        help="read the bearer token from PATH (its first line), e.g. a file "
                        "only you can read; default: $TRIBUTARY_TOKEN")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tributary.engine.config.selfref import nested_refusal
    from tributary.engine.servers import face

    if (refusal := nested_refusal()) is not None:  # a Tributary's own source: no copies of copies
        return fail(refusal)
    # A config with errors is said whole, with file and line, before any transport starts:
    # inside the server's start-up it came out as a traceback of task groups.
    try:
        asyncio.run(load_cli_config(args))
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 2

    if args.http is None:
        return face.run_stdio(config_path(args))
    token = args.token or os.environ.get("TRIBUTARY_TOKEN") or None
    if args.token_file is not None:
        try:
            lines = Path(args.token_file).expanduser().read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            return fail(f"--token-file {args.token_file}: cannot read it ({exc})")
        token = lines[0].strip() if lines and lines[0].strip() else None
        if token is None:
            return fail(f"--token-file {args.token_file}: the file is empty")
    try:
        asyncio.run(face.serve_http(config_path(args), host=args.host, port=args.http, token=token,
                                       allow_hosts=args.allow_host))
    except ValueError as exc:
        return fail(str(exc))
    return 0
