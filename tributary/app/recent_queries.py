"""The query box's recall list: recent queries, newest first, kept in a small JSON file."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from tributary.engine import api

log = logging.getLogger(__name__)
LIMIT = 200


def default_path() -> Path:
    return api.data_dir() / "gui-history.json"


class RecentQueries:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.items: list[str] = []
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self.items = [q for q in data if isinstance(q, str)][:LIMIT]
            except (OSError, ValueError) as exc:
                log.warning("ignoring unreadable query history %s: %s", path, exc)

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
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.items), encoding="utf-8")
            tmp.replace(self.path)
        except OSError as exc:
            log.warning("could not save query history: %s", exc)
