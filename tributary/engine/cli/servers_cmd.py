"""``tributary servers``: list the configured sources, check them, test one in depth."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import TYPE_CHECKING

from tributary.engine.cli import _server_edit
from tributary.engine.cli.common import config_path, fail, run_async
from tributary.engine.cli.render import one_line, safe, table, terminal_width
from tributary.engine.config.load import load_config
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.config.secrets import server_summary
from tributary.engine.model import hits_said
from tributary.engine.query.check import unicode_problem

if TYPE_CHECKING:
    from tributary.engine.sources.pool import SourcePool
    from tributary.engine.sources.state import ServerTest


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("servers", help="list, check and test the configured MCP servers")
    servers = parser.add_subparsers(dest="servers_command", metavar="ACTION", required=True)

    listing = servers.add_parser("list", help="the servers in the config (and built-ins)")
    listing.add_argument("--check", action="store_true",
                         help="start every enabled server and report status, tools and ping")
    listing.set_defaults(func=run_list)

    test = servers.add_parser("test", help="start one server, list its tools, run a probe query")
    test.add_argument("name")
    test.add_argument("--query", default="test", help="the probe query (default: test)")
    test.set_defaults(func=run_test)

    login = servers.add_parser(
        "login", help="sign in to a remote server (OAuth, in the browser)",
        description="Open the browser at the server's sign-in page and keep the session in "
        "the OS keyring; it is refreshed by itself from then on.")
    login.add_argument("name")
    login.add_argument("--no-browser", action="store_true",
                       help="print the sign-in address instead of opening a browser")
    login.set_defaults(func=run_login)

    logout = servers.add_parser("logout", help="forget a remote server's sign-in")
    logout.add_argument("name")
    logout.set_defaults(func=run_logout)
    _server_edit.register(servers)


def _where(server: ServerConfig) -> str:
    return server_summary(server)


def run_list(args: argparse.Namespace) -> int:
    return run_async(lambda: _list(args))


async def _list(args: argparse.Namespace) -> int:
    from tributary.engine.repos.builtins import with_builtin_servers

    config = with_builtin_servers(load_config(config_path(args)))
    if not config.servers:
        print("no servers configured — add some with `tributary config import FILE`, "
              "or index a repository with `tributary index add PATH`")
        return 0
    checks = await _check_all(config) if args.check else {}
    rows = []
    for server in config.servers.values():
        state = "enabled" if server.enabled else "disabled"
        row = [server.name, server.transport, state, f"{server.weight:g}", f"{server.timeout:g}s"]
        if args.check:
            row.append(checks.get(server.name, "-"))
        row.append(("built-in: " if server.builtin else "") + (_where(server) or ""))
        rows.append(row)
    headers = ["name", "transport", "state", "weight", "timeout"]
    if args.check:
        headers.append("check")
    print(table(rows, [*headers, "command / url"], terminal_width()))
    return 0


async def _check_all(config: Config) -> dict[str, str]:
    from tributary.engine.sources.pool import SourcePool

    enabled = [s for s in config.servers.values() if s.enabled]
    async with SourcePool(enabled) as pool:
        results = await asyncio.gather(*(_check(pool, s.name) for s in enabled))
    return dict(zip((s.name for s in enabled), results, strict=True))


async def _check(pool: SourcePool, name: str) -> str:
    started = time.perf_counter()
    try:
        tools = await pool.list_tools(name, timeout=30.0)
    except Exception as exc:
        return f"DOWN: {one_line(str(exc), 60)}"
    up_ms = (time.perf_counter() - started) * 1000
    state = pool.state(name)
    selected = state.tool or f"no query tool ({state.tool_error})"
    return f"up {up_ms:.0f} ms, {len(tools)} tools, uses {one_line(selected, 50)}"


def run_test(args: argparse.Namespace) -> int:
    return run_async(lambda: _test(args))


async def _test(args: argparse.Namespace) -> int:
    from tributary.engine.engine import Engine
    from tributary.engine.paths import starts_path
    from tributary.engine.repos.builtins import with_builtin_servers
    from tributary.engine.sources.start_record import StartRecord

    problem = unicode_problem(args.query, "the probe query")
    if problem is not None:
        print(f"tributary: {problem}", file=sys.stderr)
        return 2
    config = with_builtin_servers(load_config(config_path(args)))
    server = config.servers.get(args.name)
    if server is None:
        known = ", ".join(config.servers) or "none"
        return fail(f"no server named {args.name!r} (configured: {known})")
    engine = Engine(config, starts=StartRecord(starts_path()))  # a start here counts for searches
    try:
        result = await engine.test_server(server, args.query)
    finally:
        await engine.aclose()
    print(f"server {server.name}: {_verdict(result)}")
    if result.startup_ms is not None:
        print(f"  started and initialised in {result.startup_ms:.0f} ms")
    print(f"  tools ({len(result.tools)}):")
    for tool in result.tools:
        print(f"    {tool.name} — {one_line(tool.description, 90)}")
    print(f"  query tool: {result.selection or '-'}")
    if result.latency_ms is not None:
        found = len(result.probe_hits)
        print(f"  probe {args.query!r}: {hits_said(found)} in {result.latency_ms:.0f} ms")
    for hit in result.probe_hits[:5]:
        print(f"    {one_line(hit.location, 50)}  {one_line(hit.title or hit.content, 60)}")
    if result.error:
        print(f"  error: {one_line(result.error, 300)}")
    if result.stderr:
        print("  stderr (last lines):")
        for line in result.stderr[-10:]:
            print(f"    {safe(line)[:200]}")
    return 0 if result.ok else 1


def _verdict(result: ServerTest) -> str:
    """OK, FAILED, or a server that runs but offers no tool a search may call: it works,
    yet no search asks it, and "FAILED" would send its user looking for a crash."""
    if result.ok:
        return "OK"
    if result.startup_ms is not None and result.tools and result.selection is None:
        return "RUNS, NOT ASKED FOR SEARCHES"
    return "FAILED"


def _remote(args: argparse.Namespace) -> ServerConfig | str:
    """The named server if it can sign in, else the message saying why not."""
    config = load_config(config_path(args))
    server = config.servers.get(args.name)
    if server is None:
        return f"no server named {args.name!r} (configured: {', '.join(config.servers) or 'none'})"
    if server.transport == "stdio":
        return f"{args.name} is a stdio server: only http and sse servers sign in"
    return server


def run_login(args: argparse.Namespace) -> int:
    return run_async(lambda: _login(args))


async def _login(args: argparse.Namespace) -> int:
    import webbrowser

    from tributary.engine.config.keystore import KeystoreError, backend_notice, storage_text
    from tributary.engine.sources.oauth import SignInError, sign_in

    server = _remote(args)
    if isinstance(server, str):
        return fail(server)

    async def show(url: str) -> None:
        print(f"Sign in to {server.name} in your browser; if it does not open, visit:\n  {url}",
              flush=True)
        if not args.no_browser:
            await asyncio.to_thread(webbrowser.open, url)

    try:
        await sign_in(server, show)
    except (SignInError, KeystoreError) as exc:
        return fail(str(exc))
    print(f"signed in to {server.name}; the session is kept {storage_text()}")
    if backend_notice():
        print("note: start a Secret Service such as gnome-keyring or KeePassXC to keep it in "
              "the OS keyring instead")
    return 0


def run_logout(args: argparse.Namespace) -> int:
    return run_async(lambda: _logout(args))


async def _logout(args: argparse.Namespace) -> int:
    from tributary.engine.sources.oauth import sign_out

    server = _remote(args)
    if isinstance(server, str):
        return fail(server)
    had = await sign_out(server)
    print(f"signed out of {server.name}" if had else f"{server.name} had no sign-in to forget")
    return 0
