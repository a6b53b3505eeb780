"""``tributary secrets``: set (value from stdin, never argv), list, delete, move — run
as a user runs it, against keyring's file backend in the test's home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.cli.test_cli import ROOT, tributary, write_config

SECRET = "sk-live-0123456789abcdef"


def with_stdin(*args: str, home: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tributary", *args], input=stdin,
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=60, check=False)


def test_set_list_delete(tmp_path: Path) -> None:
    home = tmp_path / "home"
    stored = with_stdin("secrets", "set", "OPENAI_KEY", home=home, stdin=SECRET + "\n")
    assert stored.returncode == 0, stored.stderr
    assert "${keyring:OPENAI_KEY}" in stored.stdout
    assert "not encrypted" in stored.stderr and "secrets.cfg" in stored.stderr
    assert SECRET not in stored.stdout + stored.stderr
    listed = tributary("secrets", "list", home=home)
    assert listed.stdout.splitlines()[-1] == "OPENAI_KEY" and SECRET not in listed.stdout
    gone = tributary("secrets", "delete", "OPENAI_KEY", home=home)
    assert gone.returncode == 0
    assert "no secrets stored" in tributary("secrets", "list", home=home).stdout
    assert tributary("secrets", "delete", "OPENAI_KEY", home=home).returncode == 1


def test_set_takes_no_value_on_the_command_line(tmp_path: Path) -> None:
    result = tributary("secrets", "set", "A", SECRET, home=tmp_path / "home")
    assert result.returncode == 2 and "unrecognized arguments" in result.stderr


def test_move_takes_literals_out_of_the_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = write_config(home, f"servers:\n  gh:\n    command: srv\n    env: {{GITHUB_TOKEN: {SECRET}}}\n")
    dry = tributary("--config", str(config), "secrets", "move", "--dry-run", home=home)
    assert "servers.gh.env.GITHUB_TOKEN -> ${keyring:GITHUB_TOKEN}" in dry.stdout
    assert SECRET in config.read_text()
    moved = tributary("--config", str(config), "secrets", "move", home=home)
    assert moved.returncode == 0, moved.stderr
    assert SECRET not in config.read_text() and "${keyring:GITHUB_TOKEN}" in config.read_text()
    backup = config.with_name("config.yaml.bak")
    assert not backup.exists() or SECRET not in backup.read_text()
    assert SECRET not in moved.stdout + moved.stderr
    shown = tributary("--config", str(config), "config", "show", home=home)
    assert "${keyring:GITHUB_TOKEN}" in shown.stdout and SECRET not in shown.stdout
