"""Routing: priority order, first/all modes, fallback, skip reasons, weights, overrides."""

from __future__ import annotations

from tributary.engine.config.schema import Config, RoutingConfig, RoutingRule, ServerConfig
from tributary.engine.routing import (
    SKIP_DISABLED,
    SKIP_NOT_IN_FALLBACK,
    SKIP_NOT_SELECTED,
    SKIP_NOT_SET_UP,
    SKIP_UNKNOWN,
    explain_routing,
    route,
)


def make(mode: str = "first", rules: list[RoutingRule] | None = None, fallback: list[str] | None = None) -> Config:
    servers = {
        "docs": ServerConfig(name="docs", command="d", weight=2.0),
        "code": ServerConfig(name="code", command="c"),
        "memory": ServerConfig(name="memory", command="m"),
        "off": ServerConfig(name="off", command="o", enabled=False),
    }
    if rules is None:
        rules = [
            RoutingRule(name="docs", pattern="docs|documentation|library", servers=["docs"]),
            RoutingRule(name="code", pattern=r"code|function|class", servers=["code", "off"], weights={"code": 1.5}),
        ]
    return Config(servers=servers, routing=RoutingConfig(mode=mode, rules=rules, fallback=fallback))  # type: ignore[arg-type]


def test_first_match_case_insensitive() -> None:
    decision = route(make(), "Where are the DOCS for this Function?")
    assert decision.matched_rules == ["docs"]
    assert decision.servers == ["docs"] and not decision.fallback
    assert decision.skipped == {"code": "not in rule 'docs'", "memory": "not in rule 'docs'", "off": SKIP_DISABLED}
    assert decision.weights == {"docs": 2.0}


def test_all_mode_unions_matching_rules() -> None:
    decision = route(make("all"), "docs for this function")
    assert decision.matched_rules == ["docs", "code"]
    assert decision.servers == ["docs", "code"]
    assert decision.skipped == {"memory": "not in rules 'docs', 'code'", "off": SKIP_DISABLED}
    assert decision.weights == {"docs": 2.0, "code": 1.5}


def test_priority_beats_file_order() -> None:
    rules = [
        RoutingRule(name="low", pattern="x", servers=["docs"]),
        RoutingRule(name="high", pattern="x", servers=["code"], priority=5),
        RoutingRule(name="low2", pattern="x", servers=["memory"]),
    ]
    assert route(make(rules=rules), "x").matched_rules == ["high"]
    assert route(make("all", rules), "x").matched_rules == ["high", "low", "low2"]
    assert route(make("all", rules), "x").servers == ["code", "docs", "memory"]


def test_fallback_every_enabled_server() -> None:
    decision = route(make(), "unrelated question")
    assert decision.fallback and decision.matched_rules == []
    assert decision.servers == ["docs", "code", "memory"]
    assert decision.skipped == {"off": SKIP_DISABLED}


def test_configured_fallback() -> None:
    decision = route(make(fallback=["memory", "off", "ghost"]), "unrelated")
    assert decision.servers == ["memory"] and decision.fallback
    assert decision.skipped == {"off": SKIP_DISABLED, "ghost": SKIP_UNKNOWN, "docs": SKIP_NOT_IN_FALLBACK, "code": SKIP_NOT_IN_FALLBACK}


def test_rule_with_only_disabled_servers_falls_back() -> None:
    rules = [RoutingRule(name="dead", pattern="x", servers=["off", "ghost"])]
    decision = route(make(rules=rules), "x")
    assert decision.matched_rules == ["dead"] and decision.fallback
    assert decision.servers == ["docs", "code", "memory"]
    assert decision.skipped == {"off": SKIP_DISABLED, "ghost": SKIP_UNKNOWN}


def test_a_built_in_server_not_set_up_yet_is_not_called_unknown() -> None:
    """A rule may name ``files`` before any repository is added: it is skipped for
    that, not as a name nobody knows."""
    rules = [RoutingRule(name="code", pattern="def", servers=["files"])]
    decision = route(make(rules=rules), "def x")
    assert decision.matched_rules == ["code"] and decision.fallback
    assert decision.skipped["files"] == SKIP_NOT_SET_UP


def test_weights_max_across_rules_and_strategy_of_first() -> None:
    rules = [
        RoutingRule(name="a", pattern="q", servers=["code"], weights={"code": 1.2}, strategy="weighted", priority=1),
        RoutingRule(name="b", pattern="q", servers=["code", "docs"], weights={"code": 3.0, "docs": 0.5}, strategy="vote"),
    ]
    decision = route(make("all", rules), "q")
    assert decision.weights == {"code": 3.0, "docs": 1.0}
    assert decision.strategy == "weighted"


def test_disabled_rule_and_query_class() -> None:
    rules = [
        RoutingRule(name="sym", pattern=".", servers=["code"], query_class="symbol"),
        RoutingRule(name="how", pattern=".", servers=["memory"], query_class="howto"),
        RoutingRule(name="off", pattern=".", servers=["docs"], enabled=False),
    ]
    config = make(rules=rules)
    assert route(config, "parse_args").matched_rules == ["sym"]
    assert route(config, "parse_args").query_class == "symbol"
    assert route(config, "how do I fix this").matched_rules == ["how"]
    assert route(config, "caching strategy").fallback
    assert route(config, "caching strategy", query_class="symbol").matched_rules == ["sym"]


def test_sources_override() -> None:
    decision = route(make(), "docs", sources_override=["memory", "off", "ghost", "memory"])
    assert decision.servers == ["memory"] and decision.matched_rules == []
    assert decision.skipped == {"off": SKIP_DISABLED, "ghost": SKIP_UNKNOWN, "docs": SKIP_NOT_SELECTED, "code": SKIP_NOT_SELECTED}


def test_unsupported_or_invalid_pattern_never_matches() -> None:
    rules = [
        RoutingRule(name="unsupported", pattern=r"(a+)\1$", servers=["code"], priority=9),
        RoutingRule(name="broken", pattern="(", servers=["code"], priority=8),
    ]
    decision = route(make(rules=rules), "a" * 5000 + "!")
    assert decision.fallback and decision.matched_rules == []


def test_explain_routing_spans_and_statuses() -> None:
    rules = [
        RoutingRule(name="docs", pattern="docs", servers=["docs"]),
        RoutingRule(name="code", pattern="function", servers=["code"], priority=1),
        RoutingRule(name="sym", pattern=".", servers=["code"], query_class="symbol"),
        RoutingRule(name="bad", pattern=r"(a*)\1", servers=["code"]),
        RoutingRule(name="off", pattern="docs", servers=["docs"], enabled=False),
    ]
    explanation = explain_routing(make(rules=rules), "read the docs of a function")
    traces = {t.name: t for t in explanation.rules}
    assert [t.name for t in explanation.rules] == ["code", "docs", "sym", "bad", "off"]
    assert traces["code"].status == "matched" and traces["code"].used
    assert traces["code"].span == (19, 27) and traces["code"].matched_text == "function"
    assert traces["docs"].status == "matched" and not traces["docs"].used  # first mode
    assert traces["sym"].status == "other class"
    assert traces["bad"].status == "invalid pattern" and "backreference" in (traces["bad"].error or "")
    assert traces["off"].status == "disabled"
    assert explanation.decision.servers == ["code"]
