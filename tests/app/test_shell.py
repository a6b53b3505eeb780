"""Boot and shutdown: window first, engine in the background, idempotent staged quit,
the single-instance socket, and no heavy imports in the GUI process."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.app.fakes import FakeEngine
from tributary.app.instance import InstanceServer, send_command
from tributary.app.recent_queries import RecentQueries
from tributary.app.shell import Shell

ROOT = Path(__file__).resolve().parents[2]


def make_shell(engine: FakeEngine, *, delay: float = 0.0, single: bool = False) -> Shell:
    async def factory(_: Path | None) -> Any:
        await asyncio.sleep(delay)
        return engine

    return Shell(engine_factory=factory, single_instance=single, recent_queries=RecentQueries(None))


async def until(condition: Any, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


@pytest.mark.asyncio
async def test_window_shows_before_engine_and_shutdown_is_idempotent(qtbot: object) -> None:
    engine = FakeEngine()
    shell = make_shell(engine, delay=0.2)
    shell.start()
    assert shell.window.isVisible() and shell.engine is None
    await until(lambda: shell.engine is engine)
    assert shell.editor.draft is not None  # the editor got the config
    await asyncio.gather(shell.shutdown(), shell.shutdown())
    await shell.shutdown()
    assert engine.closed == 1
    assert not shell.window.isVisible()


@pytest.mark.asyncio
async def test_an_engine_that_refuses_to_start_shows_why(qtbot: object) -> None:
    from PySide6.QtWidgets import QApplication, QMessageBox

    from tributary.engine.config.errors import ConfigError, ConfigIssue

    async def factory(_: Path | None) -> Any:
        raise ConfigError([ConfigIssue(file="config.yaml", key_path="servers.git", line=3,
                                       message="no command")])

    shell = Shell(engine_factory=factory, single_instance=False, recent_queries=RecentQueries(None))
    shell.start()
    try:
        def dialogs() -> list[QMessageBox]:
            return [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]

        await until(lambda: bool(dialogs()))
        box = dialogs()[-1]
        assert box.windowTitle() == "The engine could not start"
        assert "config.yaml:3: servers.git: no command" in box.text()
        assert "ConfigError" not in box.text()
        box.close()
    finally:
        await shell.shutdown()


@pytest.mark.asyncio
async def test_a_refused_config_file_is_shown_until_mended_then_the_engine_starts(
        qtbot: object, tmp_path: Path) -> None:
    """The search page and Sources & routing say why the engine did not start instead of
    "starting" for ever; saving a mended file starts it, and a search typed meanwhile runs."""
    from PySide6.QtWidgets import QApplication, QMessageBox

    from tributary.engine.config.errors import ConfigError, ConfigIssue

    config = tmp_path / "config.yaml"
    config.write_text("servers:\n  git:\n    args: [x]\n", encoding="utf-8")
    engine = FakeEngine()
    opened: list[int] = []

    async def factory(_: Path | None) -> Any:
        opened.append(1)
        if len(opened) == 1:
            raise ConfigError([ConfigIssue(file=str(config), key_path="servers.git", line=2,
                                           message="a stdio server needs 'command'")])
        return engine

    shell = Shell(config_path=config, engine_factory=factory, single_instance=False,
                  recent_queries=RecentQueries(None))
    shell._config_poll.setInterval(20)
    shell.start()
    try:
        def dialogs() -> list[QMessageBox]:
            return [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]

        await until(lambda: bool(dialogs()))
        dialogs()[-1].close()
        page = shell.window.search
        assert page.empty.state == "engine-problem"
        assert "servers.git: a stdio server needs 'command'" in page.empty.body.text()
        assert "servers.git" in shell.editor.banner.text() and "Save here" not in shell.editor.banner.text()
        page.search("typed meanwhile")
        config.write_text("servers:\n  git:\n    command: git-mcp\n", encoding="utf-8")
        await until(lambda: shell.engine is engine, timeout=30.0)
        await until(lambda: "typed meanwhile" in engine.started, timeout=30.0)
        assert shell.editor.file_problem is None and not shell.editor.banner.text()
        assert page.empty.state != "engine-problem"
    finally:
        await shell.shutdown()


@pytest.mark.asyncio
async def test_quit_while_engine_starts_still_closes_it(qtbot: object) -> None:
    engine = FakeEngine()
    shell = make_shell(engine, delay=0.1)
    shell.start()
    await shell.shutdown()
    await asyncio.sleep(0.2)
    # The opening task was cancelled, so the engine was never handed over or leaked.
    assert shell.engine is None


@pytest.mark.asyncio
async def test_shutdown_cancels_running_search(qtbot: object) -> None:
    engine = FakeEngine(sources=["slow"], delay=lambda s, q: 5.0)
    shell = make_shell(engine)
    shell.start()
    await until(lambda: shell.engine is engine)
    shell.window.search.search("never answers")
    await until(lambda: engine.started == ["never answers"])
    await shell.shutdown()
    assert engine.cancelled == ["never answers"] and engine.closed == 1


@pytest.mark.asyncio
async def test_toggle_over_local_socket(qtbot: object) -> None:
    engine = FakeEngine()
    shell = make_shell(engine)
    server = InstanceServer(name=f"tributary-test-{id(shell)}")
    server.command.connect(shell.handle_command)
    assert server.listen()
    shell.start(show=False)
    assert not shell.window.isVisible()
    # A second process (as `tributary toggle` is) reaches this one.
    assert await client(server.name, "show") == "True"
    await until(lambda: shell.window.isVisible())
    assert await client(server.name, "toggle") == "True"
    await until(lambda: not shell.window.isVisible())
    server.close()
    assert send_command("show", name=server.name, timeout_ms=200) is False
    await shell.shutdown()


async def client(name: str, command: str) -> str:
    code = f"from tributary.app.instance import send_command; print(send_command({command!r}, name={name!r}))"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, cwd=ROOT, stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    return out.decode().strip()


def test_gui_process_does_not_import_torch() -> None:
    code = (
        "import os, sys; os.environ['QT_QPA_PLATFORM']='offscreen'\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "import tributary.app.main, tributary.app.shell\n"
        "from tributary.app.recent_queries import RecentQueries\n"
        "from tributary.app.shell import Shell\n"
        "shell = Shell(single_instance=False, recent_queries=RecentQueries(None))\n"
        "shell.window.show()\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "HEAVY []" in result.stdout


def test_engine_free_client_does_not_need_an_app() -> None:
    code = (
        "import sys\n"
        "from tributary.app.instance import send_command\n"
        "print('RUNNING', send_command('show', name='tributary-nobody-here', timeout_ms=100))\n"
        "print('QTWIDGETS', 'PySide6.QtWidgets' in sys.modules, 'tributary.engine.engine' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "RUNNING False" in result.stdout and "QTWIDGETS False False" in result.stdout


@pytest.mark.asyncio
async def test_cli_toggle_reaches_the_running_app(qtbot: object) -> None:
    """`tributary toggle` (tributary/engine/cli/gui_cmd.py) talks to this instance and exits."""
    shell = make_shell(FakeEngine(), single=True)  # listens on this TRIBUTARY_HOME's socket
    shell.start(show=False)
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tributary", "toggle", cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _, err = await process.communicate()
        assert process.returncode == 0, err.decode()
        await until(lambda: shell.window.isVisible())
    finally:
        await shell.shutdown()


@pytest.mark.asyncio
async def test_config_file_reloads_are_shown_and_refresh_an_unedited_editor(qtbot: object) -> None:
    import copy

    engine = FakeEngine()
    shell = make_shell(engine)
    shell.start()
    try:
        await until(lambda: shell.engine is engine)
        editor = shell.editor
        shell._config_reloaded(False, "config.yaml not applied; the running config stays in effect:\n"
                                      "  config.yaml:6: servers.b.timeout: must be a number")
        status = shell.window.message_text()
        assert "not applied" in status and "Sources & routing" in status
        # The problem, whole, stays on the editor's banner; saving over it asks first.
        assert not editor.banner.isHidden()
        assert "config.yaml:6: servers.b.timeout: must be a number" in editor.banner.text()
        assert editor.disk_changed
        changed = copy.deepcopy(engine.config)
        changed.fusion.top_k = 77
        engine.config = changed
        shell._config_reloaded(True, "config.yaml reloaded: 3 servers")
        assert editor.draft is not None and editor.draft.fusion.top_k == 77
        assert "reloaded" in shell.window.message_text()
        assert editor.banner.isHidden() and not editor.disk_changed  # fixed on disk
        # Under unsaved edits the editor keeps them and is told the file changed.
        editor.dirty = True
        editor.draft.fusion.top_k = 12
        again = copy.deepcopy(changed)
        again.fusion.top_k = 88
        engine.config = again
        shell._config_reloaded(True, "config.yaml reloaded: 3 servers")
        assert editor.draft.fusion.top_k == 12 and editor.disk_changed
    finally:
        await shell.shutdown()


@pytest.mark.asyncio
async def test_no_tray_is_said_once_where_it_stays(qtbot: object) -> None:
    """Without a system tray the sidebar says how to reach the quick query; the status
    bar, which other messages replace, does not repeat it."""
    shell = make_shell(FakeEngine())
    shell.window.set_tray_note("No system tray here, so Tributary stays a window.")
    assert not shell.window.tray_note.isHidden()
    assert "No system tray" in shell.window.tray_note.text()
    assert "No system tray" not in shell.window.message_text()
