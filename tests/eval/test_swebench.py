"""Bug localisation instances: reading them, gold functions from a patch, the scores, the
BM25 baseline, and a whole run on a tiny repository with a known fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.eval.gitrepo import Repo
from tributary.engine.eval.swebench import (
    Bm25Baseline,
    Instance,
    InstanceError,
    Outcome,
    Span,
    applied_lines,
    context_holds,
    enclosing_units,
    figures,
    function_rank,
    hunk_lines,
    load_instances,
    other_checkouts,
    render,
    run_instances,
    shown_lines,
    span_of,
)

PATCH = """diff --git a/pkg/shapes.py b/pkg/shapes.py
--- a/pkg/shapes.py
+++ b/pkg/shapes.py
@@ -5,7 +5,7 @@ class Circle:
     def __init__(self, radius):
         self.radius = radius

     def area(self):
-        return 3 * self.radius * self.radius
+        return math.pi * self.radius * self.radius

 def unrelated():
"""

SHAPES = """import math


class Circle:
    def __init__(self, radius):
        self.radius = radius

    def area(self):
        return 3 * self.radius * self.radius

def unrelated():
    return 1
"""


def test_instances_are_read_and_a_bad_line_names_file_and_line(tmp_path: Path) -> None:
    good = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "abc", "gold_files": ["a.py"],
            "problem_statement": "it breaks", "splits": ["lite"]}
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({"repo": "o/r"}) + "\n", encoding="utf-8")
    with pytest.raises(InstanceError, match=r"instances.jsonl:3: not an instance: missing key 'instance_id'"):
        load_instances(path)
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    [instance] = load_instances(path)
    assert instance.gold_files == ("a.py",) and instance.splits == ("lite",)


def test_a_patch_names_its_changed_lines_and_their_functions() -> None:
    assert hunk_lines(PATCH) == {"pkg/shapes.py": [9]}
    [unit] = enclosing_units("pkg/shapes.py", SHAPES, [9])
    assert (unit.start, unit.end) == (8, 9) and unit.symbol is not None and "area" in unit.symbol


def test_a_patch_that_applies_lower_down_names_the_lines_it_changes_there(tmp_path: Path) -> None:
    # The fix was written against a file with four lines fewer above the class: git
    # applies it four lines down, and the gold function is the one it changes there.
    shifted = SHAPES.replace("import math\n", "import math\nimport os\nimport re\nimport sys\nimport io\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "shapes.py").write_text(shifted, encoding="utf-8")
    assert applied_lines(tmp_path, PATCH) == {"pkg/shapes.py": [13]}
    [unit] = enclosing_units("pkg/shapes.py", shifted, [13])
    assert unit.symbol is not None and "area" in unit.symbol
    assert (tmp_path / "pkg" / "shapes.py").read_text(encoding="utf-8") == shifted  # untouched


def test_a_patch_that_does_not_apply_keeps_its_own_line_numbers(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "shapes.py").write_text("something else entirely\n", encoding="utf-8")
    assert applied_lines(tmp_path, PATCH) == {"pkg/shapes.py": [9]}


def test_a_change_late_in_a_long_function_names_the_whole_function() -> None:
    # A function too long for one chunk is cut into parts: the gold unit is the part the
    # fix changes, and a hit on the function's first part (its signature and docstring)
    # still names the function; the context must hold the changed part itself.
    body = "".join(f"    total += {n}\n" for n in range(300))
    text = f"def first():\n    return 1\n\n\ndef long(total):\n{body}    return total\n"
    [unit] = enclosing_units("m.py", text, [290])
    assert unit.symbol == "long" and unit.whole_start == 5 and unit.whole_end == 306
    assert unit.start > 5 and unit.start <= 290 <= unit.end
    assert unit.label().endswith("(part of 5-306)")
    assert function_rank([("m.py", 1, 2), ("m.py", 5, 44)], [unit]) == 2
    assert function_rank([("m.py", 1, 2)], [unit]) is None
    [short] = enclosing_units("m.py", text, [2])
    assert short.whole_start is None and short.label() == "m.py:1-2 first"


def test_a_function_is_found_when_every_gold_unit_is_overlapped() -> None:
    gold = [Span("a.py", 10, 20), Span("b.py", 1, 5)]
    hits: list[tuple[str, int | None, int | None]] = [("a.py", 30, 40), ("a.py", 15, 16), ("c.py", 1, 2), ("b.py", 5, 9)]
    assert function_rank(hits, gold) == 4
    assert function_rank(hits[:3], gold) is None


def test_the_context_is_read_by_its_pieces_locations() -> None:
    """A piece the context read from below the listed hits counts: no hit stands for it."""
    from tributary.engine.model import (
        AssembledContext,
        ContextChunk,
        ContextFormat,
        SearchRequest,
        SearchResponse,
    )

    pieces = [ContextChunk("h1", "files", "/w/a.py:1-9", 1.0, "x", 3),
              ContextChunk("h9", "files", "/w/a.py:40-60", 0.5, "x", 3),  # not among the hits
              ContextChunk("t1", "tasks", "Fix the parser (abc123)", 0.4, "x", 3)]
    response = SearchResponse(SearchRequest("q"), context=AssembledContext("x", pieces, 9, ContextFormat.MARKDOWN, 100))
    def mapper(path: str) -> str | None:
        return path.removeprefix("/w/") if path.startswith("/w/") else None
    assert context_holds(response, mapper, [Span("a.py", 50, 55), Span("a.py", 2, 3)]) is True
    assert context_holds(response, mapper, [Span("a.py", 20, 30)]) is False
    assert context_holds(response, mapper, []) is None
    assert span_of("src/a:b.py:3-7") == ("src/a:b.py", 3, 7)
    assert span_of("Fix the parser (abc123)") is None and span_of("a.py") is None


def test_a_shrunk_piece_holds_only_the_lines_it_shows() -> None:
    """A function truncated to its first lines does not hold a fix further down it."""
    from tributary.engine.model import (
        AssembledContext,
        ContextChunk,
        ContextFormat,
        SearchRequest,
        SearchResponse,
    )

    source = ["def f(x):", "    a = 1", "    b = 2", "    c = 3", "    return a + b + c"]
    truncated = ContextChunk("h1", "files", "/w/a.py:1-5", 1.0, "def f(x):\n    a = 1\n… [3 more lines]",
                             5, treatment="truncated")
    response = SearchResponse(SearchRequest("q"), context=AssembledContext("x", [truncated], 5,
                                                                             ContextFormat.MARKDOWN, 100))
    def mapper(path: str) -> str | None:
        return path.removeprefix("/w/")
    def lines_of(path: str) -> list[str]:
        return source
    assert context_holds(response, mapper, [Span("a.py", 2, 2)], lines_of) is True
    assert context_holds(response, mapper, [Span("a.py", 4, 5)], lines_of) is False
    assert context_holds(response, mapper, [Span("a.py", 4, 5)]) is True  # by its location alone
    assert shown_lines("    return a + b + c\n…", source, 1, 5) == [5]


def _outcome(files: list[str], gold: tuple[str, ...], bm25: list[str]) -> Outcome:
    return Outcome("i", "o/r", ("lite",), files, gold, [Span(gold[0], 1, 2)], 3, True, bm25, 0.1, 0.1)


def test_accuracy_needs_every_gold_file_within_k() -> None:
    result = figures([
        _outcome(["a.py", "b.py"], ("a.py",), ["b.py", "a.py"]),
        _outcome(["x.py", "a.py", "b.py"], ("a.py", "b.py"), ["a.py"]),
    ])
    assert result.acc[1] == 0.5 and result.acc[3] == 1.0
    assert result.mrr == round((1 + 1 / 2) / 2, 3)
    assert result.bm25_acc[1] == 0.0 and result.bm25_acc[3] == 0.5
    assert result.function_acc[5] == 1.0 and result.context_recall == 1.0


def test_the_baseline_skips_tests_and_ranks_by_bm25(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "shapes.py").write_text(SHAPES, encoding="utf-8")
    (tmp_path / "pkg" / "colors.py").write_text("def red():\n    return 'red'\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shapes.py").write_text("area radius circle " * 20, encoding="utf-8")
    blobs = {"pkg/shapes.py": "1", "pkg/colors.py": "2", "tests/test_shapes.py": "3"}
    assert Bm25Baseline().rank(tmp_path, blobs, "Circle.area is wrong for a radius") == ["pkg/shapes.py"]


@pytest.mark.integration
@pytest.mark.asyncio
async def test_a_run_finds_the_file_and_function_a_known_fix_changed(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "clones" / "o__shapes")
    repo.commit("Add shapes", "2024-01-01T10:00:00", {"pkg/__init__.py": "", "pkg/shapes.py": SHAPES})
    repo.commit("Fix the colour names of the palette", "2024-01-02T10:00:00",
                {"pkg/colors.py": "PALETTE = ['red', 'green']\n\ndef red():\n    return PALETTE[0]\n"})
    base = repo.commit("Document circles", "2024-01-03T10:00:00", {"README.md": "Shapes: circles.\n"})
    issue = ("Circle.area returns the wrong value\n\nThe area of a `Circle` is computed with 3 instead "
             "of pi:\n\n```python\n>>> from pkg.shapes import Circle\n>>> Circle(1).area()\n3\n```\n\n"
             + "Expected 3.14159 for a circle of radius one, as the formula says. " * 6)
    instance = Instance("o__shapes-1", "o/shapes", base, ("pkg/shapes.py",), issue, PATCH, ("lite",))
    report = await run_instances([instance], tmp_path / "clones", tmp_path / "work", embed=False,
                                 also=[["files"]])
    [outcome] = report.outcomes
    assert outcome.files[0] == "pkg/shapes.py"
    assert [(s.path, s.start, s.end) for s in outcome.gold_functions] == [("pkg/shapes.py", 8, 9)]
    assert outcome.function_rank is not None and outcome.function_rank <= 5
    assert outcome.bm25_files[0] == "pkg/shapes.py"
    assert report.groups["all"].acc[1] == 1.0
    assert "repo:o/shapes" in report.groups and "split:lite" in report.groups
    assert "Acc@1" in render(report)
    # The same instance asked of the code search alone, in the same run, reported beside.
    [alone] = report.also["files"]
    assert alone.files[0] == "pkg/shapes.py" and alone.bm25_files == outcome.bm25_files
    assert "asking files alone:" in render(report)
    assert report.as_dict()["also"]["files"]["groups"]["all"]["acc"]["1"] == 1.0
    # The JSON says where the gold function fell among the hits, to see why a rank is low.
    [shown] = report.as_dict()["instances"]
    assert shown["gold_functions"] == ["pkg/shapes.py:8-9 Circle.area"]
    assert any(hit.startswith("pkg/shapes.py:") for hit in shown["hits"])


@pytest.mark.asyncio
async def test_a_work_dir_holding_another_checkouts_index_is_refused(tmp_path: Path) -> None:
    """A work dir copied elsewhere keeps its index of the old checkout, and the engine
    searches every index beside the run's own: the run stops before it starts, saying
    which; a neighbour repository's index put there on purpose is kept."""
    from tributary.engine.index.manager import index_repository

    index_dir = tmp_path / "copy" / "indexes" / "o__shapes"
    for root in (tmp_path / "old" / "checkouts" / "o__shapes", tmp_path / "neighbour" / "click"):
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "shapes.py").write_text(SHAPES, encoding="utf-8")
        index_repository(root, index_dir=index_dir, embed=False)
    checkout = tmp_path / "copy" / "checkouts" / "o__shapes"
    assert other_checkouts(index_dir, checkout) == [(tmp_path / "old" / "checkouts" / "o__shapes").resolve()]
    instance = Instance("o__shapes-1", "o/shapes", "0" * 40, ("pkg/shapes.py",), "Circle.area is wrong", PATCH)
    with pytest.raises(InstanceError, match=r"another checkout of o/shapes .*old/checkouts/o__shapes"):
        await run_instances([instance], tmp_path / "clones", tmp_path / "copy", embed=False)


def test_sources_asked_also_must_be_some_of_those_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tributary.engine.cli.main import main

    instances = tmp_path / "instances.jsonl"
    instances.write_text(json.dumps({"instance_id": "o__shapes-1", "repo": "o/shapes", "base_commit": "0" * 40,
                                     "gold_files": ["pkg/shapes.py"], "problem_statement": "Circle.area is wrong",
                                     }) + "\n", encoding="utf-8")
    for asked in (["--sources", "files", "--also-sources", "files"], ["--also-sources", "files,docs"]):
        code = main(["eval", "swebench", str(instances), "--clones", str(tmp_path), *asked])
        assert code != 0
        assert "name some, not all, of the sources asked" in capsys.readouterr().err
