"""Tributary as an MCP server: a real client talks to ``tributary serve`` over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.fakes import fake_config_file as _config
from tributary.engine.pipeline.tokens import count_tokens
from tributary.engine.servers.face import require_token, serve_http

ROOT = Path(__file__).resolve().parents[2]




@pytest.mark.integration
@pytest.mark.asyncio
async def test_search_and_get_context_over_stdio(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = _config(home)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tributary", "--config", str(config), "serve"],
        env={**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"search", "get_context", "feedback"}
        assert all(t.output_schema for t in tools.values())  # structured results declared
        assert all(len(t.description or "") < 120 for t in tools.values())  # short on purpose

        found = await session.call_tool("search", {"query": "retry logic", "top_k": 10})
        assert not found.is_error, found.content
        data = found.structured_content
        assert data is not None
        assert [h["path"] for h in data["hits"]][:2] == ["src/alpha/mod_1.py", "src/alpha/mod_2.py"]
        assert data["hits"][0]["source"] == "alpha"
        assert "score_parts" not in data["hits"][0]  # compact unless details are asked for
        detailed = await session.call_tool("search", {"query": "retry logic", "details": True})
        assert detailed.structured_content and detailed.structured_content["hits"][0]["score_parts"]
        assert data["sources"][0] == {"name": "alpha", "status": "ok",
                                      "latency_ms": data["sources"][0]["latency_ms"],
                                      "hits": 4, "error": None}

        ctx = await session.call_tool("get_context", {"query": "retry", "max_tokens": 300,
                                                      "format": "markdown"})
        assert not ctx.is_error, ctx.content
        out = ctx.structured_content
        assert out is not None
        assert 0 < out["tokens"] <= 300
        assert "src/alpha/mod_1.py" in out["context"]
        assert out["confident"] is True and 0 < out["confidence"] <= 1
        # The text a model reads is the context itself, not its JSON (which escaped
        # every newline and quote of the code).
        text = ctx.content[0].text  # type: ignore[union-attr]
        assert text == out["context"]  # a budget this small keeps no room for the footer
        big = await session.call_tool("get_context", {"query": "retry", "max_tokens": 4000})
        read = big.content[0].text  # type: ignore[union-attr]
        assert big.structured_content is not None and read.startswith(big.structured_content["context"])
        assert read.endswith("\n---\nSources: alpha (4 hits)") and count_tokens(read) <= 4000
        assert big.structured_content["budget"] == 4000

        fb = await session.call_tool("feedback", {"hit_id": data["hits"][0]["id"],
                                                  "source": "alpha", "useful": True})
        assert not fb.is_error, fb.content
        assert fb.structured_content and fb.structured_content["reputation"] > 0.5

        unknown = await session.call_tool("feedback", {"hit_id": "x", "source": "nope", "useful": True})
        assert unknown.is_error and "unknown source 'nope'" in str(unknown.content)
        huge = await session.call_tool("feedback", {"hit_id": "x" * 100_000, "source": "alpha", "useful": True})
        assert huge.is_error and "hit_id: not a hit id" in str(huge.content)
        bad_format = await session.call_tool("get_context", {"query": "retry", "format": "pdf"})
        assert bad_format.is_error and "format: unknown value 'pdf' (one of" in str(bad_format.content)


@pytest.mark.asyncio
async def test_binding_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs a token"):
        await serve_http(None, host="0.0.0.0", port=1, token=None)


@pytest.mark.asyncio
async def test_token_guard_rejects_requests_without_the_token() -> None:
    reached: list[str] = []

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        reached.append(scope["path"])

    guarded = require_token(app, "s3cret")
    sent: list[dict[str, object]] = []

    async def send(message):  # type: ignore[no-untyped-def]
        sent.append(message)

    async def receive():  # type: ignore[no-untyped-def]
        return {"type": "http.request"}

    await guarded({"type": "http", "path": "/mcp", "headers": []}, receive, send)
    assert sent[0]["status"] == 401 and reached == []
    await guarded({"type": "http", "path": "/mcp",
                   "headers": [(b"authorization", b"Bearer wrong")]}, receive, send)
    assert reached == []
    await guarded({"type": "http", "path": "/mcp",
                   "headers": [(b"authorization", b"Bearer s3cret")]}, receive, send)
    assert reached == ["/mcp"]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.integration
@pytest.mark.asyncio
async def test_search_over_streamable_http_on_loopback(tmp_path: Path) -> None:
    import asyncio
    import subprocess

    from mcp.client.streamable_http import streamable_http_client

    home = tmp_path / "home"
    config = _config(home)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tributary", "--config", str(config), "serve", "--http", str(port)],
        env={**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}, cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(300):  # wait for the port to open (imports take a few seconds)
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.1)
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            found = await s.call_tool("search", {"query": "retry", "top_k": 10})
            assert not found.is_error, found.content
            assert found.structured_content and found.structured_content["hits"], found.structured_content
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()
