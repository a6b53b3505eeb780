"""A collection in the shared database: one repository's rows of one table, found by
their words (``terms``, a ``tsvector`` ranked by ``ts_rank``) and by their meaning
(``embedding``, a pgvector column), with the model's record and the meta kept under the
collection's scope in ``repo_meta``.

The PostgreSQL twin of ``tributary.engine.localsearch.collection``: code chunks
(``tributary.engine.index.pg_store``) and task history (``tributary.engine.tasks.pg_store``)
each keep one and define only their rows and their ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tributary.engine.localsearch.collection import Collection
from tributary.engine.localsearch.embedder import ModelInfo, Vectors
from tributary.engine.postgres.db import Connection, Database
from tributary.engine.postgres.repositories import read_meta, read_model, write_meta, write_model

TS_CONFIG = "tributary_code"  # the text-search configuration every collection's words use


class PgCollection:
    """One repository's rows of ``table`` (with ``repo``, ``id``, ``terms`` and
    ``embedding`` columns); ``weights`` is ``ts_rank``'s weight array ``{D, C, B, A}``,
    ``scope`` the collection's part of the repository's meta."""

    def __init__(self, db: Database, repo: int, *, table: str, scope: str, weights: str) -> None:
        self.db = db
        self.repo = int(repo)
        self.table = table
        self.scope = scope
        self.weights = weights

    # meta and the model record ---------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        return read_meta(self.db, self.repo, self.scope, key)

    def write_meta(self, conn: Connection, key: str, value: str) -> None:
        """Write a meta value in the caller's transaction."""
        write_meta(conn, self.repo, self.scope, key, value)

    def model(self) -> ModelInfo | None:
        """The model the vectors were made by (None: no vectors yet)."""
        return read_model(self.db, self.repo, self.scope)

    def write_model(self, conn: Connection, info: ModelInfo) -> None:
        write_model(conn, self.repo, self.scope, info)

    # searching ---------------------------------------------------------------------
    def keyword(
        self,
        match: str,
        rank: str,
        limit: int,
        *,
        columns: Sequence[str] = (),
        where: Sequence[str] = (),
        params: Sequence[Any] = (),
    ) -> list[tuple[Any, ...]]:
        """``(id, score, *columns)`` of the rows whose words match the ``to_tsquery``
        text ``match``, ranked by ``ts_rank`` on ``rank`` (best first, ties by id);
        ``where``'s conditions (with ``params``) narrow them."""
        extra = "".join(f", {column}" for column in columns)
        sql = (
            f"SELECT id, ts_rank('{self.weights}', terms, r) AS score{extra} "
            f"FROM {self.table}, to_tsquery('{TS_CONFIG}', %s) m, to_tsquery('{TS_CONFIG}', %s) r "
            f"WHERE repo = %s AND terms @@ m{''.join(' AND ' + c for c in where)} "
            "ORDER BY score DESC, id LIMIT %s"
        )
        values = [match, rank, self.repo, *params, limit]
        return self.db.read(lambda c: c.execute(sql, values).fetchall())

    def dense(
        self,
        query: Vectors,
        limit: int,
        *,
        dim: int,
        columns: Sequence[str] = (),
        where: Sequence[str] = (),
        params: Sequence[Any] = (),
        setting: str | None = None,
    ) -> list[tuple[Any, ...]]:
        """``(id, cosine, *columns)`` of the ``limit`` rows nearest ``query``.

        Exact unless ``setting`` (the approximate index's search breadth, a session
        setting sent first in the same round trip) is given: an exact search orders by
        ``distance + 0``, which no index serves, so the SQL text alone decides the plan,
        prepared or not, and equal distances come back by id."""
        distance = f"embedding::vector({int(dim)}) <=> %s::vector({int(dim)})"
        order = distance if setting is not None else f"({distance}) + 0, id"
        extra = "".join(f", {column}" for column in columns)
        sql = (
            f"SELECT id, 1 - ({distance}){extra} FROM {self.table} WHERE repo = {self.repo} "
            f"AND embedding IS NOT NULL{''.join(' AND ' + c for c in where)} "
            f"ORDER BY {order} LIMIT %s"
        )
        vector = np.ascontiguousarray(query, dtype=np.float32)
        values = [vector, *params, vector, limit]

        def work(conn: Connection) -> list[tuple[Any, ...]]:
            if setting is None:
                return conn.execute(sql, values).fetchall()
            with conn.pipeline():  # the setting and the query in one round trip
                conn.execute(setting)
                cursor = conn.execute(sql, values)
            return cursor.fetchall()

        return self.db.read(work)


if TYPE_CHECKING:

    def _the_postgres_collection_is_a_collection(collection: PgCollection) -> Collection:
        """Never called: mypy checks here that the PostgreSQL collection meets the protocol."""
        return collection
