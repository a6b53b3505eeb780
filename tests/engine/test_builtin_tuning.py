"""A built-in server tuned in the config (weight, timeout, on/off, no command)."""

from __future__ import annotations

from pathlib import Path

from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.repos.builtins import with_builtin_servers


def tuned_config() -> Config:
    config = Config()
    config.servers["git"] = ServerConfig(name="git", command="uvx")
    config.servers["tasks"] = ServerConfig(name="tasks", builtin="tasks", weight=0.5, timeout=7.0,
                                           enabled=False)
    return config


def test_a_tuning_applies_to_the_built_in_it_names(tmp_path: Path) -> None:
    (tmp_path / "repo.tasks.sqlite").touch()
    servers = with_builtin_servers(tuned_config(), tmp_path).servers
    tasks = servers["tasks"]
    assert tasks.command and (tasks.weight, tasks.timeout, tasks.enabled) == (0.5, 7.0, False)
    assert "files" not in servers  # nothing for it to serve


def test_a_tuning_with_nothing_to_serve_is_no_server(tmp_path: Path) -> None:
    """Every repository removed: the tuning stays in the file for later, but there is no
    command to run, so it is not started (and reported failing) as a server."""
    servers = with_builtin_servers(tuned_config(), tmp_path).servers
    assert list(servers) == ["git"]
