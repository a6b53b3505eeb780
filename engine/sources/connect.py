"""The transport seam: a *connector* opens a connection to one configured server.

A connector is ``connector(config, log) -> async context manager -> Connection``:
the pool never knows whether the other end is a subprocess, an HTTP endpoint or
an in-memory server (tests plug :func:`engine.sources.memory.memory_connector`;
the idea is httpx's ``MockTransport``). Leaving the context closes the
connection and stops whatever was started.

:func:`make_connector` (and :data:`default_connector`, built with the defaults):

* stdio — :func:`engine.sources.stdio.open_stdio` spawns the command in its own
  process group with :func:`engine.sources.env.child_environment`, stderr piped
  into the server's ring log, stdout lines bounded by ``max_line_bytes``;
* http — the SDK's ``streamable_http_client`` with the configured headers.

Both first expand the server's ``${VAR}`` references from the environment
(:func:`engine.config.expand.expand_server`: the config keeps the references,
values exist only in the connection) and tell the server's log which values
to mask.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage

from engine.config.expand import ExpansionError, expand_server
from engine.config.schema import ServerConfig
from engine.config.secrets import mask_url, secret_values
from engine.errors import TributaryError
from engine.sources.env import child_environment
from engine.sources.stderr import StderrLog, open_stderr_pipe
from engine.sources.stdio import DEFAULT_MAX_LINE_BYTES, open_stdio


@dataclass(slots=True)
class Connection:
    read: ReadStream[SessionMessage | Exception]
    write: WriteStream[SessionMessage]
    pid: int | None = None
    # Stop an unresponsive server now (terminate, then kill its process group, and reap
    # it); None when there is nothing to kill (HTTP, in memory): those only reconnect.
    kill: Callable[[], Awaitable[None]] | None = None


Connector = Callable[[ServerConfig, StderrLog], AbstractAsyncContextManager[Connection]]


class ConnectError(TributaryError):
    """The configuration cannot be connected (no command, no url)."""


def make_connector(*, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Connector:
    """The real connector: stdio subprocesses and streamable HTTP."""

    @asynccontextmanager
    async def connect(config: ServerConfig, log: StderrLog) -> AsyncIterator[Connection]:
        log.redact(secret_values(config))
        config = _expanded(config)
        if config.transport == "http":
            async with http_connection(config, log) as connection:
                yield connection
        else:
            async with stdio_connection(config, log, max_line_bytes) as connection:
                yield connection

    return connect


def _expanded(config: ServerConfig) -> ServerConfig:
    """``config`` with its ``${VAR}``s expanded; an unset one fails this start, on one line."""
    try:
        return expand_server(config)
    except ExpansionError as exc:
        problems = "; ".join(f"{i.key_path}: {i.message}" for i in exc.issues)
        raise ConnectError(problems) from None


@asynccontextmanager
async def stdio_connection(
    config: ServerConfig, log: StderrLog, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> AsyncIterator[Connection]:
    if not config.command:
        raise ConnectError(f"server {config.name!r}: stdio transport needs a command")
    stderr = open_stderr_pipe(log)
    try:
        async with open_stdio(
            config.command, list(config.args), env=child_environment(config.env),
            cwd=config.cwd, stderr=stderr, log=log, max_line_bytes=max_line_bytes,
        ) as streams:
            log.event(f"started {config.command} (pid {streams.pid})")
            yield Connection(streams.read, streams.write, streams.pid, streams.kill)
    finally:
        stderr.close()


@asynccontextmanager
async def http_connection(config: ServerConfig, log: StderrLog) -> AsyncIterator[Connection]:
    if not config.url:
        raise ConnectError(f"server {config.name!r}: http transport needs a url")
    async with (
        create_mcp_http_client(headers=dict(config.headers) or None) as http,
        streamable_http_client(config.url, http_client=http) as (read, write),
    ):
        log.event(f"connected to {mask_url(config.url)}")
        yield Connection(read, write, None)


default_connector: Connector = make_connector()
