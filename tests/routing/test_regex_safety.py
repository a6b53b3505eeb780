"""Catastrophic-backtracking patterns are rejected; ordinary routing patterns pass."""

from __future__ import annotations

import pytest

from engine.regex_safety import check_pattern, compile_pattern

CATASTROPHIC = [
    "(a+)+$", "(a*)*b", "(.*)*x", "(a|a)*b", "(x?x)+y", r"(\w+\s?)+$", "(.*,)*x", r"(\w+|\d+)*x",
    "((a+)b?)+c", "(a{1,3})+b", "(?:a+){11}b", "([a-z]+)*@", r"(\d+)+\.",
]
SLOW_CHAINS = [r"\d+\d+x", ".*a.*b", r"\s*\s*x", r"\w+_\w+x"]
FINE = [
    "docs|documentation|library|package", "code|function|class|method", r"(\d+\.)+\d+", "docs.*api",
    "docs.*api.*", r"\bfoo\b", "(a|b)*", r"(\.\d+)+", r"(\s*,\s*\w+)*", "^how (do|can) i", r"\w+\s+\w+",
    "(foo|bar)+", "[a-z]+_[a-z]+", r"\w+\.py\b", "error|exception|traceback", "a++b", "(?>a+)+b",
    "when did|history of|who changed", r"\d+\.?\d+",
]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_exponential_patterns_rejected(pattern: str) -> None:
    problem = check_pattern(pattern)
    assert problem is not None and "catastrophically" in problem


@pytest.mark.parametrize("pattern", SLOW_CHAINS)
def test_polynomial_chains_rejected(pattern: str) -> None:
    problem = check_pattern(pattern)
    assert problem is not None and "slow" in problem


@pytest.mark.parametrize("pattern", FINE)
def test_ordinary_patterns_accepted(pattern: str) -> None:
    assert check_pattern(pattern) is None


def test_compile_errors_and_limits() -> None:
    assert "does not compile" in (check_pattern("(unclosed") or "")
    assert "position" in (check_pattern("a)") or "")
    assert "empty" in (check_pattern("   ") or "")
    assert "too long" in (check_pattern("a" * 2000) or "")
    assert check_pattern("(" * 500 + ")" * 500) is not None


def test_compile_pattern_is_case_insensitive_and_cached() -> None:
    assert compile_pattern("Docs").search("read the DOCS")
    assert compile_pattern("Docs") is compile_pattern("Docs")
    with pytest.raises(ValueError, match="catastrophically"):
        compile_pattern("(a+)+")
