"""Open in editor: absolute paths from the index root, and each editor's line syntax."""

from __future__ import annotations

from pathlib import Path

import pytest

from tributary.app import open_file
from tributary.engine.model import Hit


def _hit(path: str, **metadata: object) -> Hit:
    return Hit(id=path, source="files", tool="search_code", title=path, content="x", path=path,
               start_line=12, metadata=dict(metadata))


@pytest.mark.parametrize(("command", "expected"), [
    ("code", ["code", "-g", "/r/a.py:12"]),
    ("cursor --reuse-window", ["cursor", "--reuse-window", "-g", "/r/a.py:12"]),
    ("pycharm", ["pycharm", "--line", "12", "/r/a.py"]),
    ("/opt/idea/bin/idea.sh", ["/opt/idea/bin/idea.sh", "--line", "12", "/r/a.py"]),
    ("emacsclient -n", ["emacsclient", "-n", "+12", "/r/a.py"]),
    ("subl", ["subl", "/r/a.py:12"]),
    ("myeditor --goto {path}@{line}", ["myeditor", "--goto", "/r/a.py@12"]),
    ("gedit", ["gedit", "+12", "/r/a.py"]),
    ("unknown-editor", ["unknown-editor", "/r/a.py"]),
])
def test_editor_line_syntax(command: str, expected: list[str]) -> None:
    assert open_file.editor_argv(command, Path("/r/a.py"), 12, terminal="") == expected


def test_terminal_editors_run_in_a_terminal() -> None:
    argv = open_file.editor_argv("nvim", Path("/r/a.py"), 3, terminal="xterm")
    assert argv == ["xterm", "-e", "nvim", "+3", "/r/a.py"]


def test_setting_then_visual_then_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"EDITOR": "nano", "VISUAL": "code"}
    assert open_file.editor_setting(env) == "code"
    assert open_file.editor_setting({"EDITOR": "nano"}) == "nano"
    open_file.save_editor_command("pycharm")
    assert open_file.editor_setting(env) == "pycharm"
    open_file.save_editor_command("")
    assert open_file.editor_setting({}) is None


def test_relative_paths_become_absolute_under_their_index_root(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "checkout"
    (root / "engine").mkdir(parents=True)
    (root / "engine/base.py").write_text("x")
    monkeypatch.setattr(open_file, "index_roots", lambda: {"repo": root})
    assert open_file.local_file(_hit("engine/base.py", repo="repo")) == root / "engine/base.py"
    # Without the index's name: the index whose folder holds the file.
    assert open_file.local_file(_hit("engine/base.py")) == root / "engine/base.py"
    assert open_file.local_file(_hit("nowhere.py")) is None
    assert open_file.local_file(_hit(str(tmp_path / "abs.py"))) == tmp_path / "abs.py"
