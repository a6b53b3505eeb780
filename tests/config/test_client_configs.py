"""Finding other clients' configs: each format on a file written the way that client
writes it, in a temporary home (Linux layout, and the macOS and Windows folders)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tributary.engine.config.clients import choose, discover_client_configs


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def by_label(home: Path, **kw) -> dict:  # type: ignore[no-untyped-def]
    found = discover_client_configs(home, environ={}, platform="linux", **kw)
    return {c.label: c for c in found}


def names(config) -> dict:  # type: ignore[no-untyped-def]
    return {s.name: s for s in config.servers}


def test_claude_desktop(tmp_path: Path) -> None:
    put(tmp_path / ".config/Claude/claude_desktop_config.json", json.dumps({
        "mcpServers": {
            "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem",
                                                       "/home/me/Desktop"]},
            "github": {"command": "docker", "args": ["run", "-i", "--rm", "-e",
                                                      "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
                       "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x"}},
        },
        "globalShortcut": "Ctrl+Space",
    }, indent=2))
    found = by_label(tmp_path)
    servers = names(found["Claude Desktop"])
    assert set(servers) == {"filesystem", "github"}
    assert servers["filesystem"].args[-1] == "/home/me/Desktop"


def test_claude_code_user_project_and_shared(tmp_path: Path) -> None:
    project = tmp_path / "src" / "app"
    put(project / ".mcp.json", json.dumps({"mcpServers": {
        "shared-db": {"type": "stdio", "command": "uvx", "args": ["mcp-server-sqlite", "--db-path", "db.sqlite"],
                      "env": {}}}}, indent=2))
    put(tmp_path / ".claude.json", json.dumps({
        "numStartups": 42, "installMethod": "npm", "autoUpdates": True,
        "tipsHistory": {"new-user-warmup": 1},
        "mcpServers": {
            "linear": {"type": "sse", "url": "https://mcp.linear.app/sse"},
            "notion": {"type": "http", "url": "https://mcp.notion.com/mcp",
                       "headers": {"X-Client": "claude-code"}},
        },
        "projects": {
            str(project): {"allowedTools": [], "history": [{"display": "fix the bug", "pastedContents": {}}],
                           "mcpContextUris": [], "enabledMcpjsonServers": [], "disabledMcpjsonServers": [],
                           "hasTrustDialogAccepted": True,
                           "mcpServers": {"local-git": {"type": "stdio", "command": "uvx",
                                                        "args": ["mcp-server-git"], "env": {}}}},
            str(tmp_path / "other"): {"allowedTools": [], "mcpServers": {}},
        },
    }, indent=2))
    found = by_label(tmp_path)
    user = names(found["Claude Code"])
    assert user["linear"].transport == "sse" and user["linear"].enabled
    assert user["notion"].transport == "http" and user["notion"].headers == {"X-Client": "claude-code"}
    assert set(names(found[f"Claude Code (project {project})"])) == {"local-git"}
    shared = found[f"Claude Code (project {project}, shared)"]
    assert shared.path == project / ".mcp.json" and set(names(shared)) == {"shared-db"}
    assert not any("other" in label for label in found)


def test_cursor_and_windsurf(tmp_path: Path) -> None:
    put(tmp_path / ".cursor/mcp.json", json.dumps({"mcpServers": {
        "sentry": {"url": "https://mcp.sentry.dev/mcp"},
        "local": {"command": "node", "args": ["server.js"], "env": {"API_KEY": "${env:API_KEY}"}}}}, indent=2))
    put(tmp_path / ".codeium/windsurf/mcp_config.json", json.dumps({"mcpServers": {
        "remote": {"serverUrl": "https://example.com/sse"}}}, indent=2))
    found = by_label(tmp_path)
    assert names(found["Cursor"])["sentry"].url == "https://mcp.sentry.dev/mcp"
    assert names(found["Windsurf"])["remote"].transport == "sse"


def test_vscode_user_settings_and_workspace(tmp_path: Path) -> None:
    put(tmp_path / ".config/Code/User/mcp.json", """{
	"servers": {
		"playwright": {
			"type": "stdio",
			"command": "npx",
			"args": ["@playwright/mcp@latest"]
		},
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/",
			"headers": { "Authorization": "Bearer ${input:github_token}" }
		}
	},
	"inputs": [
		{ "type": "promptString", "id": "github_token", "description": "GitHub PAT", "password": true }
	]
}""")
    put(tmp_path / ".config/Code/User/settings.json", """{
    // user settings
    "editor.fontSize": 14,
    "mcp": {
        "servers": {
            "fetch": { "command": "uvx", "args": ["mcp-server-fetch"] },
        },
    },
}""")
    workspace = tmp_path / "proj"
    put(workspace / ".vscode/mcp.json", """{
  "servers": {
    "proj-tool": { "type": "stdio", "command": "${workspaceFolder}/bin/tool" }
  }
}""")
    found = discover_client_configs(tmp_path, workspace=workspace, environ={}, platform="linux")
    vscode = [c for c in found if c.client == "vscode"]
    assert {c.path.name for c in vscode} == {"mcp.json", "settings.json"} and len(vscode) == 3
    servers = {s.name: s for c in vscode for s in c.servers}
    assert servers["github"].headers == {"Authorization": "Bearer ${GITHUB_TOKEN}"}
    assert servers["fetch"].command == "uvx"
    assert servers["proj-tool"].command == f"{workspace}/bin/tool"
    assert [c.scope for c in vscode if c.path == workspace / ".vscode/mcp.json"] == ["workspace"]


def test_zed_context_servers_both_forms(tmp_path: Path) -> None:
    put(tmp_path / ".config/zed/settings.json", """// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "ui_font_size": 16,
  "context_servers": {
    "postgres": {
      "source": "custom",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/db"],
      "env": {}
    },
    "old-style": {
      "command": {
        "path": "/usr/local/bin/mcp-old",
        "args": ["--stdio"],
        "env": { "LEVEL": "debug" }
      },
      "settings": {}
    },
    "from-extension": {
      "source": "extension",
      "settings": {}
    },
  },
}""")
    zed = by_label(tmp_path)["Zed"]
    servers = names(zed)
    assert servers["postgres"].args[-1] == "postgresql://localhost/db"
    assert servers["old-style"].command == "/usr/local/bin/mcp-old"
    assert servers["old-style"].env == {"LEVEL": "debug"}
    assert "from-extension" not in servers
    assert any("from-extension" in w and "extension" in w for w in zed.warnings)


def test_codex_config_toml(tmp_path: Path) -> None:
    put(tmp_path / ".codex/config.toml", """model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[mcp_servers.context7.env]
LOG_LEVEL = "info"

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }

[mcp_servers.off]
command = "srv"
enabled = false
startup_timeout_sec = 20
""")
    codex = by_label(tmp_path)["Codex"]
    servers = names(codex)
    assert servers["context7"].env == {"LOG_LEVEL": "info"}
    assert servers["figma"].headers == {"X-Figma-Region": "us-east-1",
                                        "Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}"}
    assert servers["off"].enabled is False
    assert any("startup_timeout_sec" in w for w in codex.warnings)


def test_codex_home_is_honoured(tmp_path: Path) -> None:
    put(tmp_path / "elsewhere/config.toml", '[mcp_servers.a]\ncommand = "a"\n')
    found = discover_client_configs(tmp_path, environ={"CODEX_HOME": str(tmp_path / "elsewhere")},
                                    platform="linux")
    assert [c.client for c in found] == ["codex"]


def test_continue_config_and_blocks(tmp_path: Path) -> None:
    put(tmp_path / ".continue/config.yaml", """name: Local Assistant
version: 1.0.0
schema: v1
models:
  - name: Llama
    provider: ollama
    model: llama3.1:8b
mcpServers:
  - name: SQLite
    command: npx
    args:
      - "-y"
      - "mcp-sqlite"
      - "/path/to/your/database.db"
  - name: Remote
    type: streamable-http
    url: https://example.com/mcp
    env:
      TOKEN: ${{ secrets.REMOTE_TOKEN }}
""")
    put(tmp_path / ".continue/mcpServers/playwright-mcp.yaml", """name: Playwright mcpServer
version: 0.0.1
schema: v1
mcpServers:
  - name: Browser search
    command: npx
    args:
      - "@playwright/mcp@latest"
""")
    found = by_label(tmp_path)
    main = names(found["Continue"])
    assert main["SQLite"].args[-1] == "/path/to/your/database.db"
    assert main["Remote"].transport == "http"
    block = found["Continue (block)"]
    assert names(block)["Browser search"].command == "npx"


def test_macos_and_windows_folders(tmp_path: Path) -> None:
    mac = put(tmp_path / "Library/Application Support/Claude/claude_desktop_config.json",
              json.dumps({"mcpServers": {"a": {"command": "a"}}}))
    assert [c.path for c in discover_client_configs(tmp_path, environ={}, platform="darwin")] == [mac]
    appdata = tmp_path / "AppData" / "Roaming"
    win = put(appdata / "Code/User/mcp.json", json.dumps({"servers": {"b": {"command": "b"}}}))
    found = discover_client_configs(tmp_path, environ={"APPDATA": str(appdata)}, platform="win32")
    assert [c.path for c in found] == [win]


def test_a_broken_file_is_listed_with_its_error(tmp_path: Path) -> None:
    put(tmp_path / ".cursor/mcp.json", '{"mcpServers": {')
    cursor = by_label(tmp_path)["Cursor"]
    assert cursor.error and "JSON" in cursor.error and not cursor.servers


def test_choose_by_client(tmp_path: Path) -> None:
    put(tmp_path / ".cursor/mcp.json", json.dumps({"mcpServers": {"a": {"command": "a"}}}))
    put(tmp_path / ".codex/config.toml", '[mcp_servers.b]\ncommand = "b"\n')
    found = discover_client_configs(tmp_path, environ={}, platform="linux")
    assert [c.client for c in choose(found, ["Codex"])] == ["codex"]
    with pytest.raises(ValueError, match="unknown client 'emacs'"):
        choose(found, ["emacs"])


def codex(home: Path, table: str) -> dict:  # type: ignore[type-arg]
    put(home / ".codex/config.toml", '[mcp_servers.docs]\ncommand = "docs-mcp"\n' + table)
    (config,) = discover_client_configs(home, environ={}, platform="linux")
    return {"tool": config.servers[0].tool, "warnings": config.warnings}


def test_codex_enabled_tools_one_tool(tmp_path: Path) -> None:
    got = codex(tmp_path, 'enabled_tools = ["get_docs"]\n')
    assert got == {"tool": "get_docs", "warnings": []}


def test_codex_enabled_tools_first_search_like(tmp_path: Path) -> None:
    got = codex(tmp_path, 'enabled_tools = ["list_pages", "search_docs", "find_page"]\n')
    assert got["tool"] == "search_docs"
    assert got["warnings"] == ["docs: searches with 'search_docs' of its enabled_tools; "
                               "not used: list_pages, find_page"]


def test_codex_enabled_tools_never_a_write_tool(tmp_path: Path) -> None:
    got = codex(tmp_path, 'enabled_tools = ["delete_page"]\n')
    assert got["tool"] is None and "write verb 'delete'" in got["warnings"][0]
    got = codex(tmp_path, 'enabled_tools = ["list_pages", "get_page"]\n')
    assert got["tool"] is None and "none of enabled_tools" in got["warnings"][0]
