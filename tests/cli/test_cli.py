"""The ``tributary`` command line, run as a user runs it: a subprocess, real servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes import FAKE_SERVER

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration  # every test runs the command in a new process


def tributary(
    *args: str, home: Path, timeout: float = 90, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "tributary", *args], capture_output=True, text=True,
        env=env, cwd=ROOT, timeout=timeout, check=False, input=stdin,
    )


def write_config(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def fake(name: str, *args: str) -> str:
    quoted = ", ".join(json.dumps(a) for a in [str(FAKE_SERVER), "--name", name, *args])
    return f"  {name}:\n    command: {json.dumps(sys.executable)}\n    args: [{quoted}]\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_search_prints_a_ranked_table_and_every_source_status(home: Path) -> None:
    config = write_config(home, "servers:\n" + fake("alpha", "--hits", "3")
                          + fake("broken", "--mode", "error"))
    result = tributary("--config", str(config), "search", "retry logic", home=home)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "src/alpha/mod_1.py:11-19" in out
    assert "alpha: ok" in out and "3 hits" in out
    assert "broken: ERROR" in out


def test_search_json_is_machine_readable_with_score_parts(home: Path) -> None:
    config = write_config(home, "servers:\n" + fake("alpha", "--hits", "3"))
    result = tributary("--config", str(config), "search", "--json", "retry", home=home)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [h["path"] for h in data["hits"]] == [f"src/alpha/mod_{i}.py" for i in (1, 2, 3)]
    assert all(h["parts"]["parts"] for h in data["hits"])
    assert data["confident"] is True  # every hit holds the query's word
    assert all(0.0 < h["confidence"] <= 1.0 for h in data["hits"])
    assert data["sources"][0]["status"] == "ok"


def test_search_says_when_no_result_is_confident(home: Path) -> None:
    config = write_config(home, "servers:\n" + fake("alpha", "--hits", "3", "--content",
                                                   "def unrelated():\n    return 42\n"))
    shown = tributary("--config", str(config), "search", "qwzxv frobnicator zzyzx", home=home)
    assert shown.returncode == 0, shown.stderr
    assert "no confident results" in shown.stdout
    data = json.loads(tributary("--config", str(config), "search", "--json", "qwzxv frobnicator zzyzx",
                                home=home).stdout)
    assert data["confident"] is False and 0.0 <= data["confidence"] < 0.2
    assert all(0.0 <= h["confidence"] <= 1.0 for h in data["hits"])
    context = tributary("--config", str(config), "context", "qwzxv frobnicator zzyzx", home=home)
    assert context.returncode == 0, context.stderr
    assert context.stdout.startswith("Nothing relevant found")
    assert "def unrelated" not in context.stdout


def test_search_exits_non_zero_when_every_source_fails(home: Path) -> None:
    config = write_config(home, "servers:\n" + fake("broken", "--mode", "error"))
    result = tributary("--config", str(config), "search", "anything", home=home)
    assert result.returncode == 1
    assert "all 1 sources failed" in result.stdout


def test_top_k_outside_the_range_is_refused(home: Path) -> None:
    result = tributary("search", "--top-k", "500", "q", home=home)
    assert result.returncode == 2
    assert "must be from 10 to 100" in result.stderr


def test_a_token_budget_outside_the_range_is_refused(home: Path) -> None:
    """A negative budget was reported as the reserved tokens' fault."""
    result = tributary("context", "--max-tokens", "-5", "q", home=home)
    assert result.returncode == 2
    assert "argument --max-tokens: must be from 1 to 200000, got -5" in result.stderr
    assert "--reserved-tokens" not in result.stderr.split("error:")[-1]


def test_context_prints_assembled_context_within_budget(home: Path) -> None:
    config = write_config(home, "servers:\n" + fake("alpha", "--hits", "5"))
    result = tributary("--config", str(config), "context", "retry", "--max-tokens", "600",
                       "--reserved-tokens", "100", "--format", "xml", home=home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.lstrip().startswith("<context")
    assert 'source="alpha"' in result.stdout
    tokens_line = [line for line in result.stderr.splitlines() if " of 500 tokens" in line]
    assert tokens_line, result.stderr
    assert int(tokens_line[0].split()[0]) <= 500


def test_context_reads_an_issue_piped_in_for_a_dash(home: Path) -> None:
    """``gh issue view 42 | tributary context -``: the whole issue is the question."""
    config = write_config(home, "servers:\n" + fake("alpha", "--hits", "5"))
    issue = ("Retry gives up after the first timeout\n\nWith `retries=3` the client stops at once:\n\n"
             "```\nTraceback (most recent call last):\n  File \"client/retry.py\", line 42, in send\n"
             "    raise TimeoutError(\"gave up\")\nTimeoutError: gave up\n```\n" + "It should back off. " * 40)
    result = tributary("--config", str(config), "context", "-", "--format", "xml", home=home, stdin=issue)
    assert result.returncode == 0, result.stderr
    assert 'source="alpha"' in result.stdout
    assert f"read as a task ({len(issue):,} characters)" in result.stderr


def test_config_validate_names_file_key_and_line(home: Path) -> None:
    config = write_config(home, "servers:\n  git:\n    command: git\n    timeout: -1\n")
    result = tributary("config", "validate", str(config), home=home)
    assert result.returncode == 1
    assert f"{config}:4" in result.stdout
    assert "servers.git.timeout" in result.stdout


def test_config_import_adds_claude_desktop_servers_and_keeps_a_backup(home: Path) -> None:
    config = write_config(home, "servers:\n" + fake("alpha"))
    claude = home / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "."]},
    }}), encoding="utf-8")
    result = tributary("--config", str(config), "config", "import", str(claude), home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "+ git (stdio): uvx mcp-server-git --repository ." in result.stdout
    listing = tributary("--config", str(config), "servers", "list", home=home)
    assert "git" in listing.stdout and "alpha" in listing.stdout
    assert (home / "config.yaml.bak").exists()


def test_servers_test_shows_tools_probe_and_latency(home: Path) -> None:
    config = write_config(home, "servers:\n" + fake("alpha", "--hits", "2"))
    result = tributary("--config", str(config), "servers", "test", "alpha", home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "server alpha: OK" in result.stdout
    assert "search —" in result.stdout
    assert "2 hits in" in result.stdout


def test_servers_test_unknown_name(home: Path) -> None:
    result = tributary("servers", "test", "nope", home=home)
    assert result.returncode == 1
    assert "no server named 'nope'" in result.stderr


def test_only_the_named_command_is_imported_and_help_still_lists_all(
        capsys: pytest.CaptureFixture[str]) -> None:
    from tributary.engine.cli.main import build_parser, main, named_command

    assert named_command(["--config", "c.yaml", "search", "q"]) == "tributary.engine.cli.search_cmd"
    assert named_command(["index", "add", "."]) == "tributary.engine.cli.index_cmd"
    assert named_command(["toggle"]) is None and named_command(["-h"]) is None
    assert named_command(["--config", "search"]) is None  # "search" is the config file here
    only = build_parser("tributary.engine.cli.search_cmd")
    assert only.parse_args(["search", "retry"]).query == "retry"
    with pytest.raises(SystemExit):
        main(["no-such-command"])
    err = capsys.readouterr().err
    assert "invalid choice" in err and "servers" in err  # every command offered
