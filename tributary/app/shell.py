"""The application shell: engine lifetime, window, tray, single instance, staged shutdown.

Start: the window is shown first, then the engine opens in the background (the
window says so), so first paint never waits on server processes. Quit: stop
accepting work, cancel running tasks, close the engine (which stops every server
process), release the instance socket. ``shutdown`` is idempotent: every caller
awaits the same one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer

from tributary.app import theme
from tributary.app.background import run_async, runner
from tributary.app.engine_host import open_engine
from tributary.app.instance import InstanceServer
from tributary.app.recent_queries import RecentQueries, default_path
from tributary.app.tray import TrayController
from tributary.app.window import MainWindow
from tributary.engine.api import EngineLike

CONFIG_POLL_MS = 1000  # how often a config file the engine refused is looked at again

if TYPE_CHECKING:  # built on first use, imported then: start-up stays with the search page
    from tributary.app.config_editor.editor import ConfigEditor
    from tributary.app.indexes import IndexPage
    from tributary.app.insights import InsightsPage
    from tributary.app.tray import QuickPopup
    from tributary.app.watchers import RepoWatchers

log = logging.getLogger(__name__)

EngineFactory = Callable[[Path | None], Awaitable[EngineLike]]
SHUTDOWN_TASKS_TIMEOUT_S = 3.0


class Shell(QObject):
    def __init__(
        self,
        *,
        config_path: Path | None = None,
        engine_factory: EngineFactory = open_engine,
        single_instance: bool = True,
        recent_queries: RecentQueries | None = None,
    ) -> None:
        super().__init__()
        self.config_path = config_path
        self._factory = engine_factory
        self.engine: EngineLike | None = None
        self.quit_requested = asyncio.Event()
        self._shutdown: asyncio.Future[None] | None = None
        self._closing = False
        self.window = MainWindow(lambda: self.engine, recent_queries or RecentQueries(default_path()))
        self._editor: ConfigEditor | None = None
        self._file_problem: str | None = None  # why the config file on disk is not in effect
        # An engine refused for its config file starts again once the file changes.
        self._config_poll = QTimer(self, interval=CONFIG_POLL_MS)
        self._config_poll.timeout.connect(self._config_mended)
        self._config_seen: tuple[int, int] | None = None
        self._indexes: IndexPage | None = None
        self._watchers: RepoWatchers | None = None
        self._popup: QuickPopup | None = None
        self._editor_holder = self.window.add_lazy_page("Sources & routing", "servers", lambda: self.editor)
        self._indexes_holder = self.window.add_lazy_page("Indexes", "index", lambda: self.indexes)
        self._insights: InsightsPage | None = None
        self._insights_holder = self.window.add_lazy_page("Insights", "insights", lambda: self.insights)
        self.tray = TrayController(self)
        self.tray.show_window.connect(self.show_window)
        self.tray.quick_query.connect(lambda: self.popup.popup())
        self.tray.settings.connect(self.show_settings)
        self.tray.quit.connect(self.request_quit)
        self.window.close_requested.connect(self._window_close)
        self.window.quick_query_requested.connect(lambda: self.popup.toggle())
        search = self.window.search
        search.add_repository_requested.connect(self.add_repository)
        search.import_servers_requested.connect(self.import_servers)
        search.add_server_requested.connect(self.add_server)
        if not self.tray.available:
            self.window.set_tray_note(
                "No system tray here, so Tributary stays a window. Quick query: "
                "Ctrl+Shift+Space or `tributary toggle --quick`.")
        self.instance: InstanceServer | None = None
        if single_instance:
            self.instance = InstanceServer(parent=self)
            self.instance.command.connect(self.handle_command)
            self.instance.listen()

    # -- pages built on first use --------------------------------------------------------

    @property
    def editor(self) -> ConfigEditor:
        if self._editor is None:
            from tributary.app.config_editor.editor import ConfigEditor

            self._editor = ConfigEditor(lambda: self.engine)
            self._editor.message.connect(self.window.show_message)
            self._editor.saved.connect(lambda _: self.window.search.refresh_empty_state())
            self.window.fill_page(self._editor_holder, self._editor)
            self._editor.set_file_problem(self._file_problem)
            if self.engine is not None:
                self._editor.load(self.engine.config)
        return self._editor

    @property
    def indexes(self) -> IndexPage:
        if self._indexes is None:
            from tributary.app.indexes import IndexPage

            self._indexes = IndexPage(lambda: self.engine, watchers=self.watchers)
            self._indexes.message.connect(self.window.show_message)
            self._indexes.indexes_changed.connect(self.window.search.refresh_empty_state)
            self._indexes.indexing_changed.connect(self.window.search.note_indexing)
            self.window.fill_page(self._indexes_holder, self._indexes)
            self._indexes.refresh()
        return self._indexes

    @property
    def watchers(self) -> RepoWatchers:
        """Live watchers of the repositories the config says to watch (and the Indexes
        page starts): built when the first is needed."""
        if self._watchers is None:
            from tributary.app.watchers import RepoWatchers

            self._watchers = RepoWatchers(lambda: self.engine, parent=self)
            self._watchers.stopped.connect(self._watcher_stopped)
        return self._watchers

    def _watcher_stopped(self, path: str, why: str) -> None:
        if why:
            self.window.show_message(f"Stopped watching {path}: {why}")

    @property
    def insights(self) -> InsightsPage:
        if self._insights is None:
            from tributary.app.insights import InsightsPage

            self._insights = InsightsPage(engine=lambda: self.engine)
            self._insights.message.connect(self.window.show_message)
            # Feedback on the search page changes reputations: show the new ones.
            self.window.search.feedback_recorded.connect(lambda _: self._insights_reputation_changed())
            self.window.fill_page(self._insights_holder, self._insights)
            self._insights.refresh()
        return self._insights

    def _insights_reputation_changed(self) -> None:
        if self._insights is not None:
            self._insights.reputation.refresh()

    @property
    def popup(self) -> QuickPopup:
        if self._popup is None:
            from tributary.app.tray import QuickPopup

            self._popup = QuickPopup(lambda: self.engine)
            self._popup.copied.connect(self._copied)
        return self._popup

    # -- lifetime -----------------------------------------------------------------------

    def start(self, *, show: bool = True) -> None:
        if show:
            self.window.show()
            self.window.focus_search()
        run_async(self._open_engine(), label="Starting engine",
                  on_error=self._engine_failed)

    def _config_state(self) -> tuple[int, int] | None:
        from tributary.engine import api

        path = self.config_path if self.config_path is not None else api.default_config_path()
        return api.config_signature(path)

    def _config_mended(self) -> None:
        """The engine was refused for its config file: once the file changes, try again."""
        if self.engine is not None or self._closing:
            self._config_poll.stop()
            return
        state = self._config_state()
        if state == self._config_seen:
            return
        self._config_poll.stop()
        self.window.set_engine_state("Starting the engine…")
        run_async(self._open_engine(), label="Starting engine",
                  on_error=lambda error: self._engine_failed(error, again=True))

    async def run(self) -> None:
        """Start, wait for a quit request, shut down."""
        self.start()
        await self.quit_requested.wait()
        await self.shutdown()

    async def _open_engine(self) -> None:
        engine = await self._factory(self.config_path)
        if self._closing:  # quit while the engine was still starting
            await engine.aclose()
            return
        self.engine = engine
        self._config_poll.stop()
        if self._file_problem is not None:  # a mended file: nothing stands in its way now
            self._file_problem = None
            if self._editor is not None:
                self._editor.set_file_problem(None)
        self.window.search.set_engine_problem(None)
        theme.set_source_order(engine.effective_config.servers)
        self.window.set_engine_state("Engine ready")
        self.window.search.refresh_empty_state()
        watch = getattr(engine, "watch_config", None)
        if callable(watch):
            run_async(watch(self._config_reloaded), label="Watching the config file", quiet=True)
        if any(repo.watch for repo in engine.config.repos):
            self.watchers.start_configured(engine.config)
        if self._editor is not None:
            self._editor.load(engine.config)
        if self._indexes is not None:
            self._indexes.refresh()
        if self._insights is not None:
            self._insights.reputation.refresh()

    def _config_reloaded(self, ok: bool, message: str) -> None:
        """The config file changed on disk: say what happened; an editor with no unsaved
        edits shows the new config, one with edits keeps them and warns before saving.
        A file that could not be used is described whole on the editor's banner (the
        status bar has room for a line, for a while); saving over it asks first."""
        first = message.splitlines()[0].rstrip(":") if message else ""
        self._file_problem = None if ok else message
        if self._editor is not None:
            self._editor.set_file_problem(self._file_problem)
        if ok:  # servers may have come or gone: the search page's first steps follow
            self.window.show_message(first, 15000)
            if self.engine is not None:
                theme.set_source_order(self.engine.effective_config.servers)
            self.window.search.refresh_empty_state()
        else:
            self.window.show_message(f"{first} — the details are on Sources & routing", 15000)
        editor = self._editor
        if not ok or self.engine is None or editor is None \
                or getattr(editor, "draft", None) == self.engine.config:  # our own save
            return
        if editor.dirty:  # the user's edits stay; saving asks before overwriting the file's
            editor.changed_on_disk(self.engine.config)
        else:
            editor.load(self.engine.config)

    def _engine_failed(self, error: BaseException, *, again: bool = False) -> None:
        """Say why the engine did not start, where a person looks: a dialog the first
        time, the search page and, for a config file it refused, Sources & routing, which
        show it until the file is mended; the engine starts again once the file changes."""
        self.window.set_engine_state("Engine failed to start")
        from tributary.app.errors import show_error
        from tributary.engine import api
        from tributary.engine.errors import TributaryError

        # A refusal (an invalid config, say) says what and where itself; a bug is named.
        text = str(error) if isinstance(error, TributaryError) else f"{type(error).__name__}: {error}"
        mendable = isinstance(error, api.ConfigError)
        self.window.search.set_engine_problem(text, mendable=mendable)
        if mendable:
            self._file_problem = text
            if self._editor is not None:
                self._editor.set_file_problem(text)
            self._config_seen = self._config_state()
            self._config_poll.start()
        if again:
            self.window.show_message("The config file still has problems: the details are on the search page", 15000)
        else:
            show_error("The engine could not start", text, parent=self.window)

    def request_quit(self) -> None:
        self.quit_requested.set()

    async def shutdown(self) -> None:
        """Staged shutdown; safe to call any number of times, from anywhere."""
        if self._shutdown is None:
            self._shutdown = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._shutdown)

    async def _stop(self) -> None:
        self._closing = True
        self.quit_requested.set()
        log.info("shutting down")
        if self._popup is not None:
            self._popup.hide()
        self.window.hide()
        self.tray.hide()
        tasks = runner()
        tasks.cancel_all()
        try:
            await asyncio.wait_for(tasks.wait_idle(), SHUTDOWN_TASKS_TIMEOUT_S)
        except TimeoutError:
            log.warning("some tasks did not stop within %.0f s", SHUTDOWN_TASKS_TIMEOUT_S)
        engine, self.engine = self.engine, None
        if engine is not None:
            await engine.aclose()  # stops every server process
        if self.instance is not None:
            self.instance.close()
        log.info("shut down")

    # -- commands -----------------------------------------------------------------------

    def handle_command(self, command: str) -> None:
        if command == "show":
            self.show_window()
        elif command == "toggle":
            if (self.window.isVisible() and self.window.isActiveWindow()) or (self.window.isVisible() and not self.tray.available):
                self.window.hide()
            else:
                self.show_window()
        elif command == "quick":
            self.popup.toggle()
        elif command == "quit":
            self.request_quit()

    # -- first steps (the search page's empty state) --------------------------------------

    def add_repository(self) -> None:
        """From the search page: choose a folder and stay there, where the repository can
        be asked as soon as its keyword tier is written (the page says when)."""
        self.indexes.choose_folder(then=self.window.focus_search)  # the button it came from is gone

    def import_servers(self) -> None:
        editor = self.editor
        self.window.show_page(editor)
        editor.show_tab(editor.servers)
        if editor.draft is None:
            self.window.show_message("The engine is still starting — try again in a moment.")
            return
        if editor.servers.import_found():
            editor.save_button.setFocus()
            self.window.show_message("Imported — review the servers, then Save (Ctrl+S) to ask them")

    def add_server(self) -> None:
        editor = self.editor
        self.window.show_page(editor)
        editor.show_tab(editor.servers)
        if editor.draft is not None:
            editor.servers.add_server()

    def show_window(self) -> None:
        self.window.bring_to_front()
        self.window.focus_search()

    def show_settings(self) -> None:
        self.window.bring_to_front()
        self.window.show_page(self.editor)

    def _window_close(self) -> None:
        if self.tray.available:
            self.window.hide()
            self.tray.notify("Tributary keeps running in the tray")
        else:
            self.request_quit()

    def _copied(self, tokens: int) -> None:
        text = f"Copied {tokens:,} tokens of context"
        self.window.show_message(text)
        self.tray.notify(text)
