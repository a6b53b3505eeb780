"""Tributary's own servers run inside a one-shot command's process.

A one-shot ``tributary search`` or ``context`` asks its question once and exits. Run
as subprocesses, the built-in ``files`` and ``tasks`` servers each start Python, import
the MCP SDK and the search code and load the embedding model before they answer: two
more processes doing what the command's own process already did. Here they run as
``MCPServer`` objects in the command's process, reached through the SDK's in-memory
transport, so the client code, the tools and the answers are the same as over stdio,
and the model is loaded once for both.

Only a built-in server with the command Tributary gives it is run so; a server the user
gave its own command, one over the shared PostgreSQL index (its connection string is
expanded into a subprocess's environment only) and every third-party server start as
processes, as in the app and ``serve``, where a server's crash must not take the engine
with it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from tributary.engine.config.schema import ServerConfig
from tributary.engine.repos.builtins import BUILTINS, builtin_server
from tributary.engine.sources.connect import Connection, Connector, default_connector
from tributary.engine.sources.stderr import StderrLog

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def in_process_args(server: ServerConfig) -> tuple[str, list[str]] | None:
    """The built-in module and its arguments when ``server`` is a built-in server run
    with the command Tributary gives it over the local index folder, else ``None``."""
    if server.builtin not in BUILTINS or server.transport != "stdio" or "--postgres" in server.args:
        return None
    module = BUILTINS[server.builtin][0]
    default = builtin_server(server.builtin)
    lead = len(default.args) - 2  # the default's own --index-dir FOLDER come last
    if server.command != default.command or server.args[:lead] != default.args[:lead]:
        return None
    return module, list(server.args[lead:])


def _started(module: str, argv: Sequence[str]) -> tuple[MCPServer, Callable[[], None]]:
    """The server for ``module`` run with ``argv``, and what closes what it opened."""
    # The SDK's server configures the root logger (Rich, INFO) unless something did:
    # keep the command's own (Python's default: warnings and worse, as bare messages).
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    if module == BUILTINS["files"][0]:
        from tributary.engine.servers import files

        service = files.service_from_args(argv)
        return files.build_server(service), service.close
    from tributary.engine.servers import tasks

    backend = tasks.service_from_args(argv)
    return tasks.build_server(backend), backend.close


def in_process_builtins(fallback: Connector = default_connector) -> Connector:
    """A connector that runs the built-in servers in this process and every other
    server through ``fallback``."""

    @asynccontextmanager
    async def connect(config: ServerConfig, log: StderrLog) -> AsyncIterator[Connection]:
        found = in_process_args(config)
        if found is None:
            async with fallback(config, log) as connection:
                yield connection
            return
        from mcp.client._memory import InMemoryTransport

        module, argv = found
        loop = asyncio.get_running_loop()
        server, close = await loop.run_in_executor(None, _started, module, argv)  # imports, opens
        try:
            async with InMemoryTransport(server) as (read, write):
                log.event(f"running {module} in this process")
                yield Connection(read, write, None)
        finally:
            # Closing waits for the model's background load: a process that ends while a
            # thread is inside the model's native code is aborted. Not a daemon thread, so
            # the interpreter waits for it before it ends, even when this wait is cancelled
            # (as it is when the engine closes).
            closing = threading.Thread(target=close, name=f"closing {module}")
            closing.start()
            await asyncio.to_thread(closing.join)

    return connect
