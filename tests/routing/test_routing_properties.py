"""Property-based tests: routing and pattern checks never raise, whatever the input."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tributary.engine.config.patterns import check_pattern, compile_pattern
from tributary.engine.config.schema import Config, RoutingConfig, RoutingRule, ServerConfig
from tributary.engine.query.kinds import QUERY_CLASSES, classify_query
from tributary.engine.routing import explain_routing, route

FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = st.sampled_from(["a", "b", "c", "d", "ghost"])
PATTERNS = st.one_of(
    st.sampled_from(["docs|api", "code", r"\bdef\b", "(a+)+", "(", ".*", "x", r"\w+\.py", "", "(a|a)*"]),
    st.text(max_size=8),
)
RULES = st.builds(
    RoutingRule,
    name=st.text(max_size=4),
    pattern=PATTERNS,
    servers=st.lists(NAMES, max_size=3),
    priority=st.integers(-3, 3),
    weights=st.dictionaries(NAMES, st.floats(0, 5), max_size=2),
    strategy=st.sampled_from([None, "rrf", "vote"]),
    query_class=st.sampled_from([None, *QUERY_CLASSES]),
    enabled=st.booleans(),
)
CONFIGS = st.builds(
    lambda enabled, rules, mode, fallback: Config(
        servers={n: ServerConfig(name=n, command="x", enabled=e) for n, e in zip("abcd", enabled, strict=True)},
        routing=RoutingConfig(mode=mode, rules=rules, fallback=fallback),
    ),
    st.lists(st.booleans(), min_size=4, max_size=4),
    st.lists(RULES, max_size=5),
    st.sampled_from(["first", "all"]),
    st.one_of(st.none(), st.lists(NAMES, max_size=3)),
)


@FAST
@given(CONFIGS, st.text(max_size=200))
def test_route_never_raises_and_stays_within_enabled(config: Config, query: str) -> None:
    decision = route(config, query)
    enabled = {s.name for s in config.enabled_servers()}
    assert set(decision.servers) <= enabled
    assert len(decision.servers) == len(set(decision.servers))
    for name in config.servers:
        assert (name in decision.servers) != (name in decision.skipped)
    assert set(decision.weights) == set(decision.servers)
    assert decision.query_class in QUERY_CLASSES
    explanation = explain_routing(config, query)
    assert explanation.decision.servers == decision.servers


@FAST
@given(CONFIGS, st.text(max_size=50), st.lists(NAMES, max_size=4))
def test_override_stays_within_enabled(config: Config, query: str, sources: list[str]) -> None:
    decision = route(config, query, sources_override=sources)
    assert set(decision.servers) <= {s.name for s in config.enabled_servers()} & set(sources)


@FAST
@given(st.text(max_size=40))
def test_check_pattern_never_raises(pattern: str) -> None:
    problem = check_pattern(pattern)
    if problem is None:
        compile_pattern(pattern).search(pattern)


@FAST
@given(st.from_regex(r"[()a-z.*+?|\\dws{},\[\]^$-]{1,14}", fullmatch=True))
def test_check_pattern_on_regex_like_text(pattern: str) -> None:
    check_pattern(pattern)


@FAST
@given(st.text(max_size=300))
def test_classify_any_text(query: str) -> None:
    assert classify_query(query) in QUERY_CLASSES
