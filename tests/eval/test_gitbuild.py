"""Building a dataset from a small git repository's history."""

from __future__ import annotations

from pathlib import Path

from tests.eval.gitrepo import Repo
from tributary.engine.eval.datasets import load_dataset
from tributary.engine.eval.gitbuild import build_from_git, is_boilerplate


def _history(tmp_path: Path) -> tuple[Repo, str]:
    repo = Repo(tmp_path / "repo")
    repo.commit("Add the parser module", "2024-01-01T10:00:00+00:00",
                {"pkg/parser.py": "def parse():\n    pass\n", "README.md": "hi\n"})
    repo.commit("Add the lexer for tokens", "2024-01-02T10:00:00+00:00",
                {"pkg/lexer.py": "def lex():\n    pass\n"})
    # Dated after the split although committed before it: must not become a task.
    repo.commit("Tweak lexer from the future", "2024-03-01T10:00:00+00:00",
                {"pkg/lexer.py": "def lex():\n    return 1\n"})
    split = repo.commit("Add config loading helpers", "2024-01-05T10:00:00+00:00",
                        {"pkg/config.py": "X = 1\n"})
    repo.git("tag", "v1")
    repo.commit("Fix parser crash on empty input", "2024-01-10T10:00:00+00:00",
                {"pkg/parser.py": "def parse():\n    return []\n"})
    repo.commit("Bump version to 1.1", "2024-01-11T10:00:00+00:00", {"pkg/config.py": "X = 2\n"})
    repo.commit("Add a brand new module for caching", "2024-01-12T10:00:00+00:00",
                {"pkg/cache.py": "C = {}\n"})  # only a file that did not exist at the split
    repo.commit("Update the readme wording", "2024-01-13T10:00:00+00:00", {"README.md": "hello\n"})
    repo.commit("Teach lexer and parser about comments", "2024-01-14T10:00:00+00:00",
                {"pkg/lexer.py": "def lex():\n    return 2\n", "pkg/parser.py": "def parse():\n    return 2\n",
                 "docs.md": "comments\n"})
    repo.commit("Rebased fix dated before the split", "2024-01-04T10:00:00+00:00",
                {"pkg/parser.py": "def parse():\n    return 3\n"})
    return repo, split


def test_split_tasks_before_queries_after(tmp_path: Path) -> None:
    repo, split = _history(tmp_path)
    report = build_from_git(repo.path, "v1", tmp_path / "out")
    assert report.commit == split
    dataset = load_dataset(tmp_path / "out")
    assert dataset.corpus["git"] == str(repo.path.resolve())
    assert dataset.corpus["snapshot_commit"] == split

    tasks = list(dataset.tasks())
    assert [t.title for t in tasks] == ["Add config loading helpers", "Add the lexer for tokens",
                                        "Add the parser module"]
    assert tasks[-1].files == ("README.md", "pkg/parser.py")

    by_text = {q.query.partition("\n")[0]: q for q in dataset.queries}
    assert set(by_text) == {"Fix parser crash on empty input", "Teach lexer and parser about comments"}
    assert list(by_text["Teach lexer and parser about comments"].relevant) == ["pkg/lexer.py", "pkg/parser.py"]
    # Each query carries the split's lines its commit changed (the body line of parse()).
    assert [(s.path, s.start_line, s.end_line) for s in by_text["Fix parser crash on empty input"].spans] == [
        ("pkg/parser.py", 2, 2)]
    assert max(t.date for t in tasks) < min(q.date for q in dataset.queries if q.date)
    assert report.dropped["task dated after the split"] == 1
    assert report.dropped["query dated before the split"] == 1
    assert report.dropped["boilerplate message"] == 1
    assert report.dropped["not 1-6 source files existing at the split"] == 2


def test_temporary_worktree_is_removed(tmp_path: Path) -> None:
    repo, _split = _history(tmp_path)
    build_from_git(repo.path, "v1", tmp_path / "out")
    assert len(repo.git("worktree", "list").splitlines()) == 1
    assert repo.git("status", "--porcelain") == ""


def test_max_queries_samples_deterministically(tmp_path: Path) -> None:
    repo, _split = _history(tmp_path)
    a = build_from_git(repo.path, "v1", tmp_path / "a", max_queries=1)
    build_from_git(repo.path, "v1", tmp_path / "b", max_queries=1)
    assert a.queries == 1
    assert (tmp_path / "a" / "queries.jsonl").read_text() == (tmp_path / "b" / "queries.jsonl").read_text()


def test_boilerplate_messages() -> None:
    for message in ("Merge pull request #1 from x/y", "Bump version to 2.0", "Release 8.0.0",
                    "[pre-commit.ci] pre-commit autoupdate", "Fix typo", "black", "two words"):
        assert is_boilerplate(message), message
    for message in ("Fix crash when the config file is empty", "Add --json flag to search"):
        assert not is_boilerplate(message), message
