"""The ``tributary eval`` commands that need no index: build, docstrings, latest."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tests.eval.gitrepo import Repo
from tributary.engine.cli import eval_cmd
from tributary.engine.eval.datasets import load_dataset


def main(argv: list[str]) -> int:
    """The ``tributary`` parser with only the eval commands (the others are not under test)."""
    parser = argparse.ArgumentParser(prog="tributary")
    parser.add_argument("--config")
    eval_cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    status: int = args.func(args)
    return status


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_eval_build_from_git(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit("Create the core module", "2024-02-01T00:00:00+00:00", {"core.py": "A = 1\n"})
    repo.commit("Handle empty values in core", "2024-02-03T00:00:00+00:00", {"core.py": "A = 2\n"})
    status = main(["eval", "build", "--repo", str(repo.path), "--split-at", "HEAD~1",
                   "--out", str(tmp_path / "ds"), "--ext", "py"])
    assert status == 0
    assert "1 tasks" in capsys.readouterr().out
    dataset = load_dataset(tmp_path / "ds")
    assert [q.query for q in dataset.queries] == ["Handle empty values in core"]


def test_eval_build_reports_a_bad_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit("Create the core module", "2024-02-01T00:00:00+00:00", {"core.py": "A = 1\n"})
    assert main(["eval", "build", "--repo", str(repo.path), "--split-at", "nope",
                 "--out", str(tmp_path / "ds")]) == 1
    assert "rev-parse" in capsys.readouterr().err


def test_eval_docstrings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text('def f(x):\n    """Double the given number quickly."""\n    y = x\n    z = y * 2\n    return z\n')
    assert main(["eval", "docstrings", "--corpus", str(src), "--out", str(tmp_path / "ds")]) == 0
    assert "1 queries" in capsys.readouterr().out


def test_eval_latest(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "latest"]) == 1
    latest = home / "data" / "eval" / "latest"
    latest.mkdir(parents=True)
    (latest / "report.md").write_text("# r\n")
    assert main(["eval", "latest"]) == 0
    assert capsys.readouterr().out.strip() == str(latest / "report.md")
