"""One collection (keyword index + vectors + model record + vector cache) under both the
code index and the task history, on SQLite; the PostgreSQL twin is tested with the
real server in tests/index/test_postgres.py."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from tributary.engine.index.store import SqliteStore
from tributary.engine.localsearch.collection import KeywordIndex, SqliteCollection, rank_dense
from tributary.engine.localsearch.db import Connection, connect, migrate, transaction
from tributary.engine.localsearch.embedder import ModelInfo
from tributary.engine.localsearch.vectors import (
    VectorMatrix,
    VectorTable,
    blob_matrix,
    vector_bytes,
)
from tributary.engine.tasks.store import TaskStore

ROOT = Path(__file__).resolve().parents[2]
NOTES = VectorTable("notes_vec")
MODEL = ModelInfo("toy", 3, "1")


def _notes(path: Path) -> SqliteCollection[VectorMatrix]:
    conn = connect(path)
    migrate(conn, ["""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE notes (id INTEGER PRIMARY KEY, kind TEXT NOT NULL);
        CREATE VIRTUAL TABLE notes_fts USING fts5(title, body);
    """])  # fmt: skip

    def load(source: Connection) -> VectorMatrix | None:
        if not NOTES.exists(source):
            return None
        rows = source.execute("SELECT rowid, embedding FROM notes_vec ORDER BY rowid").fetchall()
        return VectorMatrix(np.array([r[0] for r in rows], dtype=np.int64), blob_matrix([r[1] for r in rows], 3))

    return SqliteCollection(conn, keywords=KeywordIndex("notes_fts", (4.0, 1.0)), vectors=NOTES, load=load)


def _write(notes: SqliteCollection[VectorMatrix], rows: list[tuple[int, str, str, str, list[float]]]) -> None:
    with transaction(notes.conn):
        for rowid, kind, title, body, vector in rows:
            notes.conn.execute("INSERT INTO notes(id, kind) VALUES (?, ?)", (rowid, kind))
            notes.conn.execute("INSERT INTO notes_fts(rowid, title, body) VALUES (?, ?, ?)", (rowid, title, body))
            notes.conn.execute("INSERT INTO notes_vec(rowid, embedding) VALUES (?, ?)", (rowid, vector_bytes(vector)))


def test_a_collection_is_searched_by_words_and_by_meaning(tmp_path: Path) -> None:
    notes = _notes(tmp_path / "notes.sqlite")
    assert notes.model() is None and notes.vectors() is None
    with transaction(notes.conn):
        notes.make_vector_table(MODEL)
    assert notes.model() == MODEL and notes.has_vector_table()
    _write(notes, [
        (1, "bug", "parser crash", "the parser fails on tabs", [1.0, 0.0, 0.0]),
        (2, "doc", "tabs in the guide", "a parser note", [0.0, 1.0, 0.0]),
        (3, "bug", "slow start", "start-up is slow", [0.6, 0.8, 0.0]),
    ])  # fmt: skip
    # The title's weight puts the note titled with the word first; scores are positive.
    assert [rowid for rowid, _ in notes.keyword('"parser"', 10)] == [1, 2]
    assert all(score > 0 for _, score in notes.keyword('"parser"', 10))
    # A filter joins the row table.
    bugs = notes.keyword('"parser" OR "tabs"', 10, join=" JOIN notes n ON n.id = notes_fts.rowid",
                         where=["n.kind = ?"], params=["bug"])  # fmt: skip
    assert [rowid for rowid, _ in bugs] == [1]
    # The vectors written since the last search are read again, and searched exactly.
    ranked = rank_dense(notes.vectors(), np.array([1.0, 0.0, 0.0], dtype=np.float32), 2)
    assert [rowid for rowid, _ in ranked] == [1, 3]
    assert ranked[1][1] == np.float32(0.6)
    keep = np.array([False, True, True])
    kept = rank_dense(notes.vectors(), np.array([1.0, 0.0, 0.0], dtype=np.float32), 5, keep)
    assert [rowid for rowid, _ in kept] == [3, 2]
    notes.conn.close()


def test_a_new_model_gets_an_empty_vector_table(tmp_path: Path) -> None:
    notes = _notes(tmp_path / "notes.sqlite")
    with transaction(notes.conn):
        notes.make_vector_table(MODEL)
    _write(notes, [(1, "bug", "a", "b", [1.0, 0.0, 0.0])])
    assert notes.vectors() is not None
    with transaction(notes.conn):
        notes.make_vector_table(ModelInfo("other", 3, "2"))
    assert notes.model() == ModelInfo("other", 3, "2")
    matrix = notes.vectors()
    assert matrix is not None and len(matrix.ids) == 0
    notes.conn.close()


def test_equal_scores_rank_by_id_and_an_empty_mask_finds_nothing() -> None:
    vectors = VectorMatrix(np.array([9, 4, 7], dtype=np.int64), np.ones((3, 2), dtype=np.float32) / np.sqrt(2))
    query = np.array([1.0, 0.0], dtype=np.float32)
    assert [rowid for rowid, _ in rank_dense(vectors, query, 3)] == [4, 7, 9]
    assert rank_dense(vectors, query, 3, np.zeros(3, dtype=bool)) == []
    assert rank_dense(None, query, 3) == []


def test_code_chunks_and_task_history_are_each_one_collection(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "index.sqlite")
    tasks = TaskStore(tmp_path / "tasks.sqlite")
    try:
        assert isinstance(store.collection, SqliteCollection)
        assert isinstance(tasks.collection, SqliteCollection)
        assert store.collection.keywords.table == "chunks_fts"
        assert tasks.collection.keywords.table == "tasks_fts"
    finally:
        store.close()
        tasks.close()


def _calls(path: Path) -> set[str]:
    """The SQL functions and numpy products a module writes out: ``bm25(`` in a string,
    ``@`` between arrays."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "bm25(" in node.value:
            found.add("bm25")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            found.add("matmul")
    return found


def test_the_stores_rank_only_through_their_collection() -> None:
    """Neither store writes its own BM25 query or vector product: the ranking over words
    and vectors is the collection's, on both backends."""
    for module in ("tributary/engine/index/store.py", "tributary/engine/tasks/store.py"):
        assert _calls(ROOT / module) == set(), module
    for module in ("tributary/engine/index/pg_store.py", "tributary/engine/tasks/pg_store.py"):
        text = (ROOT / module).read_text(encoding="utf-8")
        assert "<=>" not in text, module  # vector distance: PgCollection.dense
        assert "ts_rank(" not in text or module.endswith("index/pg_store.py"), module
