"""Tributary's own subprocesses: ``python -m`` from an installation, the bundle's own
executable when frozen (which has no Python to run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tributary.engine.repos.builtins import builtin_server
from tributary.engine.runtime.spawn import module_command

ROOT = Path(__file__).resolve().parents[2]


def test_modules_run_with_python_m_from_an_installation(tmp_path: Path) -> None:
    assert module_command("tributary.engine.servers.files", "--x") == [
        sys.executable, "-m", "tributary.engine.servers.files", "--x"]
    server = builtin_server("tasks", tmp_path)
    assert [server.command, *server.args] == [
        sys.executable, "-m", "tributary.engine.servers.tasks", "--index-dir", str(tmp_path)]
    assert "PYTHONPATH" in server.env


def test_a_frozen_bundle_runs_them_through_its_own_executable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setenv("TRIBUTARY_MODEL_CACHE", str(tmp_path / "models"))
    assert module_command("tributary.app.index_worker", "p") == [sys.executable, "_run", "tributary.app.index_worker", "p"]
    server = builtin_server("files", tmp_path)
    assert [server.command, *server.args] == [
        sys.executable, "_run", "tributary.engine.servers.files", "--index-dir", str(tmp_path)]
    assert server.env == {"TRIBUTARY_MODEL_CACHE": str(tmp_path / "models")}


def test_only_our_own_modules_can_be_run() -> None:
    with pytest.raises(ValueError, match="not one of the modules"):
        module_command("os", "-c")
    result = subprocess.run(
        [sys.executable, "-m", "tributary", "_run", "http.server"], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=60, check=False)
    assert result.returncode == 2 and "expected one of" in result.stderr


def test_run_starts_the_module_as_python_m_would() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tributary", "_run", "tributary.engine.servers.tasks"], capture_output=True,
        text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=60, check=False)
    assert result.returncode == 2
    assert "tasks server: no task database given" in result.stderr


@pytest.mark.asyncio
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper is Linux's")
async def test_a_frozen_bundle_runs_the_reaper_through_its_own_executable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tributary.engine.sources import stdio

    seen: list[list[str]] = []

    async def record(argv: list[str], **_kw: object) -> None:
        seen.append(argv)

    monkeypatch.setattr(stdio.anyio, "open_process", record)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    await stdio._spawn("true", ["--x"], {"PATH": os.defpath}, None, sys.stderr)
    assert seen[-1][:3] == [sys.executable, "_run", "tributary.engine.sources.reaper"]
    assert os.path.basename(seen[-1][-2]) == "true" and seen[-1][-1] == "--x"
    monkeypatch.setattr(sys, "frozen", False)
    await stdio._spawn("true", [], {"PATH": os.defpath}, None, sys.stderr)
    assert seen[-1][:4] == [sys.executable, "-I", "-S", stdio._REAPER]
