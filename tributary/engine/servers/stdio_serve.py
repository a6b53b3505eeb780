"""Tributary's MCP server over this process's stdin and stdout, stoppable by a signal.

The SDK reads stdin in anyio worker threads, which a cancellation cannot abandon: a
server told to stop would wait for the client's next line before it could exit. Here
a daemon thread reads the lines and hands them to the loop, so a shutdown signal
cancels the server at once, its lifespan closes the engine (and stops the sources),
and a read still blocked in the thread never holds the process.

A request line the SDK cannot parse because it holds a lone surrogate escape is
answered with an error (:func:`unreadable_request_reply`), not dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, cast

import anyio
from mcp import types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from tributary.engine.query.check import unicode_problem

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


def _invalid_text(value: Any, path: str) -> str | None:
    """The first string in a parsed JSON value that is not valid Unicode, as a problem."""
    if isinstance(value, str):
        return unicode_problem(value, path)
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        problem = _invalid_text(item, f"{path}.{key}" if path else str(key))
        if problem is not None:
            return problem
    return None


def unreadable_request_reply(problem: Exception) -> types.JSONRPCError | None:
    """The error reply to a request line the SDK could not parse, when it has an id.

    The SDK's JSON parser refuses a lone surrogate escape (``"\\ud800"``) and drops the
    line, so the client would wait for ever. Python's own parser reads it: if the line is
    a request holding such a string, it gets an error naming the string and the problem;
    anything else stays the SDK's to log.
    """
    if not isinstance(problem, ValidationError):
        return None
    details = problem.errors()
    line = details[0].get("input") if details else None
    if not isinstance(line, str | bytes):
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = message.get("id")
    if not isinstance(request_id, int | str) or isinstance(request_id, bool):
        return None
    reason = _invalid_text(message.get("params"), "")
    if reason is None:
        return None
    return types.JSONRPCError(jsonrpc="2.0", id=request_id,
                              error=types.ErrorData(code=types.INVALID_PARAMS, message=reason))


async def serve_stdio(server: MCPServer[Any]) -> int:
    """Serve ``server`` until the client closes stdin (or the task is cancelled)."""
    lines = StdinLines(private_stdin())
    low = server._lowlevel_server  # what MCPServer.run_stdio_async itself runs
    async with stdio_server(stdin=cast(Any, lines)) as (incoming, outgoing):
        relay_in, relay_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            async with relay_in, incoming:
                async for item in incoming:
                    reply = unreadable_request_reply(item) if isinstance(item, Exception) else None
                    if reply is not None:
                        await outgoing.send(SessionMessage(reply))
                    else:
                        await relay_in.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            await low.run(relay_out, outgoing, low.create_initialization_options())
    return 0
