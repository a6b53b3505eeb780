"""Similar-task search, files from tasks, the as_of filter, moved and missing files."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import IndexTarget
from tests.tasks.task_helpers import HashEmbedder, write_jsonl
from tributary.engine.tasks import (
    FileRankParams,
    TaskSearchParams,
    files_for_task,
    import_tasks_jsonl,
    open_index,
    search_tasks,
)
from tributary.engine.tasks.api import tasks_db_path
from tributary.engine.tasks.model import ImportStats, Rename, Task, TaskHit
from tributary.engine.tasks.ranking import PathResolver, TouchCounts, rank_files
from tributary.engine.tasks.store import TaskStore


@pytest.fixture
def ix(at: IndexTarget, repo_dir: Path, tasks_jsonl: Path, embedder: HashEmbedder) -> dict[str, Any]:
    """Where the history was imported, on each backend: the keyword arguments naming it."""
    import_tasks_jsonl(repo_dir, tasks_jsonl, embedder=embedder, **at.tasks_kw)
    return at.tasks_kw


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "dense"])
def test_similar_tasks_rank_first(
    mode: str, repo_dir: Path, ix: dict[str, Any], embedder: HashEmbedder
) -> None:
    hits = search_tasks(repo_dir, "login session authentication", 6, **ix,
                        embedder=embedder, params=TaskSearchParams(mode=mode))
    top = [h.task.id for h in hits[:3]]
    assert set(top) <= {"t1", "t4", "t6", "t5"}
    assert "t3" not in top and "t2" not in top[:1]
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))
    if mode == "hybrid":
        assert hits[0].bm25_rank is not None and hits[0].dense_rank is not None
        assert hits[0].similarity is not None and 0 < hits[0].similarity <= 1.0001


def test_as_of_hides_later_tasks(repo_dir: Path, ix: dict[str, Any], embedder: HashEmbedder) -> None:
    cutoff = datetime(2021, 12, 31, tzinfo=UTC)
    for mode in ("hybrid", "bm25", "dense"):
        hits = search_tasks(repo_dir, "login session authentication cookie", 10, as_of=cutoff,
                            **ix, embedder=embedder, params=TaskSearchParams(mode=mode))
        assert hits, mode
        assert all(h.task.date <= cutoff for h in hits), mode
    files = files_for_task(repo_dir, "login session timeout setting", 10, as_of=cutoff,
                           **ix, embedder=embedder)
    assert "app/settings.py" not in [f.path for f in files]  # only t6 (2024) touched it


def test_files_for_task_ranks_files_of_similar_tasks(
    repo_dir: Path, ix: dict[str, Any], embedder: HashEmbedder
) -> None:
    files = files_for_task(repo_dir, "login fails: session authentication", 10, **ix,
                           embedder=embedder)
    assert files[0].path == "app/auth/session.py"  # touched by four login/session tasks
    assert "app/auth/cookies.py" in [f.path for f in files[:3]]
    assert "app/auth/login.py" in [f.path for f in files]
    top = files[0]
    assert top.exists is True
    assert len(top.tasks) >= 2
    assert "Login fails with expired session cookie" in top.why()
    # old/removed_helper.py is not in the repository: dropped by default, flagged on request
    assert "old/removed_helper.py" not in [f.path for f in files]
    flagged = files_for_task(repo_dir, "session timeout configurable", 10, **ix,
                             embedder=embedder, file_params=FileRankParams(missing="flag"))
    gone = next(f for f in flagged if f.path == "old/removed_helper.py")
    assert gone.exists is False and "no longer in the repository" in gone.why()


def test_prefer_code_files_option(repo_dir: Path, ix: dict[str, Any], embedder: HashEmbedder) -> None:
    plain = files_for_task(repo_dir, "CSV export report", 5, **ix, embedder=embedder)
    assert "docs/export.md" in [f.path for f in plain]
    code_only = files_for_task(repo_dir, "CSV export report", 5, **ix,
                               embedder=embedder, file_params=FileRankParams(non_code_weight=0))
    assert "docs/export.md" not in [f.path for f in code_only]
    assert all(f.path.endswith(".py") for f in code_only)
    rank = [f.path for f in code_only].index("app/export/csv_writer.py")
    assert rank <= [f.path for f in plain].index("app/export/csv_writer.py")


def test_existing_files_passed_by_the_caller_override_the_snapshot(
    repo_dir: Path, ix: dict[str, Any], embedder: HashEmbedder
) -> None:
    files = files_for_task(repo_dir, "login session", 10, **ix, embedder=embedder,
                           existing={"app/auth/session.py"})
    assert [f.path for f in files] == ["app/auth/session.py"]


def _hit(task_id: str, files: tuple[str, ...], rank: int, year: int = 2023) -> TaskHit:
    task = Task(id=task_id, date=datetime(year, 1, 1, tzinfo=UTC), title=task_id, files=files)
    return TaskHit(task=task, score=1.0 / rank, rank=rank)


def test_big_tasks_count_less_per_file() -> None:
    hits = [_hit("small", ("a.py",), 2), _hit("big", tuple(f"m{i}.py" for i in range(50)), 1)]
    now = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
    ranked = rank_files(hits, query_time=now, params=FileRankParams(alpha=0.5))
    assert ranked[0].path == "a.py"
    flat = rank_files(hits, query_time=now, params=FileRankParams(alpha=0.0))
    assert flat[0].path != "a.py"


def test_build_output_a_task_touched_is_no_evidence() -> None:
    files = ("pkg/core.py", "pkg/__pycache__/core.cpython-311.pyc", "lib/_speed.so", ".venv/x.py")
    hits = [_hit("fix", files, 1), _hit("other", ("pkg/util.py", "pkg/more.py"), 2)]
    now = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
    ranked = rank_files(hits, query_time=now, params=FileRankParams(alpha=0.5))
    assert {f.path for f in ranked} == {"pkg/core.py", "pkg/util.py", "pkg/more.py"}


def test_recency_prefers_recent_tasks() -> None:
    hits = [_hit("old", ("old.py",), 1, year=2010), _hit("new", ("new.py",), 2, year=2023)]
    now = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
    assert rank_files(hits, query_time=now, params=FileRankParams(recency=0.3))[0].path == "new.py"
    assert rank_files(hits, query_time=now, params=FileRankParams(recency=0.0))[0].path == "old.py"


def test_path_resolver_follows_renames_and_unique_suffixes() -> None:
    resolver = PathResolver(
        [Rename("a.py", "b.py", 1), Rename("b.py", "lib/c.py", 2)],
        existing={"lib/c.py", "src/pkg/main.py", "src/x/util.py", "src/y/util.py"},
    )
    assert resolver.resolve("a.py") == ("lib/c.py", True)
    assert resolver.resolve("pkg/main.py") == ("src/pkg/main.py", True)
    assert resolver.resolve("util.py") == ("util.py", False)  # ambiguous: not guessed
    assert resolver.resolve("gone.py") == ("gone.py", False)
    assert PathResolver().resolve("any.py") == ("any.py", None)


def test_open_index_needs_an_import(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="tributary tasks import"):
        open_index(tmp_path, indexes_dir=tmp_path / "none")


def test_queries_with_fts_syntax_are_inert(repo_dir: Path, ix: dict[str, Any], embedder: HashEmbedder) -> None:
    for query in ['"unbalanced', "NEAR(login", "a AND OR NOT", "*", "---", ""]:
        search_tasks(repo_dir, query, 5, **ix, embedder=embedder)


def test_popularity_prior_counts_only_tasks_up_to_the_query() -> None:
    resolver = PathResolver([Rename("old/hub.py", "hub.py", 5)], existing={"hub.py", "leaf.py"})
    counts = TouchCounts([("old/hub.py", 1), ("hub.py", 10), ("hub.py", 20), ("leaf.py", 10)],
                         resolver)
    assert counts.counter(None)("hub.py") == 3  # the old name counts for the new file
    assert counts.counter(10)("hub.py") == 2
    assert counts.counter(0)("hub.py") == 0
    hits = [_hit("t", ("hub.py", "leaf.py"), 1)]
    now = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
    ranked = rank_files(hits, query_time=now, resolver=resolver, touched=counts.counter(None),
                        params=FileRankParams(popularity=0.5))
    assert [f.path for f in ranked] == ["leaf.py", "hub.py"]


def test_repo_id_matches_the_files_index_naming(tmp_path: Path) -> None:
    from tributary.engine.index.manager import repo_stem
    from tributary.engine.tasks import repo_id

    for folder in (tmp_path / "my repo", tmp_path / "ünï", tmp_path):
        assert repo_id(folder) == repo_stem(folder)


def _vec0_knn(store: TaskStore, vector: np.ndarray, limit: int, as_of: int | None = None) -> list[tuple[int, float]]:
    """sqlite-vec's own KNN, which ``TaskStore.knn`` replaced: the reference."""
    sql = "SELECT rowid, distance FROM tasks_vec WHERE embedding MATCH ? AND k = ?"
    args: tuple[object, ...] = (vector.astype(np.float32).tobytes(), limit)
    if as_of is not None:
        sql, args = sql + " AND ts <= ?", (*args, as_of)
    return [(int(r[0]), 1.0 - float(r[1])) for r in store.conn.execute(sql, args) if r[1] is not None]


def test_in_memory_knn_matches_sqlite_vec_and_sees_new_tasks(tmp_path: Path, embedder: HashEmbedder) -> None:
    rng = np.random.default_rng(3)
    words = ["login", "session", "cookie", "export", "csv", "report", "mail", "reset", "cache", "timeout"]
    rows = [{"id": f"t{i}", "date": f"20{10 + i % 14}-0{1 + i % 9}-01T00:00:00+00:00",
             "title": " ".join(rng.choice(words, 4)), "files": [f"app/m{i % 7}.py"]} for i in range(120)]
    rows.append({"id": "blank", "date": "2020-01-01T00:00:00+00:00", "title": "??", "files": ["x.py"]})
    repo = tmp_path / "repo"
    repo.mkdir()
    import_tasks_jsonl(repo, write_jsonl(tmp_path / "t.jsonl", rows), indexes_dir=tmp_path / "ix", embedder=embedder)
    with TaskStore(tasks_db_path(repo, tmp_path / "ix")) as store:
        cutoff = int(datetime(2016, 6, 1, tzinfo=UTC).timestamp())
        for query in ("login session cookie", "csv export", "cache timeout mail"):
            vector = embedder.encode([query])[0]
            for limit, as_of in ((10, None), (200, None), (25, cutoff)):
                ours, reference = store.knn(vector, limit, as_of), _vec0_knn(store, vector, limit, as_of)
                assert len(ours) == len(reference) == min(limit, 120 if as_of is None else len(reference))
                assert {i for i, _ in ours} == {i for i, _ in reference} or limit < 120
                # the same scores in the same order (ties may list their tasks in another order)
                assert [score for _, score in ours] == pytest.approx([score for _, score in reference], abs=1e-5)
        assert store.knn(np.zeros(embedder.dim, dtype=np.float32), 10) == []
        # a task added through this same connection is seen at once
        before = store.knn(embedder.encode(["zebra quokka"])[0], 5)
        store.upsert([Task(id="new", date=datetime(2024, 1, 1, tzinfo=UTC), title="zebra quokka",
                           files=("z.py",))], ImportStats(source="test"), embedder=embedder)
        after = store.knn(embedder.encode(["zebra quokka"])[0], 5)
        assert after[0][1] == pytest.approx(1.0) and after != before


def test_a_question_about_one_history_is_not_interleaved_with_anothers(
    tmp_path: Path, repo_dir: Path, tasks_jsonl: Path, embedder: HashEmbedder
) -> None:
    """Each history ranks its own tasks: a task of another repository holding one word of
    the question ("session") came level with this history's answer. Weighed by how much
    of the question their first tasks hold, it holds much less of it and is left
    out; alone, a history is as it was."""
    from tributary.engine.servers.tasks import TaskBackend

    other = tmp_path / "other"
    other.mkdir()
    unrelated = write_jsonl(tmp_path / "other.jsonl", [
        {"id": "o1", "date": "2023-01-01T00:00:00+00:00", "title": "Tune the session pool size",
         "body": "More workers for the database.", "files": ["db/pool.py"]},
        {"id": "o2", "date": "2023-02-01T00:00:00+00:00", "title": "Rename the worker queue",
         "body": "", "files": ["db/queue.py"]},
    ])
    ix = tmp_path / "ix"
    import_tasks_jsonl(repo_dir, tasks_jsonl, indexes_dir=ix, embedder=embedder)
    import_tasks_jsonl(other, unrelated, indexes_dir=ix, embedder=embedder)
    both = TaskBackend([tasks_db_path(repo_dir, ix), tasks_db_path(other, ix)], embed=False)
    alone = TaskBackend([tasks_db_path(repo_dir, ix)], embed=False)
    for backend in (both, alone):
        backend.start()
    try:
        question = "login fails because the expired session cookie is kept"
        found = [hit.task.id for _, hit in both.search_tasks(question, 10)]
        assert "o1" not in found and "t4" in found, found
        assert found[:2] == [hit.task.id for _, hit in alone.search_tasks(question, 10)][:2]
        files, _ = both.files_and_tasks(question, 10, 0)
        paths = [f.path for _, f in files]
        assert "db/pool.py" not in paths and "app/auth/session.py" in paths, paths
        # Asked about the other history, this one is left out in turn.
        files, _ = both.files_and_tasks("tune the worker pool size", 10, 0)
        assert [f.path for _, f in files][:1] == ["db/pool.py"]
    finally:
        both.close()
        alone.close()


def test_a_history_does_not_answer_for_a_repository_indexed_without_one(
    tmp_path: Path, at: IndexTarget, repo_dir: Path, tasks_jsonl: Path, embedder: HashEmbedder
) -> None:
    """A folder indexed without a history beside a repository with one (on a team's
    shared index too): the engine fuses each source by rank, so the history's first files
    came level with the code's answer to a question about the other folder. Each history
    is now weighed by its own repository's code against the others', and one that matches
    much less well answers nothing; its hits name their repository as the code search does."""
    from tests.index.index_helpers import HashingEmbedder
    from tributary.engine.index.manager import index_repository
    from tributary.engine.servers.tasks import TaskBackend

    (repo_dir / "app" / "auth" / "session.py").write_text(
        "def expire_session(cookie):\n    \"\"\"Drop the login session when its cookie expired.\"\"\"\n"
        "    return cookie.expired\n", encoding="utf-8")
    other = tmp_path / "other"
    (other / "pkg").mkdir(parents=True)
    (other / "pkg" / "numbers.py").write_text(
        "def format_number(value):\n    \"\"\"Format a number for display.\"\"\"\n    return f'{value:,}'\n\n\n"
        "def round_number(value):\n    \"\"\"Round a number to two places.\"\"\"\n    return round(value, 2)\n",
        encoding="utf-8")
    code = HashingEmbedder()
    index_repository(repo_dir, embedder=code, **at.kw)
    import_tasks_jsonl(repo_dir, tasks_jsonl, embedder=embedder, **at.tasks_kw)
    histories = [] if at.postgres else [tasks_db_path(repo_dir, at.tasks_kw["indexes_dir"])]

    def backend() -> TaskBackend:
        opened = TaskBackend(histories, embed=False, backend=at.kw.get("backend"))
        opened.start()
        return opened

    question = "format a number for display, round it to two places, in the report rows"
    alone = backend()
    try:
        unweighed, _ = alone.files_and_tasks(question, 10, 0)
        assert unweighed  # one repository: answered as before
        [(label, history)] = alone.scoped()
        name = alone._identity(label, history)[0]  # the name the code search gives it
    finally:
        alone.close()

    index_repository(other, embedder=code, **at.kw)
    beside = backend()
    try:
        files, tasks = beside.files_and_tasks(question, 10, 5)
        assert files == [] and tasks == []
        assert beside.search_tasks(question, 10) == []
        # A question about the repository with the history is answered, with its name.
        files, _ = beside.files_and_tasks("login fails because the expired session cookie is kept", 10, 0)
        assert files and files[0][1].path == "app/auth/session.py"
        assert {label for label, _ in files} == {name}
        if not at.postgres:  # the folder removed, then indexed anew: seen each time
            folder = at.kw["index_dir"]
            removed = [path for path in folder.glob("*.files.sqlite*") if "other" in path.name]
            for path in removed:
                path.unlink()
            assert beside.files_and_tasks(question, 10, 0)[0]
            index_repository(other, embedder=code, **at.kw)
            assert beside.files_and_tasks(question, 10, 0)[0] == []
    finally:
        beside.close()
