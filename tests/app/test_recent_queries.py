"""The query box's recent queries: kept newest first, in their own file."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tributary.app.recent_queries import RecentQueries, default_path


def test_recent_queries_move_from_their_old_file_name_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``gui-history.json`` (named before "history" meant the task history alone) becomes
    ``recent-queries.json`` with what it held; later saves go to the new file."""
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path))
    data = tmp_path / "data"
    data.mkdir()
    (data / "gui-history.json").write_text(json.dumps(["retry loop", "fuse"]), encoding="utf-8")
    recent = RecentQueries(default_path())
    assert recent.items == ["retry loop", "fuse"]
    recent.add("token budget")
    assert json.loads((data / "recent-queries.json").read_text(encoding="utf-8"))[0] == "token budget"
    assert not (data / "gui-history.json").exists()


def test_the_recent_queries_and_editor_setting_are_the_users_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What was asked may quote private code: with a permissive umask, the file (and the
    editor setting saved beside the config) is still 0600."""
    from tributary.app.open_file import save_editor_command, settings_path

    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path))
    old = os.umask(0o022)
    try:
        recent = RecentQueries(default_path())
        recent.add("why does the token refresh fail")
        recent.add("retry loop")
        save_editor_command("code --goto")
    finally:
        os.umask(old)
    for path in (default_path(), settings_path()):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert RecentQueries(default_path()).items == ["retry loop", "why does the token refresh fail"]
    assert json.loads(settings_path().read_text(encoding="utf-8"))["editor"] == "code --goto"
    assert sorted(p.name for p in tmp_path.rglob("*.tmp")) == []
