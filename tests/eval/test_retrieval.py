"""Raw retrieval through the real engine pool and MCP subprocesses, then re-fusion.

The sources are the suite's fake MCP servers (real stdio subprocesses built on the
SDK) named like the built-ins, so this runs in seconds without an embedding model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import fake_server_config
from tributary.engine.config.schema import Config
from tributary.engine.engine import Engine
from tributary.engine.eval.datasets import EvalQuery
from tributary.engine.eval.experiment import Ranker, run_experiment
from tributary.engine.eval.report import write_report
from tributary.engine.eval.retrieval import PathMapper, collect, eval_config
from tributary.engine.repos.builtins import builtin_server


def test_eval_config_uses_the_builtins_over_the_eval_index(tmp_path: Path) -> None:
    base = Config(servers={"tasks": builtin_server("tasks")})
    base.servers["tasks"].weight = 2.0
    config = eval_config(base, tmp_path, ["files", "tasks"])
    assert set(config.servers) == {"files", "tasks"}
    assert config.servers["tasks"].tool == "files_for_task"
    assert config.servers["tasks"].weight == 2.0
    assert str(tmp_path) in config.servers["files"].args
    assert config.cache.backend == "off"


def test_path_mapper(tmp_path: Path) -> None:
    mapper = PathMapper(tmp_path, frozenset({"src/a.py", "b.py"}))
    assert mapper(str(tmp_path / "src" / "a.py")) == "src/a.py"
    assert mapper("./b.py") == "b.py"
    assert mapper("pkg-1.0/src/a.py") == "src/a.py"
    assert mapper("elsewhere/c.py") == "elsewhere/c.py"


def test_path_mapper_leaves_out_files_the_relevance_cannot_cover(tmp_path: Path) -> None:
    files = frozenset({"src/a.py", "doc/a.rst", "README"})
    mapper = PathMapper(tmp_path, files, candidates=frozenset({".py"}))
    assert mapper("pkg-1.0/src/a.py") == "src/a.py"
    assert mapper("doc/a.rst") is None
    assert mapper("README") is None
    assert PathMapper(tmp_path, files)("doc/a.rst") == "doc/a.rst"  # no candidates: all kept


@pytest.mark.integration
@pytest.mark.asyncio
async def test_collect_asks_each_source_once_and_refuses_in_process(tmp_path: Path) -> None:
    config = Config(servers={
        "files": fake_server_config("files", "--hits", "4", timeout=20.0),
        "tasks": fake_server_config("tasks", "--hits", "3", timeout=20.0),
    })
    queries = [
        EvalQuery(id=f"q{i}", query=f"question {i}",
                  relevant={f"src/tasks/mod_{i}.py": 1.0, f"src/files/mod_{i + 1}.py": 1.0})
        for i in range(1, 4)
    ]
    engine = Engine(config)
    try:
        runs = await collect(engine, queries, ["files", "tasks"], top_k=10)
    finally:
        await engine.aclose()
    assert [r.query.id for r in runs] == ["q1", "q2", "q3"]
    for run in runs:
        assert not run.errors
        assert [len(run.hits["files"]), len(run.hits["tasks"])] == [4, 3]
        assert run.strategy == "rrf" and run.weights == {"files": 1.0, "tasks": 1.0}
        assert set(run.latency_ms) == {"files", "tasks"}
        assert all(run.query.query in h.content for h in run.hits["files"])

    result = run_experiment(runs, Ranker(), dataset="fake")
    assert result.estimate("tasks-only", "recall@10").mean == pytest.approx(0.5)
    assert result.estimate("files-only", "recall@10").mean == pytest.approx(0.5)
    # The fake servers' texts differ only in the source name: dedup folds them across
    # sources, so only the fusion without dedup keeps both relevant files.
    assert result.estimate("without dedup", "recall@10").mean == pytest.approx(1.0)
    paths = write_report(result, tmp_path / "report")
    assert "| **default** |" in paths["md"].read_text()


def test_raw_runs_round_trip_as_json(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from tributary.engine.eval.experiment import QueryRun
    from tributary.engine.eval.retrieval import load_runs, save_runs
    from tributary.engine.model import Hit

    query = EvalQuery(id="q1", query="x", relevant={"a.py": 1.0})
    hit = Hit(id="h", source="files", tool="search_code", title="a", content="def a(): ...",
              path="a.py", start_line=1, end_line=3, source_score=0.5, source_rank=1,
              timestamp=datetime(2024, 1, 1, tzinfo=UTC), metadata={"kind": "function"})
    run = QueryRun(query=query, hits={"files": [hit], "tasks": []}, strategy="rrf",
                   weights={"files": 1.0}, latency_ms={"files": 3.0}, errors={"tasks": "timeout"})
    path = tmp_path / "raw.jsonl"
    save_runs(path, [run])
    loaded = load_runs(path, [query])
    assert loaded is not None and loaded[0].hits == run.hits and loaded[0].errors == run.errors
    assert load_runs(path, [query, EvalQuery(id="q2", query="y", relevant={})]) is None
    assert load_runs(tmp_path / "missing.jsonl", [query]) is None


def test_each_query_sees_only_the_tasks_dated_before_it(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from tributary.engine.eval.datasets import EvalTask, load_dataset, write_dataset
    from tributary.engine.eval.retrieval import _tasks_file, query_scope

    day = lambda d: datetime(2024, 1, d, tzinfo=UTC)  # noqa: E731
    tasks = [EvalTask(id=f"t{d}", date=day(d), title=f"task {d}") for d in (1, 5, 9, 12)]
    early = EvalQuery(id="q1", query="x", relevant={"a.py": 1.0}, date=day(5))
    late = EvalQuery(id="q2", query="y", relevant={"a.py": 1.0}, date=day(10))
    (tmp_path / "ds" / "corpus").mkdir(parents=True)
    write_dataset(tmp_path / "ds", {"path": "corpus"}, tasks, [early, late])
    path, kept, dropped = _tasks_file(load_dataset(tmp_path / "ds"), tmp_path / "work")
    # Imported: everything older than the last query; day 12 never is.
    assert (kept, dropped) == (3, 1)
    assert path is not None and "t9" in path.read_text() and "t12" not in path.read_text()
    # Each query's calls carry its own cutoff, which the task history's tools take.
    assert query_scope(early) == {"before": day(5).isoformat()}
    assert query_scope(late) == {"before": day(10).isoformat()}
    assert query_scope(EvalQuery(id="q3", query="z", relevant={})) == {}


def test_raw_hits_kept_by_another_version_of_the_engine_are_not_reused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The servers' answers are the engine's code: a change to how a server ranks must be
    measured, not read back from an earlier run's raw hits."""
    from tributary.engine.eval import retrieval

    prepared = retrieval.Prepared(corpus=tmp_path, index_dir=tmp_path / "index", sources=["files"])
    config = eval_config(Config(), tmp_path, ["files"])
    queries = [EvalQuery(id="q1", query="where is the cache", relevant={"a.py": 1.0})]
    key = retrieval.raw_cache_key(prepared, config, queries, 30)
    assert retrieval.raw_cache_key(prepared, config, queries, 30) == key
    monkeypatch.setattr(retrieval, "engine_code_digest", lambda: "another version")
    assert retrieval.raw_cache_key(prepared, config, queries, 30) != key
