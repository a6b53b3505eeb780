"""``tributary serve`` watches its config file: a server added while it runs answers
the next search; an invalid edit is reported on stderr with where it is, and the
running config stays."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.fakes import FAKE_SERVER

ROOT = Path(__file__).resolve().parents[2]


def fake(name: str) -> str:
    args = json.dumps([str(FAKE_SERVER), "--name", name, "--hits", "2"])
    return f"  {name}:\n    command: {json.dumps(sys.executable)}\n    args: {args}\n"


async def sources(session: ClientSession) -> list[str]:
    found = await session.call_tool("search", {"query": "retry", "top_k": 10})
    assert not found.is_error, found.content
    assert found.structured_content is not None
    # "ok", or "cached" for a source that answered the same query before
    return sorted(s["name"] for s in found.structured_content["sources"]
                  if s["status"] in ("ok", "cached"))


@pytest.mark.asyncio
@pytest.mark.integration
async def test_serve_applies_config_edits(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.yaml"
    config.write_text("servers:\n" + fake("alpha"), encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tributary", "--config", str(config), "serve"],
        env={**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT),
             "COLUMNS": "400"},  # the SDK logs through rich, which wraps lines
        cwd=str(ROOT))
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            assert await sources(session) == ["alpha"]
            await asyncio.sleep(1.0)  # the watch is in place well before this
            config.write_text("servers:\n" + fake("alpha") + fake("beta"), encoding="utf-8")
            deadline = asyncio.get_running_loop().time() + 60
            while await sources(session) != ["alpha", "beta"]:
                if asyncio.get_running_loop().time() > deadline:
                    errlog.seek(0)
                    raise AssertionError("beta never joined: " + errlog.read()[-3000:])
                await asyncio.sleep(0.3)
            config.write_text("servers:\n" + fake("alpha") + "  beta:\n    timeout: nope\n",
                              encoding="utf-8")
            while True:
                errlog.seek(0)
                if "not applied" in errlog.read():
                    break
                assert asyncio.get_running_loop().time() < deadline, "no report of the bad edit"
                await asyncio.sleep(0.2)
            # The running config stays: both still answer (polled: a search that overlapped
            # the bad edit's check may have timed out on a loaded machine).
            while (answered := await sources(session)) != ["alpha", "beta"]:
                assert asyncio.get_running_loop().time() < deadline, f"after the bad edit: {answered}"
                await asyncio.sleep(0.3)
        errlog.seek(0)
        text = errlog.read()
    assert f"{config}:6: servers.beta.timeout: must be a number" in text, text[-2000:]
