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


# A small fixture repository: some of Tributary's own modules, with a short history.
FIXTURE_FILES = ["engine/routing.py", "engine/patterns.py", "engine/query_class.py",
                 "engine/config/schema.py", "engine/config/expand.py", "engine/config/secrets.py"]
FIXTURE_HISTORY = [
    ("Add routing rules: ordered regex patterns that pick the servers to ask",
     ["engine/routing.py", "engine/config/schema.py"]),
    ("Compile routing patterns with RE2, which never backtracks", ["engine/patterns.py"]),
    ("Expand ${VAR} references in server env and headers at start", ["engine/config/expand.py"]),
    ("Mask secrets in logs and the editor", ["engine/config/secrets.py"]),
    ("Classify queries (symbol, how-to, conceptual) for adaptive weights", ["engine/query_class.py"]),
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


def real_factory(workdir: Path) -> tuple[Callable[[Path | None], Any], Path]:
    """A TRIBUTARY_HOME with a config naming real MCP servers over the fixture repo."""
    import json

    from app.engine_api import open_engine
    from engine.config.save import save_config
    from engine.config.schema import Config, RoutingRule, ServerConfig

    home = workdir / "home"
    os.environ["TRIBUTARY_HOME"] = str(home)
    repo = build_fixture(workdir)
    config = Config()
    memory_module = ROOT / "tests/node/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
    if memory_module.exists() and shutil.which("node"):
        memory = workdir / "memory.jsonl"
        memory.write_text("\n".join(json.dumps(e) for e in MEMORY) + "\n")
        config.servers["notes"] = ServerConfig(
            name="notes", command="node", args=[str(memory_module)],
            env={"MEMORY_FILE_PATH": str(memory)}, tool="search_nodes", query_argument="query",
            description="Team design notes (MCP memory server)")
    try:
        from engine.tasks.api import import_git_history

        import_git_history(repo, embed=False)
        config.servers["history"] = ServerConfig(
            name="history", command=sys.executable,
            args=["-m", "engine.servers.tasks", "--repo", str(repo), "--no-embed"],
            env={"PYTHONPATH": str(ROOT)}, timeout=10.0,
            description="Commit history of the demo repository")
    except Exception as exc:  # the tasks server is optional for the pictures
        print("no task history:", exc)
    config.routing.rules = [
        RoutingRule(name="history", pattern=r"\b(why|when|who|changed?|history)\b",
                    servers=[n for n in ("history",) if n in config.servers], priority=0),
    ]
    if not config.routing.rules[0].servers:
        config.routing.rules = []
    save_config(config, home / "config.yaml")

    async def factory(_: Path | None) -> Any:
        return await open_engine(None)

    return factory, repo


async def drive(args: argparse.Namespace) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from app.history import QueryHistory
    from app.shell import Shell

    app = QApplication.instance()
    workdir = Path(tempfile.mkdtemp(prefix="tributary-shots-"))
    os.environ.setdefault("TRIBUTARY_HOME", str(workdir / "home"))
    use_real = args.engine == "real" or (
        args.engine == "auto" and importlib.util.find_spec("engine.engine") is not None)
    repo: Path | None = None
    if use_real:
        factory, repo = real_factory(workdir)
    else:
        factory = fake_factory()
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

    if repo is not None:  # index the fixture repository through the index manager
        window.show_page(shell.indexes)
        task = shell.indexes.index(repo)
        try:
            await until(lambda: shell.indexes.progress.value() > 0, 240)
            await settle(0.2)
            save(window, f"09a-indexing{suffix}")
        except TimeoutError:
            print("no progress seen")
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        await settle(1.0)
        window.show_page(window.search)

    if repo is not None:  # let every server finish starting (a first query would time out)
        engine = shell.engine
        warm = getattr(engine, "warm_up", None)
        if callable(warm):
            warm()
        try:
            await until(lambda: all(s.status == "ready" for s in engine.server_states()), 90)
        except TimeoutError:
            print("servers not all ready:", [(s.name, s.status) for s in engine.server_states()])

    page = window.search
    await type_into(page.query, "routing" if repo is not None else "fixture scope")
    await until(lambda: page.controller.final, 120)
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

    if repo is not None:  # a lookup: the definition first, its "defines" part in the breakdown
        page.query.clear()
        await type_into(page.query, "check_pattern")
        await until(lambda: page.controller.final, 120)
        await settle()
        tree.setCurrentIndex(model.index(0, 0))
        await settle()
        save(window, f"01b-lookup{suffix}")

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
    await shell.indexes.refresh()
    await settle()
    save(window, f"09-indexes{suffix}")

    indexes = shell.indexes
    if repo is not None and indexes.table.rowCount():  # Watch: a live watcher of the repository
        indexes.table.selectRow(0)
        indexes.toggle_watch_selected()
        try:
            await until(lambda: indexes.watchers.watching(str(repo)) and indexes.table.item(0, 6).text() == "on", 60)
            await settle(0.5)
            save(window, f"09b-watching{suffix}")
        except TimeoutError:
            print("the watcher did not start")
        indexes.table.selectRow(0)
        indexes.toggle_watch_selected()
        await until(lambda: not indexes.watchers.paths(), 30)

    window.show_page(shell.insights)
    await shell.insights.refresh()
    await settle()
    save(window, f"11-insights{suffix}")

    popup = shell.popup
    popup.popup()
    await type_into(popup.query, "secrets" if repo is not None else "parametrize")
    await until(lambda: popup.controller.final, 120)
    await settle()
    save(popup, f"10-quick-popup{suffix}")
    popup.hide()

    heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
    print("heavy modules in the GUI process:", ", ".join(heavy) or "none")
    await shell.shutdown()
    app.quit()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", choices=["auto", "real", "fake"], default="auto")
    parser.add_argument("--dark", action="store_true", help="dark palette")
    args = parser.parse_args()
    ensure_display()
    from PySide6.QtWidgets import QApplication

    from app import theme

    app = QApplication(sys.argv[:1])
    theme.apply(app, dark=args.dark)
    from app.loop import AppEventLoop

    loop = AppEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(drive(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
