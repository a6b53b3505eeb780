"""A collection in the shared database: one repository's rows of one table, found by
their words (``terms``, a ``tsvector`` ranked by ``ts_rank``, or BM25 from a postings
table of each row's lexemes and their weights) and by their meaning
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
    ``scope`` the collection's part of the repository's meta; ``postings`` the table of
    its rows' BM25 term weights (``repo``, ``lexeme``, ``impact``, ``chunk``), if any."""

    def __init__(
        self, db: Database, repo: int, *, table: str, scope: str, weights: str, postings: str | None = None
    ) -> None:
        self.db = db
        self.postings_table = postings
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

    def postings(
        self,
        words: Sequence[tuple[str, float]],
        limit: int,
        *,
        per_word: int | None,
        columns: Sequence[str] = (),
        where: Sequence[str] = (),
        params: Sequence[Any] = (),
    ) -> list[tuple[Any, ...]]:
        """``(id, score, *columns)`` of the ``limit`` rows with the highest BM25 for the
        lexemes ``words`` (each with its idf; a lexeme given twice counts twice), from the
        collection's postings table, best first, ties by id. ``per_word`` reads only each
        lexeme's that many best rows, from its index; None reads all of them, as a search
        that ``where`` narrows must (a word's best rows may all be filtered out)."""
        if not words or self.postings_table is None:
            return []
        best = (
            f"CROSS JOIN LATERAL (SELECT chunk, impact FROM {self.postings_table} "
            "WHERE repo = %s AND lexeme = q.lexeme ORDER BY impact DESC, chunk LIMIT %s) p"
            if per_word is not None
            else f"JOIN {self.postings_table} p ON p.repo = %s AND p.lexeme = q.lexeme"
        )
        scored = (
            "SELECT p.chunk, SUM(q.idf * p.impact) AS score "
            f"FROM unnest(%s::text[], %s::float8[]) AS q(lexeme, idf) {best} GROUP BY p.chunk"
        )
        extra = "".join(f", t.{column}" for column in columns)
        if where:  # narrowed before the best are taken
            sql = (
                f"SELECT t.id, s.score{extra} FROM ({scored}) s JOIN {self.table} t ON t.id = s.chunk"
                f"{''.join(' AND ' + c for c in where)} ORDER BY s.score DESC, t.id LIMIT %s"
            )
        else:  # the best first, then their columns
            sql = (
                f"SELECT t.id, s.score{extra} FROM ({scored} ORDER BY score DESC, p.chunk LIMIT %s) s "
                f"JOIN {self.table} t ON t.id = s.chunk ORDER BY s.score DESC, t.id"
            )
        limits = [] if per_word is None else [per_word]
        values = [[w for w, _ in words], [idf for _, idf in words], self.repo, *limits, *params, limit]
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
