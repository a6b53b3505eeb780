"""A query that is not valid Unicode (a lone surrogate) gets a clear error, never silence:
from a real ``tributary serve`` over stdio, from the engine and from the command line."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession, MCPError, types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from tests.face.test_face import ROOT, _config
from tributary.engine.model import SearchRequest
from tributary.engine.query.check import QueryError, check_query, unicode_problem
from tributary.engine.servers.stdio_serve import unreadable_request_reply

Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]


@asynccontextmanager
async def stdio_transport(command: list[str], env: dict[str, str]) -> AsyncIterator[Streams]:
    """The SDK's stdio client cannot send a lone surrogate (it encodes to UTF-8 first), so
    this one writes each message with ``json.dumps``, which escapes it as ``\\ud800`` —
    what any other JSON client sends."""
    process = await anyio.open_process(command, env=env, cwd=ROOT, stderr=subprocess.DEVNULL)
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)
    assert process.stdout is not None and process.stdin is not None
    stdout, stdin = process.stdout, process.stdin

    async def reader() -> None:
        pending = b""
        async with read_in:
            async for chunk in stdout:
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    await read_in.send(SessionMessage(types.jsonrpc_message_adapter.validate_json(line)))

    async def writer() -> None:
        async with write_out:
            async for message in write_out:
                data: Any = message.message.model_dump(by_alias=True, exclude_unset=True)
                await stdin.send((json.dumps(data) + "\n").encode())

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(reader)
            group.start_soon(writer)
            yield read_out, write_in
            group.cancel_scope.cancel()
    finally:
        await stdin.aclose()  # stdin EOF: serve shuts down
        try:
            with anyio.fail_after(20):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()


@pytest.mark.asyncio
async def test_stdio_serve_answers_a_lone_surrogate_with_an_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    command = [sys.executable, "-m", "tributary", "--config", str(_config(home)), "serve"]
    env = {**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    async with stdio_transport(command, env) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        with pytest.raises(MCPError, match=r"arguments\.query is not valid Unicode.*U\+D800 at character 6"):
            await asyncio.wait_for(session.call_tool("search", {"query": "retry\ud800"}), 60)
        with pytest.raises(MCPError, match="U\\+DFFF"):
            await asyncio.wait_for(session.call_tool("get_context", {"query": "\udfff"}), 60)
        found = await asyncio.wait_for(session.call_tool("search", {"query": "retry"}), 60)
        assert not found.is_error and found.structured_content and found.structured_content["hits"]


def _sdk_parse_error(line: str) -> ValidationError:
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return exc
    raise AssertionError("the SDK parsed it")


def test_reply_only_to_requests_with_an_id() -> None:
    request = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"arguments": {"q": ["x", "\\ud800"]}}}'
    reply = unreadable_request_reply(_sdk_parse_error(request))
    assert reply is not None and reply.id == 7 and reply.error.code == types.INVALID_PARAMS
    assert reply.error.message.startswith("arguments.q.1 is not valid Unicode")
    notification = '{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\\ud800"}}'
    assert unreadable_request_reply(_sdk_parse_error(notification)) is None
    assert unreadable_request_reply(_sdk_parse_error("{not json")) is None
    assert unreadable_request_reply(ValueError("x")) is None


def test_check_query() -> None:
    assert unicode_problem("ünïcode ✓ 🙂") is None
    assert check_query(SearchRequest("fine")).searchable
    with pytest.raises(QueryError, match="U\\+D800 at character 2"):
        check_query(SearchRequest("a\ud800"))


BAD_ARG = b"bad\xff".decode("utf-8", "surrogateescape")  # what Python makes of an undecodable argv byte


@pytest.mark.parametrize("command", [["search", BAD_ARG], ["context", BAD_ARG], ["tasks", "search", "--repo", ".", BAD_ARG],
                                     ["servers", "test", "alpha", "--query", BAD_ARG]])
def test_commands_name_an_undecodable_query(tmp_path: Path, command: list[str]) -> None:
    home = tmp_path / "home"
    done = subprocess.run(
        [sys.executable, "-m", "tributary", "--config", str(_config(home)), *command],
        env={**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}, cwd=ROOT,
        capture_output=True, timeout=120,
    )
    assert done.returncode == 2  # bad input, like a usage error
    assert b"not valid Unicode" in done.stderr and b"U+DCFF at character 4" in done.stderr
