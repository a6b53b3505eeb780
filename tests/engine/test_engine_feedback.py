"""Engine.feedback end to end: feedback through the facade moves the credited sources'
reputation (persistently) and so the ranking of the next search."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import fake_server_object
from tributary.engine.cache import make_cache
from tributary.engine.cache.layers import ResponseCache
from tributary.engine.config.schema import CacheConfig, Config, ServerConfig
from tributary.engine.engine import Engine
from tributary.engine.insights.reputation import ReputationStore
from tributary.engine.model import DedupGroup, DedupReason, GroupMember, Hit, SearchRequest
from tributary.engine.sources.memory import memory_connector

pytestmark = pytest.mark.asyncio


def make_engine(tmp_path: Path, *, cache: bool = False) -> Engine:
    servers = {n: ServerConfig(name=n, command="unused", timeout=2.0) for n in ("alpha", "beta")}
    config = Config(servers=servers)
    connector = memory_connector(lambda cfg: fake_server_object(cfg.name, "--hits", "4"))
    response_cache = (
        ResponseCache(make_cache(CacheConfig(backend="memory")), config) if cache else None
    )
    return Engine(config, connector=connector, cache=response_cache,
                  reputation=ReputationStore(tmp_path / "history.sqlite3"))


def top_source(hits: list[Hit]) -> str:
    return hits[0].source


@pytest.mark.parametrize("strategy", ["weighted", "composite"])
async def test_feedback_moves_reputation_and_the_next_ranking(tmp_path: Path, strategy: str) -> None:
    # The fake servers' hits are near-duplicates of each other: keep them apart, so
    # each source's hits compete on their own.
    request = SearchRequest("handler answers", top_k=10, strategy=strategy, assemble=False,
                            dedup=False)
    async with make_engine(tmp_path, cache=True) as engine:
        before = await engine.search(request)
        loser = top_source(before.hits)
        winner = "beta" if loser == "alpha" else "alpha"
        loser_hit = before.hits[0]
        winner_hit = next(h for h in before.hits if h.source == winner)
        for _ in range(6):
            moved = await engine.feedback(loser_hit, False, request.query)
            assert set(moved) == {loser}
            await engine.feedback(winner_hit, True, request.query)
        standings = {s.source: s for s in engine.reputations()}
        assert standings[loser].reputation < 0.5 < standings[winner].reputation
        assert (standings[loser].not_useful, standings[winner].useful) == (6, 6)
        # The same request again: not the cached old ranking, a re-fused one.
        after = await engine.search(SearchRequest(request.query, top_k=10, strategy=strategy,
                                                  assemble=False, dedup=False))
    assert top_source(after.hits) == winner
    rank = {source: min(i for i, h in enumerate(after.hits) if h.source == source)
            for source in (winner, loser)}
    assert rank[winner] < rank[loser]
    assert after.hits[0].parts.total > next(h for h in after.hits if h.source == loser).parts.total


async def test_feedback_credits_every_source_of_a_fused_hit(tmp_path: Path) -> None:
    async with make_engine(tmp_path) as engine:
        kept = Hit(id="k1", source="alpha", tool="search", title="t", content="c")
        twin = Hit(id="t1", source="beta", tool="search", title="t", content="c")
        group = DedupGroup(kept=kept, members=[GroupMember(twin, DedupReason.HASH, 1.0)])
        reputations = await engine.feedback(kept, True, "q", group=group)
        assert set(reputations) == {"alpha", "beta"}
        assert all(value == pytest.approx(0.6) for value in reputations.values())
        events = engine.reputation.events() if engine.reputation else []
        assert {(e.source, e.hit_id) for e in events} == {("alpha", "k1"), ("beta", "t1")}
        # Reset one source, then all.
        assert await engine.reset_reputation("beta") == 1
        assert {s.source: s.votes for s in engine.reputations()} == {"alpha": 1, "beta": 0}
        assert await engine.reset_reputation() == 1
        assert all(s.reputation == 0.5 for s in engine.reputations())


async def test_feedback_without_a_store_is_a_clear_error() -> None:
    config = Config(servers={"alpha": ServerConfig(name="alpha", command="unused")})
    engine = Engine(config, connector=memory_connector(lambda cfg: fake_server_object(cfg.name)))
    async with engine:
        with pytest.raises(RuntimeError, match="not stored"):
            await engine.feedback(Hit(id="x", source="alpha", tool="t", title="", content=""), True)
        assert engine.reputations() == []


async def test_feedback_is_validated_before_anything_is_stored(tmp_path: Path) -> None:
    from tributary.engine.insights.reputation import (
        MAX_HIT_ID_CHARS,
        MAX_QUERY_CHARS,
        FeedbackError,
    )

    async with make_engine(tmp_path) as engine:
        store = engine.reputation
        assert store is not None
        with pytest.raises(FeedbackError, match=r"unknown source 'nope' \(known: alpha, beta"):
            await engine.record_feedback({"nope": "abc"}, True)
        with pytest.raises(FeedbackError, match="unknown source"):  # one bad entry: none is stored
            await engine.record_feedback({"alpha": "abc", "ghost": "def"}, True)
        with pytest.raises(FeedbackError, match="hit_id: not a hit id"):
            await engine.record_feedback({"alpha": "x" * 100_000}, True)
        with pytest.raises(FeedbackError, match="hit_id: empty"):
            await engine.record_feedback({"alpha": ""}, True)
        with pytest.raises(FeedbackError, match="hit_id: not a hit id"):
            await engine.record_feedback({"alpha": "a\nb"}, True)
        with pytest.raises(FeedbackError, match=f"query: too long \\(1000000 characters, at most {MAX_QUERY_CHARS}\\)"):
            await engine.record_feedback({"alpha": "abc"}, True, "q" * 1_000_000)
        with pytest.raises(FeedbackError, match="query is not valid Unicode"):
            await engine.record_feedback({"alpha": "abc"}, True, "bad\ud800")
        assert store.events() == []
        moved = await engine.record_feedback({"alpha": "h" * MAX_HIT_ID_CHARS}, True, "q" * MAX_QUERY_CHARS)
        assert set(moved) == {"alpha"} and len(store.events()) == 1


async def test_an_unreadable_reputation_file_does_not_fail_the_search(tmp_path: Path) -> None:
    """A reputation read that fails (the file gone bad under the engine) ranked nothing:
    every search failed with it. Now the search is answered without reputations."""
    import sqlite3

    engine = make_engine(tmp_path)
    assert engine.reputation is not None

    def broken() -> dict[str, float]:
        raise sqlite3.DatabaseError("database disk image is malformed")

    engine.reputation.all_reputations = broken  # type: ignore[method-assign]
    async with engine:
        for _ in range(2):
            response = await engine.search(SearchRequest("handler answers", top_k=10, strategy="weighted"))
            assert response.error is None and response.hits
