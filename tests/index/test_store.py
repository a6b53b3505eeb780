"""Storage: migrations are transactional and versioned; the schema loads sqlite-vec; the
keyword index's statistics stay those of a fresh index."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.index.manager import index_path_for, index_repository
from tributary.engine.index.store import MIGRATIONS, SearchFilter, SqliteStore
from tributary.engine.localsearch.db import connect, current_version, migrate


def test_migrations_apply_once_and_record_versions(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a.db")
    steps = ["CREATE TABLE one (x)", "CREATE TABLE two (y); INSERT INTO two VALUES (1)"]
    assert migrate(conn, steps) == 2
    assert migrate(conn, steps) == 2  # idempotent
    assert conn.execute("SELECT COUNT(*) FROM two").fetchone()[0] == 1
    versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == [1, 2]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    conn.close()


def test_failed_migration_rolls_back_entirely(tmp_path: Path) -> None:
    conn = connect(tmp_path / "b.db")
    migrate(conn, ["CREATE TABLE one (x)"])
    with pytest.raises(Exception, match="syntax"):
        migrate(conn, ["CREATE TABLE one (x)", "CREATE TABLE half (z); THIS IS NOT SQL"])
    assert current_version(conn) == 1
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'half'").fetchone() is None
    assert not conn.in_transaction


def test_newer_database_is_refused(tmp_path: Path) -> None:
    conn = connect(tmp_path / "c.db")
    migrate(conn, ["CREATE TABLE one (x)", "CREATE TABLE two (x)"])
    with pytest.raises(RuntimeError, match="newer"):
        migrate(conn, ["CREATE TABLE one (x)"])


def test_store_schema_and_vec_extension(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.files.sqlite")
    assert current_version(store.conn) == len(MIGRATIONS)
    assert store.conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
    store.close()



def _keyword_scores(index: Path, query: str) -> dict[tuple[str, int], float]:
    store = SqliteStore(index, readonly=True)
    try:
        hits = store.keyword_search(query, 100, SearchFilter())
        chunks = store.chunks_by_id([cid for cid, _ in hits])
        return {(chunks[cid].path, chunks[cid].start_line): round(score, 9) for cid, score in hits}
    finally:
        store.close()


def _write_repo(root: Path, version: int) -> None:
    """Six modules, one of which routes requests; ``version`` changes every one."""
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    for n in range(6):
        call = "route_request(request)" if n == 0 else f"compute_total(values, {n})"
        body = "\n\n".join(
            f"def handler_{n}_{i}(request, values):\n    return {call} + {i + version}\n"
            for i in range(3 + version)
        )
        (root / "pkg" / f"mod{n}.py").write_text(body, encoding="utf-8")


def test_replaced_files_leave_the_keyword_statistics_of_a_fresh_index(tmp_path: Path) -> None:
    """BM25 counts documents and their lengths; a file indexed again must not leave its
    old chunks in those counts, or every score drifts with each edit."""
    repo = tmp_path / "repo"
    _write_repo(repo, 0)
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "edited")
    _write_repo(repo, 2)  # every file edited, then indexed again
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "edited")
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "fresh")

    edited = _keyword_scores(index_path_for(repo, directory=tmp_path / "edited"), "route request")
    fresh = _keyword_scores(index_path_for(repo, directory=tmp_path / "fresh"), "route request")
    assert edited and edited == fresh


def test_an_index_from_before_exact_statistics_is_refilled_once(tmp_path: Path) -> None:
    """Opening an index for writing rebuilds a keyword index made with other texts (or
    with the old delete-by-rowid table) from the chunks, once."""
    repo = tmp_path / "repo"
    _write_repo(repo, 1)
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")
    path = index_path_for(repo, directory=tmp_path / "idx")
    before = _keyword_scores(path, "route request")
    store = SqliteStore(path)
    store.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")
    store.set_meta("fts_texts", "0")
    store.close()
    assert _keyword_scores(path, "route request") == {}
    SqliteStore(path).close()  # a writer opens it: refilled
    assert _keyword_scores(path, "route request") == before


def _term_counts(store: SqliteStore, terms: list[str]) -> int:
    """How many times ``_common_terms`` counts a term over the keyword index."""
    counted: list[str] = []
    store.conn.set_trace_callback(lambda sql: counted.append(sql) if "LIMIT" in sql and "MATCH" in sql else None)
    try:
        store._common_terms(terms)
    finally:
        store.conn.set_trace_callback(None)
    return len(counted)


def test_word_counts_outlive_small_writes_and_follow_large_ones(tmp_path: Path) -> None:
    """While an indexer writes, a search must not count its words over the whole index
    at every write; once a tenth of the index is new, the counts are taken again."""
    repo = tmp_path / "repo"
    _write_repo(repo, 6)
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")
    path = index_path_for(repo, directory=tmp_path / "idx")
    reader = SqliteStore(path, readonly=True)
    try:
        assert _term_counts(reader, ["route", "compute"]) == 2
        assert _term_counts(reader, ["route", "compute"]) == 0  # kept
        (repo / "pkg" / "extra.py").write_text("def one_more(values):\n    return values\n", encoding="utf-8")
        index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")  # one chunk of ~60
        assert _term_counts(reader, ["route", "compute"]) == 0
        _write_repo(repo, 8)  # every file written again: all of its chunks are new
        index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")
        assert _term_counts(reader, ["route", "compute"]) == 2
        assert reader.keyword_search("route request", 10, SearchFilter())
    finally:
        reader.close()
