"""``tributary config import`` with no FILE: lists the clients' configs found in HOME
and imports the chosen ones (--all, --client), each identical server once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import ROOT
from tributary.engine.config.load import load_config


def tributary(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "TRIBUTARY_HOME": str(home / "trib"),
           "PYTHONPATH": str(ROOT)}
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("CODEX_HOME", None)
    return subprocess.run([sys.executable, "-m", "tributary", "config", "import", *args],
                          capture_output=True, text=True, env=env, cwd=home, timeout=60,
                          stdin=subprocess.DEVNULL, check=False)


def setup_home(home: Path) -> None:
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor/mcp.json").write_text(json.dumps({"mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git"]}}}), encoding="utf-8")
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "mcpServers": {
        "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"], "env": {}},
        "linear": {"type": "sse", "url": "https://mcp.linear.app/sse"}}}), encoding="utf-8")
    (home / ".codex").mkdir()
    (home / ".codex/config.toml").write_text('[mcp_servers.docs]\ncommand = "docs-mcp"\n', encoding="utf-8")


def test_lists_then_imports_chosen_clients(tmp_path: Path) -> None:
    home = tmp_path / "home"
    setup_home(home)
    listed = tributary(home)
    assert listed.returncode == 0, listed.stderr
    assert "Claude Code: " in listed.stdout and "servers: git, linear" in listed.stdout
    assert "Cursor: " in listed.stdout and "Codex: " in listed.stdout
    assert "--all or --client" in listed.stdout
    config = home / "trib" / "config.yaml"
    assert not config.exists()

    codex = tributary(home, "--client", "codex")
    assert codex.returncode == 0, codex.stderr
    assert set(load_config(config).servers) == {"docs"}

    everything = tributary(home, "--all")
    assert everything.returncode == 0, everything.stderr
    servers = load_config(config).servers
    assert set(servers) == {"docs", "git", "linear"}  # git once, though two clients have it
    assert servers["linear"].transport == "sse" and servers["linear"].enabled
    again = tributary(home, "--all")
    assert "nothing to add" in again.stdout and set(load_config(config).servers) == set(servers)


def test_nothing_found(tmp_path: Path) -> None:
    home = tmp_path / "empty"
    home.mkdir()
    result = tributary(home)
    assert result.returncode == 0 and "no MCP client configs found" in result.stdout


def test_unknown_client(tmp_path: Path) -> None:
    home = tmp_path / "home"
    setup_home(home)
    result = tributary(home, "--client", "emacs")
    assert result.returncode == 1 and "unknown client 'emacs'" in result.stderr


def test_a_workspace_that_is_home_lists_each_file_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    setup_home(home)
    listed = tributary(home, "--workspace", str(home))
    assert listed.stdout.count(".cursor/mcp.json") == 1


def test_interactive_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from tributary.engine.cli.config_cmd import run_import

    home = tmp_path / "home"
    setup_home(home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    config = tmp_path / "config.yaml"
    args = argparse.Namespace(config=str(config), file=None, all=False, client=[],
                              workspace=str(tmp_path), dry_run=False)
    listing_order: list[str] = []

    def answer(prompt: str) -> str:
        out = capsys.readouterr().out
        listing_order.extend(line.split(". ", 1)[1].split(":", 1)[0]
                             for line in out.splitlines() if ". " in line and line.strip()[0].isdigit())
        return str(listing_order.index("Codex") + 1)

    monkeypatch.setattr("builtins.input", answer)
    assert run_import(args) == 0
    assert set(load_config(config).servers) == {"docs"}
    monkeypatch.setattr("builtins.input", lambda prompt: "99")
    assert run_import(args) == 1
    assert "not one of the numbers" in capsys.readouterr().err
