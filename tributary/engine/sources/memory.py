"""An in-memory connector: the pool talks to an ``MCPServer`` object in this process.

For unit tests and embedding (the ``httpx.MockTransport`` idea): no subprocess,
no pipes, the same ``ClientSession`` code path as real servers.
``memory_connector(factory)`` calls ``factory(config)`` for each connection, so
a test can hand out a fresh server per (re)start, or fail to start on purpose
by raising.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from mcp.client._memory import InMemoryTransport
from mcp.server.mcpserver import MCPServer

from tributary.engine.config.schema import ServerConfig
from tributary.engine.sources.connect import Connection, Connector
from tributary.engine.sources.stderr import StderrLog

ServerFactory = Callable[[ServerConfig], MCPServer]


def memory_connector(factory: ServerFactory) -> Connector:
    @asynccontextmanager
    async def connect(config: ServerConfig, log: StderrLog) -> AsyncIterator[Connection]:
        server = factory(config)
        async with InMemoryTransport(server) as (read, write):
            log.event(f"connected in memory to {server.name}")
            yield Connection(read, write, None)

    return connect
