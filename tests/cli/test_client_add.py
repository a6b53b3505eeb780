"""``tributary client add CLIENT``: Tributary written into each client's config at its
standard place (in a temporary home), the rest of the file kept, a backup beside it,
added once however often it runs; and importing those files never brings it back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.cli.test_cli import ROOT
from tributary.engine.cli.main import main
from tributary.engine.config.client_setup import serve_command

PLACES = {
    "claude": (".config/Claude/claude_desktop_config.json", "mcpServers"),
    "claude-code": (".claude.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "vscode": (".config/Code/User/mcp.json", "servers"),
    "windsurf": (".codeium/windsurf/mcp_config.json", "mcpServers"),
    "zed": (".config/zed/settings.json", "context_servers"),
}


def add(home: Path, client: str, *extra: str) -> int:
    return main(["client", "add", client, "--home", str(home), *extra])


@pytest.mark.parametrize("client", sorted(PLACES))
def test_json_clients_keep_the_file_and_add_once(client: str, tmp_path: Path) -> None:
    relative, section = PLACES[client]
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"theme": "dark", section: {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}))
    before = path.read_text()
    assert add(tmp_path, client) == 0
    data = json.loads(path.read_text())
    assert data["theme"] == "dark" and set(data[section]) == {"git", "tributary"}
    command, args = serve_command()
    assert data[section]["tributary"]["command"] == command and args[-1] == "serve"
    assert Path(command).is_absolute()
    assert path.with_name(path.name + ".bak").read_text() == before
    written = path.read_text()
    assert add(tmp_path, client) == 0
    assert path.read_text() == written  # twice: added once, file untouched


def test_codex_table_is_appended_then_left(tmp_path: Path) -> None:
    path = tmp_path / ".codex/config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('model = "gpt-5-codex"  # mine\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n')
    assert add(tmp_path, "codex") == 0
    text = path.read_text()
    assert text.startswith('model = "gpt-5-codex"  # mine\n')  # the rest kept as written
    data = tomllib.loads(text)
    assert set(data["mcp_servers"]) == {"docs", "tributary"}
    assert data["mcp_servers"]["tributary"]["args"][-1] == "serve"
    assert add(tmp_path, "codex") == 0 and path.read_text() == text


def test_a_different_entry_is_left_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRIBUTARY_HOME", raising=False)  # (the entry's env is tested below)
    path = tmp_path / ".codex/config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('[mcp_servers.tributary]\ncommand = "old"\n\n[mcp_servers.tributary.env]\nA = "1"\n\n'
                    '[mcp_servers.docs]\ncommand = "docs-mcp"\n')
    assert add(tmp_path, "codex") == 1
    assert "--force" in capsys.readouterr().out and "old" in path.read_text()
    assert add(tmp_path, "codex", "--force") == 0
    data = tomllib.loads(path.read_text())
    assert data["mcp_servers"]["tributary"] == {"command": serve_command()[0], "args": serve_command()[1]}
    assert data["mcp_servers"]["docs"] == {"command": "docs-mcp"}


def test_tributary_under_another_name_is_not_added_again(tmp_path: Path) -> None:
    assert add(tmp_path, "cursor", "--name", "context") == 0
    assert add(tmp_path, "cursor") == 0
    servers = json.loads((tmp_path / ".cursor/mcp.json").read_text())["mcpServers"]
    assert set(servers) == {"context"}


def test_print_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert add(tmp_path, "vscode", "--print", "--name", "ctx") == 0
    out = capsys.readouterr().out
    assert str(tmp_path / ".config/Code/User/mcp.json") in out
    assert json.loads(out.split("\n", 1)[1])["servers"]["ctx"]["type"] == "stdio"
    assert not list(tmp_path.rglob("*.json"))


def test_unknown_client(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert add(tmp_path, "emacs") == 1
    assert "unknown client 'emacs'" in capsys.readouterr().err


def test_import_after_add_brings_nothing_of_tributary(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for client in [*PLACES, "codex"]:
        assert add(home, client) == 0
    env = {**os.environ, "HOME": str(home), "TRIBUTARY_HOME": str(home / "trib"), "PYTHONPATH": str(ROOT)}
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("CODEX_HOME", None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tributary", "config", "import", *args],
                              capture_output=True, text=True, env=env, cwd=home, timeout=60,
                              stdin=subprocess.DEVNULL, check=False)

    found = run("--all")
    assert found.returncode == 0, found.stderr
    assert found.stdout.count("skipped 'tributary': this is Tributary itself") == 7
    assert "nothing chosen to import" in found.stdout
    single = run(str(home / ".cursor/mcp.json"))
    assert "skipped 'tributary': this is Tributary itself" in single.stdout
    assert not (home / "trib" / "config.yaml").exists()


def test_the_entry_starts_tributary_in_the_home_it_was_added_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With TRIBUTARY_HOME set, a client starting plain `tributary serve` would serve
    another home's config and indexes: the entry carries the variable."""
    monkeypatch.setenv("TRIBUTARY_HOME", "~/work/tributary-home")
    monkeypatch.delenv("TRIBUTARY_CONFIG", raising=False)
    assert add(tmp_path, "claude") == 0
    entry = json.loads((tmp_path / PLACES["claude"][0]).read_text())["mcpServers"]["tributary"]
    assert entry["env"] == {"TRIBUTARY_HOME": str(Path("~/work/tributary-home").expanduser())}
    assert add(tmp_path, "codex") == 0
    table = tomllib.loads((tmp_path / ".codex/config.toml").read_text())["mcp_servers"]["tributary"]
    assert table["env"] == entry["env"]
    monkeypatch.delenv("TRIBUTARY_HOME")
    assert add(tmp_path, "cursor") == 0
    assert "env" not in json.loads((tmp_path / PLACES["cursor"][0]).read_text())["mcpServers"]["tributary"]
