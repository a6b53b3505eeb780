"""Live watchers of indexed repositories: edits reach the index while the app runs.

Each watched repository has one child process (``tributary.app.index_worker --watch``) that
indexes it, then applies every change as it happens; the embedding model and the
indexer's CPU work stay out of the GUI process, as for indexing. After each batch of
changes the engine drops the cached answers that drew on the repository. A repository
is watched while the app runs when its config entry says ``watch: true``: the Indexes
page's *Watch* button sets that (saved like any config edit: validated, atomic, with a
backup) and starts or stops the watcher at once. Watchers run through ``run_async``,
so quitting the app stops them: their stdin closes, and they finish what they are
writing before they exit.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from tributary.app.background import describe_error, off_the_gui, run_async
from tributary.app.workers import run_worker, watch_command
from tributary.engine.api import EngineLike, update_config
from tributary.engine.config.schema import Config, RepoConfig

STOP_GRACE_S = 2.0  # a watcher stopping mid-batch finishes it (one transaction) first


def repo_key(path: str | Path) -> str:
    """One spelling of a repository's folder, as the index lists it."""
    return str(Path(path).expanduser().resolve())


def with_watch(config: Config, path: str | Path, watch: bool) -> Config:
    """A copy of ``config`` whose entry for the repository at ``path`` has ``watch``
    set (an entry is added when there is none)."""
    updated = copy.deepcopy(config)
    key = repo_key(path)
    for repo in updated.repos:
        if repo_key(repo.path) == key:
            repo.watch = watch
            return updated
    updated.repos.append(RepoConfig(path=key, watch=watch))
    return updated


class RepoWatchers(QObject):
    """The running watchers, one per repository folder."""

    updated = Signal(str)  # a watched repository's index changed (its folder)
    stopped = Signal(str, str)  # a watcher ended: folder, and why ("" when asked to)

    def __init__(
        self,
        engine: Callable[[], EngineLike | None],
        *,
        command: Callable[[Path], list[str]] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._engine = engine
        self._command = command or watch_command
        self._tasks: dict[str, asyncio.Task[Any]] = {}

    def watching(self, path: str | Path) -> bool:
        return repo_key(path) in self._tasks

    def paths(self) -> list[str]:
        return list(self._tasks)

    def start(self, path: str | Path) -> None:
        key = repo_key(path)
        if key in self._tasks:
            return
        task = self._tasks[key] = run_async(
            run_worker(self._command(Path(key)), lambda event: self._event(key, event), stop_grace_s=STOP_GRACE_S),
            label=f"Watching {Path(key).name}", key=f"watch:{key}", quiet=True,  # (a key: quit stops it)
            on_success=lambda _: self._ended(key, "the watcher exited"),
            on_error=lambda error: self._ended(key, describe_error(error)),
        )
        # Cancelled with every other task (the app quits): no callback runs, so forget it here.
        task.add_done_callback(lambda done: self._forget(key, done))

    def _forget(self, key: str, task: asyncio.Task[Any]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]

    def stop(self, path: str | Path) -> asyncio.Task[Any] | None:
        """Stop watching; the task, to await the watcher's exit (None if not watching)."""
        task = self._tasks.pop(repo_key(path), None)
        if task is not None:
            task.cancel()
            self.stopped.emit(repo_key(path), "")
        return task

    def start_configured(self, config: Config) -> None:
        """Start a watcher for every repository the config says to watch."""
        for repo in config.repos:
            if repo.watch:
                self.start(repo.path)

    async def set_watch(self, path: str | Path, watch: bool) -> None:
        """Watch the repository or stop, and save that in the config file (changed as it
        is on disk, under its lock, so a concurrent writer's change stays), then apply it."""
        engine = self._engine()
        if engine is not None:
            _, config = await off_the_gui(
                update_config, engine.config.path, lambda now: with_watch(now, path, watch))
            await engine.apply_config(config)
        if watch:
            self.start(path)
        elif (task := self.stop(path)) is not None:
            await asyncio.gather(task, return_exceptions=True)

    def _event(self, key: str, event: dict[str, Any]) -> None:
        if event.get("event") != "update":
            return
        engine = self._engine()
        if engine is not None:
            run_async(engine.repository_changed(key), label=f"Updating {Path(key).name}", quiet=True)
        self.updated.emit(key)

    def _ended(self, key: str, why: str) -> None:
        if self._tasks.pop(key, None) is not None:  # (not when stopped on purpose)
            self.stopped.emit(key, why)
