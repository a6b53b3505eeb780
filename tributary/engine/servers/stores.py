"""What the built-in servers and the indexing API need from a store, whatever holds it.

Two backends implement these: SQLite files on this machine (``tributary.engine.index.store.
SqliteStore``, ``tributary.engine.tasks.store.TaskStore``) and a PostgreSQL + pgvector database
shared by a team (``tributary.engine.index.pg_store``, ``tributary.engine.tasks.pg_store``). The
code index's writer side is ``tributary.engine.index.store.IndexStore`` and the task history's
protocol is ``tributary.engine.tasks.history.TaskHistory`` (each beside its stores, so neither
package imports this module); a served index also warms up (loads what its searches need)
before the first query.
"""

from __future__ import annotations

from typing import Protocol

from tributary.engine.index.store import IndexStore
from tributary.engine.tasks.history import TaskHistory

__all__ = ["CodeIndex", "IndexStore", "TaskHistory"]


class CodeIndex(IndexStore, Protocol):
    """A code index the files server searches."""

    def warm(self) -> None: ...
