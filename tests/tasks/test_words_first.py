"""A history written without vectors answers by its words at once and says so; the
vectors made afterwards are used by the same running server."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.task_helpers import HashEmbedder, write_jsonl
from tributary.engine.index import embed
from tributary.engine.servers.tasks import TaskBackend
from tributary.engine.tasks import import_tasks_jsonl, tasks_db_path
from tributary.engine.tasks.api import embed_history
from tributary.engine.tasks.search import TaskIndex
from tributary.engine.tasks.store import TaskStore


def test_a_history_without_vectors_answers_by_words_then_by_meaning(
    tmp_path: Path, repo_dir: Path, tasks_jsonl: Path, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    ix = tmp_path / "ix"
    import_tasks_jsonl(repo_dir, tasks_jsonl, indexes_dir=ix, embed=False)
    monkeypatch.setattr(embed, "load_default_embedder", lambda: embedder)
    backend = TaskBackend([tasks_db_path(repo_dir, ix)], model_wait_s=30)
    backend.start()
    try:
        found = backend.search_tasks("password reset email", 3)
        assert found and found[0][1].task.id == "t2"
        assert all(hit.similarity is None for _, hit in found)  # by its words alone
        (said,) = backend.unembedded()
        assert "0 % ready (0 of 6 past tasks embedded)" in said and "keyword search covers every one" in said

        progress: list[tuple[int, int]] = []
        assert embed_history(repo_dir, indexes_dir=ix, embedder=embedder,
                             on_progress=lambda done, total: progress.append((done, total))) == 6
        assert progress[-1] == (6, 6)
        assert backend.unembedded() == []
        found = backend.search_tasks("password reset email", 3)
        assert found[0][1].similarity is not None  # the model loaded at the start is used now

        # New commits imported without vectors are said again.
        more = write_jsonl(tmp_path / "more.jsonl", [
            {"id": "t9", "date": "2024-05-01T00:00:00+00:00", "title": "Rotate the mail signing key",
             "body": "", "files": ["app/mail/keys.py"]}])
        import_tasks_jsonl(repo_dir, more, indexes_dir=ix, embed=False)
        (said,) = backend.unembedded()
        assert "(6 of 7 past tasks embedded)" in said
    finally:
        backend.close()


def test_a_server_without_embedding_never_says_vectors_are_due(
    tmp_path: Path, repo_dir: Path, tasks_jsonl: Path
) -> None:
    ix = tmp_path / "ix"
    import_tasks_jsonl(repo_dir, tasks_jsonl, indexes_dir=ix, embed=False)
    backend = TaskBackend([tasks_db_path(repo_dir, ix)], embed=False)
    backend.start()
    try:
        assert backend.search_tasks("password reset email", 3)
        assert backend.unembedded() == []
    finally:
        backend.close()


def test_a_started_server_reads_its_history_before_the_first_question(
    tmp_path: Path, repo_dir: Path, tasks_jsonl: Path, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vectors and the files' change counts are read while the server starts, so the
    first question does not wait for them."""
    ix = tmp_path / "ix"
    import_tasks_jsonl(repo_dir, tasks_jsonl, indexes_dir=ix, embedder=embedder)
    monkeypatch.setattr(embed, "load_default_embedder", lambda: embedder)
    reads: list[str] = []
    loaded, touches = TaskStore._load_vectors, TaskStore.file_touches

    def load_vectors(self: TaskStore, conn: Any) -> Any:
        reads.append("vectors")
        return loaded(self, conn)

    def file_touches(self: TaskStore) -> list[tuple[str, int]]:
        reads.append("touches")
        return touches(self)

    monkeypatch.setattr(TaskStore, "_load_vectors", load_vectors)
    monkeypatch.setattr(TaskStore, "file_touches", file_touches)
    backend = TaskBackend([tasks_db_path(repo_dir, ix)], model_wait_s=30)
    backend.start()
    try:
        assert backend.warmed.wait(30)
        assert sorted(reads) == ["touches", "vectors"]
        files, tasks = backend.files_and_tasks("password reset email", 5, 3)
        assert files and tasks[0][1].similarity is not None
        assert sorted(reads) == ["touches", "vectors"]  # nothing read again
    finally:
        backend.close()


def test_a_history_that_cannot_be_read_ahead_still_answers(
    tmp_path: Path, repo_dir: Path, tasks_jsonl: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ix = tmp_path / "ix"
    import_tasks_jsonl(repo_dir, tasks_jsonl, indexes_dir=ix, embed=False)

    def fail(self: TaskIndex) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(TaskIndex, "warm", fail)
    backend = TaskBackend([tasks_db_path(repo_dir, ix)], embed=False)
    backend.start()
    try:
        assert backend.warmed.wait(30)
        assert backend.search_tasks("password reset email", 3)
        assert backend.error is None
    finally:
        backend.close()
