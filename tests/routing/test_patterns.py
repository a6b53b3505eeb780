"""Routing patterns are compiled by RE2: any accepted pattern matches in linear time, and
the patterns RE2 cannot run (backreferences, lookaround) are refused with the reason."""

from __future__ import annotations

import pytest

from tests.routing.test_routing import make
from tributary.engine.config.patterns import check_pattern, compile_pattern, safe_compile
from tributary.engine.config.schema import RoutingRule
from tributary.engine.routing import explain_routing, route

# Patterns that make a backtracking engine run for seconds to minutes on a short query.
# Under RE2 they compile and answer at once; a hang here would trip the test timeout.
BACKTRACKING = [
    ("(a|aa)+$", "a" * 5000, True),
    ("(a|aa)+$", "a" * 5000 + "!", False),
    ("a?" * 26 + "a" * 26, "a" * 26, True),
    ("a?" * 26 + "a" * 26, "a" * 25, False),
    ("(?:a?){10}(?:a?){10}(?:a?){10}a{30}", "a" * 30, True),
    ("(?:a?){10}(?:a?){10}(?:a?){10}a{30}", "a" * 29, False),
    ("(?:a{1,10}){1,10}(?:a{1,10}){1,10}b", "a" * 5000, False),
    ("(?:a{1,10}){1,10}(?:a{1,10}){1,10}b", "a" * 5000 + "b", True),
    ("(a+)+$", "a" * 5000 + "!", False),
    ("(.*)*x", "y" * 5000, False),
    (r"(\w+\s?)+$", "word " * 2000 + "!", False),
    (r"\d+\d+x", "1" * 5000, False),
    (".*a.*b", "a" * 5000, False),
]
UNSUPPORTED = [
    (r"(a+)\1+b", "backreference"),
    ("(?P<x>a)(?P=x)", "backreference"),
    ("docs(?=api)", "lookahead"),
    ("docs(?!api)", "lookahead"),
    ("(?<=read )docs", "lookbehind"),
    ("(?<!un)read", "lookbehind"),
    ("(?>a+)b", "atomic group"),
    ("a++b", "possessive"),
]
FINE = [
    "docs|documentation|library|package", "code|function|class|method", r"(\d+\.)+\d+", "docs.*api",
    r"\bfoo\b", "(a|b)*", r"(\s*,\s*\w+)*", "^how (do|can) i", r"\w+\s+\w+", "(foo|bar)+",
    r"\w+\.py\b", "when did|history of|who changed", r"\d+\.?\d+", r"\pL+", "(?P<name>x)",
]


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("pattern", "text", "found"), BACKTRACKING)
def test_backtracking_patterns_compile_and_answer(pattern: str, text: str, found: bool) -> None:
    assert check_pattern(pattern) is None
    assert (compile_pattern(pattern).search(text) is not None) is found


@pytest.mark.timeout(30)
def test_catastrophic_rule_routes_a_long_query() -> None:
    config = make(rules=[RoutingRule(name="as", pattern="(a|aa)+$", servers=["docs"])])
    assert route(config, "a" * 20000).matched_rules == ["as"]
    assert route(config, "a" * 20000 + "!").matched_rules == []


@pytest.mark.parametrize(("pattern", "feature"), UNSUPPORTED)
def test_unsupported_syntax_rejected_with_the_reason(pattern: str, feature: str) -> None:
    problem = check_pattern(pattern)
    assert problem is not None and feature in problem and "RE2" in problem
    assert safe_compile(pattern) is None
    with pytest.raises(ValueError, match=feature):
        compile_pattern(pattern)


@pytest.mark.parametrize("pattern", FINE)
def test_ordinary_patterns_accepted(pattern: str) -> None:
    assert check_pattern(pattern) is None


def test_compile_errors_and_limits() -> None:
    assert "does not compile" in (check_pattern("(unclosed") or "")
    assert "does not compile" in (check_pattern("a)") or "")
    assert "empty" in (check_pattern("   ") or "")
    assert "too long" in (check_pattern("a" * 2000) or "")
    assert "too large" in (check_pattern(r"\pL{1000}") or "")
    assert check_pattern("(" * 499 + "a" + ")" * 499) is None  # deep nesting: no recursion limit
    assert "surrogate" in (check_pattern("\ud800") or "")


def test_matching_is_case_insensitive_and_cached() -> None:
    assert compile_pattern("Docs").search("read the DOCS")
    assert compile_pattern("жук").search("ЖУК")
    assert compile_pattern("Docs") is compile_pattern("Docs")


def test_spans_count_characters_even_around_a_lone_surrogate() -> None:
    match = compile_pattern("docs").search("é\ud800 docs")
    assert match is not None and match.span() == (3, 7) and match.group(0) == "docs"
    config = make(rules=[RoutingRule(name="docs", pattern="docs", servers=["docs"])])
    assert route(config, "\ud800 docs").matched_rules == ["docs"]
    traces = explain_routing(config, "ж\ud800docs").rules
    assert traces[0].status == "matched" and traces[0].span == (2, 6)
