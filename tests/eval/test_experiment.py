"""Variants re-fused in-process from fixed raw hits; splits, grid, tests; the report files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tributary.engine.eval.datasets import EvalQuery
from tributary.engine.eval.experiment import (
    QueryRun,
    Ranker,
    Variant,
    grid_variants,
    run_experiment,
    standard_variants,
    tune_ids,
)
from tributary.engine.eval.report import publish_latest, write_report
from tributary.engine.model import Hit


def _hit(source: str, path: str, n: int, score: float | None = None) -> Hit:
    # Unrelated texts (hex digests), so dedup never folds two different hits.
    text = "".join(hashlib.sha256(f"{source}{path}{n}{i}".encode()).hexdigest() for i in range(2))
    return Hit(id=f"{source}-{path}-{n}", source=source, tool="t", title=path,
               content=text, path=path,
               start_line=n * 100 if source == "files" else None,
               end_line=n * 100 + 5 if source == "files" else None, source_score=score)


def _run(qid: str, relevant: list[str], files: list[str], tasks: list[str]) -> QueryRun:
    return QueryRun(
        query=EvalQuery(id=qid, query=f"query {qid}", relevant=dict.fromkeys(relevant, 1.0)),
        hits={"files": [_hit("files", p, i) for i, p in enumerate(files, 1)],
              "tasks": [_hit("tasks", p, i) for i, p in enumerate(tasks, 1)]},
        strategy="rrf", weights={"files": 1.0, "tasks": 1.0},
        latency_ms={"files": 12.0, "tasks": 8.0},
    )


def test_rank_per_variant_without_touching_the_raw_hits() -> None:
    run = _run("q1", ["a.py"], files=["b.py", "a.py", "b.py"], tasks=["a.py", "c.py"])
    ranker = Ranker()
    assert ranker.rank(run, Variant("f", "source", sources=("files",))) == ["b.py", "a.py"]
    assert ranker.rank(run, Variant("t", "source", sources=("tasks",))) == ["a.py", "c.py"]
    # both sources name a.py: the tasks hit joins a.py's chunk, so agreement puts it first
    assert ranker.rank(run, Variant("d", "default"))[:2] == ["a.py", "b.py"]
    tasks_heavy = Variant("w", "weights", strategy="rrf", weights={"tasks": 0.7, "files": 0.3})
    assert ranker.rank(run, tasks_heavy) == ["a.py", "c.py", "b.py"]
    assert ranker.rank(run, Variant("c", "strategy", strategy="cascade", params={"order": ["tasks", "files"]}))[:2] == ["a.py", "c.py"]
    assert all(h.score == 0.0 and not h.parts.parts for hits in run.hits.values() for h in hits)


def test_dedup_folds_identical_content_across_sources() -> None:
    run = _run("q1", ["a.py"], files=["a.py"], tasks=["a.py"])
    same = run.hits["files"][0].content
    run.hits["tasks"][0].content = same
    ranker = Ranker()
    assert ranker.rank(run, Variant("d", "default")) == ["a.py"]
    assert ranker.rank(run, Variant("nd", "ablation", dedup=False)) == ["a.py"]


def test_tune_half_is_deterministic_and_half() -> None:
    ids = [f"q{i}" for i in range(11)]
    tune = tune_ids(ids)
    assert len(tune) == 6
    assert tune == tune_ids(list(reversed(ids)))


def _runs() -> list[QueryRun]:
    runs = []
    for i in range(12):
        rel = f"r{i}.py"
        if i % 3 == 0:  # only files finds it
            runs.append(_run(f"q{i}", [rel], files=[rel, "x.py"], tasks=["y.py", "z.py"]))
        elif i % 3 == 1:  # only tasks finds it
            runs.append(_run(f"q{i}", [rel], files=["x.py", "w.py"], tasks=[rel, "y.py"]))
        else:  # tasks finds it at rank 2, files at rank 3
            runs.append(_run(f"q{i}", [rel], files=["x.py", "w.py", rel], tasks=["y.py", rel]))
    return runs


def test_experiment_scores_compares_and_picks(tmp_path: Path) -> None:
    runs = _runs()
    result = run_experiment(runs, Ranker(), dataset="toy",
                            grid=grid_variants(["files", "tasks"], strategies=("rrf",), rrf_ks=(1, 60),
                                               task_weights=(0.2, 0.8)))
    assert result.baseline == "tasks-only"
    assert len(result.splits["tune"]) == 6 and len(result.splits["test"]) == 6
    files_only = result.estimate("files-only", "recall@1")
    assert files_only.mean == pytest.approx(4 / 12)
    assert result.estimate("tasks-only", "recall@10").mean == pytest.approx(8 / 12)
    assert result.estimate("default", "recall@10").mean == 1.0
    fused = result.tests["default"]["all"]["recall@10"]
    assert fused.mean_diff == pytest.approx(4 / 12) and fused.p_value < 0.05
    assert set(result.ablations) == {"without files", "without tasks", "without dedup"}
    assert result.best["grid_size"] == 4
    assert result.best["name"].startswith("grid rrf")
    c = result.contributions[10]
    assert c.found == {"files": 8, "tasks": 8} and c.unique == {"files": 4, "tasks": 4}
    assert c.coverage == 1.0

    paths = write_report(result, tmp_path / "report")
    for kind in ("md", "json", "per_query", "recall_png", "sources_png"):
        assert paths[kind].is_file() and paths[kind].stat().st_size > 0
    for png in ("recall_png", "sources_png"):
        assert paths[png].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = paths["md"].read_text()
    assert "## Held-out half" in md and "| **default** |" in md and "recall_at_k.png" in md
    data = json.loads(paths["json"].read_text())
    assert data["queries"] == 12 and data["best"]["name"] == result.best["name"]
    assert {v["name"] for v in data["variants"]} >= {"default", "files-only", "tasks-only"}
    rows = [json.loads(line) for line in paths["per_query"].read_text().splitlines()]
    assert len(rows) == 12 and rows[0]["variants"]["default"]["recall@10"] == 1.0

    latest = publish_latest(tmp_path / "report", tmp_path / "latest")
    assert latest == tmp_path / "latest" / "report.md" and latest.read_text() == md


def test_standard_variants_cover_the_seed_plan() -> None:
    names = [v.name for v in standard_variants(["files", "tasks"], has_hints=True)]
    for expected in ("default", "files-only", "tasks-only", "strategy=rrf", "strategy=composite",
                     "strategy=cascade", "strategy=vote", "strategy=weighted",
                     "rrf tasks:files=0.7:0.3", "rrf k=20", "without files", "without tasks",
                     "without dedup", "without hints", "depth=30"):
        assert expected in names


def test_file_level_reference_sums_both_sources() -> None:
    run = _run("q1", ["a.py"], files=["b.py", "a.py"], tasks=["c.py", "a.py"])
    ranker = Ranker()
    hit_level = ranker.rank(run, Variant("d", "default"))
    # the tasks hit for a.py (a whole file) joins a.py's chunk: agreement at hit level too
    assert hit_level[0] == "a.py"
    reference = next(v for v in standard_variants(["files", "tasks"]) if v.group == "reference")
    # a.py: 1/62 + 1/62 beats b.py's and c.py's 1/61
    assert ranker.rank(run, reference) == ["a.py", "b.py", "c.py"]
