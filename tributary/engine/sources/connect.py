"""The transport seam: a *connector* opens a connection to one configured server.

A connector is ``connector(config, log) -> async context manager -> Connection``:
the pool never knows whether the other end is a subprocess, an HTTP endpoint or
an in-memory server (tests plug :func:`tributary.engine.sources.memory.memory_connector`;
the idea is httpx's ``MockTransport``). Leaving the context closes the
connection and stops whatever was started.

:func:`make_connector` (and :data:`default_connector`, built with the defaults):

* stdio — :func:`tributary.engine.sources.stdio.open_stdio` spawns the command in its own
  process group with :func:`tributary.engine.sources.env.child_environment`, stderr piped
  into the server's ring log, stdout lines bounded by ``max_line_bytes``;
* http — the SDK's ``streamable_http_client`` with the configured headers;
* sse — the SDK's ``sse_client`` (the older HTTP+SSE transport) with the same
  headers and the same HTTP timeouts as streamable HTTP.

Remote servers are supervised exactly alike: the client cannot tell them apart.

All first expand the server's ``${VAR}`` references from the environment and its
``${keyring:NAME}`` ones from the OS keyring, read in a worker thread
(:func:`tributary.engine.config.expand.expand_server`: the config keeps the references,
values exist only in the connection), and tell the server's log which values
to mask (:mod:`tributary.engine.sources.remote`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

import httpx2
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage

from tributary.engine.config.schema import ServerConfig
from tributary.engine.config.secrets import mask_url
from tributary.engine.config.selfref import parent_marker, self_reference
from tributary.engine.sources.env import child_environment
from tributary.engine.sources.remote import ConnectError, expand_for_connection, remote_streams
from tributary.engine.sources.stderr import StderrLog, open_stderr_pipe
from tributary.engine.sources.stdio import DEFAULT_MAX_LINE_BYTES, open_stdio


@dataclass(slots=True)
class Connection:
    read: ReadStream[SessionMessage | Exception]
    write: WriteStream[SessionMessage]
    pid: int | None = None
    # Stop an unresponsive server now (terminate, then kill its process group, and reap
    # it); None when there is nothing to kill (HTTP, in memory): those only reconnect.
    kill: Callable[[], Awaitable[None]] | None = None


class SourceRefused(ConnectError):
    """The server must never be started as it is configured (it is Tributary itself):
    the client reports this and does not retry until the config changes."""


Connector = Callable[[ServerConfig, StderrLog], AbstractAsyncContextManager[Connection]]


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


async def _auth_for(config: ServerConfig, expanded: ServerConfig, log: StderrLog) -> httpx2.Auth | None:
    """The OAuth provider for a remote server that may sign in (stored session only);
    its tokens are masked in the server's log, errors and results."""
    from tributary.engine.sources.oauth import background_auth, needs_oauth

    if not needs_oauth(config):
        return None
    return await background_auth(config, expanded.url or "", log.also_redact)


@asynccontextmanager
async def stdio_connection(
    config: ServerConfig, log: StderrLog, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> AsyncIterator[Connection]:
    if not config.command:
        raise ConnectError(f"server {config.name!r}: stdio transport needs a command")
    if (reason := self_reference(config)) is not None:
        raise SourceRefused(reason)
    # Every server learns who started it, so a Tributary behind a wrapper script refuses.
    env = {**child_environment(config.env), **parent_marker()}
    stderr = open_stderr_pipe(log)
    try:
        async with open_stdio(
            config.command, list(config.args), env=env,
            cwd=config.cwd, stderr=stderr, log=log, max_line_bytes=max_line_bytes,
        ) as streams:
            log.event(f"started {config.command} (pid {streams.pid})")
            yield Connection(streams.read, streams.write, streams.pid, streams.kill)
    finally:
        stderr.close()


@asynccontextmanager
async def remote_connection(
    config: ServerConfig, log: StderrLog, auth: httpx2.Auth | None = None,
) -> AsyncIterator[Connection]:
    async with remote_streams(config, auth) as (read, write):
        note = " (SSE)" if config.transport == "sse" else ""
        log.event(f"connected to {mask_url(config.url or '')}{note}")
        yield Connection(read, write, None)


default_connector: Connector = make_connector()
