"""The rule-based query classifier."""

from __future__ import annotations

import pytest

from engine.query_class import CONCEPTUAL, HOWTO, QUERY_CLASSES, SYMBOL, classify_query


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("parse_args", SYMBOL),
        ("HttpClient", SYMBOL),
        ("getElementById", SYMBOL),
        ("os.path.join", SYMBOL),
        ("src/app/main.py", SYMBOL),
        ("conftest.py fixtures", SYMBOL),
        ("`pytest_collect_file` hook", SYMBOL),
        ("Config::load", SYMBOL),
        ("getattr()", SYMBOL),
        ("__init__", SYMBOL),
        ("where is the retry policy defined", SYMBOL),
        ("definition of the session object", SYMBOL),
        ("how do I configure logging", HOWTO),
        ("How to mock a subprocess", HOWTO),
        ("why does the cache miss", HOWTO),
        ("when did we drop python 2", HOWTO),
        ("fix crash in parse_args", HOWTO),
        ("TypeError traceback on startup", HOWTO),
        ("flaky test failure", HOWTO),
        ("authentication flow", CONCEPTUAL),
        ("caching strategy for results", CONCEPTUAL),
        ("HTTP API design", CONCEPTUAL),
        ("the end. next sentence", CONCEPTUAL),
        ("e.g. caching", CONCEPTUAL),
        ("", CONCEPTUAL),
    ],
)
def test_classify(query: str, expected: str) -> None:
    assert classify_query(query) == expected


def test_classes_are_declared() -> None:
    assert set(QUERY_CLASSES) == {SYMBOL, HOWTO, CONCEPTUAL}
