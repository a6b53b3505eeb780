"""Importing mcpServers JSON from Claude Desktop, Cursor and VS Code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tributary.engine.config.dump import config_to_yaml
from tributary.engine.config.errors import ConfigError
from tributary.engine.config.importer import (
    import_mcp_servers,
    merge_imported,
    parse_mcp_servers,
    secrets_to_keyring_refs,
)
from tributary.engine.config.jsonc_edit import strip_jsonc
from tributary.engine.config.load import parse_config
from tributary.engine.config.schema import Config, ServerConfig

CLAUDE = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
        },
        "github": {
            "command": "docker",
            "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal", "PORT": 8080},
        },
        "off": {"command": "x", "disabled": True, "autoApprove": ["read"]},
        "broken": {"args": ["no command"]},
        "weird": "not an object",
    },
    "globalShortcut": "Ctrl+Space",
}

CURSOR = {
    "mcpServers": {
        "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${env:API_TOKEN}"}},
        "legacy": {"url": "https://old.example.com/sse"},
        "local": {"command": "python", "args": ["-m", "srv"], "env": {"K": "${env:K}"}},
    }
}

VSCODE_MCP_JSON = """
// VS Code workspace MCP config
{
  "inputs": [{"type": "promptString", "id": "api-key", "password": true}],
  "servers": {
    "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],},
    "remote": {"type": "http", "url": "https://api.example.com/mcp",
               "headers": {"X-Api-Key": "${input:api-key}"}},
    "oldsse": {"type": "sse", "url": "https://x.example.com/events"},
    "ws": {"type": "websocket", "url": "ws://x"},
    /* a project-local server */
    "proj": {"command": "${workspaceFolder}/bin/srv", "cwd": "${workspaceFolder}", "env": {"H": "${userHome}"}},
  },
}
"""


def write(tmp_path: Path, name: str, content: str | dict[str, object]) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_claude_desktop(tmp_path: Path) -> None:
    result = import_mcp_servers(write(tmp_path, "claude_desktop_config.json", CLAUDE))
    assert result.format == "mcpServers"
    by_name = {s.name: s for s in result.servers}
    assert set(by_name) == {"filesystem", "github", "off"}
    assert by_name["filesystem"].args[-1] == "/Users/me/Desktop"
    assert by_name["github"].env == {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal", "PORT": "8080"}
    assert by_name["off"].enabled is False
    text = "\n".join(result.warnings)
    assert "skipped 'broken'" in text and "skipped 'weird'" in text and "autoApprove" in text


def test_cursor_remote_and_sse(tmp_path: Path) -> None:
    result = import_mcp_servers(write(tmp_path, "mcp.json", CURSOR))
    by_name = {s.name: s for s in result.servers}
    assert by_name["remote"].transport == "http"
    assert by_name["remote"].headers == {"Authorization": "Bearer ${API_TOKEN}"}
    assert by_name["legacy"].transport == "sse" and by_name["legacy"].enabled is True
    assert by_name["local"].env == {"K": "${K}"}


def test_vscode_workspace_jsonc(tmp_path: Path) -> None:
    path = write(tmp_path, "proj/.vscode/mcp.json", VSCODE_MCP_JSON)
    result = import_mcp_servers(path)
    assert result.format == "vscode"
    by_name = {s.name: s for s in result.servers}
    assert set(by_name) == {"memory", "remote", "oldsse", "proj"}
    assert by_name["remote"].headers == {"X-Api-Key": "${API_KEY}"}
    assert by_name["oldsse"].transport == "sse" and by_name["oldsse"].enabled is True
    workspace = str(tmp_path / "proj")
    assert by_name["proj"].command == f"{workspace}/bin/srv" and by_name["proj"].cwd == workspace
    assert by_name["proj"].env == {"H": "${HOME}"}
    text = "\n".join(result.warnings)
    assert "API_KEY" in text and "websocket" in text


def test_vscode_user_settings(tmp_path: Path) -> None:
    settings = {"editor.fontSize": 14, "mcp": {"servers": {"git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"]}}}}
    result = import_mcp_servers(write(tmp_path, "settings.json", settings))
    assert [s.name for s in result.servers] == ["git"]


def test_name_clashes_are_renamed(tmp_path: Path) -> None:
    existing = Config(servers={"github": ServerConfig(name="github", command="gh-old"),
                               "github-2": ServerConfig(name="github-2", command="y")})
    result = import_mcp_servers(write(tmp_path, "c.json", CLAUDE), existing=existing)
    names = [s.name for s in result.servers]
    assert "github-3" in names and "github" not in names
    assert any("imported as 'github-3'" in w for w in result.warnings)
    merged = merge_imported(existing, result.servers)
    assert set(merged.servers) == {"github", "github-2", "github-3", "filesystem", "off"}
    assert merged.servers["github-3"].name == "github-3"
    assert set(existing.servers) == {"github", "github-2"}  # not modified
    # the merged config is valid and saves and loads as it is
    assert parse_config(config_to_yaml(merged), source="x") == merged


def test_foreign_dollar_braces_stay_literal() -> None:
    text = json.dumps({"mcpServers": {"a": {"command": "x", "env": {"P": "pa${ss", "Q": "${OK}"}}}})
    server = parse_mcp_servers(text).servers[0]
    assert server.env == {"P": "pa$${ss", "Q": "${OK}"}


def test_not_json_or_no_servers(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        import_mcp_servers(write(tmp_path, "bad.json", "{not json"))
    assert "not valid JSON" in str(info.value) and info.value.issues[0].line == 1
    with pytest.raises(ConfigError) as info:
        import_mcp_servers(write(tmp_path, "empty.json", {"other": 1}))
    assert "no MCP servers" in str(info.value)
    with pytest.raises(ConfigError):
        import_mcp_servers(tmp_path / "missing.json")


def test_strip_jsonc_keeps_strings() -> None:
    text = '{"a": "http://x // not a comment", /* c */ "b": [1, 2,], // tail\n "c": "/* kept */",}'
    assert json.loads(strip_jsonc(text)) == {"a": "http://x // not a comment", "b": [1, 2], "c": "/* kept */"}


def test_secrets_move_to_keyring_refs() -> None:
    servers = [
        ServerConfig(name="gh", command="x", env={"GITHUB_TOKEN": "ghp_1", "LEVEL": "info", "K": "${K}"}),
        ServerConfig(name="api", transport="http", url="https://x/mcp", headers={"Authorization": "Bearer abc"}),
    ]
    converted, stored = secrets_to_keyring_refs(servers, lambda _name: None)
    assert converted[0].env == {"GITHUB_TOKEN": "${keyring:GITHUB_TOKEN}", "LEVEL": "info", "K": "${K}"}
    assert converted[1].headers == {"Authorization": "Bearer ${keyring:API_AUTHORIZATION}"}
    assert stored == {"GITHUB_TOKEN": "ghp_1", "API_AUTHORIZATION": "abc"}


def test_server_memory_is_imported_to_search_by_keywords(tmp_path: Path) -> None:
    """server-memory's search_nodes matches its query as one substring."""
    data = {"mcpServers": {
        "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
        "pinned": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2025.8.4"]},
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/d"]},
    }}
    result = import_mcp_servers(write(tmp_path, "mcp.json", json.dumps(data)))
    modes = {s.name: s.query_mode for s in result.servers}
    assert modes == {"memory": "keywords", "pinned": "keywords", "files": "glob"}
    merged = merge_imported(Config(), result.servers)
    assert parse_config(config_to_yaml(merged), source="x") == merged


def test_a_grep_server_is_imported_at_a_quarter_of_the_weight(tmp_path: Path) -> None:
    """mcp-ripgrep, by npx or by the command it installs, is asked by its search tool at
    a quarter of the weight: its literal matches would outvote an index's ranking."""
    data = {"mcpServers": {
        "rg": {"command": "npx", "args": ["-y", "mcp-ripgrep@latest"]},
        "installed": {"command": "/usr/local/bin/mcp-ripgrep"},
        "other": {"command": "npx", "args": ["-y", "my-mcp-ripgrep-fork"]},
    }}
    servers = {s.name: s for s in import_mcp_servers(write(tmp_path, "mcp.json", json.dumps(data))).servers}
    assert (servers["rg"].tool, servers["rg"].weight) == ("search", 0.25)
    assert (servers["installed"].tool, servers["installed"].weight) == ("search", 0.25)
    assert (servers["other"].tool, servers["other"].weight) == (None, 1.0)


def test_server_filesystem_is_imported_to_search_file_names_in_its_first_folder(tmp_path: Path) -> None:
    """server-filesystem's search_files needs a folder and matches names by glob."""
    data = {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/d", "/e"]},
        "bare": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]},
    }}
    servers = {s.name: s for s in import_mcp_servers(write(tmp_path, "mcp.json", json.dumps(data))).servers}
    assert (servers["files"].tool, servers["files"].arguments, servers["files"].query_mode) == (
        "search_files", {"path": "/d"}, "glob")
    assert (servers["bare"].tool, servers["bare"].arguments, servers["bare"].query_mode) == (None, {}, "full")
