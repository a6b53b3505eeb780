"""Incremental indexing: only changed files re-embed, deletions, model changes, search."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import IndexTarget
from tests.index.index_helpers import HashingEmbedder, search_repository
from tributary.engine.index import indexer
from tributary.engine.index import store as store_module
from tributary.engine.index.manager import (
    index_repository,
    list_indexes,
    open_index_store,
)
from tributary.engine.index.progress import IndexProgress, IndexStats
from tributary.engine.index.search import Weights, hybrid_search
from tributary.engine.index.store import IndexStore, SearchFilter, SqliteStore
from tributary.engine.repos.manage import remove_repository


def _index(repo: Path, at: IndexTarget, embedder: HashingEmbedder, **kw: object):  # type: ignore[no-untyped-def]
    return index_repository(repo, embedder=embedder, **at.kw, **kw)  # type: ignore[arg-type]


def test_full_then_noop_then_one_changed_file(
    repo: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    events: list[IndexProgress] = []
    first = _index(repo, at, embedder, on_progress=events.append)
    assert first.files_indexed == first.files_seen == first.files_total > 5
    assert first.chunks_embedded == len(set(embedder.texts)) > 10
    assert events[-1].phase == "done"
    assert any(e.phase == "chunk" and e.files_total == first.files_indexed for e in events)
    assert any(e.phase == "embed" and e.vectors_done == e.vectors_total > 0 for e in events)

    embedder.texts.clear()
    again = _index(repo, at, embedder)
    assert again.files_indexed == 0 and again.chunks_embedded == 0 and embedder.texts == []

    target = repo / "src/billing/invoice.py"
    target.write_text(target.read_text().replace("return -amount", "return -abs(amount)"))
    changed = _index(repo, at, embedder)
    assert changed.files_indexed == 1
    # Only the edited method's text was new; every other chunk of the file was reused.
    assert changed.chunks_embedded == 1
    assert len(embedder.texts) == 1 and "abs(amount)" in embedder.texts[0]


def test_touched_but_identical_file_is_not_rechunked(
    repo: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    _index(repo, at, embedder)
    target = repo / "web/app.js"
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    stats = _index(repo, at, embedder)
    assert stats.files_indexed == 0 and stats.files_unchanged == stats.files_seen


def test_deleted_file_leaves_the_index(
    repo: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    _index(repo, at, embedder)
    (repo / "cmd/server.go").unlink()
    stats = _index(repo, at, embedder)
    assert stats.files_deleted == 1
    store = open_index_store(repo, **at.kw)
    try:
        assert "cmd/server.go" not in store.file_states()
        if isinstance(store, SqliteStore):
            orphans = store.conn.execute(
                "SELECT COUNT(*) FROM chunks_vec WHERE chunk_id NOT IN (SELECT id FROM chunks)"
            ).fetchone()[0]
            assert orphans == 0
        found = store.keyword_search("geocodeAddress", 10, SearchFilter())
        assert "cmd/server.go" not in {
            c.path for c in store.chunks_by_id([i for i, _ in found]).values()
        }
    finally:
        store.close()


def test_model_change_reembeds_everything(
    repo: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    first = _index(repo, at, embedder)
    other = HashingEmbedder(version="2")
    stats = _index(repo, at, other)
    assert stats.model_reset
    assert stats.files_indexed == first.files_indexed
    assert stats.chunks_embedded == first.chunks_embedded
    store = open_index_store(repo, **at.kw)
    try:
        model = store.model()
        assert model is not None and model.version == "2" and model.name == "test-hashing"
    finally:
        store.close()


def test_search_filters_and_listing(repo: Path, at: IndexTarget, embedder: HashingEmbedder) -> None:
    _index(repo, at, embedder)
    hits = search_repository(repo, "invoice tax total", embedder=embedder, **at.kw)
    assert hits and hits[0].path == "src/billing/invoice.py"
    assert hits[0].repo.endswith("/repo")  # outside the home folder: its whole path
    # Each retriever's view of the hit comes through on either backend.
    top = hits[0]
    assert top.role == "code" and top.fused is not None and top.fused > 0
    assert top.cosine is not None and 0 < top.cosine <= 1 and top.dense_rank is not None
    assert top.bm25 is not None and top.bm25 > 0 and top.keyword_rank is not None
    only_go = search_repository(
        repo, "server port", language="go", embedder=embedder, **at.kw
    )
    assert only_go and {h.language for h in only_go} == {"go"}
    classes = search_repository(
        repo, "point cart", kinds=["class"], embedder=embedder, **at.kw
    )
    assert classes and {h.kind for h in classes} == {"class"}
    web = search_repository(
        repo, "cart shipment", path_glob="web/*", embedder=embedder, **at.kw
    )
    assert web and all(h.path.startswith("web/") for h in web)
    # CamelCase and path tokens are searchable words.
    camel = search_repository(
        repo, "calculator", embedder=embedder, **at.kw, kinds=["class"]
    )
    assert camel[0].symbol == "InvoiceCalculator"
    by_path = search_repository(repo, "http_client", embedder=embedder, **at.kw)
    assert by_path[0].path == "src/net/http_client.py"

    infos = list_indexes(**at.kw)
    assert len(infos) == 1 and infos[0].root == repo.resolve() and infos[0].chunks > 0
    assert remove_repository(repo, **at.kw)
    assert list_indexes(**at.kw) == []


def test_a_pass_that_changes_nothing_still_marks_the_index_up_to_date(
    repo: Path, at: IndexTarget, embedder: HashingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-index that finds no file changed writes no file, yet the index was checked
    then: its listing's time follows it (the Indexes page's *Last update*, ``index list``),
    also in a later process, which reads it from the index itself."""
    clock = [1_700_000_000.0]
    monkeypatch.setattr(indexer.time, "time", lambda: clock[0])
    _index(repo, at, embedder)
    (first,) = list_indexes(**at.kw)
    assert first.updated_at is not None
    clock[0] = first.updated_at + 86_400.0  # a day later, nothing changed
    again = _index(repo, at, embedder)
    assert again.files_indexed == 0
    (later,) = list_indexes(**at.kw)
    assert later.updated_at == clock[0]


def test_a_path_or_its_tail_picks_that_file_s_chunks(
    repo: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    _index(repo, at, embedder)
    store = open_index_store(repo, **at.kw)
    try:
        whole = store.chunk_ids_matching("src/billing/invoice.py")
        assert whole and len(set(store.file_ids(list(whole)).values())) == 1
        assert store.chunk_ids_matching("billing/invoice.py") == whole  # a tail of the path
        assert store.chunk_ids_matching("src/*/invoice.py") == whole  # a glob
        assert store.chunk_ids_matching("illing/invoice.py") == frozenset()  # not a part of a name
        assert store.chunk_ids_matching("src/billing/invoice%py") == frozenset()  # LIKE's % is a letter
    finally:
        store.close()


def test_candidates_are_the_two_searches_run_side_by_side(
    repo: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    _index(repo, at, embedder)
    store = open_index_store(repo, **at.kw)
    try:
        vector = embedder.encode(["invoice tax total"])[0]
        filters = (SearchFilter(), SearchFilter(languages=("go",)), SearchFilter(kinds=("class",)))
        for where in filters:
            dense, keyword = store.candidates("invoice tax total", vector, 20, where)
            assert dense and dense == store.dense_search(vector, 20, where)
            assert keyword == store.keyword_search("invoice tax total", 20, where)
        assert store.candidates("invoice", None, 5, SearchFilter()) == (
            [], store.keyword_search("invoice", 5, SearchFilter())
        )
        # A function in place of the vector embeds the query once, beside the keyword
        # search (SQLite: on the worker; PostgreSQL: here, the keyword query on the worker).
        calls: list[str] = []

        def embed() -> np.ndarray:
            calls.append(threading.current_thread().name)
            return vector

        lazy = store.candidates("invoice tax total", embed, 20, SearchFilter())
        assert lazy == store.candidates("invoice tax total", vector, 20, SearchFilter())
        assert len(calls) == 1
        assert (calls[0] != threading.main_thread().name) == (at.name == "sqlite")
    finally:
        store.close()


def test_keyword_search_leaves_out_terms_most_chunks_hold(
    tmp_path: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    # Every file says "widget"; one also says "sprocket". OR-ing "widget" in would match
    # every chunk for no BM25 weight; alone, it still finds them all.
    repo = tmp_path / "many"
    (repo / "pkg").mkdir(parents=True)
    for i in range(6):
        extra = "sprocket alignment\n" if i == 3 else ""
        (repo / "pkg" / f"m{i}.py").write_text(
            f'"""widget module {i}"""\n{extra}\ndef widget_{i}():\n    return {i}\n')
    _index(repo, at, embedder)
    store = open_index_store(repo, **at.kw)
    try:
        paths = store.chunks_by_id
        both = store.keyword_search("widget sprocket", 50, SearchFilter())
        assert {c.path for c in paths([cid for cid, _ in both]).values()} == {"pkg/m3.py"}
        alone = store.keyword_search("widget", 50, SearchFilter())
        assert {c.path for c in paths([cid for cid, _ in alone]).values()} == {
            f"pkg/m{i}.py" for i in range(6)}
    finally:
        store.close()


def test_batches_embed_in_the_background_and_share_texts_across_the_boundary(
    tmp_path: Path, at: IndexTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tiny batches, so several are in flight; every file holds the same function (one
    # embedding text) plus one of its own, and the model is slow enough to overlap.
    monkeypatch.setattr(indexer, "BATCH_CHUNKS", 2)
    repo = tmp_path / "many"
    repo.mkdir()
    shared = "def shared_helper(value):\n    return value * 2\n"
    for i in range(12):
        own = f"def own_{i}(x):\n    return x + {i}\n"
        (repo / f"mod_{i:02d}.py").write_text(shared + "\n\n" + own)
    embedder = HashingEmbedder(delay_s=0.002)
    stats = _index(repo, at, embedder)
    assert stats.files_indexed == 12
    # Each distinct text went to the model once, even when a batch started before the
    # batch holding its first copy was written.
    assert len(embedder.texts) == len(set(embedder.texts)) == stats.chunks_embedded
    store = open_index_store(repo, **at.kw)
    try:
        assert store.counts() == (12, stats.chunks_total)
        for i in (0, 5, 11):
            hits = store.keyword_search(f"own_{i}", 5, SearchFilter())
            assert hits, f"own_{i} was not written"
        vector = embedder.encode([f"{{path}}\ndef own_{7}(x)"])[0]
        assert store.dense_search(vector, 3, SearchFilter())
    finally:
        store.close()


def test_no_eta_until_the_rate_means_something(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([1.0, 4.0, 4.0])
    monkeypatch.setattr(indexer.time, "perf_counter", lambda: next(clock))
    state = indexer._ProgressState(files_total=10, started=0.0)
    stats = IndexStats(root=Path("r"), index_path=Path("i"))
    early = state.event("index", stats, 1000, 500, None, force=True)  # 1 s in: too soon
    tiny = state.event("index", stats, 100_000, 10, None, force=True)  # 0.01 % done
    settled = state.event("index", stats, 1000, 500, None, force=True)
    assert early is not None and early.eta_s is None
    assert tiny is not None and tiny.eta_s is None
    assert settled is not None and settled.eta_s == pytest.approx(4.0)


def test_a_name_finds_its_definition_first(
    tmp_path: Path, at: IndexTarget, embedder: HashingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The class's own chunk is long (a docstring, fields); its short methods' symbols
    # hold its name too, so by words alone a method outranks the class.
    repo = tmp_path / "widgets"
    (repo / "pkg").mkdir(parents=True)
    doc = "\n".join(f"    field_{i}: int = {i}  # the {i}th setting of a registry of widgets" for i in range(12))
    methods = "".join(f"\n    def op_{i}(self):\n        return {i}\n" for i in range(4))
    (repo / "pkg" / "registry.py").write_text(
        f'class WidgetRegistry:\n    """Keeps every widget the app made, by name."""\n\n{doc}\n{methods}',
        encoding="utf-8",
    )
    (repo / "pkg" / "model.py").write_text(
        "class Widget:\n    def refresh_state(self):\n        return None\n", encoding="utf-8"
    )
    # a Markdown section named like the class: its heading is its symbol, yet it defines nothing
    (repo / "widgets.md").write_text("# WidgetRegistry\n\nHow the registry keeps widgets.\n", encoding="utf-8")
    (repo / "pkg" / "test_model.py").write_text(  # a helper defined inside a test, and only called elsewhere
        "def test_refresh():\n    def make_widget_stub():\n        return object()\n\n    assert make_widget_stub()\n"
        "\n\ndef test_other():\n    assert make_widget_stub\n",
        encoding="utf-8",
    )
    _index(repo, at, embedder)
    store = open_index_store(repo, **at.kw)
    try:
        where = SearchFilter()
        defining = store.symbol_search({"widgetregistry"}, 10, where)
        assert [(c.path, c.symbol) for c in store.chunks_by_id(defining).values()] == [
            ("pkg/registry.py", "WidgetRegistry")
        ]
        # a method by its own name, any case; a word that is only part of a name is no match
        (method,) = store.symbol_search({"REFRESH_STATE".casefold()}, 10, where)
        assert store.chunks_by_id([method])[method].symbol == "Widget.refresh_state"
        assert store.symbol_search({"refresh"}, 10, where) == []
        # a definition inside another chunk is found by its text; a mere use is not one
        (nested,) = store.symbol_search({"make_widget_stub"}, 10, where)
        assert store.chunks_by_id([nested])[nested].symbol == "test_refresh"
        # ... unless the name is in so many chunks that it reads as a word (here: two)
        monkeypatch.setattr(store_module, "NESTED_MAX_USES", 1)
        assert store.symbol_search({"make_widget_stub"}, 10, where) == []
        monkeypatch.undo()
        assert store.symbol_search({"widgetregistry"}, 10, SearchFilter(kinds=("function",))) == []

        def first(query: str, weights: Weights) -> str | None:
            hits = hybrid_search(store, query, embedder.encode([query])[0], repo="widgets", weights=weights)
            return f"{hits[0].path}:{hits[0].symbol}" if hits else None

        assert first("WidgetRegistry", Weights()) == "pkg/registry.py:WidgetRegistry"
        # what the list changes
        assert first("WidgetRegistry", Weights(symbol=0.0)) != "pkg/registry.py:WidgetRegistry"
        # a name typed as its words, as a person types it
        assert first("widget registry", Weights()) == "pkg/registry.py:WidgetRegistry"
        assert first("refresh state", Weights()) == "pkg/model.py:Widget.refresh_state"
        # a phrase that spells no name the index defines changes nothing
        spelled_nothing = [
            hybrid_search(store, "registry widgets", embedder.encode(["registry widgets"])[0], repo="widgets",
                          weights=weights)
            for weights in (Weights(), Weights(symbol=0.0))
        ]
        assert spelled_nothing[0] == spelled_nothing[1]
    finally:
        store.close()


def _response_js(tmp_path: Path, at: IndexTarget, embedder: HashingEmbedder, text: str) -> IndexStore:
    """The index of a repository holding only ``lib/response.js`` (Express's shape:
    methods assigned to ``res``), opened."""
    repo = tmp_path / "web"
    (repo / "lib").mkdir(parents=True)
    (repo / "lib" / "response.js").write_text(text, encoding="utf-8")
    _index(repo, at, embedder)
    return open_index_store(repo, **at.kw)


def test_a_question_writing_a_qualified_name_finds_its_definition(
    tmp_path: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    """"how does res.redirect build the Location header": the chunk setting the header
    matched every word and the one named came eighth; the named one now leads, and a
    statement naming it (a commit's "Add test for …") is left as it was."""
    store = _response_js(tmp_path, at, embedder, (
        "var res = module.exports = {};\n\n"
        "/**\n * Set the Location header to `url`: the location header of the response.\n */\n\n"
        "res.location = function location(url) {\n  return this.set('Location', encodeUrl(url));\n};\n\n"
        "/**\n * Redirect to the given `url` with a status.\n */\n\n"
        "res.redirect = function redirect(url) {\n  var status = 302;\n"
        "  address = this.location(url).get('Location');\n  this.status(status);\n};\n"))
    try:
        def first(query: str, weights: Weights | None = None) -> str | None:
            hits = hybrid_search(store, query, embedder.encode([query])[0], repo="web", weights=weights)
            return hits[0].symbol if hits else None

        asked = "how does res.redirect build the location header of the response"
        assert first(asked) == "res.redirect"
        assert first(asked, Weights(symbol=0.0)) == "res.location"  # what the list changes
        said = "res.redirect builds the location header of the response"
        assert first(said) == first(said, Weights(symbol=0.0))
    finally:
        store.close()


def test_a_lookup_writing_a_class_and_its_method_apart_finds_that_method(
    tmp_path: Path, at: IndexTarget, embedder: HashingEmbedder
) -> None:
    """"APIRouter include_router" in FastAPI: the class came first and
    ``FastAPI.include_router`` (shorter) before ``APIRouter.include_router``, the one
    both names point at."""
    repo = tmp_path / "api"
    repo.mkdir()
    (repo / "routing.py").write_text(
        "class APIRouter:\n    def add_route(self, path):\n        return path\n\n"
        "    def include_router(self, router, prefix=''):\n        return [router, prefix]\n", encoding="utf-8")
    (repo / "applications.py").write_text(
        "class FastAPI:\n    def include_router(self, router):\n        return self.router.include_router(router)\n",
        encoding="utf-8")
    _index(repo, at, embedder)
    store = open_index_store(repo, **at.kw)
    try:
        for query in ("APIRouter include_router", "include_router of APIRouter"):
            hits = hybrid_search(store, query, embedder.encode([query])[0], repo="api")
            assert hits[0].symbol == "APIRouter.include_router", query
        hits = hybrid_search(store, "include_router", embedder.encode(["include_router"])[0], repo="api")
        assert hits[0].symbol == "FastAPI.include_router"  # one name alone: the shorter, as before
    finally:
        store.close()


def test_a_lookup_prefers_the_name_as_written(tmp_path: Path, at: IndexTarget, embedder: HashingEmbedder) -> None:
    # Express's own shape: a method assigned to ``res`` and a private helper whose name
    # differs only in case; the lookup compares last parts case-folded.
    store = _response_js(tmp_path, at, embedder, (
        "var res = module.exports = {};\n\n"
        "/**\n * Transfer the file at the given `path`.\n */\n\n"
        "res.sendFile = function sendFile(path, options) {\n  var file = send(this.req, path);\n"
        "  sendfile(this, file, options);\n};\n\n"
        "// pipe the send file stream\nfunction sendfile(res, file, options) {\n  file.pipe(res);\n"
        "  return file;\n}\n"))
    try:
        for query in ("res.sendFile", "sendFile"):
            hits = hybrid_search(store, query, embedder.encode([query])[0], repo="web")
            assert hits[0].symbol == "res.sendFile", query
        # the lookup's own list, as written in lower case: the helper first
        ordered = store.symbol_search({"sendfile"}, 10, SearchFilter(), frozenset({"sendfile"}))
        assert [store.chunks_by_id([cid])[cid].symbol for cid in ordered] == ["sendfile", "res.sendFile"]
    finally:
        store.close()
