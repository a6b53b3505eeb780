"""Automatic tool choice never calls a tool its server does not declare read-only.

A real subprocess server (the project's fake) offers a search tool next to tools named
like ``deletes_by_query``; ``tributary search`` and ``servers test`` must never call one
of those, and without a read-only search tool they call nothing and say why. The real
npm servers annotate their tools, so their read-only search tools are still chosen.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.fakes import FAKE_SERVER
from tests.sources.test_third_party import npm_server
from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SourceStatus
from tributary.engine.sources import SourcePool
from tributary.engine.sources.tools import NO_READ_ONLY

pytestmark = [pytest.mark.integration]
ROOT = Path(__file__).resolve().parents[2]
DANGEROUS = [
    {"name": "deletes_by_query", "description": "Deletes by query."},
    {"name": "erase_by_query", "readOnly": True},  # a wrong mark is vetoed by the name
    {"name": "wipe_query", "readOnly": True},
    {"name": "overwrite_query"},
    {"name": "query_rows", "description": "Execute a select query", "readOnly": True},
    # mcp-server-git's git_commit: no write verb, but marked as changing something.
    {"name": "git_commit", "description": "Records changes to the repository", "readOnly": False},
]


def _args(calls: Path, *, annotated_search: bool) -> list[str]:
    args = [str(FAKE_SERVER), "--name", "db", "--calls-file", str(calls)]
    if not annotated_search:  # its one harmless tool is no search tool, and says nothing
        args += ["--unannotated", "--tool", "list_tables"]
    for spec in DANGEROUS:
        args += ["--extra-tool", json.dumps(spec)]
    return args


def _run(home: Path, config: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tributary", "--config", str(config), *argv],
                          env=env, capture_output=True, text=True, timeout=120, check=False)


def _config(tmp_path: Path, calls: Path, *, annotated_search: bool) -> Path:
    path = tmp_path / "config.yaml"
    server = {"command": sys.executable, "args": _args(calls, annotated_search=annotated_search),
              "timeout": 20}
    path.write_text(yaml.safe_dump({"servers": {"db": server}}), encoding="utf-8")
    return path


def test_search_and_servers_test_call_no_tool_without_a_read_only_one(tmp_path: Path) -> None:
    calls = tmp_path / "calls.txt"
    config = _config(tmp_path, calls, annotated_search=False)
    searched = _run(tmp_path, config, "search", "drop everything")
    tested = _run(tmp_path, config, "servers", "test", "db", "--query", "drop everything")
    assert not calls.exists(), calls.read_text()
    assert NO_READ_ONLY in searched.stdout + searched.stderr
    assert NO_READ_ONLY in tested.stdout
    assert tested.stdout.startswith("server db: RUNS, NOT ASKED FOR SEARCHES\n") and tested.returncode == 1
    assert "deletes_by_query: not marked readOnlyHint" in tested.stdout
    assert "erase_by_query: named with the write verb 'erase'" in tested.stdout
    assert "query_rows: its description starts with the write verb 'execute'" in tested.stdout


def test_the_read_only_search_tool_is_the_one_called(tmp_path: Path) -> None:
    calls = tmp_path / "calls.txt"
    config = _config(tmp_path, calls, annotated_search=True)
    tested = _run(tmp_path, config, "servers", "test", "db", "--query", "drop everything")
    assert "query tool: search(query, top_k=top_k)" in tested.stdout, tested.stdout
    assert not calls.exists(), calls.read_text()


@pytest.mark.asyncio
@pytest.mark.parametrize(("tool", "says"), [
    # mcp-server-sqlite's ``write_query``: every search's text run as a statement
    ("overwrite_query", "named with the verb 'overwrite'"),
    # mcp-server-git's ``git_commit`` (``readOnlyHint: false``, no write verb in its name
    # or description): every search would commit what is staged, its text the message
    ("git_commit", "marked not read-only"),
])
async def test_a_tool_that_writes_is_not_called_even_when_the_config_names_it(
        tmp_path: Path, tool: str, says: str) -> None:
    calls = tmp_path / "calls.txt"
    server = ServerConfig(name="db", command=sys.executable, tool=tool,
                          args=_args(calls, annotated_search=False), timeout=20.0)
    pool = SourcePool([server])
    try:
        outcome = await pool.call("db", "on purpose", top_k=2, timeout=60)
    finally:
        await pool.aclose()
    assert outcome.status is not SourceStatus.OK and not calls.exists()
    assert outcome.error == (f"tool '{tool}' is never asked for searches: it is {says}, which may change "
                             "something, and every search would send it its text; name a tool that only reads")


@pytest.mark.asyncio
async def test_npm_servers_annotate_their_read_only_tools(tmp_path: Path) -> None:
    memory = ServerConfig(name="memory", command="node", args=[str(npm_server("server-memory"))],
                          env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}, timeout=10.0)
    files = ServerConfig(name="files", command="node",
                         args=[str(npm_server("server-filesystem")), str(tmp_path)],
                         timeout=10.0)
    pool = SourcePool([memory, files])
    try:
        states = await pool.warm_up(timeout=60)
        # server-memory marks search_nodes read-only (and its delete_* tools destructive)
        assert (states["memory"].tool or "").startswith("search_nodes(query")
        # what the app offers to name as the search tool: none that writes
        sendable = set(states["memory"].sendable)
        assert "search_nodes" in sendable and sendable < set(states["memory"].tools)
        assert not any(name.startswith(("delete_", "create_", "add_")) for name in sendable), sendable
        # server-filesystem's search_files is read-only but needs a path: chosen explicitly
        assert states["files"].tool is None
        assert NO_READ_ONLY not in (states["files"].tool_error or "")
    finally:
        await pool.aclose()
