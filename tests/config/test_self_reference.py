"""Tributary never becomes its own source: not by import, not at start, not behind a wrapper."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tributary.engine.config.importer import import_mcp_servers, merge_imported
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.config.selfref import ITSELF, PARENT_VARIABLE, self_reference
from tributary.engine.model import SourceStatus
from tributary.engine.repos.builtins import builtin_server
from tributary.engine.sources import Backoff, ServerStatus, SourcePool

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("command", "args"), [
    ("tributary", ["serve"]),
    ("/opt/tools/bin/tributary", ["--config", "x.yaml", "serve"]),
    ("C:\\Tools\\Tributary.exe", ["serve"]),
    ("python3", ["-m", "tributary", "serve"]),
    (sys.executable, ["-m", "tributary.engine.cli.main", "serve"]),
    ("uvx", ["tributary", "serve"]),
    ("sh", ["-c", "exec tributary serve"]),
])
def test_tributary_commands_are_recognised(command: str, args: list[str]) -> None:
    reason = self_reference(ServerConfig(name="t", command=command, args=args))
    assert reason is not None and reason.startswith(ITSELF)


@pytest.mark.parametrize(("command", "args"), [
    ("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/tributary"]),
    ("python3", ["-m", "tributary_lookalike"]),
    ("node", ["tributary.js"]),
])
def test_other_servers_pass(command: str, args: list[str]) -> None:
    assert self_reference(ServerConfig(name="o", command=command, args=args)) is None


def test_builtin_servers_are_not_tributary_itself(tmp_path: Path) -> None:
    assert self_reference(builtin_server("files", tmp_path)) is None
    assert self_reference(ServerConfig(name="b", command="tributary",
                                       args=["_run", "tributary.engine.servers.files"])) is None


def test_import_skips_tributary_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {
        "tributary": {"command": "tributary", "args": ["serve"]},
        "context": {"command": sys.executable, "args": ["-m", "tributary", "serve"]},
        "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    }}), encoding="utf-8")
    result = import_mcp_servers(path)
    assert [s.name for s in result.servers] == ["memory"]
    skipped = [w for w in result.warnings if ITSELF in w]
    assert len(skipped) == 2 and skipped[0].startswith("skipped 'tributary'")
    merged = merge_imported(Config(), [ServerConfig(name="t", command="tributary", args=["serve"])])
    assert merged.servers == {}


@pytest.mark.asyncio
@pytest.mark.integration
async def test_a_tributary_source_errors_and_never_spawns(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    fake = tmp_path / "tributary"
    fake.write_text(f"#!/bin/sh\ntouch {ran}\n", encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    pool = SourcePool([ServerConfig(name="self", command=str(fake), args=["serve"], timeout=5.0)],
                      backoff=Backoff(initial_s=0.01))
    try:
        outcome = await pool.call("self", "anything", top_k=2)
        assert outcome.status is SourceStatus.ERROR
        assert outcome.error is not None and outcome.error.startswith(ITSELF)
        state = pool.state("self")
        assert state.status is ServerStatus.STOPPED and state.restarts == 0
    finally:
        await pool.aclose()
    assert not ran.exists()


@pytest.mark.integration
def test_serve_refuses_to_run_as_a_tributary_source(tmp_path: Path) -> None:
    env = {**os.environ, "TRIBUTARY_HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
           PARENT_VARIABLE: "12345"}
    done = subprocess.run([sys.executable, "-m", "tributary", "serve"], env=env, input="",
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert ITSELF in done.stderr and "12345" in done.stderr


@pytest.mark.asyncio
@pytest.mark.integration
@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script")
async def test_tributary_behind_a_wrapper_script_refuses(tmp_path: Path) -> None:
    wrapper = tmp_path / "context-server"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -m tributary serve\n", encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    config = ServerConfig(name="wrapped", command=str(wrapper), timeout=30.0,
                          env={"PYTHONPATH": str(ROOT), "TRIBUTARY_HOME": str(tmp_path)})
    assert self_reference(config) is None  # only the child can tell
    pool = SourcePool([config], backoff=Backoff(initial_s=30.0))
    try:
        outcome = await pool.call("wrapped", "anything", top_k=2)
        assert outcome.status is SourceStatus.ERROR
        assert outcome.error is not None and ITSELF in outcome.error, outcome.error
    finally:
        await pool.aclose()
