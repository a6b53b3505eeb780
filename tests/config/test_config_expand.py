"""${VAR} expansion at server start, and masking of secrets for display and logs."""

from __future__ import annotations

import pytest

from tributary.engine.config.expand import (
    ExpansionError,
    expand_server,
    expand_string,
    reference_problems,
)
from tributary.engine.config.schema import ServerConfig
from tributary.engine.config.secrets import (
    MASK,
    is_secret_name,
    looks_like_token,
    mask_secrets,
    mask_url,
    scrub,
    secret_values,
    server_summary,
)

ENV = {"TOKEN": "tok_abcdef123", "HOME": "/home/u", "EMPTY": ""}


def server() -> ServerConfig:
    return ServerConfig(
        name="gh",
        command="${HOME}/bin/gh-mcp",
        args=["--token", "${TOKEN}", "--mode=${MODE:-fast}", "pa$$word", "$${LITERAL}"],
        env={"GITHUB_TOKEN": "${TOKEN}", "LEVEL": "${EMPTY:-info}", "PLAIN": "x"},
        cwd="${HOME}",
    )


def test_expand_string_forms() -> None:
    assert expand_string("${TOKEN}", ENV) == ("tok_abcdef123", [])
    assert expand_string("a ${MISSING:-dflt} b", ENV) == ("a dflt b", [])
    assert expand_string("${EMPTY:-used}", ENV) == ("used", [])
    assert expand_string("${EMPTY}", ENV) == ("", [])
    assert expand_string("$${X} and $HOME and pa$$", ENV) == ("${X} and $HOME and pa$$", [])
    assert expand_string("${NOPE}/x", ENV) == ("/x", ["NOPE"])


def test_expand_server_copies_and_expands() -> None:
    original = server()
    expanded = expand_server(original, ENV)
    assert expanded.command == "/home/u/bin/gh-mcp"
    assert expanded.args == ["--token", "tok_abcdef123", "--mode=fast", "pa$$word", "${LITERAL}"]
    assert expanded.env == {"GITHUB_TOKEN": "tok_abcdef123", "LEVEL": "info", "PLAIN": "x"}
    assert expanded.cwd == "/home/u"
    assert original == server()  # the config object keeps its references
    expanded.env["X"] = "y"
    assert "X" not in original.env


def test_http_server_expansion() -> None:
    remote = ServerConfig(name="r", transport="http", url="https://${HOST:-x.example}/mcp",
                          headers={"Authorization": "Bearer ${TOKEN}"})
    expanded = expand_server(remote, ENV)
    assert expanded.url == "https://x.example/mcp"
    assert expanded.headers["Authorization"] == "Bearer tok_abcdef123"


def test_unset_variables_are_all_named() -> None:
    broken = ServerConfig(name="gh", command="x", env={"A": "${NOPE_A}"}, args=["${NOPE_B}"])
    with pytest.raises(ExpansionError) as info:
        expand_server(broken, {}, source="cfg.yaml")
    paths = {issue.key_path for issue in info.value.issues}
    assert paths == {"servers.gh.env.A", "servers.gh.args[0]"}
    assert "NOPE_A" in str(info.value) and "cfg.yaml" in str(info.value)


def test_reference_syntax_problems() -> None:
    assert reference_problems("${OK} ${OK:-d} $${esc} $plain") == []
    assert reference_problems("${unterminated")
    assert reference_problems("${1BAD}")
    assert reference_problems("${A:-${B}}")


def test_secret_names() -> None:
    for name in ("GITHUB_TOKEN", "Authorization", "X-Api-Key", "--api-key", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "KEY"):
        assert is_secret_name(name), name
    for name in ("PATH", "LEVEL", "MODE", "KEYBOARD_LAYOUT", "--verbose"):
        assert not is_secret_name(name), name


def test_mask_unexpanded_config_shows_references_and_hides_literals() -> None:
    config = ServerConfig(name="s", command="x", args=["--api-key", "literal123", "--token=abc123"],
                          env={"GITHUB_TOKEN": "${TOKEN}", "DB_PASSWORD": "hunter22", "LEVEL": "info"},
                          arguments={"api_key": "k-123", "limit": 3})
    masked = mask_secrets(config)
    assert masked.env == {"GITHUB_TOKEN": "${TOKEN}", "DB_PASSWORD": MASK, "LEVEL": "info"}
    assert masked.args == ["--api-key", MASK, f"--token={MASK}"]
    assert masked.arguments == {"api_key": MASK, "limit": 3}
    assert config.env["DB_PASSWORD"] == "hunter22"  # a copy; the original is untouched


def test_mask_expanded_server_never_shows_values() -> None:
    original = server()
    expanded = expand_server(original, ENV)
    masked = mask_secrets(expanded, original)
    text = repr(masked)
    assert "tok_abcdef123" not in text
    assert masked.env["GITHUB_TOKEN"] == "${TOKEN}"
    assert masked.args[1] == "${TOKEN}"
    headers = ServerConfig(name="h", transport="http", url="https://x/mcp", headers={"Authorization": "Bearer ${TOKEN}"})
    masked_headers = mask_secrets(expand_server(headers, ENV), headers)
    assert masked_headers.headers["Authorization"] == "Bearer ${TOKEN}"


def test_mask_url() -> None:
    assert mask_url("https://user:pw@host/mcp?api_key=abc&q=1") == f"https://user:{MASK}@host/mcp?api_key={MASK}&q=1"
    assert mask_url("https://h/${X}", original="https://h/${X}") == "https://h/${X}"


def test_secret_values_and_scrub() -> None:
    secrets = secret_values(server(), ENV)
    assert "tok_abcdef123" in secrets
    assert "/home/u" not in secrets  # ${HOME} is not a secret
    log = "starting with token tok_abcdef123 in /home/u"
    assert scrub(log, secrets) == f"starting with token {MASK} in /home/u"


@pytest.mark.parametrize("value", [
    "ghp_abcdefghijklmnopqrstuvwxyz0123", "github_pat_11ABCDEFG0123456789_abcdefghijkl", "sk-proj-abcdefghij12345",
    "xoxb-1234567890-abcdefghij", "AKIAIOSFODNN7EXAMPLE", "glpat-abcdefghij1234567890",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijklmnop", "Bearer ghp_abcdefghijklmnopqrstuvwxyz0123",
    "Xk9fQ2mZpL7rT4vB8nW1yC3hJ6gD0sAe", "0123456789abcdef0123456789abcdef",
])
def test_token_shaped_values(value: str) -> None:
    assert looks_like_token(value)


@pytest.mark.parametrize("value", [
    "info", "/usr/lib/python3.11/site-packages/server.py", "my-server-name-for-the-tests-123456",
    "MyServerNameForTheTests2024Version1", "@modelcontextprotocol/server-filesystem", "https://api.example.com/mcp",
    "node_modules/@scope/package-name/dist/index.js", "--repository", "sk", "skills-directory",
])
def test_ordinary_values_are_not_tokens(value: str) -> None:
    assert not looks_like_token(value)


def test_server_summary_masks_every_literal_secret() -> None:
    stdio = ServerConfig(name="s", command="npx", args=[
        "-y", "@scope/server", "--api-key=ghp_abcdefghijklmnopqrstuvwxyz0123", "--token", "plain-but-flagged",
        "postgres://admin:hunter2@db/app", "sk-abcdefghijklmnopqrstuvwx", "--root=/srv/data", "${TOKEN}"])
    assert server_summary(stdio) == (f"npx -y @scope/server --api-key={MASK} --token {MASK} "
                                     f"postgres://admin:{MASK}@db/app {MASK} --root=/srv/data ${{TOKEN}}")
    http = ServerConfig(name="h", transport="http", url="https://u:pw@h/mcp?api_key=abc&x=1&sig=Xk9fQ2mZpL7rT4vB8nW1yC3hJ6gD0sAe")
    assert server_summary(http) == f"https://u:{MASK}@h/mcp?api_key={MASK}&x=1&sig={MASK}"
    env = mask_secrets(ServerConfig(name="e", command="x", env={"VALUE": "ghp_abcdefghijklmnopqrstuvwxyz0123",
                                                                 "URL": "https://u:pw@h/", "LEVEL": "info"})).env
    assert env == {"VALUE": MASK, "URL": f"https://u:{MASK}@h/", "LEVEL": "info"}


def test_secret_values_cover_what_masking_hides() -> None:
    stdio = ServerConfig(name="s", command="npx", args=[
        "--api-key=ghp_abcdefghijklmnopqrstuvwxyz0123", "--token", "flagged-value", "postgres://u:dbpass1@h/db",
        "--db=postgres://a:dbpass2@h/x", "sk-abcdefghijklmnopqrst", "--root=/srv/data", "${TOKEN}"],
        env={"VALUE": "Xk9fQ2mZpL7rT4vB8nW1yC3hJ6gD0sAe", "LEVEL": "info"})
    found = secret_values(stdio, {"TOKEN": "from-env-1"})
    assert {"ghp_abcdefghijklmnopqrstuvwxyz0123", "flagged-value", "dbpass1", "dbpass2", "sk-abcdefghijklmnopqrst",
            "Xk9fQ2mZpL7rT4vB8nW1yC3hJ6gD0sAe", "from-env-1"} <= found
    assert not found & {"/srv/data", "info", "--root=/srv/data", "npx"}
    http = ServerConfig(name="h", transport="http", url="https://me:urlpass@h/mcp?api_key=qkey1&x=1")
    assert {"urlpass", "qkey1"} <= secret_values(http, {}) and "1" not in secret_values(http, {})
    log = "connecting with --token flagged-value to postgres://u:dbpass1@h/db"
    assert scrub(log, found) == f"connecting with --token {MASK} to postgres://u:{MASK}@h/db"
