"""Finding the MCP client configs on this machine (the first run offers to import them)."""

from __future__ import annotations

import json
from pathlib import Path

from engine.config.importer import client_config_paths


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")


def test_finds_each_client_that_has_servers(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    _write(home / ".config/Claude/claude_desktop_config.json", {"mcpServers": {"a": {"command": "x"}}})
    _write(home / ".claude.json", {"mcpServers": {"b": {"command": "y"}}, "projects": {}})
    _write(home / ".cursor/mcp.json", {"mcpServers": {}})  # nothing to import
    _write(home / ".config/Code/User/mcp.json", '{"servers": {"c": {"type": "stdio", "command": "z"}},}')
    _write(project / ".mcp.json", "not json")
    found = client_config_paths(home, project)
    assert [label for label, _ in found] == ["Claude Desktop", "Claude Code", "VS Code"]
    assert all(path.is_file() for _, path in found)


def test_nothing_found_is_an_empty_list(tmp_path: Path) -> None:
    assert client_config_paths(tmp_path / "nobody", tmp_path) == []
