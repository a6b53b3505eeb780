"""The rule-based query classifier."""

from __future__ import annotations

import pytest

from tributary.engine.query.kinds import (
    CONCEPTUAL,
    HOWTO,
    QUERY_CLASSES,
    SYMBOL,
    asked_qualified_names,
    classify_query,
    joined_names,
    lookup_names,
    named_identifiers,
)


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


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("FixtureDef", {"fixturedef"}),
        ("parametrize", {"parametrize"}),  # one word alone is looked up
        ("`getfixturemarker`", {"getfixturemarker"}),
        ("class FixtureDef", {"fixturedef"}),
        ("Adjust test_errors_in_xfail for CPython", {"test_errors_in_xfail", "cpython"}),
        ("Don't delete FixtureDef.cached_result", {"fixturedef", "cached_result"}),
        ("Config.getini", {"getini"}),  # the member of a qualified name
        ("call setup() twice", {"setup"}),
        ("HTTP2 support", {"http2"}),
        ("how are fixtures cached", set()),  # prose names nothing
        ("__init__", set()),  # defined everywhere
        ("src/_pytest/fixtures.py", set()),
        ("fix it", set()),
    ],
)
def test_named_identifiers(query: str, names: set[str]) -> None:
    assert named_identifiers(query) == names


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("FixtureDef", {"fixturedef"}),
        ("where is parse_args defined", {"parse_args"}),
        ("where is getfixturemarker defined", {"getfixturemarker"}),  # a lookup phrase names it
        ("where is the retry policy defined", {"retry", "policy"}),
        ("class Session", {"session"}),
        ("definition of CallSpec2", {"callspec2"}),
        ("Config.getini", {"getini"}),
        ("find the function getfixturemarker", {"getfixturemarker"}),
        # a question that mentions a name is not a lookup of it
        ("Don't delete FixtureDef.cached_result, set it to None", set()),
        ("fix the crash in parse_args", set()),
        ("how are fixtures cached", set()),
        ("show the retry policy", set()),  # no lookup phrase: prose
        ("Add type annotations to Config", set()),  # "type" here is English
        # a lookup phrase inside a sentence: the pytest benchmark's one misread query
        ("docs(expression.py): correct grammar definition of lexer", set()),
    ],
)
def test_lookup_names_only_for_lookups(query: str, names: set[str]) -> None:
    assert lookup_names(query) == names


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("echo via pager", {"echo_via_pager", "echoviapager"}),
        ("Help Formatter", {"help_formatter", "helpformatter"}),
        ("progress bar", {"progress_bar", "progressbar"}),
        ("pager", set()),  # one word is looked up as it is, or not at all
        ("how are routes registered now", set()),  # five words: a question
        ("what is echo?", set()),  # punctuation: a question
        ("echo_via_pager pager", set()),  # already spelled as a name
        ("größe ändern", set()),
    ],
)
def test_a_short_phrase_of_plain_words_may_spell_a_name(query: str, names: set[str]) -> None:
    assert joined_names(query) == names


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("how does res.redirect build the Location header", {"res.redirect"}),
        ("Why is Config.getini cached?", {"Config.getini"}),
        ("is Vec::push amortised?", {"Vec::push"}),
        ("Add test for Cache.mkdir", set()),  # a statement: the commit changed a test
        ("Do not collect symlinked tests (os.path.samefile)", set()),
        ("how are fixtures cached", set()),
    ],
)
def test_a_question_asks_about_the_qualified_names_it_writes(query: str, names: set[str]) -> None:
    assert asked_qualified_names(query) == names
