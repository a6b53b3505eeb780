"""JSONL imports: validation with file:line errors, idempotent re-imports, updates."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import IndexTarget
from tests.tasks.task_helpers import FIXTURE_TASKS, HashEmbedder, write_jsonl
from tributary.engine.tasks import import_tasks_jsonl, search_tasks, task_stats
from tributary.engine.tasks.sources import read_jsonl


def test_import_counts_tasks_files_and_sources(
    at: IndexTarget, repo_dir: Path, tasks_jsonl: Path, embedder: HashEmbedder
) -> None:
    stats = import_tasks_jsonl(repo_dir, tasks_jsonl, **at.tasks_kw, embedder=embedder)
    assert (stats.read, stats.added, stats.skipped, stats.embedded) == (6, 6, 0, 6)
    info = task_stats(repo_dir, **at.tasks_kw)
    assert info.tasks == 6
    assert info.by_source == {"jsonl": 6}
    assert info.files == len({f for t in FIXTURE_TASKS for f in t["files"]})
    assert info.first is not None and info.first.year == 2020
    assert info.embedder is not None and info.embedder.startswith("test-hash")


def test_bad_lines_are_skipped_and_named(tmp_path: Path) -> None:
    good = FIXTURE_TASKS[0]
    path = write_jsonl(tmp_path / "mixed.jsonl", [
        good,
        "{not json",
        {"id": "x", "title": "no date"},
        {"id": "y", "date": "yesterday", "title": "bad date"},
        {"id": "z", "date": "2020-01-01", "title": "bad files", "files": "a.py"},
        "[1, 2]",
        {"id": "", "date": "2020-01-01", "title": "empty id"},
        {"id": 7, "date": "2020-01-01T00:00:00Z", "title": "integer id is fine", "files": []},
    ])
    (tmp_path / "mixed.jsonl").write_bytes(path.read_bytes() + b'{"id": "\xff"}\n')
    result = read_jsonl(path)
    assert [t.id for t in result.tasks] == ["t1", "7"]
    assert result.skipped == 7
    assert result.errors[0].startswith(f"{path}:2: invalid JSON")
    assert f"{path}:3: missing 'date'" in result.errors
    assert any(e.startswith(f"{path}:4:") and "ISO-8601" in e for e in result.errors)
    assert any(e.startswith(f"{path}:5:") and "'files'" in e for e in result.errors)
    assert any(e.startswith(f"{path}:6:") and "object" in e for e in result.errors)
    assert any(e.startswith(f"{path}:9:") and "UTF-8" in e for e in result.errors)


def test_reimport_is_idempotent_and_updates_changed_tasks(
    tmp_path: Path, at: IndexTarget, repo_dir: Path, tasks_jsonl: Path, embedder: HashEmbedder
) -> None:
    ix = at.tasks_kw
    import_tasks_jsonl(repo_dir, tasks_jsonl, **ix, embedder=embedder)
    again = import_tasks_jsonl(repo_dir, tasks_jsonl, **ix, embedder=embedder)
    assert (again.added, again.updated, again.unchanged, again.embedded) == (0, 0, 6, 0)

    changed = [dict(t) for t in FIXTURE_TASKS]
    changed[2]["title"] = "Speed up CSV export with a streaming writer"
    changed[2]["files"] = ["app/export/stream.py"]
    changed.append({"id": "t7", "date": "2024-06-01T00:00:00+00:00", "title": "Dark mode",
                    "files": ["app/ui/theme.py"]})
    third = import_tasks_jsonl(repo_dir, write_jsonl(tmp_path / "v2.jsonl", changed),
                               **ix, embedder=embedder)
    assert (third.added, third.updated, third.unchanged, third.embedded) == (1, 1, 5, 2)
    assert task_stats(repo_dir, **ix).tasks == 7
    hits = search_tasks(repo_dir, "streaming writer", 3, **ix, embedder=embedder)
    assert hits[0].task.id == "t3"
    assert hits[0].task.files == ("app/export/stream.py",)


def test_import_without_embedder_still_searches_by_bm25(
    tmp_path: Path, at: IndexTarget, repo_dir: Path, tasks_jsonl: Path
) -> None:
    ix = at.tasks_kw
    stats = import_tasks_jsonl(repo_dir, tasks_jsonl, **ix, embed=False)
    assert stats.embedded == 0
    hits = search_tasks(repo_dir, "password reset", 2, **ix)
    assert hits[0].task.id == "t2"
    assert hits[0].similarity is None
