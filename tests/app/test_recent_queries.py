"""The query box's recent queries: kept newest first, in their own file."""

from __future__ import annotations

import json
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
