"""The stdio transport's write side: whole lines from the sending task; a broken pipe ends the session."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import types
from mcp.shared.message import SessionMessage

from tributary.engine.sources.stdio import StdinWriter

pytestmark = pytest.mark.asyncio


class Pipe:
    """A ``ByteSendStream`` stand-in: records writes, or fails like a pipe nobody reads."""

    def __init__(self, broken: bool = False) -> None:
        self.chunks: list[bytes] = []
        self.broken = broken

    async def send(self, item: bytes) -> None:
        if self.broken:
            raise BrokenPipeError(32, "Broken pipe")
        self.chunks.append(item)
        await anyio.lowlevel.checkpoint()


def request(i: int) -> SessionMessage:
    return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=i, method="tools/call",
                                               params={"name": "search", "arguments": {"q": i}}))


async def test_each_message_is_one_line_written_in_send_order() -> None:
    pipe = Pipe()
    reads, recv = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    with reads, recv:
        writer = StdinWriter(pipe, reads)  # type: ignore[arg-type]
        async with anyio.create_task_group() as tg:
            for i in range(5):
                tg.start_soon(writer.send, request(i))
    assert all(chunk.endswith(b"\n") and chunk.count(b"\n") == 1 for chunk in pipe.chunks)
    sent = [json.loads(chunk) for chunk in pipe.chunks]
    assert [m["id"] for m in sent] == [0, 1, 2, 3, 4]  # started in this order, written in it
    assert sent[0] == {"jsonrpc": "2.0", "id": 0, "method": "tools/call",
                       "params": {"name": "search", "arguments": {"q": 0}}}


async def test_broken_pipe_raises_as_the_sdk_expects_and_ends_the_read_side() -> None:
    reads, recv = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    with reads, recv:
        writer = StdinWriter(Pipe(broken=True), reads)  # type: ignore[arg-type]
        with pytest.raises(anyio.BrokenResourceError):
            await writer.send(request(1))
        with pytest.raises(anyio.EndOfStream):  # the session sees the connection close
            await recv.receive()
        with pytest.raises(anyio.ClosedResourceError):
            await writer.send(request(2))


async def test_closed_writer_refuses_sends() -> None:
    pipe = Pipe()
    reads, recv = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    with reads, recv:
        async with StdinWriter(pipe, reads) as writer:  # type: ignore[arg-type]
            await writer.send(request(1))
        with pytest.raises(anyio.ClosedResourceError):
            await writer.send(request(2))
    assert len(pipe.chunks) == 1
