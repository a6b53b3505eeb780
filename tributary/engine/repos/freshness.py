"""Indexed repositories kept up to date for a headless engine's searches.

``tributary serve`` answers an LLM client that is usually changing the very code it asks
about, and the background engine answers ``tributary search`` between a person's edits;
neither has the app's watchers or its Re-index button. Before a search, such an engine
brings each local repository's index up to date as ``--repo`` does (changed files
re-read, new commits imported into a history it has; the vectors of what changed are
left to a background pass): at most once every ``FRESH_S`` per repository, the
repositories side by side in worker threads, one pass at a time for each. A repository
whose folder is gone is left as it is. A shared PostgreSQL index is left to whoever
indexes it (CI, ``tributary index``): a desktop's uncommitted edits must not reach the
team's index.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tributary.engine.config.schema import Config, RepoConfig

log = logging.getLogger(__name__)

FRESH_S = 2.0  # a repository checked this recently is searched as it is


class Freshness:
    """When each repository was last brought up to date, and the work of doing it again."""

    def __init__(
        self,
        *,
        interval_s: float = FRESH_S,
        index_dir: Path | None = None,
        embed_later: Callable[[Path], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval_s = interval_s
        self._index_dir = index_dir
        self._embed_later = embed_later  # None: a detached ``tributary index embed``
        self._clock = clock
        self._checked: dict[Path, float] = {}
        self._locks: dict[Path, asyncio.Lock] = {}
        self._listed: tuple[float, list[Path]] | None = None  # (when, the indexed folders)

    async def refresh(self, config: Config) -> list[Path]:
        """Bring every local repository not checked within ``interval_s`` up to date;
        the ones whose index or history changed (their cached answers are out of date)."""
        if config.index.backend != "sqlite":
            return []
        if self._listed is None or self._clock() - self._listed[0] >= self.interval_s:
            self._listed = (self._clock(), await asyncio.to_thread(self._roots))
        roots = self._listed[1]
        done = await asyncio.gather(*(self._refresh_one(root, config.repos) for root in roots))
        return [root for root, changed in zip(roots, done, strict=True) if changed]

    def brought_up_to_date(self, root: Path) -> None:
        """``root`` was brought up to date just now by other means (a ``--repo`` search):
        the next search does not check it again."""
        self._checked[root] = self._clock()

    def _roots(self) -> list[Path]:
        """The folders of the local indexes (not the config's backend: a config saved
        invalid meanwhile is not read here)."""
        from tributary.engine.index.backend import SQLITE
        from tributary.engine.index.manager import list_indexes

        return [info.root for info in list_indexes(self._index_dir, backend=SQLITE) if info.exists]

    async def _refresh_one(self, root: Path, repos: Sequence[RepoConfig]) -> bool:
        from tributary.engine.repos.manage import repo_entry
        from tributary.engine.tasks.api import tasks_db_path

        async with self._locks.setdefault(root, asyncio.Lock()):
            last = self._checked.get(root)
            if last is not None and self._clock() - last < self.interval_s:
                return False
            history = tasks_db_path(root, self._index_dir).exists()  # indexed --no-history: left so
            try:
                return await asyncio.to_thread(self._update, root, history, repo_entry(repos, root))
            except Exception as exc:  # the index as it is still answers
                log.warning("%s: not brought up to date: %s", root, exc)
                return False
            finally:
                self._checked[root] = self._clock()

    def _update(self, root: Path, history: bool, config: RepoConfig | None) -> bool:
        """Bring ``root`` up to date; whether it changed. Only what this pass changed
        starts an embedding pass: vectors a stopped pass left waiting are the app's or
        ``tributary index embed``'s to finish, not a surprise on every search."""
        from tributary.engine.index.backend import SQLITE
        from tributary.engine.repos.manage import (
            embed_in_background,
            embedding_underway,
            refresh_repository,
        )

        refresh = refresh_repository(root, history=history, backend=SQLITE, config=config, index_dir=self._index_dir)
        waiting = refresh.vectors_waiting or refresh.history_waiting
        if refresh.changed and waiting and not embedding_underway(root, index_dir=self._index_dir, backend=SQLITE):
            (self._embed_later or embed_in_background)(root)
        return refresh.changed
