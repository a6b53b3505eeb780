"""File names from a repository reach the terminal escaped: a right-to-left override or
another invisible character cannot disguise what the table shows."""

from __future__ import annotations

import pytest

from tributary.engine.cli.render import response_text
from tributary.engine.model import Hit, RouteDecision, SearchRequest, SearchResponse


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200f", "\u061c", "\u200b", "\x9b", "\x1b"])
def test_bidi_and_control_characters_in_a_file_name_are_escaped(char: str) -> None:
    hit = Hit(id="1", source="files", tool="search_code", title=f"invoice{char}gnp.py",
              content="def total(): ...", path=f"src/invoice{char}gnp.py", score=1.0)
    text = response_text(SearchResponse(request=SearchRequest("invoice"), hits=[hit]), 120)
    assert char not in text
    assert f"invoice\\{'x' if ord(char) < 0x100 else 'u'}{ord(char):0{2 if ord(char) < 0x100 else 4}x}gnp.py" in text


def test_the_route_line_says_when_a_question_is_read_as_a_task() -> None:
    issue = ("Rational calc value error\n\n"
             "when calc `Rational('0.5', '100')`, the value is 1/100100 but `Rational(0.5, 100)` gives 1/200")
    routed = RouteDecision(query_class="howto")
    text = response_text(SearchResponse(request=SearchRequest(issue), route=routed), 120)
    assert "class: howto (read as a task);" in text
    short = response_text(SearchResponse(request=SearchRequest("rational value"), route=routed), 120)
    assert "class: howto;" in short
