"""Indexed repositories kept up to date for an engine's searches.

``tributary serve`` answers an LLM client that is usually changing the very code it asks
about, and the background engine answers ``tributary search`` between a person's edits;
neither has the app's watchers or its Re-index button. The app's engine answers the
same ``tributary search`` when the app is open, and its own search page, between edits
made in an editor: it leaves a watched repository to its watcher. Before a search, an engine
brings each local repository's index up to date as ``--repo`` does (changed files
re-read, new commits imported into a history it has; the vectors of what changed are
left to a background pass): at most once every ``FRESH_S`` per repository, the
repositories side by side in worker threads, one pass at a time for each. A search
waits for them ``WAIT_S`` at most: a longer pass (a branch switched under a large
repository) goes on, and the answers that drew on what it changes are dropped when it
ends. A repository whose folder is gone is left as it is. A shared PostgreSQL index is
left to whoever indexes it (CI, ``tributary index``): a desktop's uncommitted edits must
not reach the team's index.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from tributary.engine.config.schema import Config, RepoConfig

log = logging.getLogger(__name__)

FRESH_S = 2.0  # a repository checked this recently is searched as it is
# A search waits this long for the checks; one that takes longer (a branch switched under
# a large repository) goes on, and the answers that drew on what it changes are dropped
# when it ends.
WAIT_S = 3.0


class Freshness:
    """When each repository was last brought up to date, and the work of doing it again."""

    def __init__(
        self,
        *,
        interval_s: float = FRESH_S,
        wait_s: float = WAIT_S,
        index_dir: Path | None = None,
        embed_later: Callable[[Path], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        leave_watched: bool = False,
    ) -> None:
        self.interval_s = interval_s
        self._leave_watched = leave_watched  # the app: a watched repository's watcher keeps it
        self.wait_s = wait_s
        self._index_dir = index_dir
        self._embed_later = embed_later  # None: a detached ``tributary index embed``
        self._clock = clock
        self._checked: dict[Path, float] = {}
        self._running: dict[Path, asyncio.Task[Path | None]] = {}  # one check of a repository at a time
        self._late: set[asyncio.Task[object]] = set()  # what a check that outlasted its search said
        self._listed: tuple[float, list[Path]] | None = None  # (when, the indexed folders)

    async def refresh(
        self, config: Config, *, later: Callable[[Path], Awaitable[object]] | None = None
    ) -> list[Path]:
        """Bring every local repository not checked within ``interval_s`` up to date;
        the ones whose index or history changed (their cached answers are out of date).
        A check still running after ``wait_s`` goes on; ``later(root)`` hears of a
        change it makes."""
        if config.index.backend != "sqlite":
            return []
        if self._listed is None or self._clock() - self._listed[0] >= self.interval_s:
            self._listed = (self._clock(), await asyncio.to_thread(self._roots))
        checks = [task for root in self._listed[1] if (task := self._check(root, config.repos)) is not None]
        if not checks:
            return []
        done, running = await asyncio.wait(checks, timeout=self.wait_s)
        for task in running:
            task.add_done_callback(functools.partial(self._ended_late, later))
        return [root for task in done if (root := task.result()) is not None]

    async def close(self) -> None:
        """Wait for the checks still running (their threads run to the end anyway) and
        for what they have to tell."""
        while self._running or self._late:
            await asyncio.gather(*self._running.values(), *self._late, return_exceptions=True)

    def brought_up_to_date(self, root: Path) -> None:
        """``root`` was brought up to date just now by other means (a ``--repo`` search):
        the next search does not check it again."""
        self._checked[root] = self._clock()

    def _roots(self) -> list[Path]:
        """The folders of the local indexes (not the config's backend: a config saved
        invalid meanwhile is not read here)."""
        from tributary.engine.index.backend import SQLITE
        from tributary.engine.index.manager import list_indexes

        try:
            return [info.root for info in list_indexes(self._index_dir, backend=SQLITE) if info.exists]
        except Exception as exc:  # (an unreadable folder of indexes: the searches go on)
            log.warning("indexed repositories not listed: %s", exc)
            return []

    def _check(self, root: Path, repos: Sequence[RepoConfig]) -> asyncio.Task[Path | None] | None:
        """The check of ``root`` running now, or a new one; None when it was checked
        within ``interval_s``."""
        running = self._running.get(root)
        if running is not None:
            return running
        if self._leave_watched and self._watched(root, repos):
            return None
        last = self._checked.get(root)
        if last is not None and self._clock() - last < self.interval_s:
            return None
        task = asyncio.ensure_future(self._refresh_one(root, repos))
        self._running[root] = task
        task.add_done_callback(lambda _done: self._running.pop(root, None))
        return task

    @staticmethod
    def _watched(root: Path, repos: Sequence[RepoConfig]) -> bool:
        from tributary.engine.repos.manage import repo_entry

        entry = repo_entry(repos, root)
        return entry is not None and entry.watch

    def _ended_late(self, later: Callable[[Path], Awaitable[object]] | None, task: asyncio.Task[Path | None]) -> None:
        root = None if task.cancelled() or task.exception() else task.result()
        if root is not None and later is not None:
            told = asyncio.ensure_future(later(root))
            self._late.add(told)
            told.add_done_callback(self._late.discard)

    async def _refresh_one(self, root: Path, repos: Sequence[RepoConfig]) -> Path | None:
        """``root`` when bringing it up to date changed it, else None."""
        from tributary.engine.repos.manage import repo_entry
        from tributary.engine.tasks.api import tasks_db_path

        history = tasks_db_path(root, self._index_dir).exists()  # indexed --no-history: left so
        try:
            changed = await asyncio.to_thread(self._update, root, history, repo_entry(repos, root))
        except Exception as exc:  # the index as it is still answers
            log.warning("%s: not brought up to date: %s", root, exc)
            return None
        finally:
            self._checked[root] = self._clock()
        return root if changed else None

    def _update(self, root: Path, history: bool, config: RepoConfig | None) -> bool:
        """Bring ``root`` up to date; whether it changed. Only what this pass changed
        starts an embedding pass: vectors a stopped pass left waiting are the app's or
        ``tributary index embed``'s to finish, not a surprise on every search."""
        from tributary.engine.index.backend import SQLITE
        from tributary.engine.repos.manage import embed_in_background, refresh_repository

        refresh = refresh_repository(
            root, history=history, backend=SQLITE, config=config, index_dir=self._index_dir,
            embed_later=self._embed_later or embed_in_background, embed_new_only=True,
        )  # fmt: skip
        return refresh.changed
