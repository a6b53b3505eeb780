"""``SourcePool.call_tool``: one named tool called as given (``tributary serve``'s pass-through)."""

from __future__ import annotations

import json

import pytest

from tests.sources.helpers import stdio_config
from tributary.engine.sources.client import ToolCallFailed
from tributary.engine.sources.pool import SourcePool


@pytest.mark.asyncio
async def test_call_tool_returns_the_upstream_result() -> None:
    spec = json.dumps({"name": "echo_it", "description": "Echo."})
    async with SourcePool([stdio_config("up", "--extra-tool", spec)]) as pool:
        result = await pool.call_tool("up", "echo_it", {"query": "ping me"})
        assert not result.is_error and "ping me" in str(result.content)
        unknown = await pool.call_tool("up", "no_such_tool", {})
        assert unknown.is_error  # the upstream's own error, passed back as it is


@pytest.mark.asyncio
async def test_call_tool_failure_names_the_server() -> None:
    # "hang" never answers a call: the source's timeout ends it, whatever the machine's speed.
    async with SourcePool([stdio_config("stuck", "--mode", "hang", timeout=0.2)]) as pool:
        with pytest.raises(ToolCallFailed, match=r"^stuck: search: no answer within 0.2s"):
            await pool.call_tool("stuck", "search", {"query": "x"})
    async with SourcePool([stdio_config("off", enabled=False)]) as pool:
        with pytest.raises(ToolCallFailed, match=r"^off: the server is disabled"):
            await pool.call_tool("off", "search", {"query": "x"})
