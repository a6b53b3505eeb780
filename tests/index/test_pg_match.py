"""Which chunks a PostgreSQL keyword search ranks, and the memory an index build asks
for: plain functions, no server needed."""

from __future__ import annotations

from tributary.engine.index.pg_store import build_memory, match_query


def test_rare_words_match_alone_and_common_ones_in_pairs() -> None:
    counts = {"getfixturemarker": 3, "fixture": 500, "scope": 400, "request": 600}
    text = match_query(list(counts), counts, total=10_000, budget=10_000)
    assert text.split(" | ")[0] == "getfixturemarker"  # rarest first, alone
    assert "(scope & fixture)" in text
    assert not any(part in ("fixture", "scope", "request") for part in text.split(" | "))


def test_the_budget_stops_the_pairs_at_the_largest() -> None:
    counts = {"a": 50, "b": 2_000, "c": 3_000, "d": 9_000}
    text = match_query(list(counts), counts, total=10_000, budget=1_000)
    parts = text.split(" | ")
    assert parts[0] == "a" and "(b & c)" in parts  # 600 chunks expected together
    assert "(c & d)" not in parts  # 2,700 more would pass the budget


def test_a_lone_common_word_still_matches() -> None:
    assert match_query(["test"], {"test": 9_000}, total=10_000) == "test"


def test_an_index_build_gets_memory_for_its_graph_within_bounds() -> None:
    assert build_memory(1_000, 384) == "256MB"
    assert build_memory(1_000_000, 384) == "1831MB"
    assert build_memory(10_000_000, 1536) == "4096MB"
