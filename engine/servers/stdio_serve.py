"""Tributary's MCP server over this process's stdin and stdout, stoppable by a signal.

The SDK reads stdin in anyio worker threads, which a cancellation cannot abandon: a
server told to stop would wait for the client's next line before it could exit. Here
a daemon thread reads the lines and hands them to the loop, so a shutdown signal
cancels the server at once, its lifespan closes the engine (and stops the sources),
and a read still blocked in the thread never holds the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, cast

from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

MAX_PENDING_LINES = 64


class StdinLines:
    """The lines of a binary stream, decoded as UTF-8 (invalid bytes replaced)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue(MAX_PENDING_LINES)
        threading.Thread(target=self._pump, args=(loop, queue), name="tributary-stdin",
                         daemon=True).start()
        while (line := await queue.get()) is not None:
            yield line

    def _pump(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
        try:
            for raw in self._stream:
                line = raw.decode("utf-8", errors="replace")
                asyncio.run_coroutine_threadsafe(queue.put(line), loop).result()
        except Exception:  # the loop closed or the stream broke: the server is ending anyway
            return
        with contextlib.suppress(RuntimeError):  # the loop closed first
            asyncio.run_coroutine_threadsafe(queue.put(None), loop)


def private_stdin() -> BinaryIO:
    """Fd 0 moved to a private descriptor, fd 0 itself pointed at the null device, so no
    child process or library can read (and steal) the client's messages."""
    if sys.platform == "win32":  # pragma: no cover
        return sys.stdin.buffer
    private = os.dup(0)
    os.set_inheritable(private, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(private, "rb", buffering=0)


async def serve_stdio(server: MCPServer[Any]) -> int:
    """Serve ``server`` until the client closes stdin (or the task is cancelled)."""
    lines = StdinLines(private_stdin())
    async with stdio_server(stdin=cast(Any, lines)) as (read, write):
        low = server._lowlevel_server
        await low.run(read, write, low.create_initialization_options())
    return 0
