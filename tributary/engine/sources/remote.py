"""Reaching a remote server, and a server's config expanded for connecting.

:func:`expand_for_connection` expands a server's ``${VAR}`` references from the
environment and its ``${keyring:NAME}`` ones from the OS keyring (read in a worker
thread) and gives its log the values to mask; :func:`remote_streams` opens the
read and write streams of an http (streamable HTTP) or sse (the older HTTP+SSE
transport) server. Both serve the connector (:mod:`tributary.engine.sources.connect`) and
the OAuth sign-in (:mod:`tributary.engine.sources.oauth`), which the connector itself uses:
living here, they keep those two modules from importing each other.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

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

from tributary.engine.config import keystore
from tributary.engine.config.expand import ExpansionError, expand_server, keyring_names
from tributary.engine.config.schema import ServerConfig
from tributary.engine.config.secrets import secret_values
from tributary.engine.errors import TributaryError
from tributary.engine.sources.stderr import StderrLog


class ConnectError(TributaryError):
    """The configuration cannot be connected (no command, no url)."""


async def expand_for_connection(config: ServerConfig, log: StderrLog | None = None) -> ServerConfig:
    """``config`` with its references expanded (keyring read in a worker thread); the
    values to mask are given to ``log`` first. Raises :class:`ConnectError`."""
    keyring_values = await _keyring_values(config)
    if log is not None:
        log.redact(secret_values(config, keyring_values=keyring_values))
    return _expanded(config, keyring_values)


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
