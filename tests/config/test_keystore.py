"""Secrets in the keyring: the store (keyring's real file backend in the test's home),
``${keyring:NAME}`` references, and moving literal secrets out of the config."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tributary.engine import paths
from tributary.engine.config import keystore
from tributary.engine.config.dump import config_to_yaml
from tributary.engine.config.expand import ExpansionError, expand_server, keyring_names
from tributary.engine.config.load import load_config
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.config.secret_move import move_secrets_to_keyring
from tributary.engine.config.secrets import mask_secrets, secret_values
from tributary.engine.config.validate import validate

SECRET = "ghp_s3cr3t-value-42"


def test_a_secrets_lock_an_older_version_left_0644_is_made_private() -> None:
    lock = paths.data_dir() / keystore.LOCK_FILE
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.touch()
    os.chmod(lock, 0o644)
    keystore.set_secret("GITHUB_TOKEN", SECRET)
    assert stat.S_IMODE(os.stat(lock).st_mode) == 0o600


def test_the_data_folder_a_first_secret_makes_is_private() -> None:
    """``config import`` with a secret in it can be the first thing to write there."""
    assert not paths.data_dir().exists()
    previous = os.umask(0o022)
    try:
        keystore.set_secret("GITHUB_TOKEN", SECRET)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(paths.data_dir()).st_mode) == 0o700


def test_secrets_round_trip_in_a_0600_file_named_in_the_notice() -> None:
    keystore.set_secret("GITHUB_TOKEN", SECRET)
    keystore.set_secret("other.key", "v4lue-2")
    assert keystore.get_secret("GITHUB_TOKEN") == SECRET
    assert keystore.names() == ["GITHUB_TOKEN", "other.key"]
    path = keystore.fallback_path()
    assert path.parent == paths.data_dir()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    lock = paths.data_dir() / keystore.LOCK_FILE  # the writers' lock beside it, too
    assert not lock.exists() or stat.S_IMODE(os.stat(lock).st_mode) == 0o600
    notice = keystore.backend_notice() or ""
    assert str(path) in notice and "not encrypted" in notice
    assert keystore.delete_secret("GITHUB_TOKEN") is True
    assert keystore.get_secret("GITHUB_TOKEN") is None
    assert keystore.names() == ["other.key"]
    assert keystore.delete_secret("GITHUB_TOKEN") is False


@pytest.mark.parametrize("name", ["", "1abc", "a b", "oauth:x", "__names__", "x" * 200])
def test_bad_secret_names_are_refused(name: str) -> None:
    with pytest.raises(keystore.KeystoreError, match="secret name"):
        keystore.set_secret(name, "value")


def test_keyring_references_expand_from_the_given_secrets() -> None:
    server = ServerConfig(name="api", transport="http", url="https://x.example/mcp",
                          headers={"Authorization": "Bearer ${keyring:API_TOKEN}"})
    assert keyring_names(server) == {"API_TOKEN"}
    expanded = expand_server(server, {}, secrets={"API_TOKEN": SECRET})
    assert expanded.headers["Authorization"] == f"Bearer {SECRET}"
    assert server.headers["Authorization"] == "Bearer ${keyring:API_TOKEN}"  # kept
    assert mask_secrets(expanded, server).headers["Authorization"] == "Bearer ${keyring:API_TOKEN}"
    assert SECRET in secret_values(server, {}, {"API_TOKEN": SECRET})
    with pytest.raises(ExpansionError, match=r"not in the keyring .*secrets set API_TOKEN"):
        expand_server(server, {}, secrets={})


def test_keyring_references_in_env_headers_args_and_url_only() -> None:
    server = ServerConfig(name="s", command="srv ${keyring:T}", args=["--token", "${keyring:T}"],
                          env={"T": "${keyring:T}"}, cwd="/srv/${keyring:T}")
    issues = validate(Config(servers={"s": server}))
    assert [i.key_path for i in issues] == ["servers.s.command", "servers.s.cwd"]
    assert "only be used in env, headers, args and url" in issues[0].message
    remote = ServerConfig(name="r", transport="http", url="https://u:${keyring:P}@x.example/mcp")
    assert validate(Config(servers={"r": remote})) == []


def test_move_stores_literals_and_saves_only_references(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "servers:\n"
        "  gh:\n    command: srv\n    env: {GITHUB_TOKEN: " + SECRET + ", LEVEL: info}\n"
        "  api:\n    url: https://x.example/mcp\n    headers: {Authorization: Bearer abc-123}\n",
        encoding="utf-8")
    keystore.set_secret("GITHUB_TOKEN", "someone-elses")  # a name already taken
    result = move_secrets_to_keyring(load_config(path))
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text and "abc-123" not in text
    config = load_config(path)
    ref = config.servers["gh"].env["GITHUB_TOKEN"]
    assert ref == "${keyring:GH_GITHUB_TOKEN}" and config.servers["gh"].env["LEVEL"] == "info"
    assert config.servers["api"].headers["Authorization"] == "Bearer ${keyring:API_AUTHORIZATION}"
    assert keystore.get_secret("GH_GITHUB_TOKEN") == SECRET
    assert keystore.get_secret("API_AUTHORIZATION") == "abc-123"
    assert keystore.get_secret("GITHUB_TOKEN") == "someone-elses"  # untouched
    assert sorted(result.names) == ["API_AUTHORIZATION", "GH_GITHUB_TOKEN"]
    assert SECRET not in config_to_yaml(result.config)
    again = move_secrets_to_keyring(load_config(path))
    assert again.names == [] and again.saved is None


def test_stores_are_told_to_mask_keyring_secrets() -> None:
    from tributary.engine.cache.redact import secret_values as store_secrets

    keystore.set_secret("API_TOKEN", SECRET)
    config = Config(servers={"api": ServerConfig(
        name="api", transport="http", url="https://x.example/mcp",
        headers={"Authorization": "Bearer ${keyring:API_TOKEN}"})})
    assert SECRET in store_secrets(config, {})


def test_long_values_are_stored_in_parts_and_read_back() -> None:
    long_value = "".join(chr(ord("a") + i % 26) for i in range(4321))
    keystore.set_entry("oauth:x:https://x/mcp:tokens", long_value)
    assert keystore.get_entry("oauth:x:https://x/mcp:tokens") == long_value
    backend = keystore.backend()
    assert backend.get_password(keystore.SERVICE, "oauth:x:https://x/mcp:tokens#4") is not None
    keystore.set_entry("oauth:x:https://x/mcp:tokens", "short now")
    assert keystore.get_entry("oauth:x:https://x/mcp:tokens") == "short now"
    assert backend.get_password(keystore.SERVICE, "oauth:x:https://x/mcp:tokens#1") is None
    keystore.set_entry("oauth:x:https://x/mcp:tokens", long_value)
    assert keystore.delete_entry("oauth:x:https://x/mcp:tokens") is True
    assert backend.get_password(keystore.SERVICE, "oauth:x:https://x/mcp:tokens#2") is None
    assert keystore.get_entry("oauth:x:https://x/mcp:tokens") is None


def test_a_value_that_looks_like_a_parts_head_survives() -> None:
    keystore.set_secret("odd", "tributary-parts:3:not really")
    assert keystore.get_secret("odd") == "tributary-parts:3:not really"
