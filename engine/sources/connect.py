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
* http — the SDK's ``streamable_http_client`` with the configured headers;
* sse — the SDK's ``sse_client`` (the older HTTP+SSE transport) with the same
  headers and the same HTTP timeouts as streamable HTTP.

Remote servers are supervised exactly alike: the client cannot tell them apart.

All first expand the server's ``${VAR}`` references from the environment and its
``${keyring:NAME}`` ones from the OS keyring, read in a worker thread
(:func:`engine.config.expand.expand_server`: the config keeps the references,
values exist only in the connection), and tell the server's log which values
to mask.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

import anyio
import httpx2
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import (
    MCP_DEFAULT_SSE_READ_TIMEOUT,
    MCP_DEFAULT_TIMEOUT,
    create_mcp_http_client,
)
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage

from engine.config import keystore
from engine.config.expand import ExpansionError, expand_server, keyring_names
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
        expanded = await expand_for_connection(config, log)
        if config.transport in ("http", "sse"):
            auth = await _auth_for(config, expanded, log)
            async with remote_connection(expanded, log, auth) as connection:
                yield connection
        else:
            async with stdio_connection(expanded, log, max_line_bytes) as connection:
                yield connection

    return connect


async def expand_for_connection(config: ServerConfig, log: StderrLog | None = None) -> ServerConfig:
    """``config`` with its references expanded (keyring read in a worker thread); the
    values to mask are given to ``log`` first. Raises :class:`ConnectError`."""
    keyring_values = await _keyring_values(config)
    if log is not None:
        log.redact(secret_values(config, keyring_values=keyring_values))
    return _expanded(config, keyring_values)


async def _auth_for(config: ServerConfig, expanded: ServerConfig, log: StderrLog) -> httpx2.Auth | None:
    """The OAuth provider for a remote server that may sign in (stored session only);
    its tokens are masked in the server's log, errors and results."""
    from engine.sources.oauth import background_auth, needs_oauth

    if not needs_oauth(config):
        return None
    return await background_auth(config, expanded.url or "", log.also_redact)


async def _keyring_values(config: ServerConfig) -> dict[str, str]:
    """The keyring secrets ``config`` refers to (absent ones left out: expansion says so)."""
    wanted = keyring_names(config)
    if not wanted:
        return {}

    def read() -> dict[str, str]:
        found = {name: keystore.get_secret(name) for name in wanted}
        return {name: value for name, value in found.items() if value is not None}

    try:
        return await anyio.to_thread.run_sync(read)
    except keystore.KeystoreError as exc:
        raise ConnectError(str(exc)) from None


def _expanded(config: ServerConfig, keyring_values: dict[str, str]) -> ServerConfig:
    """``config`` with its references expanded; an unset one fails this start, on one line."""
    try:
        return expand_server(config, secrets=keyring_values)
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
async def remote_streams(
    config: ServerConfig, auth: httpx2.Auth | None = None,
) -> AsyncIterator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
    """The read and write streams of an (expanded) http or sse server. Both transports
    get the configured headers, the same HTTP timeouts and ``auth`` (OAuth)."""
    if not config.url:
        raise ConnectError(f"server {config.name!r}: {config.transport} transport needs a url")
    headers = dict(config.headers) or None
    if config.transport == "sse":
        # The older HTTP+SSE transport: a GET event stream for answers, POSTs for requests.
        async with sse_client(config.url, headers=headers, timeout=MCP_DEFAULT_TIMEOUT,
                              sse_read_timeout=MCP_DEFAULT_SSE_READ_TIMEOUT, auth=auth) as streams:
            yield streams
        return
    async with (
        create_mcp_http_client(headers=headers, auth=auth) as http,
        streamable_http_client(config.url, http_client=http) as (read, write),
    ):
        yield read, write


@asynccontextmanager
async def remote_connection(
    config: ServerConfig, log: StderrLog, auth: httpx2.Auth | None = None,
) -> AsyncIterator[Connection]:
    async with remote_streams(config, auth) as (read, write):
        note = " (SSE)" if config.transport == "sse" else ""
        log.event(f"connected to {mask_url(config.url or '')}{note}")
        yield Connection(read, write, None)


default_connector: Connector = make_connector()
