"""``tributary tasks``: import, search (tasks and files) and stats from the command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tributary.engine.cli import tasks_cmd


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="tributary")
    tasks_cmd.register(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    status: int = args.func(args)
    return status


def test_import_search_and_stats(
    tmp_path: Path, git_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ix = str(tmp_path / "ix")
    assert _run("tasks", "import", "--repo", str(git_repo), "--no-embed", "--index-dir", ix) == 0
    out, err = capsys.readouterr()
    assert "git: read 3, added 3" in out
    assert err.splitlines()[-1] == "writing tasks: 3 written" and "\r" not in err  # a log's lines
    assert _run("tasks", "search", "--repo", str(git_repo), "--index-dir", ix, "--json",
                "parser crash") == 0  # fmt: skip
    tasks = json.loads(capsys.readouterr().out)
    assert tasks[0]["title"] == "Fix parser crash on empty file"
    assert _run("tasks", "search", "--repo", str(git_repo), "--index-dir", ix, "--files",
                "parser crash") == 0  # fmt: skip
    assert "src/parser.py" in capsys.readouterr().out
    assert _run("tasks", "stats", "--repo", str(git_repo), "--index-dir", ix, "--json") == 0
    assert json.loads(capsys.readouterr().out)["tasks"] == 3


def test_jsonl_import_reports_bad_lines(
    tmp_path: Path, repo_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "export.jsonl"
    source.write_text('{"id": "1", "date": "2020-01-01", "title": "ok"}\nnot json\n')
    assert _run("tasks", "import", "--repo", str(repo_dir), "--jsonl", str(source), "--no-embed",
                "--index-dir", str(tmp_path / "ix")) == 0  # fmt: skip
    out, err = capsys.readouterr()
    assert "added 1" in out and "skipped 1" in out
    assert f"{source}:2: invalid JSON" in err


def test_search_without_import_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("tasks", "search", "--repo", str(tmp_path), "--index-dir", str(tmp_path / "ix"),
                "anything") == 1  # fmt: skip
    assert "tributary tasks import" in capsys.readouterr().err
