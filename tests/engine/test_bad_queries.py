"""Bad queries get a clear answer: an error for a blank one, a note for a huge one, and
no full context of noise for one without words."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.cli.test_cli import fake, tributary, write_config
from tests.engine.test_engine import make_config, make_engine
from tributary.engine.model import SearchRequest
from tributary.engine.pipeline.assemble import NOTHING_FOUND
from tributary.engine.pipeline.hints import mentioned_paths
from tributary.engine.query.check import MAX_QUERY_CHARS, QueryError, check_query
from tributary.engine.query.kinds import (
    asks_history,
    classify_query,
    lookup_names,
    named_identifiers,
)
from tributary.engine.query.syntax import parse_query


@pytest.mark.parametrize("query", ["", "   ", "\n\t "])
def test_a_blank_query_is_an_error_that_says_so(query: str) -> None:
    with pytest.raises(QueryError, match="the query is empty"):
        check_query(SearchRequest(query=query))


def test_a_huge_query_is_cut_at_a_word_with_a_note() -> None:
    query = "fixture cache " * 8000  # 112 KB
    checked = check_query(SearchRequest(query=query))
    assert len(checked.request.query) <= MAX_QUERY_CHARS
    assert checked.request.query.endswith(("fixture", "cache"))
    assert checked.searchable and "112,000 characters" in checked.notes[0]


@pytest.mark.asyncio
async def test_the_engine_answers_bad_queries_without_crashing() -> None:
    async with make_engine(make_config("alpha")) as engine:
        with pytest.raises(QueryError):
            await engine.search(SearchRequest(query="  "))
        marks = await engine.search(SearchRequest(query="?!? ... ---"))
        assert marks.hits == [] and not marks.confident and marks.error is None
        assert "no letters or digits" in marks.notes[0]
        assert marks.context is not None and marks.context.text.startswith(NOTHING_FOUND)
        huge = await engine.search(SearchRequest(query="retry " * 20_000))
        assert huge.hits and "only its first" in huge.notes[0]
        assert len(huge.request.query) <= MAX_QUERY_CHARS


def test_the_command_line_names_the_problem(tmp_path) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    config = write_config(home, "servers:\n" + fake("alpha", "--hits", "3"))
    empty = tributary("--config", str(config), "search", "  ", home=home)
    assert empty.returncode == 2 and "the query is empty" in empty.stderr
    marks = tributary("--config", str(config), "search", "?!?", home=home)
    assert marks.returncode == 0, marks.stderr
    assert "no letters or digits" in marks.stdout and "no results" in marks.stdout
    huge = tributary("--config", str(config), "context", "retry " * 20_000, home=home)
    assert huge.returncode == 0, huge.stderr
    assert "note: the query was 120,000 characters" in huge.stderr


def _cpu_seconds(parse: Callable[[str], object], text: str) -> float:
    """The least CPU time of a few runs of ``parse(text)`` (the least is the least noisy)."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        parse(text)
        best = min(best, time.process_time() - start)
    return max(best, 1e-6)


@pytest.mark.parametrize("unit", ["a", "aB", "a-", "a_", "a1", "lang", ' path:"x', "x-y.", "a::"])
@pytest.mark.parametrize("parse", [parse_query, classify_query, named_identifiers.__wrapped__,
                                   lookup_names.__wrapped__, asks_history, mentioned_paths],
                         ids=lambda f: getattr(f, "__name__", "parse"))
def test_parsing_untrusted_text_grows_linearly(parse: Callable[[str], object], unit: str) -> None:
    # Sixteen times the text may cost at most 64 times the CPU time: linear parsing costs
    # about 16 times, quadratic about 256 times. The ratio, not a deadline, is checked.
    small = (unit * 120)[:120] + "!"
    large = (unit * 1920)[:1920] + "!"
    ratio = _cpu_seconds(parse, large) / _cpu_seconds(parse, small)
    assert ratio < 64, f"{ratio:.0f}x the time for 16x the text"


def test_the_query_is_cut_before_its_filters_are_read() -> None:
    # A filter past the cut is not read: nothing past MAX_QUERY_CHARS is parsed at all.
    words = "retry " * (MAX_QUERY_CHARS // 6 + 10)
    checked = check_query(SearchRequest(query=f"lang:go {words}path:tail/"))
    assert checked.request.filters.languages == ["go"]
    assert checked.request.filters.paths == []
    assert "only its first" in checked.notes[0]


@pytest.mark.asyncio
async def test_a_long_run_of_letters_is_answered() -> None:
    async with make_engine(make_config("alpha")) as engine:
        response = await engine.search(SearchRequest(query="a" * 64_000))
        assert "only its first" in response.notes[0]
        assert len(response.request.query) <= MAX_QUERY_CHARS


def test_a_question_piped_in_is_decoded_or_refused_with_the_reason() -> None:
    import io

    from tributary.engine.cli.common import STDIN_QUESTION_BYTES, read_question

    assert read_question(io.BytesIO("Ünïcode issue: `parse()` fails\n".encode())) == "Ünïcode issue: `parse()` fails\n"
    assert read_question(io.BytesIO("a report saved as UTF-16".encode("utf-16"))) == "a report saved as UTF-16"
    with pytest.raises(QueryError, match="standard input is not text: has a utf-16 byte-order mark"):
        read_question(io.BytesIO(b"\xff\xfe\x00"))
    with pytest.raises(QueryError, match="over 1 MiB"):
        read_question(io.BytesIO(b"a" * (STDIN_QUESTION_BYTES + 1)))
    assert read_question(io.BytesIO(b"a" * STDIN_QUESTION_BYTES)) == "a" * STDIN_QUESTION_BYTES
