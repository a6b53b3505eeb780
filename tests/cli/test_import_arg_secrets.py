"""Literal secrets in a client's ``args`` and URLs go to the keyring on import, and a
server started from the imported config still gets the real values."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.test_import_secrets import tributary
from tests.fakes import FAKE_SERVER
from tributary.engine.config import keystore
from tributary.engine.config.importer import same_server, secrets_to_keyring_refs
from tributary.engine.config.load import load_config
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.config.secret_move import move_server_secrets
from tributary.engine.config.secrets import mask_secrets
from tributary.engine.config.validate import validate
from tributary.engine.sources.pool import SourcePool
from tributary.engine.sources.remote import expand_for_connection

API_KEY = "sk-live-0123456789abcdefXYZ"
TOKEN = "tok-plain-value-1"
PASSWORD = "hunter22pw"
URL_KEY = "abc123def"


def test_secret_flags_and_url_parts_become_keyring_references() -> None:
    server = ServerConfig(name="gh", command="npx", args=[
        "-y", "gh-mcp", f"--api-key={API_KEY}", "--token", TOKEN, "--private-key", "/home/me/k.pem",
        "--mode", "fast", f"https://me:{PASSWORD}@db.example/x?api_key={URL_KEY}&page=2#top"])
    remote = ServerConfig(name="wiki", transport="http",
                          url=f"https://bot:{PASSWORD}@wiki.example/mcp?token={TOKEN}&lang=en")
    (stdio, http), values = secrets_to_keyring_refs([server, remote], lambda _name: None)
    assert stdio.args == [
        "-y", "gh-mcp", "--api-key=${keyring:GH_API_KEY}", "--token", "${keyring:GH_TOKEN}",
        "--private-key", "/home/me/k.pem", "--mode", "fast",
        "https://me:${keyring:GH_PASSWORD}@db.example/x?api_key=${keyring:GH_API_KEY_2}&page=2#top"]
    assert http.url == ("https://bot:${keyring:WIKI_PASSWORD}@wiki.example/mcp"
                        "?token=${keyring:WIKI_TOKEN}&lang=en")
    assert values == {"GH_API_KEY": API_KEY, "GH_TOKEN": TOKEN, "GH_PASSWORD": PASSWORD,
                      "GH_API_KEY_2": URL_KEY, "WIKI_PASSWORD": PASSWORD, "WIKI_TOKEN": TOKEN}
    assert validate(Config(servers={"gh": stdio, "wiki": http})) == []
    assert same_server(server, stdio) and same_server(remote, http)  # importing again adds nothing
    _, places, names = move_server_secrets([server, remote], store=False)
    assert ("servers.gh.args[2]", "GH_API_KEY") in places
    assert ("servers.wiki.url", "WIKI_TOKEN") in places
    assert sorted(names) == sorted(values)


def test_references_and_plain_args_stay_as_written() -> None:
    server = ServerConfig(name="s", command="srv", args=[
        "--api-key=${keyring:MINE}", "--token", "${TOKEN}", "--verbose", "https://x.example/a?q=1"])
    (same,), values = secrets_to_keyring_refs([server], lambda _name: None)
    assert same.args == server.args and values == {}


@pytest.mark.asyncio
async def test_a_server_started_from_the_imported_config_gets_the_real_values(tmp_path: Path) -> None:
    seen = tmp_path / "argv.json"
    # Records the arguments it was started with, then becomes the fake MCP server.
    script = ("import json, os, sys; open(sys.argv[1], 'w').write(json.dumps(sys.argv[2:])); "
              f"os.execv(sys.executable, [sys.executable, {str(FAKE_SERVER)!r}, '--name', 'k'])")
    literal = ServerConfig(name="k", command=sys.executable,
                           args=["-c", script, str(seen), f"--api-key={API_KEY}", "--token", TOKEN])
    (server,), values = secrets_to_keyring_refs([literal], keystore.get_secret)
    for name, value in values.items():
        keystore.set_secret(name, value)
    assert API_KEY not in json.dumps(server.args)
    async with SourcePool([server]) as pool:
        outcome = await pool.call("k", "anything", top_k=3)
        assert outcome.status == "ok", outcome.error
    assert json.loads(seen.read_text(encoding="utf-8")) == [f"--api-key={API_KEY}", "--token", TOKEN]

    remote = ServerConfig(name="w", transport="http", url="https://bot:${keyring:W_PW}@w.example/mcp")
    keystore.set_secret("W_PW", PASSWORD)
    expanded = await expand_for_connection(remote)
    assert expanded.url == f"https://bot:{PASSWORD}@w.example/mcp"
    assert mask_secrets(expanded, remote).url == remote.url  # shown as the reference


@pytest.mark.integration
def test_import_reports_names_and_never_values(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor/mcp.json").write_text(json.dumps({"mcpServers": {
        "llm": {"command": "npx", "args": ["-y", "llm-mcp", f"--api-key={API_KEY}"]},
        "db": {"url": f"https://me:{PASSWORD}@db.example/mcp?api_key={URL_KEY}"}}}))
    result = tributary(home, "--all")
    assert result.returncode == 0, result.stderr
    text = (home / "trib" / "config.yaml").read_text(encoding="utf-8")
    out = result.stdout + result.stderr
    for value in (API_KEY, PASSWORD, URL_KEY):
        assert value not in text and value not in out
    assert "moved 3 secrets to the keyring: DB_API_KEY, DB_PASSWORD, LLM_API_KEY" in result.stdout
    servers = load_config(home / "trib" / "config.yaml").servers
    assert servers["llm"].args[-1] == "--api-key=${keyring:LLM_API_KEY}"
    assert servers["db"].url == ("https://me:${keyring:DB_PASSWORD}@db.example/mcp"
                                 "?api_key=${keyring:DB_API_KEY}")
    again = tributary(home, "--all")
    assert again.returncode == 0 and "nothing to add" in again.stdout, again.stdout
