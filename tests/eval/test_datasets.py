"""Reading, writing and materialising datasets in the shared benchmark format."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.eval.gitrepo import Repo
from tributary.engine.eval.datasets import (
    DatasetError,
    EvalQuery,
    EvalTask,
    Span,
    corpus_root,
    export_git_commit,
    fetch_sdist,
    load_dataset,
    visible_tasks,
    write_dataset,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _task(i: int, day: int) -> EvalTask:
    return EvalTask(id=f"t{i}", date=T0.replace(day=day), title=f"task {i}", files=(f"f{i}.py",))


def test_round_trip_keeps_tasks_queries_grades_and_spans(tmp_path: Path) -> None:
    queries = [
        EvalQuery(id="q1", query="fix the thing", relevant={"a.py": 1.0, "b.py": 1.0},
                  date=T0.replace(day=20)),
        EvalQuery(id="q2", query="graded", relevant={"a.py": 2.0, "c.py": 1.0},
                  spans=(Span("a.py", 3, 9, "f"),), hints={"language": "python"}),
    ]
    (tmp_path / "corpus").mkdir()
    write_dataset(tmp_path, {"path": "corpus"}, [_task(1, 2), _task(2, 5)], queries)
    spec = json.loads((tmp_path / "corpus.json").read_text())
    assert spec == {"path": "corpus", "tasks": 2, "queries": 2}
    first_line = json.loads((tmp_path / "queries.jsonl").read_text().splitlines()[0])
    assert first_line["relevant"] == ["a.py", "b.py"]  # a plain list when ungraded, as in the bench

    loaded = load_dataset(tmp_path)
    assert loaded.queries == queries
    assert [t.id for t in loaded.tasks()] == ["t2", "t1"]  # newest first
    assert corpus_root(loaded) == (tmp_path / "corpus").resolve()


def test_shared_benchmark_folders_load() -> None:
    # The benchmark datasets live outside the repository, beside the checkout.
    beside = Path(__file__).resolve().parents[3] / "shared" / "bench"
    bench = Path(os.environ.get("TRIBUTARY_BENCH") or beside) / "click"
    if not bench.is_dir():
        pytest.skip("the benchmark datasets are not beside this checkout")
    dataset = load_dataset(bench)
    assert dataset.corpus["pypi"] == "click==8.1.0"
    assert len(dataset.queries) == 84
    assert all(q.relevant and q.date for q in dataset.queries)
    first = min(q.date for q in dataset.queries if q.date)
    assert all(t.date < first for t in dataset.tasks())  # no task from the queries' future


def test_candidate_kinds_come_from_the_spec_or_the_relevant_files(tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    py_only = [EvalQuery(id="q1", query="a", relevant={"src/a.py": 1.0}),
               EvalQuery(id="q2", query="b", relevant={"B.PY": 1.0, "c.py": 1.0})]
    write_dataset(tmp_path / "inferred", {"path": "corpus"}, [], py_only)
    assert load_dataset(tmp_path / "inferred").candidate_suffixes() == frozenset({".py"})

    declared = {"path": "corpus", "extensions": [".py", ".ts"]}
    write_dataset(tmp_path / "declared", declared, [], py_only)
    assert load_dataset(tmp_path / "declared").candidate_suffixes() == frozenset({".py", ".ts"})

    no_suffix = [*py_only, EvalQuery(id="q3", query="c", relevant={"Makefile": 1.0})]
    write_dataset(tmp_path / "mixed", {"path": "corpus"}, [], no_suffix)
    assert load_dataset(tmp_path / "mixed").candidate_suffixes() is None  # rank every file


def test_bad_lines_name_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "corpus.json").write_text('{"path": "."}')
    (tmp_path / "queries.jsonl").write_text('{"id": "1", "query": "x", "relevant": ["a"]}\n{oops\n')
    with pytest.raises(DatasetError, match=r"queries.jsonl:2"):
        load_dataset(tmp_path)
    (tmp_path / "corpus.json").write_text('{"nothing": 1}')
    with pytest.raises(DatasetError, match="pypi"):
        load_dataset(tmp_path)


def test_future_tasks_are_hidden() -> None:
    tasks = [_task(1, 2), _task(2, 10), _task(3, 25)]
    assert [t.id for t in visible_tasks(tasks, T0.replace(day=10))] == ["t1"]


def test_git_corpus_is_exported_once_and_reused(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    first = repo.commit("add a", "2024-01-02T00:00:00+00:00", {"a.py": "x = 1\n"})
    repo.commit("add b", "2024-01-03T00:00:00+00:00", {"b.py": "y = 2\n"})
    cache = tmp_path / "cache"
    root = export_git_commit(repo.path, first, cache)
    assert sorted(p.name for p in root.iterdir()) == ["a.py"]
    (root / "a.py").write_text("changed\n")
    assert export_git_commit(repo.path, first, cache) == root
    assert (root / "a.py").read_text() == "changed\n"  # reused, not exported again
    worktrees = repo.git("worktree", "list").splitlines()
    assert len(worktrees) == 1  # the repository itself is untouched


def test_sdist_cache_is_reused_without_download(tmp_path: Path) -> None:
    (tmp_path / "demo-1.0" / "demo").mkdir(parents=True)
    root = fetch_sdist("demo==1.0", "demo-1.0", tmp_path)  # already unpacked: no pip call
    assert root == (tmp_path / "demo-1.0").resolve()


def test_sdist_archive_in_the_cache_is_unpacked(tmp_path: Path) -> None:
    import tarfile

    src = tmp_path / "src" / "demo-1.0"
    (src / "demo").mkdir(parents=True)
    (src / "demo" / "core.py").write_text("def f():\n    return 1\n")
    downloads = tmp_path / "cache" / "downloads" / "demo-1.0"
    downloads.mkdir(parents=True)
    with tarfile.open(downloads / "demo-1.0.tar.gz", "w:gz") as tf:
        tf.add(src, arcname="demo-1.0")
    root = fetch_sdist("demo==1.0", "demo-1.0", tmp_path / "cache")
    assert (root / "demo" / "core.py").read_text().startswith("def f")
