"""How a PostgreSQL keyword search weighs a word, and the memory an index build asks
for: plain functions, no server needed."""

from __future__ import annotations

import math

from tributary.engine.index.pg_store import build_memory
from tributary.engine.postgres.collection import idf


def test_a_rare_word_weighs_more_than_a_common_one() -> None:
    assert idf(3, 10_000) > idf(500, 10_000) > idf(4_000, 10_000) > 0
    assert idf(3, 10_000) == math.log((10_000 - 3 + 0.5) / 3.5)  # FTS5's formula


def test_a_word_in_most_chunks_still_weighs_a_little() -> None:
    assert idf(9_000, 10_000) == 1e-6
    assert idf(0, 0) == 1e-6


def test_an_index_build_gets_memory_for_its_graph_within_bounds() -> None:
    assert build_memory(1_000, 384) == "256MB"
    assert build_memory(1_000_000, 384) == "1831MB"
    assert build_memory(10_000_000, 1536) == "4096MB"
