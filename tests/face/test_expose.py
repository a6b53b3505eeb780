"""Upstream tools passed through ``tributary serve`` when a server's ``expose`` names them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.fakes import FAKE_SERVER
from tributary.engine.config.errors import ConfigError
from tributary.engine.config.load import parse_config
from tributary.engine.config.validate import exposed_name, validate

ROOT = Path(__file__).resolve().parents[2]


def _config(home: Path, calls: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    args = [str(FAKE_SERVER), "--name", "fake", "--calls-file", str(calls),
            "--extra-tool", json.dumps({"name": "fetch_page", "description": "Fetch a page.",
                                        "readOnly": True}),
            "--extra-tool", json.dumps({"name": "delete_all", "description": "Delete it all."})]
    path = home / "config.yaml"
    path.write_text(f"servers:\n  fake:\n    command: {json.dumps(sys.executable)}\n"
                    f"    args: {json.dumps(args)}\n    expose: [fetch_page]\n", encoding="utf-8")
    return path


@pytest.mark.integration
@pytest.mark.asyncio
async def test_exposed_tool_is_listed_and_called_through_serve(tmp_path: Path) -> None:
    home, calls = tmp_path / "home", tmp_path / "calls.txt"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tributary", "--config", str(_config(home, calls)), "serve"],
        env={**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"search", "get_context", "feedback", "fake__fetch_page"}
        passed = tools["fake__fetch_page"]
        assert passed.description == "[fake] Fetch a page."
        assert "query" in passed.input_schema["properties"]
        assert passed.annotations is not None and passed.annotations.read_only_hint is True

        result = await session.call_tool("fake__fetch_page", {"query": "hello there"})
        assert not result.is_error, result.content
        assert "hello there" in str(result.content)
        assert calls.read_text(encoding="utf-8").splitlines() == ["fetch_page hello there"]

        hidden = await session.call_tool("fake__delete_all", {"query": "x"})
        assert hidden.is_error
        refused = await session.call_tool("fake__fetch_page", {})  # the upstream's own error
        assert refused.is_error and str(refused.content).count("fake: ") >= 1
    assert "delete_all" not in calls.read_text(encoding="utf-8")


def test_expose_is_validated() -> None:
    config = parse_config("servers:\n  a:\n    command: x\n    expose: [run]\n", source="c")
    assert config.servers["a"].expose == ["run"] and not validate(config)
    with pytest.raises(ConfigError) as caught:
        parse_config("servers:\n  a:\n    command: x\n    expose: [run, run, '']\n", source="c")
    problems = {i.key_path: i.message for i in caught.value.issues}
    assert "listed twice" in problems["servers.a.expose[1]"]
    assert "tool's name" in problems["servers.a.expose[2]"]
    assert exposed_name("my docs", "get.page") == "my_docs__get.page"
