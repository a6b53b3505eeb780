"""Importing a client's config again adds nothing: entries Tributary already has (same
command and arguments, or same URL) are skipped, saying under which name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tributary.engine.config.load import load_config

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.integration]


def _import(home: Path, config: Path, source: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tributary", "--config", str(config), "config",
                           "import", str(source)], env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_importing_twice_adds_each_server_once(tmp_path: Path) -> None:
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
        "docs": {"url": "https://docs.example/mcp"},
    }}), encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text("servers: {}\n", encoding="utf-8")
    first = _import(tmp_path, config, source)
    assert first.returncode == 0, first.stderr
    # the user renames one and edits its timeout: still the same server
    config.write_text(config.read_text(encoding="utf-8").replace("fs:", "files:"), encoding="utf-8")
    second = _import(tmp_path, config, source)
    assert second.returncode == 0, second.stderr
    assert sorted(load_config(config).servers) == ["docs", "files"]
    assert "skipped fs: already configured as 'files'" in second.stdout
    assert "skipped docs: already configured as 'docs'" in second.stdout
