"""Git imports: commits become tasks, incrementally, robust to odd bytes; renames followed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import IndexTarget
from tests.tasks.task_helpers import HashEmbedder, commit, git
from tributary.engine.tasks import files_for_task, import_git_history, search_tasks, task_stats
from tributary.engine.tasks.sources import GitError, read_git_history


def test_commits_become_tasks(git_repo: Path) -> None:
    history = read_git_history(git_repo)
    assert [t.title for t in history.tasks] == [
        "Document installation", "Fix parser crash on empty file", "Add the config parser",
    ]
    first = history.tasks[-1]
    assert first.body == "Parses YAML."
    assert first.files == ("src/parser.py",)
    assert first.date.isoformat() == "2022-01-01T10:00:00+00:00"
    assert set(history.tasks[1].files) == {"src/parser.py", "tests/test_parser.py"}
    assert len(first.id) == 40 and first.source == "git"
    assert first.author == "Test"


def test_the_author_is_stored_and_read_back(at: IndexTarget, git_repo: Path, embedder: HashEmbedder) -> None:
    import_git_history(git_repo, **at.tasks_kw, embedder=embedder)
    hits = search_tasks(git_repo, "config parser", 3, **at.tasks_kw, embedder=embedder)
    assert hits and all(hit.task.author == "Test" for hit in hits)


def test_second_import_adds_only_new_commits(
    at: IndexTarget, git_repo: Path, embedder: HashEmbedder
) -> None:
    ix = at.tasks_kw
    first = import_git_history(git_repo, **ix, embedder=embedder)
    assert (first.read, first.added) == (3, 3)
    nothing = import_git_history(git_repo, **ix, embedder=embedder)
    assert (nothing.read, nothing.added, nothing.embedded) == (0, 0, 0)

    commit(git_repo, {"src/cache.py": "c = 1\n"}, "Cache parsed configs",
           "2022-04-01T10:00:00+00:00")
    commit(git_repo, {"src/cache.py": "c = 2\n"}, "Expire the config cache",
           "2022-05-01T10:00:00+00:00")
    before = embedder.encoded
    second = import_git_history(git_repo, **ix, embedder=embedder)
    assert (second.read, second.added, second.unchanged) == (2, 2, 0)
    assert embedder.encoded - before == 2  # only the new commits were embedded
    stats = task_stats(git_repo, **ix)
    assert stats.tasks == 5 and stats.by_source == {"git": 5}
    assert stats.last_git_commit == git(git_repo, "rev-parse", "HEAD").strip()
    assert stats.with_functions == 0  # (its commits change no definition)
    hits = search_tasks(git_repo, "config cache expiry", 2, **ix, embedder=embedder)
    assert hits[0].task.title == "Expire the config cache"


def test_merges_are_skipped_and_odd_encodings_survive(tmp_path: Path, git_repo: Path) -> None:
    git(git_repo, "checkout", "-q", "-b", "feature")
    commit(git_repo, {"src/feature.py": "f = 1\n"}, b"Caf\xe9 latin-1 message \xff\n",
           "2022-04-01T10:00:00+00:00")
    git(git_repo, "checkout", "-q", "main")
    commit(git_repo, {"src/other.py": "o = 1\n"}, "Other work", "2022-04-02T10:00:00+00:00")
    git(git_repo, "merge", "-q", "--no-ff", "-m", "Merge feature", "feature",
        date="2022-04-03T10:00:00+00:00")
    history = read_git_history(git_repo)
    titles = [t.title for t in history.tasks]
    assert "Merge feature" not in titles
    assert any(t.startswith("Caf") and "latin-1 message" in t for t in titles)
    assert len(history.tasks) == 5
    stats = import_git_history(git_repo, indexes_dir=tmp_path / "ix", embed=False)
    assert stats.added == 5 and stats.skipped == 0


def test_renamed_files_point_to_their_new_path(tmp_path: Path, git_repo: Path) -> None:
    (git_repo / "src" / "config").mkdir()
    git(git_repo, "mv", "src/parser.py", "src/config/parser.py")
    git(git_repo, "commit", "-q", "-m", "Move the parser into the config package",
        date="2022-06-01T10:00:00+00:00")
    ix = tmp_path / "ix"
    import_git_history(git_repo, indexes_dir=ix, embed=False)
    files = files_for_task(git_repo, "parser crash on empty file", 5, indexes_dir=ix)
    paths = [f.path for f in files]
    assert "src/config/parser.py" in paths
    assert "src/parser.py" not in paths
    moved = next(f for f in files if f.path == "src/config/parser.py")
    assert moved.exists is True


def test_not_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="not a git work tree"):
        import_git_history(tmp_path, indexes_dir=tmp_path / "ix", embed=False)


def test_empty_repository_imports_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    stats = import_git_history(repo, indexes_dir=tmp_path / "ix", embed=False)
    assert stats.read == 0 and stats.added == 0


def test_a_clone_lacking_some_file_contents_still_gives_its_history(tmp_path: Path) -> None:
    """Rename detection reads blobs; a partial clone or a snapshot without its largest
    files lacks some, and the history is read without renames instead of failing."""
    repo = tmp_path / "partial"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    body = "".join(f"line {n}\n" for n in range(40))
    commit(repo, {"data/big.txt": body}, "Add the data", "2024-01-01T10:00:00")
    (repo / "data" / "big.txt").rename(repo / "data" / "moved.txt")
    commit(repo, {"data/moved.txt": body + "one more\n"}, "Move and extend the data", "2024-01-02T10:00:00")
    blob = git(repo, "rev-parse", "HEAD~1:data/big.txt").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    history = read_git_history(repo)
    assert [t.title for t in history.tasks] == ["Move and extend the data", "Add the data"]
    assert any("renames not followed" in error for error in history.errors)


def test_a_folder_inside_a_work_tree_gets_its_own_history(tmp_path: Path, git_repo: Path) -> None:
    """A folder indexed on its own (``src/`` of a larger repository) gets the commits that
    changed it, its files named as they are indexed there, relative to the folder."""
    commit(git_repo, {"src/parser.py": "a = 3\n"}, "Parse empty values", "2022-04-01T10:00:00+00:00")
    history = read_git_history(git_repo / "src")
    assert [t.title for t in history.tasks] == [
        "Parse empty values", "Fix parser crash on empty file", "Add the config parser",
    ]
    assert history.tasks[1].files == ("parser.py",)  # its test file is outside the folder
    since = read_git_history(git_repo / "src", since=history.tasks[1].id)
    assert [t.title for t in since.tasks] == ["Parse empty values"]
    ix = tmp_path / "ix"
    import_git_history(git_repo / "src", indexes_dir=ix, embed=False)
    found = files_for_task(git_repo / "src", "parser crash on empty file", 5, indexes_dir=ix)
    assert [f.path for f in found][:1] == ["parser.py"] and found[0].exists is True


def test_a_deleted_file_is_never_listed_while_the_import_runs(
    at: IndexTarget, git_repo: Path, embedder: HashEmbedder
) -> None:
    """Tasks are searchable batch by batch, so the files that exist now are recorded
    first: else the first answers list files that a later commit deleted."""
    git(git_repo, "rm", "-q", "src/parser.py")
    git(git_repo, "commit", "-q", "-m", "Drop the config parser", date="2022-04-01T10:00:00+00:00")
    listed: list[list[str]] = []

    def peek(stage: str, done: int, total: int) -> None:
        if stage == "write":
            found = files_for_task(git_repo, "config parser crash", 5, **at.tasks_kw, embedder=embedder)
            listed.append([f.path for f in found])

    import_git_history(git_repo, **at.tasks_kw, embedder=embedder, on_progress=peek)
    assert listed and all("src/parser.py" not in paths for paths in listed)
