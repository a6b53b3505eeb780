"""A collection in the shared database: one repository's rows of one table, found by
their words (BM25 from a postings table of each row's lexemes and their weights, made
from its ``terms`` ``tsvector``) and by their meaning (``embedding``, a pgvector
column), with the model's record and the meta kept under the collection's scope in
``repo_meta``.

The PostgreSQL twin of ``tributary.engine.localsearch.collection``: code chunks
(``tributary.engine.index.pg_store``) and task history (``tributary.engine.tasks.pg_store``)
each keep one and define only their rows and their ranking.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from tributary.engine.localsearch.collection import Collection
from tributary.engine.localsearch.embedder import ModelInfo, Vectors
from tributary.engine.postgres.db import Connection, Database
from tributary.engine.postgres.repositories import read_meta, read_model, write_meta, write_model

TS_CONFIG = "tributary_code"  # the text-search configuration every collection's words use
# A keyword search without a filter reads at most this many of each word's best rows
# (by its BM25 weight, from the postings index): a word in fewer is read whole, and one
# in more adds its weight only to the rows where it weighs most.
POSTINGS_PER_WORD = 1000
# The best rows so found get every word's weight, looked up row by row.
COMPLETED_PER_SEARCH = 50
# The advisory-lock space of embedding passes (any number of Tributary's own: the key
# then tells a repository's code from its history).
_EMBED_LOCK_SPACE = 0x54524942  # "TRIB"


def idf(rows: int, total: int) -> float:
    """A word's BM25 idf as FTS5 computes it: ``log((N - n + 0.5) / (n + 0.5))`` for a
    word in ``rows`` of ``total``, at least 1e-6."""
    return max(1e-6, math.log((total - rows + 0.5) / (rows + 0.5)))


class PgCollection:
    """One repository's rows of ``table`` (with ``repo``, ``id``, ``terms`` and
    ``embedding`` columns); ``scope`` the collection's part of the repository's meta;
    ``postings`` the table of its rows' BM25 term weights (``repo``, ``lexeme``,
    ``impact`` and the row's id as ``postings_key``), if any."""

    def __init__(
        self, db: Database, repo: int, *, table: str, scope: str, postings: str | None = None,
        postings_key: str = "chunk",
    ) -> None:  # fmt: skip
        self.db = db
        self.postings_table = postings
        self.postings_key = postings_key
        self.repo = int(repo)
        self.table = table
        self.scope = scope

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

    # one embedding pass at a time --------------------------------------------------
    def embedding_turn(self) -> AbstractContextManager[bool]:
        """This collection's embedding pass, taken without waiting: True while the
        block holds it, False when a pass elsewhere (this machine or another sharing
        the database) embeds it now, and would only be joined in writing the same vectors."""
        return self.db.advisory_lock(_EMBED_LOCK_SPACE, self.repo * 2 + (self.table == "tasks"))

    def embedding_held(self) -> bool:
        """Whether a pass elsewhere embeds this collection now."""
        with self.embedding_turn() as ours:
            return not ours

    # searching ---------------------------------------------------------------------
    def postings(
        self,
        words: Sequence[tuple[str, float, int]],
        limit: int,
        *,
        per_word: int | None,
        complete: int = 0,
        columns: Sequence[str] = (),
        where: Sequence[str] = (),
        params: Sequence[Any] = (),
    ) -> list[tuple[Any, ...]]:
        """``(id, score, *columns)`` of the ``limit`` rows with the highest BM25 for the
        lexemes ``words`` (each with its idf and the number of rows holding it; a lexeme
        given twice counts twice), from the collection's postings table, best first, ties
        by id. ``per_word`` reads only each lexeme's that many best rows, from its index;
        None reads all of them, as a search that ``where`` narrows must (a word's best
        rows may all be filtered out).

        A row found through only some of its words has only their part of its score: the
        ``complete`` best rows found get the part of each word held by more rows than were
        read, looked up by row, so that the order at the top is BM25's."""
        if not words or self.postings_table is None:
            return []
        merged: dict[str, float] = {}
        held: dict[str, int] = {}
        for word, weight, rows in words:
            merged[word] = merged.get(word, 0.0) + weight
            held[word] = rows
        lexemes, idfs = list(merged), list(merged.values())
        extra = "".join(f", t.{column}" for column in columns)
        key, table = self.postings_key, self.postings_table
        if per_word is None:  # narrowed before the best are taken
            sql = (
                "WITH q AS (SELECT * FROM unnest(%s::text[], %s::float8[]) AS q(lexeme, idf)), "
                f"s AS (SELECT p.{key} AS found_id, SUM(q.idf * p.impact) AS score FROM q "
                f"JOIN {table} p ON p.repo = %s AND p.lexeme = q.lexeme GROUP BY p.{key}) "
                f"SELECT t.id, s.score{extra} FROM s JOIN {self.table} t ON t.id = s.found_id"
                f"{''.join(' AND ' + c for c in where)} ORDER BY s.score DESC, t.id LIMIT %s"
            )
            values: list[Any] = [lexemes, idfs, self.repo, *params, limit]
            return self.db.read(lambda c: c.execute(sql, values).fetchall())
        in_part = [held[word] > per_word for word in lexemes]
        partial = [word for word, part in zip(lexemes, in_part, strict=True) if part]
        sql = (  # each word's best rows; the best found completed (a subquery each); their columns
            "WITH q AS (SELECT * FROM unnest(%s::text[], %s::float8[], %s::bool[]) AS q(lexeme, idf, partial)), "
            f"s AS (SELECT p.{key} AS found_id, SUM(q.idf * p.impact) AS score, "
            "SUM(CASE WHEN q.partial THEN 0 ELSE q.idf * p.impact END) AS whole, "
            f"row_number() OVER (ORDER BY SUM(q.idf * p.impact) DESC, p.{key}) AS n FROM q "
            f"CROSS JOIN LATERAL (SELECT {key}, impact FROM {table} "
            f"WHERE repo = %s AND lexeme = q.lexeme ORDER BY impact DESC, {key} LIMIT %s) p "
            f"GROUP BY p.{key} ORDER BY score DESC, p.{key} LIMIT %s) "
            "SELECT t.id, CASE WHEN s.n <= %s THEN s.whole + COALESCE((SELECT SUM(p.impact * "
            f"(%s::float8[])[array_position(%s::text[], p.lexeme)]) FROM {table} p "
            f"WHERE p.{key} = s.found_id AND p.lexeme = ANY(%s::text[])), 0) "
            f"ELSE s.score END AS score{extra} FROM s JOIN {self.table} t ON t.id = s.found_id"
            f"{''.join(' AND ' + c for c in where)} ORDER BY score DESC, t.id"
        )
        values = [
            lexemes, idfs, in_part, self.repo, per_word, limit,
            complete if partial else 0, [merged[word] for word in partial], partial, partial, *params,
        ]  # fmt: skip
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
