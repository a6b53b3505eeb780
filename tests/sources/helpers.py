"""Shared helpers for the source tests: in-memory servers and fake subprocess configs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp import types
from mcp.server.mcpserver import MCPServer

from tests.fakes import FAKE_SERVER, fake_server_config, fake_server_object
from tributary.engine.config.schema import HealthConfig, ServerConfig

FAKE = FAKE_SERVER


def memory_fake(name: str, *args: str) -> MCPServer:
    """The subprocess fake's server object, served in-process."""
    server: MCPServer = fake_server_object(name, *args)
    return server


def stdio_config(name: str, *args: str, timeout: float = 3.0, **kw: Any) -> ServerConfig:
    config: ServerConfig = fake_server_config(name, *args, timeout=timeout, **kw)
    return config


async def eventually(predicate: Any, timeout: float = 10.0) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` passes (generous for loaded machines)."""
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            return False
        await asyncio.sleep(0.02)
    return True


def health(threshold: int = 3, open_s: float = 30.0, interval_s: float = 30.0, *, restart: bool = True) -> HealthConfig:
    return HealthConfig(interval_s=interval_s, failure_threshold=threshold, open_s=open_s,
                        restart_unresponsive=restart)


class Recorder:
    """An in-memory server whose tool records calls and cancellations."""

    def __init__(self, name: str = "rec", *, hang: bool = False, delay: float = 0.0) -> None:
        self.calls: list[dict[str, Any]] = []
        self.cancelled = 0
        self.hang = hang
        self.delay = delay
        self.server = MCPServer(name)
        self.server.tool(name="search_docs", description="Search.",
                         annotations=types.ToolAnnotations(read_only_hint=True))(self._search)

    async def _search(self, query: str, limit: int = 10) -> types.CallToolResult:
        self.calls.append({"query": query, "limit": limit})
        try:
            if self.hang:
                await anyio.sleep_forever()
            if self.delay:
                await anyio.sleep(self.delay)
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"answer to {query}")]
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_fake(
    *args: str, sse: bool = False, port: int | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The fake server on streamable HTTP (or, with ``sse``, the legacy HTTP+SSE
    transport): ``(url, process)`` once it accepts connections; stopped afterwards
    (woken first, in case a test SIGSTOPped it). ``port`` serves again where an
    earlier one did."""
    port = port or free_port()
    flag, path = ("--sse", "sse") if sse else ("--http", "mcp")
    proc = subprocess.Popen([sys.executable, str(FAKE), "--name", "web", flag, str(port), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_listening(proc, port)
        yield f"http://127.0.0.1:{port}/{path}", proc
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_listening(proc: subprocess.Popen[bytes], port: int) -> None:
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("the HTTP fake server exited") from None
            time.sleep(0.05)
    raise RuntimeError("the HTTP fake server never listened")
