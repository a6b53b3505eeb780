"""Drive every surface of the desktop app and save PNGs to out/screenshots/.

Runs under Xvfb (re-executing itself through ``xvfb-run`` when there is no display):

    .venv/bin/python scripts/screenshots.py [--engine real|fake] [--dark]

``--engine real`` (the default when ``engine.engine`` exists) starts the real engine
with its built-in servers over a small fixture repository in a temporary
TRIBUTARY_HOME; ``fake`` uses the test double from tests/app (for UI work while the
engine is incomplete).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "screenshots"
sys.path.insert(0, str(ROOT))


def ensure_display() -> None:
    if os.environ.get("DISPLAY") or os.environ.get("TRIBUTARY_SHOTS_CHILD"):
        return
    xvfb = shutil.which("xvfb-run")
    if xvfb is None:
        sys.exit("needs an X display or xvfb-run (apt-get install -y xvfb)")
    env = dict(os.environ, TRIBUTARY_SHOTS_CHILD="1", QT_QPA_PLATFORM="xcb")
    command = [xvfb, "-a", "-s", "-screen 0 1400x900x24", sys.executable, *sys.argv]
    sys.exit(subprocess.call(command, env=env))


async def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.05)


async def settle(seconds: float = 0.3) -> None:
    await asyncio.sleep(seconds)


def save(widget: Any, name: str) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.png"
    widget.grab().save(str(path))
    print("saved", path.relative_to(ROOT))
    return path


async def type_into(edit: Any, text: str) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    for char in text:
        QTest.keyClick(edit, char if char != " " else Qt.Key.Key_Space)
        await asyncio.sleep(0.03)


def fake_factory() -> Callable[[Path | None], Any]:
    from tests.app.fakes import FakeEngine

    delays = {"files": 0.05, "tasks": 0.12, "git": 0.2, "docs": 0.3}

    async def factory(_: Path | None) -> Any:
        engine = FakeEngine(sources=list(delays), delay=lambda s, q: delays[s], failing={"docs": "timed out after 3.0 s"})
        return engine

    return factory


def real_factory(workdir: Path) -> Callable[[Path | None], Any]:
    from app.engine_api import open_engine

    async def factory(_: Path | None) -> Any:
        return await open_engine(None)

    os.environ["TRIBUTARY_HOME"] = str(workdir / "home")
    return factory


async def drive(args: argparse.Namespace) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from app import theme
    from app.history import QueryHistory
    from app.shell import Shell

    app = QApplication.instance()
    workdir = Path(tempfile.mkdtemp(prefix="tributary-shots-"))
    os.environ.setdefault("TRIBUTARY_HOME", str(workdir / "home"))
    use_real = args.engine == "real" or (
        args.engine == "auto" and importlib.util.find_spec("engine.engine") is not None)
    factory = real_factory(workdir) if use_real else fake_factory()
    print("engine:", "real" if use_real else "fake")
    history = QueryHistory(None)
    for q in ("how are fixtures scoped", "parametrize ids", "tmp_path factory"):
        history.add(q)
    shell = Shell(engine_factory=factory, single_instance=False, history=history)
    window = shell.window
    window.resize(1320, 820)
    shell.start()
    await until(lambda: shell.engine is not None)
    await settle(0.5)
    suffix = "-dark" if args.dark else ""

    page = window.search
    await type_into(page.query, "fixture scope")
    await until(lambda: page.controller.final)
    await settle()
    tree = page.tree
    model = page.model
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        if model.rowCount(index):
            tree.expand(index)
            tree.setCurrentIndex(index)
            break
    await settle()
    save(window, f"01-search{suffix}")
    page.tabs.setCurrentIndex(1)
    await settle()
    save(window, f"02-context{suffix}")
    page.tabs.setCurrentIndex(0)

    name = next(iter(page.strip.chips))
    page.strip.chips[name].click()
    await settle()
    log = page._logs[name]
    save(log, f"03-server-log{suffix}")
    log.close()

    window.show_page(shell.editor)
    await settle()
    save(window, f"04-servers{suffix}")
    shell.editor.servers.test_connection()
    await until(lambda: shell.editor.servers.test_details.isVisible(), 60)
    await settle()
    save(window, f"05-server-test{suffix}")

    editor = shell.editor
    editor.tabs.setCurrentIndex(1)
    rules = editor.rules
    if rules.list.count():
        rules.list.setCurrentRow(0)
    else:
        rules.add_rule()
    rules.pattern.setFocus()
    rules.pattern.setText("")
    await type_into(rules.pattern, r"def (\w+")
    rules.sample.setText("def test_fixture_scope")
    rules.run_test()
    await settle(0.4)
    save(window, f"06-rules-invalid{suffix}")
    QTest.keyClick(rules.pattern, Qt.Key.Key_End)
    QTest.keyClick(rules.pattern, ")")
    await settle(0.4)
    rules.run_test()
    save(window, f"07-rules-tester{suffix}")
    editor.revert()
    editor.tabs.setCurrentIndex(2)
    await settle()
    save(window, f"08-ranking{suffix}")

    window.show_page(shell.indexes)
    await settle()
    save(window, f"09-indexes{suffix}")

    popup = shell.popup
    popup.popup()
    await type_into(popup.query, "parametrize")
    await until(lambda: popup.controller.final)
    await settle()
    save(popup, f"10-quick-popup{suffix}")
    popup.hide()

    await shell.shutdown()
    app.quit()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", choices=["auto", "real", "fake"], default="auto")
    parser.add_argument("--dark", action="store_true", help="dark palette")
    args = parser.parse_args()
    ensure_display()
    import qasync
    from PySide6.QtWidgets import QApplication

    from app import theme

    app = QApplication(sys.argv[:1])
    theme.apply(app, dark=args.dark)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(drive(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
