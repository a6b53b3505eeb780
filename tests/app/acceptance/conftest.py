"""The desktop app as a person uses it: the real engine, a small repository indexed
here, ten fake MCP servers beside the built-in files and tasks servers (12 sources),
the window at a laptop's screen sizes.

The engine with twelve sources is opened once for the module's tests (it runs on its
own thread, as in the app); each test gets a fresh shell and window on it. Any error
dialog, any uncaught exception and any ERROR logged fails the test.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import textwrap
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.fakes import fake_server_object
from tributary.app import background, errors
from tributary.app.engine_host import ThreadedEngine
from tributary.app.recent_queries import RecentQueries
from tributary.app.shell import Shell
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.sources.connect import Connection, default_connector
from tributary.engine.sources.memory import memory_connector
from tributary.engine.sources.stderr import StderrLog

SIZES = [(1366, 768), (1024, 640)]
FAKE_SOURCES = ["memory", "docs", "wiki", "tickets", "slack", "notes", "web", "serena", "context7", "confluence"]

REPO_FILES = {
    "tributary/engine/cache/base.py": '''
        """The response cache: keys, expiry and invalidation."""


        def cache_key(query: str, config_fingerprint: str) -> str:
            """The key under which a query's answer is cached."""
            return f"{config_fingerprint}:{query.strip().lower()}"


        class ResponseCache:
            def __init__(self, ttl_s: float = 300.0) -> None:
                self.ttl_s = ttl_s
                self.entries: dict[str, str] = {}

            def get(self, key: str) -> str | None:
                return self.entries.get(key)

            def invalidate(self, prefix: str) -> int:
                gone = [k for k in self.entries if k.startswith(prefix)]
                for key in gone:
                    del self.entries[key]
                return len(gone)
    ''',
    "engine/retry.py": '''
        """Retry with exponential backoff for flaky sources."""
        import time


        def retry(call, attempts: int = 3, backoff_s: float = 0.5):
            """Call ``call`` until it succeeds, waiting longer after each failure."""
            for attempt in range(attempts):
                try:
                    return call()
                except OSError:
                    time.sleep(backoff_s * 2 ** attempt)
            return call()
    ''',
    "server/main.go": '''
        package main

        import "fmt"

        // retryRequest retries a request with backoff until it succeeds.
        func retryRequest(attempts int) error {
            for i := 0; i < attempts; i++ {
                fmt.Println("retry", i)
            }
            return nil
        }
    ''',
    "tests/test_cache.py": '''
        from tributary.engine.cache.base import ResponseCache, cache_key


        def test_cache_key_ignores_case():
            assert cache_key("Retry", "fp") == cache_key("retry", "fp")


        def test_invalidate_drops_prefix():
            cache = ResponseCache()
            cache.entries["fp:a"] = "x"
            assert cache.invalidate("fp") == 1
    ''',
    "README.md": '''
        # Fixture project

        A small project with a response cache and retry logic, for the desktop tests.
    ''',
}


def make_repo(root: Path) -> Path:
    """A git repository with a few commits (the tasks server reads its history)."""
    root.mkdir(parents=True)
    env = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.org", "GIT_COMMITTER_NAME": "Ada",
           "GIT_COMMITTER_EMAIL": "ada@example.org", "HOME": str(root), "PATH": "/usr/bin:/bin"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    messages = {"tributary/engine/cache/base.py": "Change the cache key to ignore case",
                "engine/retry.py": "Add retry with exponential backoff",
                "server/main.go": "Retry requests in the Go server",
                "tests/test_cache.py": "Test cache key and invalidation",
                "README.md": "Describe the project"}
    for rel, body in REPO_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
        git("add", rel)
        git("commit", "-q", "-m", messages[rel])
    return root


@pytest.fixture(scope="session")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tributary-home")


@pytest.fixture(scope="session")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("work") / "fixture-project")


@pytest.fixture(scope="session")
def indexed(home: Path, repo: Path) -> Path:
    """The fixture repository indexed (code with the real model, and its git history)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TRIBUTARY_HOME", str(home))
    try:
        from tributary.engine.index.manager import index_repository
        from tributary.engine.repos.manage import update_history

        index_repository(repo)
        update_history(repo)
    finally:
        mp.undo()
    return repo


def twelve_sources() -> Config:
    servers = {name: ServerConfig(name=name, command="unused", timeout=3.0) for name in FAKE_SOURCES}
    return Config(servers=servers)


def split_connector() -> Callable[..., Any]:
    """Fake servers in memory; the built-in files and tasks servers as real processes."""
    memory = memory_connector(lambda cfg: fake_server_object(cfg.name, "--hits", "3"))

    @asynccontextmanager
    async def connect(config: ServerConfig, log: StderrLog) -> AsyncIterator[Connection]:
        opener = default_connector if config.builtin else memory
        async with opener(config, log) as connection:
            yield connection

    return connect


class SharedEngine:
    """The module's engine, lent to one shell: closing the shell does not close it."""

    def __init__(self, engine: ThreadedEngine) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    async def aclose(self) -> None:
        return None


def open_engine(config: Config) -> ThreadedEngine:
    async def opener() -> Any:
        from tributary.engine.engine import Engine

        engine = Engine(config, connector=split_connector())
        engine.supervise()
        # Every server up before any test: its processes are the module's, not a test's.
        await engine.pool.warm_up(timeout=60.0)
        return engine

    return asyncio.run(ThreadedEngine.start(opener))


@pytest.fixture(scope="session")
def engine12(home: Path, indexed: Path) -> Iterator[ThreadedEngine]:
    mp = pytest.MonkeyPatch()
    mp.setenv("TRIBUTARY_HOME", str(home))
    engine = open_engine(twelve_sources())
    try:
        yield engine
    finally:
        asyncio.run(engine.aclose())
        mp.undo()


@pytest.fixture
def fresh_runner(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[background.TaskRunner]:
    """As the app tests' own, but every test here shares the indexed TRIBUTARY_HOME."""
    monkeypatch.setenv("TRIBUTARY_HOME", str(home))
    runner = background.TaskRunner()
    background.set_runner(runner)
    yield runner
    runner.cancel_all()
    background.set_runner(None)


class _DialogWatch(QObject):
    def __init__(self, seen: list[str]) -> None:
        super().__init__()
        self.seen = seen

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show and isinstance(watched, QMessageBox):
            self.seen.append(f"message box: {watched.text()}")
        return False


class _Errors(logging.Handler):
    def __init__(self, seen: list[str]) -> None:
        super().__init__(logging.ERROR)
        self.seen = seen

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(f"logged {record.levelname} {record.name}: {logging.Formatter().format(record)}")


@pytest.fixture(autouse=True)
def no_errors(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Fail the test on any error dialog, uncaught exception or logged error."""
    seen: list[str] = []
    watch = _DialogWatch(seen)
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(watch)
    handler = _Errors(seen)
    logging.getLogger().addHandler(handler)
    original = errors.show_error

    def show_error(title: str, text: str, details: str = "", parent: Any = None) -> Any:
        seen.append(f"error dialog: {title}: {text}\n{details}")
        return original(title, text, details, parent)

    monkeypatch.setattr(errors, "show_error", show_error)
    try:
        yield seen
    finally:
        logging.getLogger().removeHandler(handler)
        app.removeEventFilter(watch)
        for box in list(errors._dialogs):
            box.close()
    assert not seen, "unexpected errors:\n" + "\n".join(seen)


async def until(condition: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"not in time: {what}"
        await asyncio.sleep(0.02)


@asynccontextmanager
async def running_shell(engine: Any, size: tuple[int, int], tmp_path: Path) -> AsyncIterator[Shell]:
    """A shell on ``engine`` (opened at once), its window shown at ``size``. ``engine``
    None: the app's own engine, opened from TRIBUTARY_HOME and closed with the shell."""

    async def factory(path: Path | None) -> Any:
        if engine is None:
            from tributary.app.engine_host import open_engine

            return await open_engine(path)
        return SharedEngine(engine)

    shell = Shell(engine_factory=factory, single_instance=False, recent_queries=RecentQueries(tmp_path / "history.json"))
    shell.start()
    shell.window.resize(*size)
    try:
        await until(lambda: shell.engine is not None, what="engine attached")
        yield shell
    finally:
        await shell.shutdown()
        shell.window.close()
        shell.window.deleteLater()
        await asyncio.sleep(0)
