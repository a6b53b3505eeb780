"""Importing clients' files: ``${workspaceFolder}`` resolved where the file belongs to a
project and kept (with a warning) where it does not; each file listed once whichever
reader found it."""

from __future__ import annotations

import json
from pathlib import Path

from tributary.engine.config.clients import discover_client_configs
from tributary.engine.config.importer import import_mcp_servers, workspace_of


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def uses_folder(name: str) -> str:
    return json.dumps({"mcpServers": {name: {"command": "${workspaceFolder}/bin/srv",
                                             "args": ["--root", "${workspaceFolder}"]}}})


def found(home: Path, workspace: Path | None = None):  # type: ignore[no-untyped-def]
    return discover_client_configs(home, workspace=workspace, environ={}, platform="linux")


def test_project_files_resolve_workspace_folder(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    put(project / ".cursor/mcp.json", uses_folder("cur"))
    put(project / ".mcp.json", uses_folder("cc"))
    servers = {s.name: s for c in found(tmp_path / "home", project) for s in c.servers}
    assert servers["cur"].command == f"{project}/bin/srv"
    assert servers["cc"].args == ["--root", str(project)]


def test_claude_code_project_shared_file_resolves_workspace_folder(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    put(project / ".mcp.json", uses_folder("shared"))
    put(home / ".claude.json", json.dumps({"projects": {str(project): {"mcpServers": {}}}}))
    servers = {s.name: s for c in found(home) for s in c.servers}
    assert servers["shared"].command == f"{project}/bin/srv"


def test_user_level_workspace_folder_is_kept_and_reported(tmp_path: Path) -> None:
    home = tmp_path / "home"
    put(home / ".cursor/mcp.json", uses_folder("cur"))
    (cursor,) = found(home)
    server = cursor.servers[0]
    assert server.command == "${workspaceFolder}/bin/srv"  # as written, not another variable
    assert "WORKSPACE_FOLDER" not in json.dumps([server.command, server.args])
    assert [w for w in cursor.warnings if "${workspaceFolder} has no value here" in w]


def test_import_of_a_file_knows_its_project(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    cursor = put(project / ".cursor/mcp.json", uses_folder("cur"))
    assert import_mcp_servers(cursor).servers[0].command == f"{project}/bin/srv"
    assert workspace_of(cursor) == project
    assert workspace_of(project / ".cursor/mcp.json", home=project) is None  # ~/.cursor: user level
    assert workspace_of(tmp_path / "claude_desktop_config.json") is None
    loose = put(tmp_path / "claude_desktop_config.json", uses_folder("x"))
    result = import_mcp_servers(loose)
    assert result.servers[0].command == "${workspaceFolder}/bin/srv"
    assert any("has no value here" in w for w in result.warnings)


def test_a_project_mcp_json_is_listed_once(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    put(project / ".mcp.json", json.dumps({"mcpServers": {"db": {"command": "uvx", "args": ["db"]}}}))
    put(home / ".claude.json", json.dumps({"projects": {str(project): {"mcpServers": {}}}}))
    listed = [c for c in found(home, project) if c.path.resolve() == (project / ".mcp.json").resolve()]
    assert len(listed) == 1
