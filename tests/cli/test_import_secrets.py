"""``tributary config import`` never copies a client's literal secrets into config.yaml:
they go to the secret store (here keyring's 0600 file, in the test's home) and the
config gets ``${keyring:NAME}``; the report names the keys and where they are kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.test_cli import ROOT
from tributary.engine.config.importer import secrets_to_keyring_refs
from tributary.engine.config.load import load_config
from tributary.engine.config.schema import ServerConfig

CURSOR_KEY = "sk-cursor-0123456789abcdefXYZ"
ZED_TOKEN = "zed-token-9876543210fedcba"


def tributary(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "TRIBUTARY_HOME": str(home / "trib"),
           "TRIBUTARY_KEYRING": "file", "PYTHONPATH": str(ROOT)}
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("CODEX_HOME", None)
    return subprocess.run([sys.executable, "-m", "tributary", "config", "import", *args],
                          capture_output=True, text=True, env=env, cwd=home, timeout=60,
                          stdin=subprocess.DEVNULL, check=False)


def setup_home(home: Path) -> None:
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor/mcp.json").write_text(json.dumps({"mcpServers": {
        "llm": {"command": "npx", "args": ["-y", "llm-mcp"], "env": {"API_KEY": CURSOR_KEY,
                                                                      "LEVEL": "info"}}}}))
    (home / ".config/zed").mkdir(parents=True)
    (home / ".config/zed/settings.json").write_text(json.dumps({"context_servers": {
        "wiki": {"url": "https://wiki.example/mcp",
                 "headers": {"Authorization": f"Bearer {ZED_TOKEN}"}}}}))


def test_import_moves_literal_secrets_to_the_keyring(tmp_path: Path) -> None:
    home = tmp_path / "home"
    setup_home(home)
    result = tributary(home, "--all")
    assert result.returncode == 0, result.stderr
    config_file = home / "trib" / "config.yaml"
    text = config_file.read_text(encoding="utf-8")
    assert CURSOR_KEY not in text and ZED_TOKEN not in text
    servers = load_config(config_file).servers
    assert servers["llm"].env == {"API_KEY": "${keyring:API_KEY}", "LEVEL": "info"}
    assert servers["wiki"].headers == {"Authorization": "Bearer ${keyring:WIKI_AUTHORIZATION}"}
    assert "moved 2 secrets to the keyring: API_KEY, WIKI_AUTHORIZATION" in result.stdout
    assert "secrets.cfg" in result.stdout and "not encrypted" in result.stdout
    assert CURSOR_KEY not in result.stdout + result.stderr
    assert ZED_TOKEN not in result.stdout + result.stderr
    listed = subprocess.run([sys.executable, "-m", "tributary", "secrets", "list"],
                            capture_output=True, text=True, timeout=60, check=False,
                            env={**os.environ, "TRIBUTARY_HOME": str(home / "trib"),
                                 "TRIBUTARY_KEYRING": "file", "PYTHONPATH": str(ROOT)})
    assert listed.stdout.split()[-2:] == ["API_KEY", "WIKI_AUTHORIZATION"]


def test_dry_run_stores_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    setup_home(home)
    result = tributary(home, "--all", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "would move 2 secrets to the keyring" in result.stdout
    assert not list((home / "trib").rglob("secrets.cfg"))


def test_a_token_shaped_value_is_secret_under_any_name() -> None:
    server = ServerConfig(name="gh", command="x", env={"GH": "ghp_abcdefghijklmnop1234", "MODE": "fast"})
    (converted,), values = secrets_to_keyring_refs([server], lambda _name: None)
    assert converted.env == {"GH": "${keyring:GH}", "MODE": "fast"}
    assert values == {"GH": "ghp_abcdefghijklmnop1234"}
