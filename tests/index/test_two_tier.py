"""Two tiers: keyword and symbol search work once files are chunked; vectors follow."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.conftest import IndexTarget
from tests.index.index_helpers import HashingEmbedder, search_repository
from tributary.engine.index.manager import (
    embed_repository,
    index_path_for,
    index_repository,
    list_indexes,
    open_index_store,
)
from tributary.engine.index.progress import IndexProgress
from tributary.engine.index.search import encode_query
from tributary.engine.index.store import SearchFilter, SqliteStore
from tributary.engine.servers.files import FilesService


class _NoModel:
    """A loader that fails the test if the keyword tier ever asks for the model."""

    def __call__(self) -> HashingEmbedder:
        raise AssertionError("the keyword tier loaded the model")


def test_chunked_repository_answers_before_any_vector(repo: Path, index_dir: Path) -> None:
    from tributary.engine.index.indexer import Indexer

    index_path = index_path_for(repo, directory=index_dir)
    store = SqliteStore(index_path)
    try:
        stats = Indexer(store, repo, _NoModel(), index_path=index_path).run(embed=False)
        assert stats.files_indexed > 5 and stats.chunks_embedded == 0
        embedded, total = store.vector_counts()
        assert embedded == 0 and total == stats.chunks_written > 10
        assert store.model() is None
        assert store.keyword_search("parse invoice number", 5, SearchFilter())
        assert store.symbol_search(["parse_invoice_number"], 5, SearchFilter())
    finally:
        store.close()
    hits = search_repository(repo, "parse invoice number", embedder=HashingEmbedder(), index_dir=index_dir)
    assert hits and hits[0].path == "src/billing/invoice.py"


def test_dense_search_covers_only_embedded_chunks(
    repo: Path, index_dir: Path, embedder: HashingEmbedder
) -> None:
    index_repository(repo, embedder=embedder, index_dir=index_dir, embed=False)
    index_path = index_path_for(repo, directory=index_dir)
    store = SqliteStore(index_path)
    try:
        from tributary.engine.index.store import ModelChanged, ModelInfo

        store.set_model(ModelInfo(embedder.name, embedder.dim, embedder.version))
        rows = store.pending_embeds(3)
        assert len(rows) == 3
        info = ModelInfo(embedder.name, embedder.dim, embedder.version)
        vectors = dict(zip([r.embed_hash for r in rows], embedder.encode([r.text for r in rows]), strict=True))
        with pytest.raises(ModelChanged):  # vectors of another build are never written
            store.add_vectors(vectors, ModelInfo(embedder.name, embedder.dim, "other"))
        assert store.vector_counts()[0] == 0
        added = store.add_vectors(vectors, info)
        assert added >= 3
        embedded, total = store.vector_counts()
        assert embedded == added < total
        query = encode_query(embedder, "invoice")
        assert len(store.dense_search(query, 100, SearchFilter())) == added
        # keyword search still covers every file
        assert store.keyword_search("courier", 5, SearchFilter())
    finally:
        store.close()


def _vector_counts(repo: Path, at: IndexTarget) -> tuple[int, int]:
    store = open_index_store(repo, **at.kw)
    try:
        return store.vector_counts()
    finally:
        store.close()


def test_second_pass_embeds_every_waiting_chunk_once(
    repo: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    first = index_repository(repo, embedder=embedder, **at.kw, embed=False)
    assert embedder.texts == []
    assert _vector_counts(repo, at) == (0, first.chunks_written)
    hits = search_repository(repo, "parse invoice number", embedder=HashingEmbedder(), **at.kw)
    assert hits and hits[0].path == "src/billing/invoice.py"  # keywords alone, before any vector
    (info,) = list_indexes(**at.kw)  # listed and served before any vector
    assert info.status == "semantic index 0 % ready"
    service = FilesService(at.kw.get("index_dir"), embedder=HashingEmbedder(), backend=at.kw.get("backend"))
    try:
        served = service.search("parse invoice number", 5)
        assert served.hits and any("semantic index 0 % ready" in w for w in served.warnings)
    finally:
        service.close()
    events: list[IndexProgress] = []
    second = embed_repository(repo, embedder=embedder, **at.kw, on_progress=events.append)
    embedded, total = _vector_counts(repo, at)
    assert embedded == total == first.chunks_written
    assert second.chunks_embedded == len(embedder.texts) == len(set(embedder.texts))
    embeds = [e for e in events if e.phase == "embed"]
    assert embeds[-1].vectors_done == embeds[-1].vectors_total == total
    assert embeds[-1].fraction == 1.0
    # nothing waits any more: a further pass embeds nothing
    again = embed_repository(repo, embedder=embedder, **at.kw)
    assert again.chunks_embedded == 0
    assert list_indexes(**at.kw)[0].status == "ready"
    if at.postgres:  # the vector index is built once the vectors are there
        import psycopg

        with psycopg.connect(at.kw["backend"].dsn) as conn:
            row = conn.execute("SELECT COUNT(*) FROM pg_class WHERE relname LIKE 'chunks_vec_r%'").fetchone()
        assert row is not None and row[0] == 1
    from tributary.engine.repos.manage import remove_repository

    assert remove_repository(repo, **at.kw)
    assert list_indexes(**at.kw) == []
    if not at.postgres:
        assert list(at.kw["index_dir"].iterdir()) == []  # the embedding lock went with the index


def test_one_embedding_pass_per_index_at_a_time(repo: Path, index_dir: Path, embedder: HashingEmbedder) -> None:
    from filelock import FileLock

    from tributary.engine.localsearch.embed_lock import embed_lock_path

    index_repository(repo, embedder=embedder, index_dir=index_dir, embed=False)
    index_path = index_path_for(repo, directory=index_dir)
    with FileLock(embed_lock_path(index_path)):  # another process is embedding
        assert embed_repository(repo, embedder=embedder, index_dir=index_dir).chunks_embedded == 0
    assert embed_repository(repo, embedder=embedder, index_dir=index_dir).chunks_embedded > 0


def test_another_model_build_never_mixes_vectors(
    repo: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    """Chunks written, some vectors from build 1; a pass with build 2 re-embeds everything."""
    index_repository(repo, embedder=embedder, **at.kw)
    changed = repo / "src" / "extra.py"
    changed.write_text("def brand_new_helper():\n    return 1\n")
    index_repository(repo, embedder=embedder, **at.kw, embed=False)
    other = HashingEmbedder(version="2")
    stats = embed_repository(repo, embedder=other, **at.kw)
    assert stats.model_reset
    store = open_index_store(repo, **at.kw)
    try:
        model = store.model()
        assert model is not None and model.version == "2"
        embedded, total = store.vector_counts()
        assert embedded == total > 0
        assert store.keyword_search("brand new helper", 5, SearchFilter())
    finally:
        store.close()
    assert any("brand_new_helper" in text for text in other.texts)


def test_files_server_says_how_ready_the_semantic_index_is(
    repo: Path, index_dir: Path, embedder: HashingEmbedder
) -> None:
    index_repository(repo, embedder=embedder, index_dir=index_dir, embed=False)
    (info,) = list_indexes(index_dir)
    assert info.status == "semantic index 0 % ready"  # what the app's Indexes page shows
    service = FilesService(index_dir, embedder=embedder)
    try:
        result = service.search("parse invoice number", 5)
        assert result.hits and result.hits[0].path == "src/billing/invoice.py"
        assert any("semantic index 0 % ready" in w for w in result.warnings), result.warnings
        assert not any("another model" in w for w in result.warnings)
        assert any(w.endswith("cover every file") for w in result.warnings)
        from filelock import FileLock

        from tributary.engine.localsearch.embed_lock import indexing_lock_path

        with FileLock(indexing_lock_path(info.index_path)):  # a pass writes it now, elsewhere
            result = service.search("parse invoice number", 5)
        assert any(w.endswith("cover the files indexed so far (indexing now)") for w in result.warnings)
        embed_repository(repo, embedder=embedder, index_dir=index_dir)
        result = service.search("parse invoice number", 5)
        assert not any("semantic index" in w for w in result.warnings), result.warnings
        assert list_indexes(index_dir)[0].status == "ready"
    finally:
        service.close()


@pytest.mark.parametrize("embedded,total,expected", [(0, 10, "0 %"), (4, 10, "40 %"), (9, 10, "90 %")])
def test_semantic_warning_percent(embedded: int, total: int, expected: str) -> None:
    from tributary.engine.servers.files import semantic_warning

    assert f"semantic index {expected} ready" in semantic_warning("r", embedded, total)


def test_code_gets_its_vectors_before_tests_and_translations(tmp_path: Path, at: IndexTarget) -> None:
    """Meaning-based search covers the embedded share while the rest waits: a project's
    docs in ten languages (most of FastAPI's chunks) came between its code's, in hash
    order. The code goes first, then its docs, its tests, and translations last."""
    repo = tmp_path / "ordered"
    files = {
        "docs/fr/guide.md": "# Guide\n\nLe guide des factures et de leur envoi.\n",
        "docs/en/guide.md": "# Guide\n\nThe guide to invoices and how they are sent.\n",
        "tests/test_invoice.py": "def test_send():\n    assert send_invoice(1)\n",
        "src/invoice.py": "def send_invoice(number):\n    return number\n\n\nclass Courier:\n    pass\n",
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    index_repository(repo, embedder=HashingEmbedder(), **at.kw, embed=False)
    embedder = HashingEmbedder()
    embed_repository(repo, embedder=embedder, **at.kw)
    folders = [text.split("/")[0] + ("/" + text.split("/")[1] if text.startswith("docs/") else "")
               for text in embedder.texts]
    firsts = list(dict.fromkeys(folders))
    assert firsts == ["src", "docs/en", "tests", "docs/fr"], embedder.texts
    assert folders == sorted(folders, key=firsts.index)  # each group whole, in that order
    from tributary.engine.index.priors import EMBED_LAST, embed_order

    assert embed_order("code") == 0 < embed_order("test") < embed_order("translation") == EMBED_LAST


def test_the_answer_says_when_all_of_the_code_has_its_vectors(tmp_path: Path, at: IndexTarget) -> None:
    """While the rest waits, a search and the index list say that meaning-based search
    already covers all of the code."""
    repo = tmp_path / "half"
    (repo / "src").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "src" / "invoice.py").write_text("def send_invoice(number):\n    return number\n")
    for n in range(3):
        (repo / "docs" / f"page{n}.md").write_text(f"# Page {n}\n\nHow invoices are sent, part {n}.\n")
    index_repository(repo, embedder=HashingEmbedder(), **at.kw, embed=False)
    store = (open_index_store(repo, **at.kw) if at.postgres
             else SqliteStore(index_path_for(repo, directory=at.kw["index_dir"])))  # (for writing)
    try:
        from tributary.engine.index.store import ModelInfo

        embedder = HashingEmbedder()
        info = ModelInfo(embedder.name, embedder.dim, embedder.version)
        store.set_model(info)
        assert store.code_waiting()
        code = [row for row in store.pending_embeds(100) if row.order == 0]
        assert code and all(row.text.startswith("src/") for row in code)
        store.add_vectors(dict(zip([r.embed_hash for r in code], embedder.encode([r.text for r in code]),
                                   strict=True)), info)
        assert not store.code_waiting()
        embedded, total = store.vector_counts()
        assert 0 < embedded < total
    finally:
        store.close()
    (listed,) = list_indexes(**at.kw)
    if not at.postgres:  # (the shared database's list counts without reading the queue)
        assert listed.status.endswith("% ready, code done")
    service = FilesService(at.kw.get("index_dir"), embedder=HashingEmbedder(), backend=at.kw.get("backend"))
    try:
        served = service.search("send invoice", 5)
        assert any("chunks embedded, all of its code)" in w for w in served.warnings), served.warnings
    finally:
        service.close()


def test_a_queue_from_before_its_order_read_only_says_the_code_waits(tmp_path: Path) -> None:
    """An index made before the queue had its order, opened read-only (it cannot be
    migrated): the code is taken as still waiting. sqlean's errors are not sqlite3's,
    so the guard once let this one through."""
    import sqlite3

    repo = tmp_path / "old"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "invoice.py").write_text("def send_invoice(number):\n    return number\n")
    index_dir = tmp_path / "ix"
    index_repository(repo, embedder=HashingEmbedder(), index_dir=index_dir, embed=False)
    path = index_path_for(repo, directory=index_dir)
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("ALTER TABLE pending_embeds RENAME TO pending_with_order")
        conn.execute("CREATE TABLE pending_embeds (embed_hash TEXT PRIMARY KEY)")
    store = SqliteStore(path, readonly=True)
    try:
        assert store.code_waiting()
    finally:
        store.close()


def test_code_written_moments_ago_is_found_by_its_words_before_its_vector(tmp_path: Path, at: IndexTarget) -> None:
    """A function just written has no vector until the next embedding pass: it was ranked
    below every embedded chunk for lack of one, so an LLM client asking about the code
    it had just written got older code first. It now ranks by its words meanwhile."""
    repo = tmp_path / "written"
    repo.mkdir()
    for n in range(3):
        (repo / f"flag_{n}.py").write_text(
            f"def draw_flag_{n}(canvas):\n    \"\"\"Draw the stripes of flag {n}.\"\"\"\n    return canvas\n")
    for n in range(9):
        (repo / f"other_{n}.py").write_text(f"def parse_record_{n}(line):\n    return line.split()\n")
    index_repository(repo, embedder=HashingEmbedder(), **at.kw)
    (repo / "animals.py").write_text("def count_zebra_stripes(zebra):\n    return len(zebra.stripes)\n")
    index_repository(repo, embedder=HashingEmbedder(), **at.kw, embed=False)
    hits = search_repository(repo, "count the zebra's stripes", embedder=HashingEmbedder(), **at.kw)
    assert hits[0].path == "animals.py", [h.path for h in hits]
    assert hits[0].cosine is None and hits[0].dense_rank is None  # no meaning claimed for it
    embed_repository(repo, embedder=HashingEmbedder(), **at.kw)
    hits = search_repository(repo, "count the zebra's stripes", embedder=HashingEmbedder(), **at.kw)
    assert hits[0].path == "animals.py" and hits[0].cosine is not None
