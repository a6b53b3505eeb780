"""The vector core both SQLite stores share: one model record, one vector table helper,
one cache that every write invalidates (by this connection or another)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.index.chunking import Chunk
from tributary.engine.index.store import FileRecord, SearchFilter, SqliteStore
from tributary.engine.localsearch.db import Connection, connect, migrate, read_meta, write_meta
from tributary.engine.localsearch.embedder import MODEL_KEYS, ModelInfo
from tributary.engine.localsearch.vectors import (
    LEGACY_MODEL_KEY,
    VectorCache,
    VectorMatrix,
    VectorTable,
    mark_writer,
    read_model,
    upgrade_model_record,
    write_model,
    writer_at_work,
)
from tributary.engine.tasks.model import ImportStats, Task
from tributary.engine.tasks.store import TaskStore

MODEL = ModelInfo("test-hashing", 64, "1")
META = "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


def _task(task_id: str, title: str) -> Task:
    return Task(id=task_id, date=datetime(2024, 1, 2, tzinfo=UTC), title=title, body="",
                files=("a.py",))  # fmt: skip


def _chunk(path: str, text: str) -> Chunk:
    return Chunk(path=path, language="python", kind="function", start_line=1, end_line=1,
                 content=text, symbol="f", embed_text=text)  # fmt: skip


def _legacy_layout(path: Path) -> None:
    """Rewrite a task history's model record as task histories kept it before: one
    ``embedder`` key, ``name|version|dim``."""
    conn = connect(path)
    info = read_model(conn)
    assert info is not None
    conn.execute(f"DELETE FROM meta WHERE key IN ({','.join('?' * len(MODEL_KEYS))})", MODEL_KEYS)
    write_meta(conn, LEGACY_MODEL_KEY, info.signature)
    conn.close()


def test_the_model_record_round_trips_and_reads_the_old_layout(tmp_path: Path) -> None:
    conn = connect(tmp_path / "m.sqlite")
    migrate(conn, [META])
    assert read_model(conn) is None
    write_meta(conn, LEGACY_MODEL_KEY, "all-MiniLM-L6-v2|abc;onnx-2|384")
    assert read_model(conn) == ModelInfo("all-MiniLM-L6-v2", 384, "abc;onnx-2")
    upgrade_model_record(conn)
    assert read_meta(conn, LEGACY_MODEL_KEY) is None
    assert [read_meta(conn, key) for key in MODEL_KEYS] == ["all-MiniLM-L6-v2", "384", "abc;onnx-2"]
    write_model(conn, MODEL)
    assert read_model(conn) == MODEL
    assert ModelInfo.from_signature(MODEL.signature) == MODEL
    assert ModelInfo.from_signature("no dimension") is None
    conn.close()


def test_a_vector_table_is_made_with_its_model_record(tmp_path: Path) -> None:
    conn = connect(tmp_path / "v.sqlite")
    migrate(conn, [META])
    table = VectorTable("things_vec", key="thing_id INTEGER PRIMARY KEY", metadata=("kind TEXT",))
    assert not table.exists(conn)
    table.create(conn, MODEL)
    assert table.exists(conn) and read_model(conn) == MODEL
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'things_vec'").fetchone()[0]
    assert "thing_id INTEGER PRIMARY KEY, embedding float[64] distance_metric=cosine, kind TEXT" in sql
    conn.close()


def test_the_cache_reloads_after_a_write_by_this_or_another_connection(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    conn = connect(path)
    migrate(conn, [META, "CREATE TABLE rows (id INTEGER PRIMARY KEY)"])
    loads: list[int] = []

    def load(conn: Connection) -> VectorMatrix:
        ids = [int(r[0]) for r in conn.execute("SELECT id FROM rows ORDER BY id")]
        loads.append(len(ids))
        return VectorMatrix(np.array(ids, dtype=np.int64), np.zeros((len(ids), 1), dtype=np.float32))

    cache = VectorCache(conn, load)
    assert cache.get() is cache.get() and loads == [0]
    conn.execute("INSERT INTO rows(id) VALUES (1)")  # this connection: data_version stays
    assert list(cache.get().ids) == [1]  # type: ignore[union-attr]
    other = connect(path)
    other.execute("INSERT INTO rows(id) VALUES (2)")  # another connection
    other.close()
    assert list(cache.get().ids) == [1, 2]  # type: ignore[union-attr]
    assert loads == [0, 1, 2]
    conn.close()


def test_a_large_matrix_is_read_again_beside_the_searches_while_a_writer_works(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    conn = connect(path, check_same_thread=False)
    migrate(conn, [META, "CREATE TABLE rows (id INTEGER PRIMARY KEY)"])
    conn.execute("INSERT INTO rows(id) VALUES (1), (2)")
    readers: list[threading.Thread] = []

    def load(source: Connection) -> VectorMatrix:
        readers.append(threading.current_thread())
        ids = [int(r[0]) for r in source.execute("SELECT id FROM rows ORDER BY id")]
        return VectorMatrix(np.array(ids, dtype=np.int64), np.zeros((len(ids), 1), dtype=np.float32))

    cache = VectorCache(conn, load, reopen=lambda: connect(path, readonly=True),
                        writing=writer_at_work, background_rows=2)  # fmt: skip
    assert list(cache.get().ids) == [1, 2]  # type: ignore[union-attr]  # the first read: here
    other = connect(path)
    other.execute("INSERT INTO rows(id) VALUES (3)")  # no writer at work: read here, at once
    assert list(cache.get().ids) == [1, 2, 3]  # type: ignore[union-attr]
    mark_writer(other, True)
    other.execute("INSERT INTO rows(id) VALUES (4)")
    assert list(cache.get().ids) == [1, 2, 3]  # type: ignore[union-attr]  # the old one, at once
    cache.settle()
    assert list(cache.get().ids) == [1, 2, 3, 4]  # type: ignore[union-attr]
    assert readers[:2] == [threading.current_thread()] * 2 and readers[2] is not readers[0]
    mark_writer(other, False)
    assert not writer_at_work(conn)
    other.close()
    conn.close()


def test_an_index_open_to_write_says_so_until_closed(tmp_path: Path) -> None:
    path = tmp_path / "w.files.sqlite"
    writer = SqliteStore(path)
    reader = SqliteStore(path, readonly=True)
    assert writer_at_work(reader.conn)
    writer.close()
    assert not writer_at_work(reader.conn)
    reader.close()


def test_a_task_history_of_the_old_layout_keeps_working(tmp_path: Path) -> None:
    path = tmp_path / "old.tasks.sqlite"
    embedder = HashingEmbedder()
    with TaskStore(path) as store:
        store.upsert([_task("1", "parse the invoice"), _task("2", "render the cart")],
                     ImportStats(source="test"), embedder=embedder)  # fmt: skip
        query = embedder.encode(["invoice"])[0]
        ranked = store.knn(query, 2)
    _legacy_layout(path)
    with TaskStore(path, readonly=True) as old:  # read as it is (a read-only open migrates nothing)
        assert old.model() == MODEL and old.has_vectors()
        assert old.knn(query, 2) == ranked
        assert old.stats().embedder == MODEL.signature
        assert old.get_meta(LEGACY_MODEL_KEY) is not None
    with TaskStore(path) as store:  # opened to write: the record is rewritten in the one layout
        assert store.get_meta(LEGACY_MODEL_KEY) is None
        assert store.model() == MODEL
        assert store.embed_missing(embedder) == 0  # the same model: nothing re-embedded
        assert store.knn(query, 2) == ranked


def test_both_stores_see_their_own_writes(tmp_path: Path) -> None:
    """The vector cache follows this connection's writes too, not only other processes'."""
    embedder = HashingEmbedder()
    with TaskStore(tmp_path / "t.tasks.sqlite") as tasks:
        tasks.upsert([_task("1", "parse the invoice")], ImportStats(source="test"), embedder=embedder)
        query = embedder.encode(["render cart"])[0]
        assert [rowid for rowid, _ in tasks.knn(query, 5)] == [1]
        tasks.upsert([_task("2", "render the cart")], ImportStats(source="test"), embedder=embedder)
        assert tasks.knn(query, 5)[0][0] == 2
    code = SqliteStore(tmp_path / "c.files.sqlite")
    try:
        code.set_model(MODEL)
        first, second = _chunk("a.py", "parse invoice"), _chunk("b.py", "render cart")
        known = {c.embed_hash: embedder.encode([c.embed_text])[0] for c in (first, second)}
        code.write_file(FileRecord("a.py", "h1", 1, 1, "python"), [first], known)
        assert len(code.dense_search(known[second.embed_hash], 5, SearchFilter())) == 1
        code.write_file(FileRecord("b.py", "h2", 1, 1, "python"), [second], known)
        hits = code.dense_search(known[second.embed_hash], 5, SearchFilter())
        assert len(hits) == 2 and hits[0][1] > 0.99
    finally:
        code.close()
