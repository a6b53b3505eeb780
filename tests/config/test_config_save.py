"""Saving: validated first, round-trips, atomic with a backup, crash-safe under kill -9."""

from __future__ import annotations

import dataclasses
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tributary.engine.config.defaults import default_config_text
from tributary.engine.config.dump import config_to_dict, config_to_yaml
from tributary.engine.config.errors import ConfigError
from tributary.engine.config.load import load_config, parse_config
from tributary.engine.config.save import backup_path, save_config
from tributary.engine.config.schema import (
    Config,
    FusionConfig,
    HealthConfig,
    RepoConfig,
    RoutingConfig,
    RoutingRule,
    ServerConfig,
)

ROOT = Path(__file__).resolve().parents[2]


def rich_config() -> Config:
    return Config(
        servers={
            "git": ServerConfig(name="git", command="uvx", args=["mcp-server-git", "--repository", "${HOME}/src"],
                                env={"GITHUB_TOKEN": "${GITHUB_TOKEN}", "MODE": "fast: yes"}, timeout=2.5),
            "docs": ServerConfig(name="docs", transport="http", url="https://x.example/mcp",
                                 headers={"Authorization": "Bearer ${DOCS_TOKEN}"}, weight=0.5, enabled=False,
                                 tool="search", query_argument="q", arguments={"limit": 5, "tags": ["a", None]},
                                 health=HealthConfig(interval_s=10.0)),
            "odd name: 1": ServerConfig(name="odd name: 1", command="true", args=["", "null", "123", "'quoted'"]),
        },
        routing=RoutingConfig(
            mode="all",
            rules=[RoutingRule(name="code", pattern=r"\bdef\b|class", servers=["git", "files"], priority=2,
                               weights={"git": 1.5}, strategy="weighted", query_class="symbol")],
            fallback=["git"],
        ),
        fusion=FusionConfig(strategy="composite", top_k=50),
        repos=[RepoConfig(path="~/src/p", include=["src/**"], watch=True)],
    )


def test_round_trip_rich_config() -> None:
    config = rich_config()
    assert parse_config(config_to_yaml(config), source="x") == config


def test_defaults_are_not_written() -> None:
    data = config_to_dict(Config(servers={"a": ServerConfig(name="a", command="x")}))
    assert data == {"servers": {"a": {"command": "x"}}}
    assert parse_config(config_to_yaml(Config()), source="x") == Config()


def test_var_references_are_saved_unexpanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_supersecret")
    path = save_config(rich_config(), tmp_path / "config.yaml")
    text = path.read_text()
    assert "${GITHUB_TOKEN}" in text and "ghp_supersecret" not in text


def test_save_writes_backup_and_keeps_mode(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config.yaml"
    first = Config(servers={"a": ServerConfig(name="a", command="one")})
    second = Config(servers={"a": ServerConfig(name="a", command="two")})
    assert save_config(first, path) == path
    assert not backup_path(path).exists()
    if os.name == "posix":
        assert path.stat().st_mode & 0o777 == 0o600
        path.chmod(0o640)
    save_config(second, path)
    assert load_config(path).servers["a"].command == "two"
    assert load_config(backup_path(path)).servers["a"].command == "one"
    if os.name == "posix":
        assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.joinpath("sub").iterdir() if p.name.endswith(".tmp")] == []


def test_invalid_config_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    good = Config(servers={"a": ServerConfig(name="a", command="x")})
    save_config(good, path)
    before = path.read_bytes()
    bad = dataclasses.replace(good, fusion=FusionConfig(top_k=5))
    with pytest.raises(ConfigError) as info:
        save_config(bad, path)
    assert info.value.issues[0].key_path == "fusion.top_k"
    assert str(path) in str(info.value)
    assert path.read_bytes() == before and not backup_path(path).exists()


def test_save_uses_loaded_path(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    config = load_config(path)  # missing: defaults, remembering where to save
    config.servers["a"] = ServerConfig(name="a", command="x")
    assert save_config(config) == path
    assert load_config(path).servers["a"].command == "x"


def test_default_config_copies_are_identical() -> None:
    assert (ROOT / "resources" / "default_config.yaml").read_text("utf-8") == default_config_text()
    assert parse_config(default_config_text(), source="default") == Config()


def test_saved_text_is_plain_yaml() -> None:
    text = config_to_yaml(rich_config())
    data = yaml.safe_load(text)
    assert "name" not in data["servers"]["git"]  # the key is the name
    assert text.startswith("# Tributary configuration")


_SAVER = """
import sys
from pathlib import Path
from tributary.engine.config.save import save_config
from tributary.engine.config.schema import Config, ServerConfig

path = Path(sys.argv[1])
configs = [
    Config(servers={f"s{i}": ServerConfig(name=f"s{i}", command="old", args=["x"] * 50) for i in range(40)}),
    Config(servers={f"n{i}": ServerConfig(name=f"n{i}", command="new", env={"K": "v" * 200}) for i in range(60)}),
]
save_config(configs[0], path)
print("ready", flush=True)
i = 0
while True:
    i += 1
    save_config(configs[i % 2], path)
"""


@pytest.mark.integration
def test_crash_mid_save_leaves_old_or_new(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    script = tmp_path / "saver.py"
    script.write_text(_SAVER)
    expected_commands = ({"old"}, {"new"})
    rng = random.Random(7)
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, str(script), str(path)], cwd=ROOT,
                                stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
            time.sleep(rng.uniform(0.02, 0.3))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        for candidate in (path, backup_path(path)):
            if candidate != path and not candidate.exists():
                continue  # killed before the second save made a backup
            config = load_config(candidate)
            commands = {s.command for s in config.servers.values()}
            assert commands in expected_commands
            assert len(config.servers) == (40 if commands == {"old"} else 60)


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_the_lock_beside_the_config_is_private_too(tmp_path: Path) -> None:
    """Every file Tributary leaves beside the config is the user's alone, whatever the
    umask: the writers' lock file was created 0644."""
    old = os.umask(0o022)
    try:
        save_config(Config(servers={"a": ServerConfig(name="a", command="x")}), tmp_path / "config.yaml")
    finally:
        os.umask(old)
    left = {p.name: oct(p.stat().st_mode & 0o777) for p in tmp_path.iterdir()}
    assert left.get("config.yaml.lock", "0o600") == "0o600" and left["config.yaml"] == "0o600"
    earlier = tmp_path / "earlier"  # a lock an older version left 0644 is made private
    earlier.mkdir()
    (earlier / "config.yaml.lock").touch(mode=0o644)
    os.chmod(earlier / "config.yaml.lock", 0o644)
    save_config(Config(servers={"a": ServerConfig(name="a", command="x")}), earlier / "config.yaml")
    assert (earlier / "config.yaml.lock").stat().st_mode & 0o777 == 0o600
