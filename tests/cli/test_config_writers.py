"""Config writers take turns (a file lock), and every printout of a server masks its
secrets the way ``config show`` does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.cli.test_cli import ROOT, tributary, write_config
from tributary.engine.config.load import load_config
from tributary.engine.config.save import config_lock, update_config
from tributary.engine.config.schema import ServerConfig

SECRETS = ["ghp_abcdefghijklmnopqrstuvwxyz0123", "hunter2pass", "s3cr3tQueryKey", "sk-proj-abcdefghijklmnop1234",
           "Xk9fQ2mZpL7rT4vB8nW1yC3hJ6gD0sAe"]


def _import_file(home: Path, index: int) -> Path:
    path = home / f"servers_{index}.json"
    path.write_text(json.dumps({"mcpServers": {f"srv{index}": {"command": "uvx", "args": [f"server-{index}"]}}}),
                    encoding="utf-8")
    return path


def test_concurrent_imports_keep_every_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = write_config(home, "servers:\n  base:\n    command: uvx\n")
    count = 8
    env = {**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    processes = [
        subprocess.Popen([sys.executable, "-m", "tributary", "--config", str(config), "config", "import",
                          str(_import_file(home, i))], env=env, cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for i in range(count)
    ]
    outputs = [process.communicate(timeout=180)[0] for process in processes]
    assert [p.returncode for p in processes] == [0] * count, outputs
    servers = load_config(config).servers
    assert set(servers) == {"base", *(f"srv{i}" for i in range(count))}


def test_update_config_from_threads_loses_nothing(tmp_path: Path) -> None:
    config = write_config(tmp_path, "servers:\n  base:\n    command: uvx\n")

    def add(index: int) -> None:
        def change(now):  # type: ignore[no-untyped-def]
            now.servers[f"t{index}"] = ServerConfig(name=f"t{index}", command="uvx")
            return now
        update_config(config, change)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert set(load_config(config).servers) == {"base", *(f"t{i}" for i in range(6))}


def test_a_held_lock_makes_a_writer_wait(tmp_path: Path) -> None:
    config = write_config(tmp_path, "servers:\n  base:\n    command: uvx\n")
    entered = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def holder() -> None:
        with config_lock(config):
            entered.set()
            release.wait(30)
            order.append("holder done")

    thread = threading.Thread(target=holder)
    thread.start()
    entered.wait(30)

    def writer() -> None:
        update_config(config, lambda now: now)
        order.append("writer done")

    second = threading.Thread(target=writer)
    second.start()
    second.join(0.5)  # not a timing assertion: it cannot finish while the lock is held
    assert order == []
    release.set()
    thread.join(30)
    second.join(30)
    assert order == ["holder done", "writer done"]


@pytest.fixture
def secret_config(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    config = write_config(home, "servers: {}\n")
    source = home / "claude.json"
    source.write_text(json.dumps({"mcpServers": {
        "gh": {"command": "npx", "args": ["-y", "gh-server", f"--api-key={SECRETS[0]}"]},
        "db": {"command": "uvx", "args": ["pg-server", f"postgres://admin:{SECRETS[1]}@db.local/app"]},
        "remote": {"type": "http", "url": f"https://api.example.com/mcp?api_key={SECRETS[2]}&region=eu"},
        "plain": {"command": "node", "args": ["srv.js", SECRETS[3]], "env": {"MY_VALUE": SECRETS[4]}},
    }}), encoding="utf-8")
    return home, config


def test_import_and_list_mask_literal_secrets(secret_config: tuple[Path, Path]) -> None:
    home, config = secret_config
    source = home / "claude.json"
    for command in (["config", "import", "--dry-run", str(source)], ["config", "import", str(source)],
                    ["servers", "list"], ["config", "show"]):
        result = tributary("--config", str(config), *command, home=home)
        assert result.returncode == 0, result.stdout + result.stderr
        printed = result.stdout + result.stderr
        assert not [s for s in SECRETS if s in printed], (command, printed)
        if command[0] == "config" and command[1] == "import":
            assert "--api-key=****" in printed and "postgres://admin:****@db.local/app" in printed
            assert "api_key=****&region=eu" in printed and "srv.js ${keyring:" in printed
            assert "secrets to the keyring" in printed
    # the file holds keyring references, not the literals, and they expand to them
    text = config.read_text(encoding="utf-8")
    assert not [s for s in SECRETS if s in text]
    saved = load_config(config).servers
    assert saved["gh"].args[-1].startswith("--api-key=${keyring:")
    assert saved["plain"].env["MY_VALUE"].startswith("${keyring:")
