"""normalize_result: every shape of tool result becomes hits, or that source's error."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import types

from tributary.engine.sources.normalize import NormalizeError, NormalizeLimits, normalize_result


def text(t: str, **kw: object) -> types.TextContent:
    return types.TextContent(type="text", text=t, **kw)  # type: ignore[arg-type]


def norm(result: types.CallToolResult, **kw: object):  # type: ignore[no-untyped-def]
    return normalize_result(result, source="s", tool="t", **kw)  # type: ignore[arg-type]


ITEMS = [
    {"name": "parse_args", "snippet": "def parse_args(): ...", "file_path": "cli.py",
     "line": 12, "end_line": 20, "similarity": 0.91, "updated_at": "2024-05-01T10:00:00Z",
     "lang": "python"},
    {"title": "README", "body": "Usage", "url": "https://x.test/readme", "relevance": "0.5",
     "date": 1714557600},
]


def test_structured_list_maps_fields() -> None:
    out = norm(types.CallToolResult(content=[text("ignored duplicate")], structured_content=ITEMS))
    first, second = out.hits
    assert (first.title, first.content, first.path) == ("parse_args", "def parse_args(): ...", "cli.py")
    assert (first.start_line, first.end_line, first.source_score) == (12, 20, 0.91)
    assert first.timestamp == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert first.metadata == {"lang": "python"}
    assert (second.uri, second.source_score, second.content) == ("https://x.test/readme", 0.5, "Usage")
    assert second.timestamp == datetime.fromtimestamp(1714557600, UTC)
    assert [h.source_rank for h in out.hits] == [1, 2]
    assert out.note is None


@pytest.mark.parametrize("key", ["results", "items", "hits", "matches", "data", "result"])
def test_structured_dict_with_a_list(key: str) -> None:
    out = norm(types.CallToolResult(content=[], structured_content={key: ITEMS, "total": 2}))
    assert [h.title for h in out.hits] == ["parse_args", "README"]


def test_structured_single_object_is_one_hit() -> None:
    out = norm(types.CallToolResult(content=[], structured_content={"answer": 42, "unit": "m"}))
    assert len(out.hits) == 1
    assert json.loads(out.hits[0].content) == {"answer": 42, "unit": "m"}  # nothing lost


def test_json_in_text_blocks() -> None:
    out = norm(types.CallToolResult(content=[text(json.dumps(ITEMS[0])), text(json.dumps(ITEMS))]))
    assert [h.title for h in out.hits] == ["parse_args", "parse_args", "README"]
    assert len({h.id for h in out.hits}) == 3  # duplicates in one answer get distinct ids


def test_plain_text_one_hit_per_block_split_at_separators() -> None:
    out = norm(types.CallToolResult(content=[
        text("first paragraph\n\nstill first"),
        text("part one\n---\npart two\n\n===\npart three"),
    ]))
    assert [h.content for h in out.hits] == [
        "first paragraph\n\nstill first", "part one", "part two", "part three"]
    assert out.hits[0].title == "first paragraph"


def test_resource_link_and_embedded_resources_and_annotations() -> None:
    ann = types.Annotations(priority=0.8, last_modified="2025-01-02T03:04:05+00:00")
    out = norm(types.CallToolResult(content=[
        types.ResourceLink(type="resource_link", name="spec.md", uri="file:///docs/spec.md",
                           description="The spec", annotations=ann),
        types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri="file:///src/a.py", text="print('a')", mime_type="text/x-python")),
        types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
            uri="file:///img.png", blob="iVBORw0KGgo=", mime_type="image/png")),
        types.ImageContent(type="image", data="aGk=", mime_type="image/png"),
    ]))
    link, embedded = out.hits
    assert (link.title, link.uri, link.content, link.priority) == (
        "spec.md", "file:///docs/spec.md", "The spec", 0.8)
    assert link.timestamp == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert (embedded.content, embedded.uri, embedded.title) == ("print('a')", "file:///src/a.py", "a.py")
    assert embedded.metadata["mime_type"] == "text/x-python"
    assert out.note and "binary resource" in out.note and "image" in out.note


def test_is_error_becomes_a_source_error() -> None:
    with pytest.raises(NormalizeError, match="quota exceeded"):
        norm(types.CallToolResult(content=[text("quota exceeded")], is_error=True))


@pytest.mark.parametrize("bad", ["broken \ufffd bytes", "lone \udcff surrogate"])
def test_an_answer_of_only_non_utf8_text_is_an_error(bad: str) -> None:
    with pytest.raises(NormalizeError, match="UTF-8"):
        norm(types.CallToolResult(content=[text(bad)]))


@pytest.mark.parametrize("bad", ["broken \ufffd bytes", "lone \udcff surrogate"])
def test_one_bad_hit_is_dropped_and_the_rest_of_the_answer_stands(bad: str) -> None:
    items = [{"title": "good 1", "content": "fine"}, {"title": "bad", "content": bad},
             {"title": "good 2", "content": "also fine", "path": "a.py"}]
    out = norm(types.CallToolResult(content=[], structured_content=items))
    assert [h.title for h in out.hits] == ["good 1", "good 2"]
    assert [h.source_rank for h in out.hits] == [1, 2]
    assert out.note and "1 hit dropped" in out.note and "UTF-8" in out.note


def test_an_error_keeps_its_reason_whatever_its_text() -> None:
    with pytest.raises(NormalizeError, match="no such file: caf"):
        norm(types.CallToolResult(content=[text("no such file: caf\udce9.py")], is_error=True))


def test_output_is_capped_with_a_note() -> None:
    many = [{"title": f"t{i}", "content": "x" * 100} for i in range(50)]
    out = norm(types.CallToolResult(content=[], structured_content=many),
               limits=NormalizeLimits(max_chars=1_000, max_hits=100))
    assert 1 <= len(out.hits) < 50 and out.note and "capped" in out.note
    out = norm(types.CallToolResult(content=[], structured_content=many),
               limits=NormalizeLimits(max_hits=10))
    assert len(out.hits) == 10 and out.note and "10 hits" in out.note


def test_one_huge_block_is_truncated_not_parsed() -> None:
    huge = "[" + "1," * 2_000_000 + "1]"
    out = norm(types.CallToolResult(content=[text(huge)]), limits=NormalizeLimits(max_chars=10_000))
    # Split into parts (tributary.engine.sources.hit_split), then cut at the output limit.
    assert out.hits and sum(len(h.content) for h in out.hits) <= 10_000
    assert out.hits[0].content.startswith("[1,1")
    assert out.hits[-1].metadata["truncated"] is True and out.note


def test_ids_are_stable_and_source_specific() -> None:
    result = types.CallToolResult(content=[], structured_content=ITEMS)
    a = normalize_result(result, source="a", tool="t")
    b = normalize_result(result, source="a", tool="t")
    c = normalize_result(result, source="c", tool="t")
    assert [h.id for h in a.hits] == [h.id for h in b.hits]
    assert not {h.id for h in a.hits} & {h.id for h in c.hits}


def test_odd_values_do_not_crash() -> None:
    out = norm(types.CallToolResult(content=[], structured_content=[
        {"title": ["not", "text"], "line": "twelve", "score": "NaN", "date": "yesterday",
         "content": {"nested": True}},
        None, 7, "plain string",
    ]))
    first = out.hits[0]
    assert first.start_line is None and first.source_score is None and first.timestamp is None
    assert json.loads(first.content) == {"nested": True}
    assert [h.content for h in out.hits[1:]] == ["7", "plain string"]  # None skipped


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(structured=json_values, texts=st.lists(st.text(max_size=200), max_size=3))
def test_any_result_gives_hits_or_a_normalize_error(structured: object, texts: list[str]) -> None:
    result = types.CallToolResult(content=[text(t) for t in texts], structured_content=structured)
    try:
        out = norm(result)
    except NormalizeError:
        return
    assert all(h.source_rank == i for i, h in enumerate(out.hits, 1))
    assert len({h.id for h in out.hits}) == len(out.hits)


def test_an_answers_warnings_and_degraded_flag_are_kept() -> None:
    """A server that says what it could not do (keyword search while its model loads)
    is heard, from structured content or from a lone JSON text block; junk is ignored."""
    answer = {"hits": [{"path": "a.py", "content": "x = 1"}],
              "warnings": ["model still loading", 7, "  ", "bad \ud800 text"], "degraded": True}
    structured = norm(types.CallToolResult(content=[], structured_content=answer))
    as_text = norm(types.CallToolResult(content=[text(json.dumps(answer))]))
    for got in (structured, as_text):
        assert len(got.hits) == 1
        assert got.warnings == ["model still loading", "bad ? text"]
        assert got.degraded is True
    plain = norm(types.CallToolResult(content=[], structured_content={"hits": [], "degraded": "yes"}))
    assert (plain.warnings, plain.degraded) == ([], False)


@pytest.mark.parametrize("said", ["No matches found", "No results", "0 results", "Nothing found.", []])
def test_structured_content_that_says_nothing_is_no_hit(said: object) -> None:
    out = norm(types.CallToolResult(content=[text(str(said))], structured_content={"content": said}))
    assert out.hits == [] and out.note and out.note.startswith("no hits")


def test_structured_item_with_a_path_is_a_hit_even_if_its_text_says_nothing() -> None:
    out = norm(types.CallToolResult(content=[], structured_content={"path": "a.py", "content": "No results"}))
    assert [h.path for h in out.hits] == ["a.py"]


GREP = """src/billing/invoice.py:12:def retry_invoice(invoice):
src/billing/invoice.py-13-    \"\"\"Retry a failed invoice.\"\"\"
--
src/billing/invoice.py:40:    retry_invoice(invoice)
docs/my-2-notes.md-6-Context before
docs/my-2-notes.md:7:3:We retry twice.
C:\\work\\retry.py:1:import retry
"""


def test_grep_output_becomes_one_hit_per_file() -> None:
    out = norm(types.CallToolResult(content=[text(GREP)]))
    assert [(h.path, h.start_line, h.end_line) for h in out.hits] == [
        ("src/billing/invoice.py", 12, 40), ("docs/my-2-notes.md", 7, 7), ("C:\\work\\retry.py", 1, 1)]
    first = out.hits[0]
    assert first.content == 'def retry_invoice(invoice):\n    """Retry a failed invoice."""\n…\n    retry_invoice(invoice)'
    assert first.metadata["matches"] == 2 and first.title == "src/billing/invoice.py"
    assert first.metadata["line_numbers"] == [12, 13, None, 40]  # the gap mark has none
    assert out.hits[1].content == "Context before\nWe retry twice."


def test_a_grep_answer_is_ranked_by_the_question_words_its_files_hold() -> None:
    """Grep lists files in the order it walks them: the first ``bench/`` files that say
    "test" led the answer to "how are fixtures finalized after a test"."""
    from tributary.engine.sources.normalize import rank_by_pattern_words

    answer = ("bench/empty.py:5:def test_empty(): pass\n"
              "bench/manyparam.py:3:def test_many(): pass\n"
              "bench/xunit.py:10:def test_xunit(): pass\nbench/xunit.py:11:def test_other(): pass\n"
              "src/fixtures.py:630:    def addfinalizer(self, finalizer):  # run fixtures finalized after\n"
              "src/runner.py:541:        # fixtures torn down\n")
    hits = norm(types.CallToolResult(content=[text(answer)])).hits
    rank_by_pattern_words(hits, "fixtures|finalized|after|test")
    assert [h.path for h in hits] == ["src/fixtures.py", "src/runner.py", "bench/xunit.py", "bench/empty.py",
                                      "bench/manyparam.py"]
    assert [h.source_rank for h in hits] == [1, 2, 3, 4, 5]
    # An expression of the user's own is left in the tool's order.
    again = norm(types.CallToolResult(content=[text(answer)])).hits
    rank_by_pattern_words(again, r"def \w+_help")
    assert next(h.path for h in again) == "bench/empty.py"


def test_a_file_name_search_is_ranked_by_the_question_words_its_names_hold() -> None:
    """server-filesystem lists files as it walks them: ``test_echo.py`` before
    ``test_echo_via_pager.py`` for "echo via pager"."""
    from tributary.engine.sources.normalize import rank_by_glob_words

    answer = "/src/click/tests/test_echo.py\n/src/click/tests/test_pager/README\n/src/click/echo_via_pager.py\n"
    hits = norm(types.CallToolResult(content=[text(answer)])).hits
    rank_by_glob_words(hits, "**/*{echo,via,pager}*")
    assert [h.path for h in hits] == ["/src/click/echo_via_pager.py", "/src/click/tests/test_echo.py",
                                      "/src/click/tests/test_pager/README"]  # a folder's name is no match
    assert [h.source_rank for h in hits] == [1, 2, 3]
    one = norm(types.CallToolResult(content=[text(answer)])).hits
    rank_by_glob_words(one, "**/*pager*")
    assert one[0].path == "/src/click/echo_via_pager.py"
    mine = norm(types.CallToolResult(content=[text(answer)])).hits
    rank_by_glob_words(mine, "*.py")  # not a pattern Tributary made: the server's order
    assert [h.path for h in mine] == [h.path for h in norm(types.CallToolResult(content=[text(answer)])).hits]


def test_grep_output_is_capped_per_file_and_prose_stays_text() -> None:
    many = "".join(f"big.min.js:{i}:{'x' * 2000}\n" for i in range(1, 500))
    out = norm(types.CallToolResult(content=[text(many)]))
    (hit,) = out.hits
    assert (hit.start_line, hit.end_line, hit.metadata["matches"]) == (1, 499, 499)
    assert len(hit.content) < 4_100 and hit.content.endswith("(492 more lines)")
    prose = "Note: 3: this is prose\nand more"
    assert [h.path for h in norm(types.CallToolResult(content=[text(prose)])).hits] == [None]


def test_a_grep_flood_is_read_as_the_files_it_lists_first() -> None:
    """mcp-ripgrep asked for an issue's names (one of them the project's own name,
    ``FastAPI``) answered 3.5 MB: it was cut into parts that all bore its first line's
    file and line, whatever file each part was from."""
    flood = "".join(f"docs/{i}/index.md:{n}:FastAPI is fast\n" for i in range(400) for n in (1, 7))
    out = norm(types.CallToolResult(content=[text(flood)]), limits=NormalizeLimits(max_parse_chars=10_000))
    assert out.hits and len(out.hits) < 400
    assert [h.path for h in out.hits[:2]] == ["docs/0/index.md", "docs/1/index.md"]
    assert all((h.start_line, h.end_line) == (1, 7) for h in out.hits[:-1])  # the last may be cut
    head = len(flood[:10_000].rpartition("\n")[0])
    assert out.note == f"a {len(flood):,}-character answer read to its first {head:,} characters"
    prose = "word " * 3_000  # no line to cut at: split as text, as before
    assert {h.path for h in norm(types.CallToolResult(content=[text(prose)]),
                                 limits=NormalizeLimits(max_parse_chars=10_000)).hits} == {None}


def test_a_list_of_paths_becomes_one_hit_per_file() -> None:
    """server-filesystem's search_files answers with paths, one per line: the block was
    one hit named after its first path, with no path to open or to meet other sources'."""
    listing = ("/home/ann/src/click/examples/termui\n/home/ann/src/click/src/click/termui.py\n"
               "/home/ann/My Projects/notes.py\nC:\\work\\retry.py\nsrc/click/termui.py\n"
               "src/click/termui.py\nREADME.md\n")
    out = norm(types.CallToolResult(content=[text(listing)]))
    assert [h.path for h in out.hits] == [
        "/home/ann/src/click/examples/termui", "/home/ann/src/click/src/click/termui.py",
        "/home/ann/My Projects/notes.py", "C:\\work\\retry.py", "src/click/termui.py", "README.md"]
    assert [h.source_rank for h in out.hits] == [1, 2, 3, 4, 5, 6]
    assert out.hits[1].title == out.hits[1].content == "/home/ann/src/click/src/click/termui.py"


def test_a_list_of_paths_in_structured_content_is_read_as_text_too() -> None:
    """server-filesystem puts its answer in structured content as ``{"content": TEXT}``."""
    listing = "/srv/a/src/one.py\n/srv/a/src/two.py"
    out = norm(types.CallToolResult(content=[text(listing)], structured_content={"content": listing}))
    assert [h.path for h in out.hits] == ["/srv/a/src/one.py", "/srv/a/src/two.py"]
    prose = norm(types.CallToolResult(content=[text("x")], structured_content={"content": "Some prose."}))
    assert [(h.path, h.content) for h in prose.hits] == [(None, "Some prose.")]


@pytest.mark.parametrize("answer", [
    "README.md\nsetup.py",  # no folder anywhere: as likely names as files
    "/usr/bin is where it lives\nsee the docs",  # prose that starts with a path
    "No matches found",
    "/home/ann/a.py: permission denied",
    "src/a.py\nthen src/b.py",
    "https://x.test/a.py\nhttps://x.test/b.py",
])
def test_text_that_is_not_only_paths_stays_text(answer: str) -> None:
    assert all(h.path is None for h in norm(types.CallToolResult(content=[text(answer)])).hits)


def test_the_path_list_reader_is_linear_on_hostile_lines() -> None:
    from tributary.engine.sources.file_list import listed_files

    assert listed_files("src/a.py\n" + ("/" * 500_000 + "\n") * 4) is None  # each line over the cap
    many = "".join(f"src/m{i}.py\n" for i in range(5_000))
    assert len(listed_files(many) or []) == 200


def test_grep_parser_is_linear_on_hostile_lines() -> None:
    from tributary.engine.sources.grep_output import grep_files

    hostile = ("a" * 100_000 + "-1-" * 30_000 + "\n") * 3
    assert grep_files("x.py:1:ok\n" + hostile) is None


def test_a_structured_answer_of_matched_lines_is_one_hit_per_file() -> None:
    """code-index-mcp's ``search_code_advanced`` gives one item per matched line, in
    the order it walks the files: read as grep text is, one hit per file."""
    lines = [{"file": "./CHANGES.md", "line": n, "text": f"- `echo_via_pager` fix {n}"} for n in (108, 111)]
    lines += [{"file": "./src/click/termui.py", "line": 367, "text": "def echo_via_pager("}]
    answer = {"results": lines, "pagination": {"total_matches": 3, "has_more": False}}
    out = norm(types.CallToolResult(content=[text(json.dumps(answer))], structured_content=answer))
    assert [(h.path, h.start_line, h.end_line, h.source_rank, h.metadata.get("matches")) for h in out.hits] == [
        ("./CHANGES.md", 108, 111, 1, 2), ("./src/click/termui.py", 367, 367, 2, 1)]
    assert out.hits[0].content == "- `echo_via_pager` fix 108\n…\n- `echo_via_pager` fix 111"
    # Items that are more than a line each stay items.
    chunks = [{"file": "a.py", "line": 1, "text": "def a():\n    pass"}, {"file": "b.py", "line": 2, "text": "x"}]
    assert len(norm(types.CallToolResult(content=[], structured_content={"results": chunks})).hits) == 2
    titled = [{"file": "a.py", "line": 1, "text": "x", "name": "a"}, {"file": "a.py", "line": 2, "text": "y"}]
    assert len(norm(types.CallToolResult(content=[], structured_content={"results": titled})).hits) == 2


def test_a_structured_list_of_paths_is_one_hit_per_file() -> None:
    """code-index-mcp's ``find_files``: ``{"result": [paths]}``; words stay words."""
    answer = {"result": ["tests/test_utils/test_echo_via_pager.py", "src/click/termui.py"]}
    out = norm(types.CallToolResult(content=[text(json.dumps(answer["result"]))], structured_content=answer))
    assert [(h.path, h.title, h.source_rank) for h in out.hits] == [
        ("tests/test_utils/test_echo_via_pager.py", "tests/test_utils/test_echo_via_pager.py", 1),
        ("src/click/termui.py", "src/click/termui.py", 2)]
    words = norm(types.CallToolResult(content=[], structured_content={"result": ["retry policy", "backoff"]}))
    assert [(h.path, h.content) for h in words.hits] == [(None, "retry policy"), (None, "backoff")]


@pytest.mark.asyncio
async def test_a_ripgrep_style_server_answers_one_hit_per_file() -> None:
    from tests.fakes import fake_server_config
    from tributary.engine.model import SourceStatus
    from tributary.engine.sources import SourcePool

    lines = "".join(f"src/billing/invoice.py:{i}:    retry_invoice({i}){' ' * 300}\n" for i in range(1, 40))
    lines += "docs/retry.md:3:Retries back off.\n" * 1
    pool = SourcePool([fake_server_config("rg", "--plain", "--content", lines, timeout=10.0)])
    try:
        outcome = await pool.call("rg", "retry", top_k=5, timeout=30)
    finally:
        await pool.aclose()
    assert outcome.status is SourceStatus.OK, outcome.error
    assert [(h.path, h.start_line, h.end_line) for h in outcome.hits] == [
        ("src/billing/invoice.py", 1, 39), ("docs/retry.md", 3, 3)]
    assert outcome.hits[1].content == "Retries back off."
