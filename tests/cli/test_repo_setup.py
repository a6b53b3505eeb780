"""``--repo`` indexes on first use, and imports history only when the tasks source is asked."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from engine.cli.repo_setup import ensure_repo_indexed, wants_history
from engine.tasks.api import tasks_db_path


@pytest.mark.parametrize(
    ("sources", "wanted"),
    [(None, True), ("files,tasks", True), ("tasks", True), ("files", False), ("files, memory", False)],
)
def test_history_is_wanted_only_with_the_tasks_source(sources: str | None, wanted: bool) -> None:
    assert wants_history(argparse.Namespace(sources=sources)) is wanted


def test_files_only_indexes_code_and_imports_no_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    for args in (["init", "-q"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "Add the app"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    assert ensure_repo_indexed(repo, history=False) == 0
    assert not tasks_db_path(repo).exists()
    assert ensure_repo_indexed(repo) == 0
    assert tasks_db_path(repo).exists()
