"""Loading and validation: every error kind names the file, the key and the line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tributary.engine.config.errors import ConfigError, ConfigIssue
from tributary.engine.config.load import load_config, parse_config
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.config.validate import validate


def issues_of(text: str, source: str = "cfg.yaml") -> list[ConfigIssue]:
    with pytest.raises(ConfigError) as info:
        parse_config(textwrap.dedent(text), source=source)
    return info.value.issues


def only(issues: list[ConfigIssue], key_path: str) -> ConfigIssue:
    found = [i for i in issues if i.key_path == key_path]
    assert len(found) == 1, f"expected one issue at {key_path}, got {issues}"
    return found[0]


def test_minimal_config_parses() -> None:
    config = parse_config(
        """
        servers:
          git:
            command: uvx
            args: [mcp-server-git, --port, 8080, "1.10"]
            env: {DEBUG: "1", PORT: 9000}
        """,
        source="x",
    )
    git = config.servers["git"]
    assert git == ServerConfig(
        name="git", command="uvx", args=["mcp-server-git", "--port", "8080", "1.10"], env={"DEBUG": "1", "PORT": "9000"}
    )


def test_empty_text_is_the_default_config() -> None:
    assert parse_config("", source="x") == Config()
    assert parse_config("# only a comment\n", source="x") == Config()


def test_url_without_command_is_http() -> None:
    config = parse_config("servers:\n  docs:\n    url: https://x.example/mcp\n", source="x")
    assert config.servers["docs"].transport == "http"


def test_unknown_key_with_did_you_mean_names_file_key_and_line() -> None:
    issues = issues_of(
        """\
        servers:
          git:
            command: uvx
            tiemout: 3
        """
    )
    issue = only(issues, "servers.git.tiemout")
    assert issue.line == 4 and issue.file == "cfg.yaml"
    assert "did you mean 'timeout'" in issue.message
    assert str(issue).startswith("cfg.yaml:4: servers.git.tiemout:")


def test_habitual_keys_get_a_hint() -> None:
    issues = issues_of("servers:\n  a:\n    type: stdio\n    command: x\nmcpServers: {}\n")
    assert "transport" in only(issues, "servers.a.type").message
    assert "'servers'" in only(issues, "mcpServers").message


def test_wrong_types() -> None:
    issues = issues_of(
        """\
        servers:
          git:
            command: [uvx]
            timeout: soon
            enabled: maybe
            args: mcp-server-git
        fusion:
          top_k: 30.5
        """
    )
    assert only(issues, "servers.git.command").line == 3
    assert "a string" in only(issues, "servers.git.command").message
    assert "a number" in only(issues, "servers.git.timeout").message
    assert "true or false" in only(issues, "servers.git.enabled").message
    assert "a list" in only(issues, "servers.git.args").message
    assert "an integer" in only(issues, "fusion.top_k").message
    # the unreadable command is not *also* reported as missing
    assert sum(i.key_path == "servers.git.command" for i in issues) == 1


def test_out_of_range_values() -> None:
    issues = issues_of(
        """\
        servers:
          git: {command: x, timeout: 0, weight: -1}
        fusion:
          top_k: 5
        dedup:
          fuzzy_threshold: 1.5
          semantic_threshold: -0.1
        budget:
          max_tokens: 100
          reserved_tokens: 100
        """
    )
    assert "greater than 0" in only(issues, "servers.git.timeout").message
    assert "at least 0" in only(issues, "servers.git.weight").message
    top = only(issues, "fusion.top_k")
    assert "at least 10" in top.message and top.line == 4
    assert "at most 1" in only(issues, "dedup.fuzzy_threshold").message
    assert only(issues, "dedup.semantic_threshold").line == 7
    assert "less than max_tokens" in only(issues, "budget.reserved_tokens").message
    assert "at most 100" in issues_of("fusion: {top_k: 101}")[0].message


def test_transport_requirements() -> None:
    issues = issues_of(
        """\
        servers:
          local:
            enabled: true
          remote:
            transport: http
          mixed:
            command: x
            url: https://x.example/mcp
          badurl:
            url: ftp://x.example
        """
    )
    assert "needs 'command'" in only(issues, "servers.local.command").message
    assert only(issues, "servers.local.command").line == 2  # the server's own line
    assert "needs 'url'" in only(issues, "servers.remote.url").message
    assert "only http servers" in only(issues, "servers.mixed.url").message
    assert "http:// or https://" in only(issues, "servers.badurl.url").message


def test_a_builtin_tuned_without_saying_so_is_told_how() -> None:
    issues = issues_of("servers:\n  files:\n    timeout: 20\n  local:\n    timeout: 20\n")
    assert "add 'builtin: files'" in only(issues, "servers.files.command").message
    assert "builtin" not in only(issues, "servers.local.command").message


def test_routing_rules_naming_unknown_servers() -> None:
    issues = issues_of(
        """\
        servers:
          git: {command: x}
        routing:
          rules:
            - name: code
              pattern: code
              servers: [git, gti]
          fallback: [nope]
        """
    )
    issue = only(issues, "routing.rules[0].servers[1]")
    assert issue.line == 7 and "did you mean 'git'" in issue.message
    assert "unknown server 'nope'" in only(issues, "routing.fallback[0]").message


def test_builtin_server_names_are_known_to_rules() -> None:
    config = parse_config("routing:\n  rules:\n    - {pattern: x, servers: [files, tasks]}\n", source="x")
    assert config.routing.rules[0].name == "rule-1"
    with pytest.raises(ConfigError):
        parse_config("routing:\n  rules:\n    - {pattern: x, servers: [files]}\n", source="x", extra_server_names=frozenset())


def test_bad_and_unsupported_patterns() -> None:
    issues = issues_of(
        """\
        servers:
          git: {command: x}
        routing:
          rules:
            - {name: a, pattern: "(unclosed", servers: [git]}
            - {name: b, pattern: "(a+)\\\\1+b", servers: [git]}
            - {name: c, pattern: "(?<!x)y", servers: [git]}
            - {name: d, pattern: "", servers: [git]}
        """
    )
    assert "does not compile" in only(issues, "routing.rules[0].pattern").message
    assert only(issues, "routing.rules[0].pattern").line == 5
    assert "rule 'b'" in only(issues, "routing.rules[1].pattern").message
    assert "backreference" in only(issues, "routing.rules[1].pattern").message
    assert "lookbehind" in only(issues, "routing.rules[2].pattern").message
    assert "empty" in only(issues, "routing.rules[3].pattern").message


def test_unknown_strategy_and_class_and_literal() -> None:
    issues = issues_of(
        """\
        servers: {git: {command: x}}
        routing:
          mode: any
          rules:
            - {name: a, pattern: x, servers: [git], strategy: rfr, query_class: symbols}
        fusion: {strategy: fancy}
        budget: {overflow: summarize}
        """
    )
    assert "'first', 'all'" in only(issues, "routing.mode").message
    assert "did you mean 'rrf'" in only(issues, "routing.rules[0].strategy").message
    assert "did you mean 'symbol'" in only(issues, "routing.rules[0].query_class").message
    assert "rrf, weighted, composite, cascade, vote" in only(issues, "fusion.strategy").message
    assert "did you mean 'summarise'" in only(issues, "budget.overflow").message


def test_missing_required_rule_keys_and_duplicates() -> None:
    issues = issues_of(
        """\
        servers: {git: {command: x}}
        routing:
          rules:
            - name: a
            - {name: a, pattern: x, servers: [git]}
        servers2: 1
        """
    )
    assert "missing required key 'pattern'" in only(issues, "routing.rules[0].pattern").message
    assert "missing required key 'servers'" in only(issues, "routing.rules[0].servers").message
    assert "duplicate rule name" in only(issues, "routing.rules[1].name").message
    assert only(issues, "servers2").line == 6


def test_duplicate_keys_and_boolean_keys() -> None:
    issues = issues_of("servers:\n  a: {command: x}\n  a: {command: y}\non: 1\n")
    assert "duplicate key" in only(issues, "servers.a").message
    assert "boolean" in only(issues, "on").message


def test_var_reference_syntax_is_checked_at_load() -> None:
    issues = issues_of("servers:\n  a:\n    command: x\n    env: {T: '${TOKEN'}\n")
    assert "malformed reference" in only(issues, "servers.a.env.T").message
    # a well-formed reference is kept unexpanded in the Config
    config = parse_config("servers:\n  a:\n    command: x\n    env: {T: '${TOKEN:-dev}'}\n", source="x")
    assert config.servers["a"].env["T"] == "${TOKEN:-dev}"


def test_all_issues_reported_at_once() -> None:
    issues = issues_of("servers:\n  a: {timeout: -1}\nfusion: {top_k: 1, strategy: x}\nbogus: 1\n")
    assert {i.key_path for i in issues} >= {"servers.a.command", "servers.a.timeout", "fusion.top_k", "fusion.strategy", "bogus"}


def test_yaml_syntax_error_has_a_line() -> None:
    issues = issues_of("servers:\n  a: {command: x\nfusion: 1\n")
    assert issues[0].line is not None and "not valid YAML" in issues[0].message


@pytest.mark.parametrize(
    "text",
    [
        "[1, 2]",
        "just a string",
        "a: &x [*x]",
        "servers: !!python/object:os.system {}",
        "servers:\n  a:\n    command: x\n    arguments: {when: 2001-13-45}\n",
        "--- a\n--- b\n",
        "\t\x00",
    ],
)
def test_hostile_documents_raise_config_error(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_config(text, source="x")


def test_billion_laughs_is_bounded() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    lines.append("servers:\n  s:\n    command: x\n    arguments: {boom: *a8}")
    with pytest.raises(ConfigError) as info:
        parse_config("\n".join(lines), source="x")
    assert any("too large" in i.message for i in info.value.issues)


def test_validate_typed_config_without_lines() -> None:
    config = Config(servers={"a": ServerConfig(name="a", transport="http")})
    issues = validate(config)
    assert [i.key_path for i in issues] == ["servers.a.url"]
    assert issues[0].file == "<config>" and issues[0].line is None


def test_error_text_lists_every_issue() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("fusion: {top_k: 1}\nbogus: 2\n", source="my.yaml")
    text = str(info.value)
    assert "my.yaml (2 problems)" in text
    assert "my.yaml:1: fusion.top_k" in text and "my.yaml:2: bogus" in text


def test_load_config_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "none" / "config.yaml"
    config = load_config(missing)
    assert config.path == missing and config.servers == {}
    explicit = tmp_path / "explicit.yaml"
    explicit.write_text("servers: {a: {command: x}}\n")
    monkeypatch.setenv("TRIBUTARY_CONFIG", str(explicit))
    loaded = load_config()
    assert loaded.path == explicit and list(loaded.servers) == ["a"]
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"servers: \xff\xfe\n")
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    assert "UTF-8" in str(info.value) and str(bad) in str(info.value)
