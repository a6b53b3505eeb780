"""Drive every surface of the desktop app and save PNGs to out/screenshots/.

Runs under an X server (re-executing itself through ``xvfb-run`` when there is no
display; a real one with a window manager is better, e.g. ``Xvfb :7 -screen 0
1024x640x24 & DISPLAY=:7 openbox &``):

    DISPLAY=:7 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/screenshots.py [--size 1024x640] [--dark]

``--engine real`` (the default when ``tributary.engine.engine`` exists) follows a first run from
an empty TRIBUTARY_HOME: the empty states, importing twelve servers found in a
project's ``.mcp.json`` (Ctrl+S), indexing a small fixture repository (the built-in
files and tasks servers), then searching from the keyboard with filters, a query with
no good answer, a history question, the editor (typing an environment variable), the
rule tester and the quick popup. File names carry the size.
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
    screen = os.environ.get("TRIBUTARY_SHOTS_SCREEN", "1366x768")
    command = [xvfb, "-a", "-s", f"-screen 0 {screen}x24", sys.executable, *sys.argv]
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


# A small fixture repository: some of Tributary's own modules, with a short history.
FIXTURE_FILES = ["tributary/engine/routing.py", "tributary/engine/config/patterns.py", "tributary/engine/query/kinds.py",
                 "tributary/engine/config/schema.py", "tributary/engine/config/expand.py", "tributary/engine/config/secrets.py"]
FIXTURE_HISTORY = [
    ("Add routing rules: ordered regex patterns that pick the servers to ask",
     ["tributary/engine/routing.py", "tributary/engine/config/schema.py"]),
    ("Compile routing patterns with RE2, which never backtracks", ["tributary/engine/config/patterns.py"]),
    ("Expand ${VAR} references in server env and headers at start", ["tributary/engine/config/expand.py"]),
    ("Mask secrets in logs and the editor", ["tributary/engine/config/secrets.py"]),
    ("Classify queries (symbol, how-to, conceptual) for adaptive weights", ["tributary/engine/query/kinds.py"]),
]
MEMORY = [
    {"type": "entity", "name": "routing rules", "entityType": "design note",
     "observations": ["Routing rules are case-insensitive regexes tried in order; the first match decides",
                      "Routing patterns are matched by RE2 in linear time; backreferences are rejected when saving"]},
    {"type": "entity", "name": "secrets", "entityType": "design note",
     "observations": ["Secrets live in ${VAR} references, never in the config file",
                      "Masked in the editor, the logs and exported configs"]},
    {"type": "entity", "name": "token budget", "entityType": "design note",
     "observations": ["Context is cut to the budget at function or paragraph boundaries"]},
]


def git(repo: Path, *args: str, date: str | None = None) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="Ada", GIT_AUTHOR_EMAIL="ada@example.com",
               GIT_COMMITTER_NAME="Ada", GIT_COMMITTER_EMAIL="ada@example.com")
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def build_fixture(workdir: Path) -> Path:
    repo = workdir / "demo-repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for day, (message, files) in enumerate(FIXTURE_HISTORY, start=1):
        for name in files:
            target = repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, target)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", message, date=f"2026-10-{day:02d}T10:00:00")
    return repo


FAKE_SOURCES = ["wiki", "tickets", "slack", "web", "confluence", "context7", "runbooks", "adr"]


def client_config(workdir: Path) -> Path:
    """A Claude Code project config (``.mcp.json``) in the working folder, as a user would
    have: eight fake servers, a design-notes memory server (when node is there) and one
    whose command is missing. The first run imports it from the empty state."""
    import json

    servers: dict[str, Any] = {
        name: {"command": sys.executable, "args": [str(ROOT / "tests/fakes/fake_server.py"), "--name", name,
                                                    "--hits", "3"]}
        for name in FAKE_SOURCES}
    memory_module = ROOT / "tests/node/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
    if memory_module.exists() and shutil.which("node"):
        memory = workdir / "memory.jsonl"
        memory.write_text("\n".join(json.dumps(e) for e in MEMORY) + "\n")
        servers["notes"] = {"command": "node", "args": [str(memory_module)], "env": {"MEMORY_FILE_PATH": str(memory)}}
    else:
        servers["notes"] = {"command": sys.executable, "args": [str(ROOT / "tests/fakes/fake_server.py"),
                                                                 "--name", "notes"]}
    servers["legacy-search"] = {"command": "legacy-search-mcp"}  # not installed here
    path = workdir / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def real_factory(workdir: Path) -> tuple[Callable[[Path | None], Any], Path]:
    """An empty TRIBUTARY_HOME (the first run) and a repository to index."""
    from tributary.app.engine_api import open_engine

    os.environ["TRIBUTARY_HOME"] = str(workdir / "home")
    repo = build_fixture(workdir)
    client_config(workdir)
    os.chdir(workdir)

    async def factory(_: Path | None) -> Any:
        return await open_engine(None)

    return factory, repo


def parse_size(text: str) -> tuple[int, int]:
    width, _, height = text.lower().partition("x")
    return int(width), int(height)


async def drive(args: argparse.Namespace) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from tributary.app.recent_queries import RecentQueries
    from tributary.app.shell import Shell

    app = QApplication.instance()
    workdir = Path(tempfile.mkdtemp(prefix="tributary-shots-"))
    os.environ.setdefault("TRIBUTARY_HOME", str(workdir / "home"))
    use_real = args.engine == "real" or (
        args.engine == "auto" and importlib.util.find_spec("tributary.engine.engine") is not None)
    repo: Path | None = None
    if use_real:
        factory, repo = real_factory(workdir)
    else:
        factory = fake_factory()
    print("engine:", "real" if use_real else "fake")
    recent = RecentQueries(None)
    shell = Shell(engine_factory=factory, single_instance=False, recent_queries=recent)
    window = shell.window
    screen = QGuiApplication.primaryScreen()
    area = screen.availableGeometry() if screen is not None else None
    width, height = parse_size(args.size) if args.size else ((area.width(), area.height()) if area else (1366, 768))
    # The whole screen, less what a window manager's title bar takes.
    frame = 30 if os.environ.get("QT_QPA_PLATFORM", "xcb") == "xcb" else 0
    window.resize(width, height - frame)
    shell.start()
    await until(lambda: shell.engine is not None)
    await settle(0.8)
    tag = f"-{width}x{height}" + ("-dark" if args.dark else "")
    page = window.search
    save(window, f"00-first-run{tag}")

    if repo is not None:
        # Searching with nothing to ask: the empty state says what to do.
        await type_into(page.query, "where are routing rules")
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda: page.controller.final, 30)
        await settle()
        save(window, f"00b-nothing-to-ask{tag}")
        window.show_page(shell.indexes)
        await settle(0.5)
        save(window, f"00c-indexes-empty{tag}")
        # Import the servers found in the project's .mcp.json, then save (Ctrl+S).
        window.show_page(page)
        page.empty.import_button.setFocus()
        QTest.keyClick(page.empty.import_button, Qt.Key.Key_Space)
        await settle(0.5)
        save(window, f"04a-imported{tag}")
        QTest.keyClick(shell.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: not shell.editor.dirty, 60)
        # Index the fixture repository through the index manager.
        window.show_page(shell.indexes)
        task = shell.indexes.index(repo)
        try:
            await until(lambda: shell.indexes.progress.value() > 0, 240)
            await settle(0.2)
            save(window, f"09a-indexing{tag}")
        except TimeoutError:
            print("no progress seen")
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        await settle(1.0)
        save(window, f"09-indexes{tag}")
        window.show_page(page)
        engine = shell.engine
        await until(lambda: len(engine.effective_config.servers) >= 12, 60)
        engine.warm_up()
        try:
            await until(lambda: all(str(s.status) in ("ready", "stopped") for s in engine.server_states()), 120)
        except TimeoutError:
            print("servers not all ready:", [(s.name, str(s.status)) for s in engine.server_states()])

    QTest.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    page.query.clear()
    await type_into(page.query, "routing rules" if repo is not None else "fixture scope")
    QTest.keyClick(page.query, Qt.Key.Key_Return)
    await until(lambda: page.controller.final, 120)
    await settle(0.6)
    save(window, f"01-search{tag}")
    tree = page.tree
    model = page.model
    QTest.keyClick(page.query, Qt.Key.Key_Down)  # into the results, from the keyboard
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        if model.rowCount(index):
            tree.expand(index)
            tree.setCurrentIndex(index)
            break
    await settle()
    save(window, f"01a-results-focus{tag}")
    page.tabs.setCurrentIndex(1)
    await settle()
    save(window, f"02-context{tag}")
    page.tabs.setCurrentIndex(0)

    if repo is not None:
        QTest.keyClick(tree, Qt.Key.Key_Escape)
        page.query.selectAll()
        await type_into(page.query, "check_pattern lang:python -path:tests/ source:files")
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda: page.controller.final, 120)
        await settle()
        save(window, f"01b-filters{tag}")
        page.query.selectAll()
        await type_into(page.query, "qwzxv frobnicator zzyzx source:files")
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda: page.controller.final, 120)
        await settle()
        save(window, f"01c-no-results{tag}")
        page.query.selectAll()
        await type_into(page.query, "why was secret masking added")
        QTest.keyClick(page.query, Qt.Key.Key_Return)
        await until(lambda: page.controller.final, 120)
        await settle()
        save(window, f"01d-history{tag}")

    name = next(iter(page.strip.chips))
    page.strip.chips[name].click()
    await settle()
    log = page._logs[name]
    save(log, f"03-server-log{tag}")
    log.close()

    editor = shell.editor
    window.show_page(editor)
    editor.show_tab(editor.servers)
    await settle()
    save(window, f"04-servers{tag}")
    servers = editor.servers
    servers.env._add.click()
    await settle(0.2)
    rows = servers.env._rows
    if rows:
        await type_into(rows[-1].key, "API_TOKEN")
        await type_into(rows[-1].value, "secret-value")
    await settle()
    save(window, f"04b-env-typing{tag}")
    servers.test_connection()
    try:
        await until(lambda: servers.test_details.isVisible(), 60)
    except TimeoutError:
        print("no test result")
    await settle()
    save(window, f"05-server-test{tag}")
    editor.revert()

    editor.show_tab(editor.rules)
    rules = editor.rules
    if rules.list.count():
        rules.list.setCurrentRow(0)
    else:
        rules.add_rule()
    rules.pattern.setFocus()
    rules.pattern.setText("")
    await type_into(rules.pattern, r"def (\w+")
    rules.sample.setText("why was the cache key changed")
    rules.run_test()
    await settle(0.4)
    save(window, f"06-rules-invalid{tag}")
    QTest.keyClick(rules.pattern, Qt.Key.Key_End)
    QTest.keyClick(rules.pattern, ")")
    await settle(0.4)
    rules.run_test()
    save(window, f"07-rules-tester{tag}")
    editor.revert()
    editor.show_tab(editor.ranking)
    await settle()
    save(window, f"08-ranking{tag}")
    editor.show_tab(editor.desktop)
    await settle()
    save(window, f"08b-desktop{tag}")

    window.show_page(shell.insights)
    await shell.insights.refresh()
    await settle()
    save(window, f"11-insights{tag}")

    popup = shell.popup
    popup.popup()
    await type_into(popup.query, "secrets" if repo is not None else "parametrize")
    await until(lambda: popup.controller.final, 120)
    QTest.keyClick(popup.query, Qt.Key.Key_Down)
    QTest.keyClick(popup.query, Qt.Key.Key_Down)
    await settle()
    save(popup, f"10-quick-popup{tag}")
    popup.hide()

    heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
    print("heavy modules in the GUI process:", ", ".join(heavy) or "none")
    await shell.shutdown()
    app.quit()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", choices=["auto", "real", "fake"], default="auto")
    parser.add_argument("--dark", action="store_true", help="dark palette")
    parser.add_argument("--size", help="window size, e.g. 1366x768 (default: the screen's)")
    args = parser.parse_args()
    ensure_display()
    from PySide6.QtWidgets import QApplication

    from tributary.app import theme

    app = QApplication(sys.argv[:1])
    theme.apply(app, dark=args.dark)
    from tributary.app.loop import AppEventLoop

    loop = AppEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(drive(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
