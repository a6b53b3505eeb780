"""The detail pane shows code as code, prose as prose and a commit as a commit."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QPlainTextEdit

from tributary.app.search.detail import DetailPane, presentation
from tributary.app.search.highlighter import query_terms
from tributary.engine.model import DedupGroup, DedupReason, GroupMember, Hit

FILE = "\n".join(f"line_{n} = {n}" for n in range(1, 21)) + "\n"
CHUNK = "\n".join(f"line_{n} = {n}" for n in range(8, 12))


def _code(root: Path | None = None, **extra: Any) -> Hit:
    return Hit(id="c", source="files", tool="search_code", title="lines", content=CHUNK,
               path="pkg/mod.py", start_line=8, end_line=11,
               metadata={"root": str(root)} if root else {}, **extra)


def _commit() -> Hit:
    return Hit(id="t", source="tasks", tool="files_for_task", title="Cache parsed configs",
               content="Cache parsed configs\n\nParsing took 40 ms per call; the cache keeps the result.",
               timestamp=datetime(2024, 3, 5, tzinfo=UTC),
               metadata={"kind": "task", "id": "b" * 40, "short_id": "b" * 12, "author": "Ann Lee",
                         "files": ["pkg/mod.py", "tests/test_mod.py"]})


def _pane(qtbot: Any) -> DetailPane:
    pane = DetailPane()
    qtbot.addWidget(pane)
    pane.resize(700, 500)
    return pane


def test_code_is_numbered_with_the_files_lines_around_the_chunk(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(FILE)
    shown = presentation(_code(tmp_path))
    lines = shown.text.split("\n")
    assert lines[0] == " 5 │ line_5 = 5" and lines[-1] == "14 │ line_14 = 14"
    assert shown.focus == (3, 6) and lines[3].endswith("line_8 = 8") and lines[6].endswith("line_11 = 11")
    assert shown.language == "python" and not shown.wrap and shown.gutter == 5


def test_code_whose_file_changed_shows_the_chunk_alone(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("something else\n" * 20)
    shown = presentation(_code(tmp_path))
    assert shown.text.split("\n")[0] == " 8 │ line_8 = 8" and shown.focus == (0, 3)


def test_the_querys_words_are_marked_in_code(qtbot: Any) -> None:
    pane = _pane(qtbot)
    pane.show_hit(_code(), query="where is line_9 set")
    document = pane.content.document()
    block = next(document.findBlockByNumber(i) for i in range(document.blockCount())
                 if "line_9" in document.findBlockByNumber(i).text())
    at = block.text().index("line_9")
    marked = [r for r in block.layout().formats() if r.start <= at < r.start + r.length and r.format.background().style()]
    assert marked, "the query's word has a marker background"


def test_the_common_words_of_a_question_are_not_marked() -> None:
    """A pasted report's "the", "for" and "with" would mark half of every docstring."""
    assert query_terms("Where is the cache for the parsed config set, with a lock?") == [
        "cache", "parsed", "config", "set", "lock"]
    assert query_terms("value_from_envvar fails") == ["value_from_envvar", "value", "envvar", "fails"]


def test_prose_wraps_and_is_not_coloured_as_code(qtbot: Any) -> None:
    pane = _pane(qtbot)
    note = Hit(id="n", source="notes", tool="search", title="Retry policy",
               content="def is a word here; the retry policy backs off twice.")
    pane.show_hit(note, query="retry policy")
    assert pane.content.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    assert pane.highlighter.language is None


def test_a_commit_reads_as_a_commit(qtbot: Any) -> None:
    pane = _pane(qtbot)
    pane.show_hit(_commit(), query="config cache")
    assert pane.title.full_text == "Cache parsed configs"
    assert pane.location.full_text.startswith("commit bbbbbbbbbbbb · 2024-03-05 · Ann Lee")
    text = pane.content.toPlainText()
    assert "Files touched (2):\n  pkg/mod.py\n  tests/test_mod.py" in text
    assert text.rstrip().endswith("the cache keeps the result.")
    assert pane.content.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    assert pane.highlighter.language is None


def test_a_commit_offers_no_file_to_open_and_code_does(qtbot: Any, tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(FILE)
    pane = _pane(qtbot)
    pane.show()
    pane.show_hit(_commit(), query="config cache")
    assert pane.open_button.isHidden() and pane.reveal_button.isHidden()
    pane.show_hit(_code(tmp_path), query="lines")
    assert pane.open_button.isVisible() and pane.open_button.isEnabled()
    assert pane.reveal_button.isVisible() and pane.reveal_button.isEnabled()
    pane.show_hit(None)
    assert pane.open_button.isVisible() and not pane.open_button.isEnabled()


def test_folded_hits_say_in_words_why(qtbot: Any) -> None:
    pane = _pane(qtbot)
    kept = _code(confidence=0.42)
    kept.source_rank, kept.source_score = 2, 0.031
    overlap = Hit(id="o", source="files", tool="search_code", title="more", content="line_11 = 11\nline_12 = 12",
                  path="pkg/mod.py", start_line=11, end_line=12, source_rank=5)
    near = Hit(id="w", source="web", tool="search", title="copy", content=CHUNK, source_rank=1)
    group = DedupGroup(kept, [GroupMember(overlap, DedupReason.OVERLAP, 0.5),
                              GroupMember(near, DedupReason.FUZZY, 0.92)])
    pane.show_hit(kept, group)
    text = pane.group.text()
    assert "Confidence 0.42" in text
    assert "files: rank 2, score 0.031" in text and "web: rank 1" in text
    assert "overlapping lines of the same file" in text
    assert "near-identical (92%) to pkg/mod.py:8-11" in text
    pane.show_hit(near, member=group.members[1])
    assert pane.group.text() == "Folded into the result above: near-identical (92%)."


def test_the_code_indexs_own_reasons_are_said(qtbot: Any) -> None:
    pane = _pane(qtbot)
    hit = _code(confidence=0.3)
    hit.metadata.update(role="test", name_match=True, symbol_match=False)
    pane.show_hit(hit)
    assert ("Ranked by files: its file is named by the question's words; a test, ranked below "
            "code unless the question asks for it") in pane.group.text()
    plain = _code(confidence=0.3)
    plain.metadata.update(role="code", name_match=False)
    pane.show_hit(plain)
    assert "Ranked by" not in pane.group.text()
    for led_by, said in (("traceback", "is where the question's traceback raised"),
                         ("error", "defines the function the question's error says refused an argument"),
                         ("quote", "holds a line of code the question quotes")):
        plain.metadata["led_by"] = led_by
        pane.show_hit(plain)
        assert f"Ranked by files: listed first: its file {said}" in pane.group.text()


def test_a_function_the_history_read_says_which_past_tasks_changed_it(qtbot: Any) -> None:
    pane = _pane(qtbot)
    hit = Hit(id="f", source="tasks", tool="files_for_task", title="Parser.parse", content=CHUNK,
              path="pkg/mod.py", start_line=8, end_line=11, confidence=0.2,
              metadata={"kind": "function", "changed_by": "Split on commas (2022-02-01)"})  # fmt: skip
    pane.show_hit(hit)
    assert "Ranked by tasks: past tasks like this question changed it: Split on commas (2022-02-01)" in (
        pane.group.text()
    )


def test_the_summary_says_when_nothing_is_confident() -> None:
    from tributary.app.search.page import _summary
    from tributary.engine.model import SearchRequest, SearchResponse

    weak = SearchResponse(request=SearchRequest(query="qwzxv"), hits=[_commit()], confident=False)
    assert "no confident results" in _summary(weak, final=True)
    strong = SearchResponse(request=SearchRequest(query="cache"), hits=[_commit()], confident=True,
                            notes=["the query was 100,000 characters; only its first 7,990 were searched"])
    text = _summary(strong, final=True)
    assert "no confident" not in text and "only its first 7,990 were searched" in text


def test_the_summary_calls_a_pasted_issue_a_task() -> None:
    """A whole issue is routed by its query class, but the summary says what it was
    read as: a task (its note says how)."""
    from tributary.app.search.page import _summary
    from tributary.engine.model import RouteDecision, SearchRequest, SearchResponse

    issue = ("Rational calc value error\nwhen calc Rational('0.5', '100') the value is 1/100100, "
             "but Rational(0.5, 100) is 1/200, as it was in 1.8\n")
    route = RouteDecision(query_class="howto")
    text = _summary(SearchResponse(request=SearchRequest(query=issue), route=route), final=True)
    assert " · task" in text and "howto" not in text
    short = SearchResponse(request=SearchRequest(query="how are rationals parsed"), route=route)
    assert "howto query" in _summary(short, final=True)


def test_a_list_not_in_score_order_says_why(qtbot: Any) -> None:
    """A question about the past lists its commits first whatever their scores: the
    detail of either kind of hit, and the summary, say so."""
    from tributary.app.search.detail import DetailPane, ranking_note
    from tributary.app.search.page import _summary
    from tributary.engine.model import SearchRequest, SearchResponse

    commit = Hit(id="c1", source="tasks", tool="search", title="Add routing rules", content="msg",
                 metadata={"kind": "task", "sha": "0421abc"}, score=0.0909)
    code = Hit(id="f1", source="files", tool="search", title="routing.py", content="def route(): ...",
               path="tributary/engine/routing.py", score=0.1742)
    history = SearchResponse(request=SearchRequest(query="why were routing rules added"), hits=[commit, code])
    assert "ahead of every file" in ranking_note(commit, history)
    assert "after the commits" in ranking_note(code, history)
    assert "commits first" in _summary(history, final=True)
    pane = DetailPane()
    qtbot.addWidget(pane)
    pane.show()
    pane.show_hit(code, query=history.request.query, order_note=ranking_note(code, history))
    assert pane.order_note.isVisible() and "after the commits" in pane.order_note.text()
    # A list in score order needs no word on it.
    plain = SearchResponse(request=SearchRequest(query="how are routing rules matched"), hits=[code, commit])
    assert ranking_note(code, plain) == "" and "commits first" not in _summary(plain, final=True)


def test_a_long_title_and_path_never_push_the_buttons_or_figures_out(qtbot: Any) -> None:
    """In a pane as narrow as the page allows, a very long title and path are elided:
    the rating buttons and the breakdown's figures stay whole and inside the pane."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QApplication, QFrame, QScrollArea

    from tributary.engine.model import ScoreParts

    pane = DetailPane()
    area = QScrollArea()  # as the search page holds it
    area.setWidget(pane)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    qtbot.addWidget(area)
    area.resize(340, 600)
    area.show()
    parts = ScoreParts()
    parts.add("rrf", 0.0909, raw=1.0)
    parts.add("keyword", 0.0833, raw=0.5)
    hit = Hit(id="x", source="slack-archive-search", tool="search",
              title="handle_" + "very_long_generated_identifier_" * 12, content="def f(): pass",
              path="src/" + "deeply/nested/" * 10 + "module_with_a_long_name.py", start_line=1, end_line=1,
              score=parts.total, parts=parts)
    pane.show_hit(hit, query="handle")
    for _ in range(3):
        QApplication.processEvents()
    viewport = area.viewport()
    assert pane.width() <= viewport.width()
    for button in (pane.useful_button, pane.not_useful_button, pane.open_button, pane.reveal_button):
        left = button.mapTo(viewport, QPoint(0, 0)).x()
        assert left >= 0 and left + button.width() <= viewport.width(), button.text()
        assert button.width() >= button.sizeHint().width(), button.text()
    chart = pane.chart
    assert chart.width() >= chart.minimumWidth() and chart.mapTo(viewport, QPoint(0, 0)).x() + chart.width() \
        <= viewport.width()
    assert pane.title.text() != pane.title.full_text and pane.title.toolTip() == pane.title.full_text
    assert pane.location.text().split(":")[0].endswith("module_with_a_long_name.py")  # the file name stays


def test_lines_past_the_hits_own_are_not_numbered_as_the_files(tmp_path: Path) -> None:
    """A looked-up class's hit lists its members after its own line, each saying where it
    is: numbering them 812, 813, … would send a reader to the wrong lines."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("\n" * 10 + "class Route:\n    def __init__(self):\n        pass\n")
    hit = Hit(id="c", source="files", tool="search_code", title="Route", path="pkg/mod.py",
              start_line=11, end_line=11, metadata={"root": str(tmp_path)},
              content="class Route:\n    def __init__(self) …  # lines 12-13")
    lines = presentation(hit).text.split("\n")
    assert lines == ["11 │ class Route:", "   │     def __init__(self) …  # lines 12-13"]


def test_a_grep_answers_lines_keep_their_own_numbers() -> None:
    """mcp-ripgrep answers ``path:line:text`` lines, read as one hit per file with a gap
    mark between lines that do not follow on; numbered from the first match on, the
    ``def format_help`` of line 1258 was shown as line 1240."""
    from mcp import types

    from tributary.engine.sources.normalize import normalize_result

    answer = ("src/click/core.py:1236:        Calls :meth:`format_help` internally.\n"
              "src/click/core.py:1239:        self.format_help(ctx, formatter)\n"
              "src/click/core.py:1240:        return formatter.getvalue()\n"
              "src/click/core.py:1258:    def format_help(self, ctx, formatter):\n")
    result = types.CallToolResult(content=[types.TextContent(type="text", text=answer)])
    [hit] = normalize_result(result, source="ripgrep", tool="search").hits
    lines = presentation(hit).text.split("\n")
    assert lines == ["1236 │         Calls :meth:`format_help` internally.",
                     "     │ …",
                     "1239 │         self.format_help(ctx, formatter)",
                     "1240 │         return formatter.getvalue()",
                     "     │ …",
                     "1258 │     def format_help(self, ctx, formatter):"]


def test_a_hit_says_which_repository_it_is_from(qtbot: Any) -> None:
    """With several repositories indexed, ``src/…/core.py`` alone does not say whose."""
    from tributary.app.search.results_model import _tooltip

    pane = _pane(qtbot)
    hit = Hit(id="c", source="files", tool="search_code", title="lines", content=CHUNK, path="pkg/mod.py",
              start_line=8, end_line=11, metadata={"repo": "pallets/click"})
    pane.show_hit(hit, query="lines")
    assert pane.location.full_text == "pkg/mod.py:8-11    ·    pallets/click    ·    files / search_code"
    assert "pkg/mod.py:8-11 in pallets/click" in _tooltip(hit, ["files"], None)
    pane.show_hit(_code(), query="other lines")  # a hit no index gave
    assert pane.location.full_text == "pkg/mod.py:8-11    ·    files / search_code"


def test_a_file_past_tasks_changed_reads_as_wrapped_prose_not_as_its_language() -> None:
    hit = Hit(id="f", source="tasks", tool="files_for_task", title="pattern_test.go", path="pattern_test.go",
              content="feat(mux): support http.Request.Pattern in Go 1.23 (#986) (2025-08-26); fix: set it",
              metadata={"kind": "file", "tasks": ["d12cc49"]})
    shown = presentation(hit)
    assert shown.language is None and shown.wrap and shown.text.startswith("feat(mux)")
