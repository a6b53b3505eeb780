"""Annotated code-search sets: reading them, and scoring as their benchmark does."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tributary.engine.eval.codesearch import (
    AnnotationError,
    CodeQuery,
    Located,
    Target,
    hits_located,
    load_annotations,
    score,
    summarise,
    target_ranks,
)
from tributary.engine.model import Hit


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_targets_in_every_form_and_secondary_ones_count(tmp_path: Path) -> None:
    path = _write(tmp_path, [{
        "query": "radix tree path matching", "category": "semantic",
        "relevant": ["tree.go", "gin.go:10-40"],
        "secondary": [{"path": "context.go", "start_line": 5, "end_line": 9}, "tree.go"],
    }])  # fmt: skip
    (query,) = load_annotations(path)
    assert query.category == "semantic"
    assert query.targets == (Target("tree.go"), Target("gin.go", 10, 40), Target("context.go", 5, 9))


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"query": "x"}, "JSON list"),
        ([{"relevant": ["a.py"]}], "entry 1: needs a non-empty 'query'"),
        ([{"query": "ok", "relevant": ["a.py"]}, {"query": "x", "relevant": []}], "entry 2: no relevant"),
        ([{"query": "x", "relevant": [{"path": "a.py", "start_line": 3}]}], "both or neither"),
        ([{"query": "x", "relevant": [42]}], "a target is a path"),
    ],
)
def test_bad_annotations_say_which_entry(tmp_path: Path, data: object, says: str) -> None:
    with pytest.raises(AnnotationError, match=says):
        load_annotations(_write(tmp_path, data))


def test_chunk_protocol_needs_overlapping_lines_and_file_protocol_ignores_them() -> None:
    hits = [Located("a.py", 1, 20), Located("b.py", 50, 80), Located("b.py", 100, 120), Located("c.py", 1, 5)]
    targets = [Target("b.py", 95, 130), Target("c.py"), Target("d.py")]
    assert target_ranks(hits, targets, "chunk") == [3, 4, None]
    assert target_ranks(hits, targets, "file") == [2, 3, None]


def test_only_the_top_ten_count() -> None:
    hits = [Located(f"f{i}.py", 1, 2) for i in range(12)]
    assert target_ranks(hits, [Target("f10.py")], "chunk") == [None]
    many_chunks_of_one_file = [Located("a.py", i, i) for i in range(1, 12)] + [Located("z.py", 1, 1)]
    assert target_ranks(many_chunks_of_one_file, [Target("z.py")], "file") == [2]


def test_ndcg_recall_and_mrr_by_the_formula() -> None:
    scores = score([1, None, 3])
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert scores.ndcg == pytest.approx((1 + 1 / math.log2(4)) / ideal)
    assert scores.recall == pytest.approx(2 / 3)
    assert scores.mrr == 1.0
    assert score([None, 2]).mrr == 0.5
    assert score([None]).ndcg == 0.0


def test_summary_by_category_and_protocol() -> None:
    queries = [CodeQuery("q1", (Target("a.py"),), "symbol"), CodeQuery("q2", (Target("b.py", 10, 12),), "semantic")]
    ranked = [[Located("a.py", 1, 3)], [Located("b.py", 1, 5), Located("b.py", 9, 20)]]
    summary = summarise(queries, ranked)
    assert summary.by_category["symbol"]["chunk"].ndcg == 1.0
    assert summary.by_category["semantic"]["chunk"].mrr == 0.5
    assert summary.by_category["semantic"]["file"].mrr == 1.0
    assert summary.overall["chunk"].mrr == pytest.approx(0.75)


def test_hit_paths_are_made_relative_to_the_checkout() -> None:
    files = frozenset({"v4/core/schemas.ts", "index.ts"})
    hits = [Hit(id="1", source="files", tool="search_code", title="t", content="c",
                path="src/v4/core/schemas.ts", start_line=3, end_line=9),
            Hit(id="2", source="files", tool="search_code", title="t", content="c", path=None)]
    located = hits_located(hits, Path("/checkout/packages/zod/src"), files, folder="packages/zod/src")
    assert located == [Located("packages/zod/src/v4/core/schemas.ts", 3, 9)]


def test_a_set_scored_against_the_wrong_folder_says_so_instead_of_scoring_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Targets are relative to the checkout; given its ``lib/`` as the checkout, every
    query would score zero without a word of why."""
    from tributary.engine.cli.main import main

    checkout = tmp_path / "express"
    (checkout / "lib").mkdir(parents=True)
    (checkout / "lib" / "router.js").write_text("function route(path) { return path }\n", encoding="utf-8")
    (checkout / "README.md").write_text("# express\n", encoding="utf-8")
    annotations = _write(tmp_path, [{"query": "routing", "relevant": ["lib/router.js"]},
                                    {"query": "readme", "relevant": ["README.md"]}])
    work = ["--work-dir", str(tmp_path / "work")]
    assert main(["eval", "code", str(annotations), "--code", str(checkout / "lib"), *work]) == 1
    said = capsys.readouterr().err
    assert "2 of 2 annotated files are not files in" in said and "lib/router.js" in said
    # Some reachable: scored, with a warning that names the ones that cannot be found.
    assert main(["eval", "code", str(annotations), "--code", str(checkout), "--folder", "lib", "--json", *work]) == 0
    captured = capsys.readouterr()
    assert "1 of 2 annotated files are not files in" in captured.err and "README.md" in captured.err
    assert json.loads(captured.out)["queries"] == 2


def test_with_history_the_tasks_source_is_asked_beside_the_files_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the app asks both by default: the history is imported and each question asks
    the files and tasks sources together, whose answer names the file a past commit
    changed."""
    import asyncio

    from tests.eval.gitrepo import Repo
    from tributary.engine.engine import Engine
    from tributary.engine.eval.codesearch import run_code_dataset
    from tributary.engine.model import SearchRequest, SearchResponse

    repo = Repo(tmp_path / "repo")
    repo.commit("Add the parser", "2024-01-02T10:00:00", {"src/parse.py": "def parse(text):\n    return text.split()\n"})
    repo.commit("Stop the zebra stampede when the herd is empty", "2024-01-03T10:00:00",
                {"src/herd.py": "def gather(animals):\n    return [a for a in animals if a]\n"})
    queries = load_annotations(_write(tmp_path, [{"query": "zebra stampede", "relevant": ["src/herd.py"]}]))
    answered: dict[bool, list[tuple[list[str], set[str]]]] = {False: [], True: []}
    search = Engine.search

    async def recorded(self: Engine, request: SearchRequest) -> SearchResponse:
        response = await search(self, request)
        answered[history].append((list(request.sources or ()), {hit.source for hit in response.hits}))
        return response

    monkeypatch.setattr(Engine, "search", recorded)
    for history in (False, True):
        run = asyncio.run(run_code_dataset(queries, repo.path, index_dir=tmp_path / f"index-{history}", history=history))
        assert run.summary.overall["file"].recall == 1.0
    assert answered[False] == [(["files"], {"files"})]
    assert answered[True] == [(["files", "tasks"], {"files", "tasks"})]
