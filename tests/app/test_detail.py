"""The detail pane shows code as code, prose as prose and a commit as a commit."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QPlainTextEdit

from tributary.app.search.detail import DetailPane, presentation
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
    assert pane.title.text() == "Cache parsed configs"
    assert pane.location.text().startswith("commit bbbbbbbbbbbb · 2024-03-05 · Ann Lee")
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


def test_the_summary_says_when_nothing_is_confident() -> None:
    from tributary.app.search.page import _summary
    from tributary.engine.model import SearchRequest, SearchResponse

    weak = SearchResponse(request=SearchRequest(query="qwzxv"), hits=[_commit()], confident=False)
    assert "no confident results" in _summary(weak, final=True)
    strong = SearchResponse(request=SearchRequest(query="cache"), hits=[_commit()], confident=True,
                            notes=["the query was 100,000 characters; only its first 7,990 were searched"])
    text = _summary(strong, final=True)
    assert "no confident" not in text and "only its first 7,990 were searched" in text
