"""The stdio transport's stdout reader: line framing, size cap, parse errors as values."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest
from mcp import types
from mcp.shared.message import SessionMessage

from tributary.engine.sources.stderr import StderrLog
from tributary.engine.sources.stdio import RESPONSE_TOO_LARGE, _read_stdout

pytestmark = pytest.mark.asyncio


class FakeProcess:
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    @property
    def stdout(self) -> AsyncIterator[bytes]:
        async def gen() -> AsyncIterator[bytes]:
            for chunk in self._chunks:
                yield chunk

        return gen()


async def read_all(chunks: list[bytes], limit: int) -> tuple[list[object], StderrLog]:
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](100)
    log = StderrLog()
    await _read_stdout(FakeProcess(chunks), send, log, limit)  # type: ignore[arg-type]
    items: list[object] = []
    async with receive:
        async for item in receive:
            items.append(item)
    return items, log


async def test_lines_across_chunks_oversized_and_garbage() -> None:
    big = b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"' + b"a" * 500
    note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}'
    stream = big + b'"}]}}\n' + note + b"\nnot json at all\n\n" + b'{"jsonrpc":"2.0","id":8,"result":{}}'
    chunks = [stream[i:i + 37] for i in range(0, len(stream), 37)]
    items, log = await read_all(chunks, limit=200)
    assert len(items) == 3  # the unterminated last line is never delivered
    too_large, notification, garbage = items
    assert isinstance(too_large, SessionMessage)
    message = too_large.message
    assert isinstance(message, types.JSONRPCError)
    assert message.id == 7 and message.error.code == RESPONSE_TOO_LARGE
    assert isinstance(notification, SessionMessage)
    assert isinstance(notification.message, types.JSONRPCNotification)
    assert isinstance(garbage, Exception)
    assert any("discarded" in line for line in log.lines())


async def test_invalid_utf8_is_replaced_not_fatal() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\xff\xfe"}]}}\n'
    items, _ = await read_all([line], limit=10_000)
    assert len(items) == 1 and isinstance(items[0], SessionMessage)
    assert "\ufffd" in items[0].message.model_dump_json()
