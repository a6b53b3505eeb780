"""Fixtures of the command-line tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def attach_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Tributary home and a private runtime folder of the test's own, so the attach
    socket of any engine the test starts is that test's alone."""
    home = tmp_path / "home"
    monkeypatch.setenv("TRIBUTARY_HOME", str(home))
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return home
