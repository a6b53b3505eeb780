"""The local search core: FTS terms, RRF and the meta table, as both indexes use them."""

from __future__ import annotations

from pathlib import Path

from tributary.engine.localsearch.db import connect, migrate, read_meta, transaction, write_meta
from tributary.engine.localsearch.fts import fts_query, fts_terms, split_identifiers
from tributary.engine.localsearch.fusion import best_first, rrf
from tributary.engine.tasks.store import query_terms


def test_identifier_splitting_and_queries() -> None:
    assert (
        split_identifiers("class LogXML(HTTPServer): parseURL") == "Log XML HTTP Server parse URL"
    )
    query = fts_query("Fix the junitxml LogXML 'quote' handling; OR NOT")
    assert query is not None
    assert '"junitxml"' in query and '"logxml"' in query and '"xml"' in query
    assert '"the"' not in query and '"not"' not in query  # stopwords, and FTS operators inert
    assert fts_query("the of and") is None


def test_terms_split_snake_and_camel_case_and_keep_unicode_words() -> None:
    assert fts_terms("junit_xml LogXML") == ["junit", "xml", "logxml", "log"]
    assert fts_terms("naïve Übersicht café") == ["naïve", "übersicht", "café"]
    assert fts_terms("a x y") == []  # one-letter words say nothing


def test_numbers_are_terms_only_where_asked() -> None:
    assert fts_terms("HTTP 404 on py3 2to3") == ["http", "py3", "to3"]
    assert fts_terms("HTTP 404 on py3 2to3", numbers=True) == ["http", "404", "py3", "2to3"]
    assert query_terms("Fix #1234: LogXML in 3.12") == ["fix", "1234", "logxml", "log", "xml", "12"]


def test_terms_are_capped() -> None:
    text = " ".join(f"word{i}" for i in range(100))
    assert len(fts_terms(text)) == 48
    assert fts_terms(text, limit=5) == [f"word{i}" for i in range(5)]


def test_rrf_fuses_ranks() -> None:
    fused = rrf([(1.0, [1, 2]), (1.0, [2, 3])], k=60)
    assert [item for item, _ in best_first(fused)] == [2, 1, 3]
    assert fused[2] == 1 / 62 + 1 / 61
    weighted = rrf([(3.0, ["a"]), (1.0, ["b"])], k=1)
    assert weighted == {"a": 1.5, "b": 0.5}


def test_meta_round_trips_inside_and_outside_a_transaction(tmp_path: Path) -> None:
    conn = connect(tmp_path / "m.sqlite")
    migrate(conn, ["CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"])
    assert read_meta(conn, "model") is None
    write_meta(conn, "model", "a")
    with transaction(conn):
        write_meta(conn, "model", "b")
    assert read_meta(conn, "model") == "b"
    conn.close()


def test_snake_case_identifiers_are_terms_whole_and_dunders_are_not() -> None:
    from tributary.engine.localsearch.fts import identifier_terms, keyword_terms, split_identifiers

    assert identifier_terms("call deny_unknown_fields() or _print_SeqFormula, not __init__") == [
        "denyunknownfields", "printseqformula",
    ]
    assert "denyunknownfields" in split_identifiers("if cattrs.deny_unknown_fields() {")
    assert keyword_terms("deny_unknown_fields ignored") == ["deny", "unknown", "fields", "ignored", "denyunknownfields"]
    assert identifier_terms("a" * 40 + "_" + "b" * 40) == []  # too long to be a name
