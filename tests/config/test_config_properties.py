"""Property-based tests: config parsing and saving under arbitrary input."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tributary.engine.config.dump import config_to_yaml
from tributary.engine.config.errors import ConfigError
from tributary.engine.config.expand import expand_string, reference_problems
from tributary.engine.config.load import parse_config
from tributary.engine.config.schema import Config
from tributary.engine.config.secrets import mask_secrets
from tributary.engine.config.validate import validate

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = ["servers", "routing", "fusion", "dedup", "budget", "cache", "repos", "command", "args", "env",
        "url", "headers", "transport", "timeout", "weight", "enabled", "rules", "mode", "fallback", "pattern",
        "name", "priority", "weights", "strategy", "query_class", "top_k", "rrf_k", "health", "interval_s",
        "arguments", "tool", "path", "include", "composite", "keyword", "max_tokens", "reserved_tokens", "git", "docs"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["stdio", "http", "first", "all", "rrf", "git", "docs", "https://x/mcp", "(a+)+", "docs|api",
                     "${TOKEN}", "${BAD", "symbol", "", "uvx"]),
    st.text(max_size=12),
)
TREES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), children, max_size=5),
    ),
    max_leaves=30,
)


def parse_or_error(text: str) -> Config | None:
    try:
        return parse_config(text, source="prop.yaml")
    except ConfigError as exc:
        assert exc.issues, "a ConfigError always lists at least one issue"
        for issue in exc.issues:
            assert issue.file == "prop.yaml"
        return None


def check_valid_round_trip(config: Config) -> None:
    assert validate(config) == []
    assert parse_config(config_to_yaml(config), source="again") == config


@FAST
@given(st.text(max_size=300))
def test_arbitrary_text_only_raises_config_error(text: str) -> None:
    config = parse_or_error(text)
    if config is not None:
        check_valid_round_trip(config)


@FAST
@given(st.dictionaries(st.sampled_from(KEYS), TREES, max_size=6))
def test_yamlish_trees_only_raise_config_error(tree: dict[str, Any]) -> None:
    try:
        text = yaml.safe_dump(tree, allow_unicode=True)
    except yaml.YAMLError:
        return
    config = parse_or_error(text)
    if config is not None:
        check_valid_round_trip(config)


TEXT = st.text(st.characters(blacklist_characters="\x00$", blacklist_categories=("Cs",)), max_size=10)
SERVER = st.fixed_dictionaries(
    {"command": st.sampled_from(["uvx", "npx", "python"])},
    optional={
        "args": st.lists(TEXT, max_size=3),
        "env": st.dictionaries(st.from_regex(r"[A-Z_]{1,8}", fullmatch=True), TEXT, max_size=3),
        "timeout": st.floats(0.1, 100),
        "weight": st.floats(0, 10),
        "enabled": st.booleans(),
        "arguments": st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=5)), max_size=2),
    },
)


@FAST
@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True), SERVER, min_size=1, max_size=4),
       st.integers(10, 100), st.sampled_from(["first", "all"]))
def test_valid_configs_round_trip(servers: dict[str, Any], top_k: int, mode: str) -> None:
    names = sorted(servers)
    tree = {
        "servers": servers,
        "routing": {"mode": mode, "rules": [{"name": "r", "pattern": "x|y", "servers": names[:1]}]},
        "fusion": {"top_k": top_k},
    }
    config = parse_config(yaml.safe_dump(tree, allow_unicode=True), source="x")
    check_valid_round_trip(config)
    for server in config.servers.values():
        mask_secrets(server)


@FAST
@given(st.text(max_size=60), st.dictionaries(st.text(min_size=1, max_size=5), st.text(max_size=5), max_size=3))
def test_expansion_never_raises(value: str, environ: dict[str, str]) -> None:
    expanded, missing = expand_string(value, environ)
    assert isinstance(expanded, str)
    if not reference_problems(value) and "${" not in value:
        assert expanded == value and missing == []
