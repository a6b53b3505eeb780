"""The command line attached to a running engine imports only what attaching needs.

``tributary search`` with ``tributary serve`` running sends the request over the local
socket and prints the answer: it must not load the fusion pipeline's numerics, the
model runtime, the parsers, Qt or the MCP SDK, which only the engine uses.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tributary.engine import attach
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.model import Hit, SearchRequest, SearchResponse

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not attach.supported(), reason="no Unix sockets")

HEAVY = ("numpy", "rapidfuzz", "tokenizers", "tree_sitter", "onnxruntime", "PySide6", "qasync",
         "mcp", "anyio", "httpx", "pydantic", "sqlite_vec", "torch",
         # the running engine has read the config: the client reads no YAML, no keyring
         "yaml", "keyring")

# Runs the command line as ``python -m tributary`` does and writes the top-level
# packages it imported to the file named first.
PROBE = """
import atexit, json, runpy, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted({m.split(".")[0] for m in sys.modules}))))
sys.argv[0] = "tributary"
runpy.run_module("tributary", run_name="__main__", alter_sys=True)
"""


class _Engine:
    config = effective_config = Config(servers={"alpha": ServerConfig(name="alpha", command="x")})

    async def search(self, request: SearchRequest) -> SearchResponse:
        hit = Hit(id="1", source="alpha", tool="search", title="retry", content="def retry(): ...",
                  path="src/retry.py")
        task = Hit(id="2", source="alpha", tool="search", title="Retry on 503", content="fix",
                   metadata={"kind": "task", "sha": "abc1234"})
        return SearchResponse(request=request, hits=[hit, task])


@pytest.mark.asyncio
@pytest.mark.parametrize("json_out", [False, True])
async def test_an_attached_search_imports_no_heavy_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, json_out: bool
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("TRIBUTARY_HOME", str(home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    config = home / "config.yaml"
    config.write_text("servers:\n  alpha:\n    command: x\n", encoding="utf-8")
    imported = tmp_path / "imported.json"
    server = attach.AttachServer(_Engine(), config)
    assert await server.start()
    try:
        found = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", PROBE, str(imported), "--config", str(config), "search",
             "retry on 503", *(["--json"] if json_out else [])],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT, timeout=120,
        )
    finally:
        await server.close()
    assert found.returncode == 0, found.stderr
    assert "answered by the running engine" in found.stderr
    assert "src/retry.py" in found.stdout
    loaded = set(json.loads(imported.read_text()))
    assert "tributary" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
