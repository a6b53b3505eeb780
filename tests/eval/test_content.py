"""Content-level evaluation: changed lines from git, gold chunks, and the four figures."""

from __future__ import annotations

from pathlib import Path

from tests.eval.gitrepo import Repo
from tributary.engine.eval.content import ContentScores, gold_units, score_content, summarise
from tributary.engine.eval.datasets import EvalQuery, Span
from tributary.engine.eval.gitspans import Hunk, changed_spans, to_old_side
from tributary.engine.model import AssembledContext, ContextChunk, ContextFormat, Hit
from tributary.engine.pipeline.run import PipelineResult

LINES = [f"value_{n} = {n}" for n in range(1, 21)]


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def test_changed_lines_are_carried_back_to_the_snapshot(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    snapshot = repo.commit("Snapshot", "2024-01-01T10:00:00+00:00", {"mod.py": _text(LINES)})
    moved = ["# header"] * 3 + LINES  # three lines added above: value_10 is now line 13
    repo.commit("Add a header", "2024-02-01T10:00:00+00:00", {"mod.py": _text(moved)})
    changed = list(moved)
    changed[12] = "value_10 = 100"
    query = repo.commit("Make ten a hundred", "2024-03-01T10:00:00+00:00", {"mod.py": _text(changed)})
    assert changed_spans(repo.path, snapshot, query, ["mod.py"]) == (Span("mod.py", 10, 10),)


def test_lines_inside_a_later_hunk_go_to_its_start() -> None:
    hunks = [Hunk(5, 2, 5, 4), Hunk(20, 1, 22, 0)]  # two lines became four; line 20 deleted
    assert to_old_side(3, hunks) == 3
    assert to_old_side(6, hunks) == 5
    assert to_old_side(12, hunks) == 10
    assert to_old_side(30, hunks) == 29


def _hit(hid: str, path: str | None, lines: tuple[int, int] | None, content: str = "x = 1\n", **meta: object) -> Hit:
    return Hit(id=hid, source="files", tool="t", title=hid, content=content, path=path,
               start_line=lines[0] if lines else None, end_line=lines[1] if lines else None,
               metadata=dict(meta))


def test_the_four_figures_of_one_query() -> None:
    query = EvalQuery("q", "make ten a hundred", {"mod.py": 1.0}, spans=(Span("mod.py", 10, 12),))
    chunks = {"mod.py": [(1, 11), (12, 20), (30, 40)], "other.py": [(1, 5)]}
    gold = gold_units(query, chunks)
    assert gold == [("mod.py", 10, 11), ("mod.py", 12, 12)]
    history = _hit("h", "mod.py", None, "Make nine ninety (2024-01-02)")  # text about the file
    other = _hit("o", "other.py", (1, 5))
    first = _hit("a", "mod.py", (1, 11))
    commit = _hit("t", None, None, "Make ten ten", kind="task")
    ranked = [other, history, commit, first]
    context = AssembledContext(
        text="...", format=ContextFormat.MARKDOWN, budget=100, token_count=60,
        chunks=[ContextChunk(h.id, h.source, h.location, 0.1, h.content, tokens)
                for h, tokens in ((other, 10), (commit, 10), (first, 30))],
    )
    result = PipelineResult(hits=ranked, ranked=ranked, groups=[], context=context, strategy="rrf",
                            top_k=10, raw_hits=4, unique_hits=4)
    scores = score_content(result, query, gold, lambda p: p)
    assert scores.context_recall == 0.5  # lines 10-11 are in the context, line 12 is not
    assert scores.context_precision == 30 / 50  # the other file and the commit are not the code
    assert scores.chunk_mrr == 1 / 4
    assert scores.chunk_ndcg is not None and 0 < scores.chunk_ndcg < 1
    summary = summarise([scores, ContentScores(None, 1.0, None, None)])
    assert summary.with_spans == 1 and summary.context_precision == (0.6 + 1.0) / 2
    assert "context recall 0.500" in summary.text()


def test_snapshot_chunks_read_every_chunks_lines(tmp_path: Path) -> None:
    import sqlite3

    from tributary.engine.eval.content import snapshot_chunks

    index = tmp_path / "repo.files.sqlite"
    conn = sqlite3.connect(index)
    conn.executescript(
        "CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT);"
        "CREATE TABLE chunks (id INTEGER PRIMARY KEY, file_id INTEGER, start_line INTEGER, end_line INTEGER);"
        "INSERT INTO files VALUES (1, 'mod.py'), (2, 'b.py');"
        "INSERT INTO chunks VALUES (1, 1, 1, 11), (2, 1, 12, 20), (3, 2, 1, 5);"
    )
    conn.commit()
    conn.close()
    assert snapshot_chunks([index]) == {"mod.py": [(1, 11), (12, 20)], "b.py": [(1, 5)]}
