"""The query box's recall list: recent queries, newest first, kept in a small JSON file
that is the user's alone (what they asked may quote private code)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from tributary.engine import api

log = logging.getLogger(__name__)
LIMIT = 200


def default_path() -> Path:
    """The recent queries file (once ``gui-history.json``: moved on first use)."""
    path = api.data_dir() / "recent-queries.json"
    api.moved_once(api.data_dir() / "gui-history.json", path)
    return path


class RecentQueries:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.items: list[str] = []
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self.items = [q for q in data if isinstance(q, str)][:LIMIT]
            except (OSError, ValueError) as exc:
                log.warning("ignoring unreadable recent queries %s: %s", path, exc)

    def add(self, query: str) -> None:
        query = query.strip()
        if not query:
            return
        if query in self.items:
            self.items.remove(query)
        self.items.insert(0, query)
        del self.items[LIMIT:]
        self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            api.write_private_text(self.path, json.dumps(self.items))
        except OSError as exc:
            log.warning("could not save the recent queries: %s", exc)
