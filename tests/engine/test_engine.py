"""The Engine facade end to end, over in-memory fake servers (no subprocesses)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import fake_server_object
from tributary.engine.cache import make_cache
from tributary.engine.cache.layers import ResponseCache
from tributary.engine.config.schema import (
    CacheConfig,
    Config,
    RoutingConfig,
    RoutingRule,
    ServerConfig,
)
from tributary.engine.engine import Engine
from tributary.engine.insights.store import QueryLog
from tributary.engine.model import SearchRequest, SourceStatus
from tributary.engine.sources.memory import memory_connector

pytestmark = pytest.mark.asyncio

FAKE_ARGS: dict[str, tuple[str, ...]] = {
    "alpha": ("--hits", "6"),
    "beta": ("--hits", "4", "--structured"),
    "broken": ("--mode", "error"),
    "slow": ("--mode", "hang"),
    "clock": ("--tool", "get_time"),  # its one tool is no search
}


def make_config(*names: str, rules: list[RoutingRule] | None = None) -> Config:
    servers = {n: ServerConfig(name=n, command="unused", timeout=0.5) for n in names}
    return Config(servers=servers, routing=RoutingConfig(rules=rules or []))


def make_engine(config: Config, **kwargs: object) -> Engine:
    connector = memory_connector(lambda cfg: fake_server_object(cfg.name, *FAKE_ARGS[cfg.name]))
    return Engine(config, connector=connector, **kwargs)  # type: ignore[arg-type]


async def test_search_fuses_every_source_and_reports_each() -> None:
    async with make_engine(make_config("alpha", "beta")) as engine:
        response = await engine.search(SearchRequest("retry logic", top_k=10))
    assert response.error is None
    statuses = {r.name: r.status for r in response.sources}
    assert statuses == {"alpha": SourceStatus.OK, "beta": SourceStatus.OK}
    assert response.hits, "fused hits expected"
    assert {h.source for h in response.hits} <= {"alpha", "beta"}
    scores = [h.score for h in response.hits]
    assert scores == sorted(scores, reverse=True)
    assert all(h.parts.parts for h in response.hits)  # every hit explains its score
    assert response.context is not None and response.context.token_count > 0
    assert response.metrics.raw_hits == 10


async def test_one_failing_and_one_hung_source_do_not_fail_the_search() -> None:
    async with make_engine(make_config("alpha", "broken", "slow")) as engine:
        response = await engine.search(SearchRequest("retry", top_k=10))
    by_name = {r.name: r for r in response.sources}
    assert by_name["alpha"].status is SourceStatus.OK
    assert by_name["broken"].status is SourceStatus.ERROR and by_name["broken"].error
    assert by_name["slow"].status is SourceStatus.TIMEOUT
    assert response.error is None
    assert {h.source for h in response.hits} == {"alpha"}


async def test_every_source_failing_is_one_clear_error() -> None:
    async with make_engine(make_config("broken", "slow")) as engine:
        response = await engine.search(SearchRequest("retry", top_k=10))
    assert response.hits == []
    assert response.error is not None
    assert "broken" in response.error and "slow" in response.error


async def test_stream_yields_an_update_per_source_then_the_final_response() -> None:
    async with make_engine(make_config("alpha", "beta", "slow")) as engine:
        updates = []
        async with contextlib.aclosing(engine.search_stream(SearchRequest("retry logic", top_k=10))) as s:
            async for update in s:
                updates.append(update)
    assert [u.final for u in updates] == [False, False, False, True]
    assert {u.source.name for u in updates[:-1] if u.source} == {"alpha", "beta", "slow"}
    # In-between responses carry the context of what has answered so far, so a hung
    # source does not hold it back; the last source to answer shares the final
    # response (fused once, not twice).
    early = updates[0].response
    assert early.context is not None and early.context.chunks
    assert {c.source for c in early.context.chunks} <= {"alpha", "beta"}
    assert updates[-2].source is not None and updates[-2].source.name == "slow"
    assert updates[-2].response is updates[-1].response
    assert updates[-1].response.context is not None


async def test_search_fuses_once_and_a_stream_without_partials_yields_only_the_end() -> None:
    async with make_engine(make_config("alpha", "beta", "slow")) as engine:
        fused: list[bool] = []
        respond = engine._respond

        def counting(*args: Any, **kwargs: Any) -> Any:
            fused.append(kwargs["final"])
            return respond(*args, **kwargs)

        engine._respond = counting  # type: ignore[method-assign]
        response = await engine.search(SearchRequest("q", top_k=10))
        assert fused == [True] and len(response.sources) == 3
        fused.clear()
        stream = engine.search_stream(SearchRequest("q2", top_k=10), partials=False)
        async with contextlib.aclosing(stream) as updates:
            finals = [u.final async for u in updates]
    assert finals == [True] and fused == [True]


async def test_routing_asks_only_the_matched_servers_and_says_why_others_were_skipped() -> None:
    rule = RoutingRule(name="docs", pattern=r"\bdocs?\b", servers=["beta"])
    async with make_engine(make_config("alpha", "beta", rules=[rule])) as engine:
        response = await engine.search(SearchRequest("read the docs", top_k=10))
    by_name = {r.name: r for r in response.sources}
    assert response.route.matched_rules == ["docs"]
    assert by_name["beta"].status is SourceStatus.OK
    assert by_name["alpha"].status is SourceStatus.SKIPPED
    assert by_name["alpha"].detail and "docs" in by_name["alpha"].detail
    assert {h.source for h in response.hits} == {"beta"}


async def test_a_repeated_query_is_served_from_the_cache(tmp_path: Path) -> None:
    config = make_config("alpha")
    cache = ResponseCache(make_cache(CacheConfig(backend="memory")), config)
    async with make_engine(config, cache=cache) as engine:
        first = await engine.search(SearchRequest("retry", top_k=10))
        second = await engine.search(SearchRequest("retry", top_k=10))
        fresh = await engine.search(SearchRequest("retry", top_k=10, use_cache=False))
    assert first.metrics.cache_hits == 0
    assert second.metrics.cache_hits == 1
    assert [h.id for h in second.hits] == [h.id for h in first.hits]
    assert fresh.metrics.cache_hits == 0


async def test_every_search_is_recorded_in_the_query_log(tmp_path: Path) -> None:
    query_log = QueryLog.open(tmp_path / "history.sqlite")
    async with make_engine(make_config("alpha"), query_log=query_log) as engine:
        await engine.search(SearchRequest("first question", top_k=10))
        await engine.search(SearchRequest("second question", top_k=10))
        recent = engine.query_log.recent(5) if engine.query_log else []
    assert [entry.query for entry in recent] == ["second question", "first question"]


async def test_an_answer_from_the_cache_is_recorded_as_one(tmp_path: Path) -> None:
    """A repeated search answered from the cache was missing from the query log, so
    ``tributary stats`` and the Insights page counted fewer searches than were made and
    a cache hit rate of 0 %; its sources were not called and are not counted as calls."""
    query_log = QueryLog.open(tmp_path / "history.sqlite")
    config = make_config("alpha")
    cache = ResponseCache(make_cache(CacheConfig(backend="memory")), config)
    async with make_engine(config, cache=cache, query_log=query_log) as engine:
        await engine.search(SearchRequest("retry", top_k=10))
        second = await engine.search(SearchRequest("retry", top_k=10))
        assert second.metrics.cache_hits == 1
        summary = query_log.summary()
    assert summary.queries == 2 and summary.cache_hits >= 1
    alpha = summary.sources["alpha"]
    assert (alpha.calls, alpha.cached) == (1, 1)


async def test_test_server_lists_tools_and_probes() -> None:
    async with make_engine(make_config("alpha")) as engine:
        result = await engine.test_server(engine.config.servers["alpha"], "probe")
    assert result.ok
    assert [t.name for t in result.tools] == ["search"]
    assert result.probe_hits and result.latency_ms is not None


async def test_apply_config_adds_a_server() -> None:
    async with make_engine(make_config("alpha")) as engine:
        await engine.apply_config(make_config("alpha", "beta"))
        response = await engine.search(SearchRequest("q", top_k=10))
    assert {r.name for r in response.sources} == {"alpha", "beta"}


async def test_a_new_strategy_re_fuses_cached_source_hits_without_asking_again() -> None:
    config = make_config("alpha")
    cache = ResponseCache(make_cache(CacheConfig(backend="memory")), config)
    async with make_engine(config, cache=cache) as engine:
        first = await engine.search(SearchRequest("retry", top_k=10))
        again = await engine.search(SearchRequest("retry", top_k=10, strategy="vote"))
    assert again.strategy == "vote"
    assert [r.status for r in again.sources] == [SourceStatus.CACHED]
    assert {h.id for h in again.hits} == {h.id for h in first.hits}
    assert again.context is not None and again.error is None


async def test_starting_sources_also_loads_the_token_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    # A one-shot CLI waits for its servers to start; the tokenizer loads meanwhile, so
    # the first pipeline run does not pay for it.
    from tributary.engine.pipeline import tokens

    monkeypatch.setattr(tokens, "_tokenizer", None)
    async with make_engine(make_config("alpha")) as engine:
        states = await engine.start_sources(["alpha"])
        assert tokens._tokenizer is not None
        assert {s.name: s.status for s in states.values()} == {"alpha": "ready"}


async def test_a_query_that_is_not_unicode_is_refused_before_any_source() -> None:
    from tributary.engine.query.check import QueryError

    async with make_engine(make_config("alpha")) as engine:
        with pytest.raises(QueryError, match="lone surrogate U\\+D800 at character 3"):
            await engine.search(SearchRequest("ab\ud800", top_k=5))
        assert (await engine.search(SearchRequest("retry", top_k=5))).hits


async def test_query_syntax_filters_sources_and_paths() -> None:
    async with make_engine(make_config("alpha", "beta")) as engine:
        only = await engine.search(SearchRequest("retry source:beta", top_k=10))
        excluded = await engine.search(SearchRequest("retry -path:src/alpha/", top_k=10))
        nothing = await engine.search(SearchRequest("retry lang:go", top_k=10))
    assert only.request.query == "retry"
    assert {h.source for h in only.hits} == {"beta"}
    assert {r.name: r.status for r in only.sources}["alpha"] == SourceStatus.SKIPPED
    assert excluded.hits and all(not (h.path or "").startswith("src/alpha/") for h in excluded.hits)
    assert nothing.hits == []  # the fakes' hits are Python files
    # ... and the answer says the filter left them all out, not that nothing was found
    emptied = [note for note in nothing.notes if note.startswith("lang:go left out all ")]
    assert emptied and emptied[0].endswith("hits the sources gave (they are in python)")
    assert not [note for note in excluded.notes if "left out" in note]


async def test_a_server_with_no_search_tool_is_skipped_with_the_reason() -> None:
    """Once its tools are known to offer nothing to search with, a server is not asked
    again: the route skips it and says why, and the search still answers."""
    async with make_engine(make_config("alpha", "clock")) as engine:
        await engine.search(SearchRequest("retry", top_k=10))  # starts both, lists tools
        decision = engine.route("retry")
        assert decision.servers == ["alpha"]
        assert "no search-like tool" in decision.skipped["clock"]
        response = await engine.search(SearchRequest("retry again", top_k=10))
    by_name = {r.name: r for r in response.sources}
    assert by_name["alpha"].status is SourceStatus.OK
    assert by_name["clock"].status is SourceStatus.SKIPPED
    assert by_name["clock"].detail and "no search-like tool" in by_name["clock"].detail
    assert response.error is None


async def test_the_engine_starts_its_servers_through_the_gate_it_is_given() -> None:
    """A benchmark or an embedder can set how many servers start at once."""
    from tributary.engine.sources.start_gate import StartGate, Ticket

    class Counting(StartGate):
        entered = 0

        async def enter(self, priority: int = 1) -> Ticket:
            Counting.entered += 1
            return await super().enter(priority)

    async with make_engine(make_config("alpha", "beta"), start_gate=Counting(slots=1)) as engine:
        response = await engine.search(SearchRequest("retry logic", top_k=10))
    assert {r.status for r in response.sources} == {SourceStatus.OK}
    assert Counting.entered == 2


async def test_third_party_file_hits_are_marked_with_their_roles_share() -> None:
    """A grep or file-name server weighs no roles: its changelog and lock-file hits are
    marked with what their role keeps, the built-in servers' are not (they weigh it)."""
    from tributary.engine.engine import mark_roles
    from tributary.engine.index import priors
    from tributary.engine.model import ROLE_FACTOR, Hit

    def found(source: str, path: str) -> Hit:
        return Hit(id=f"{source}:{path}", source=source, tool="search", title=path, content="retry", path=path)

    rg = [found("rg", "CHANGES.rst"), found("rg", "src/retry.py"), found("rg", "uv.lock")]
    files = [found("files", "CHANGES.rst")]
    mark_roles({"rg": rg, "files": files}, "where is retry handled", {"rg"})
    assert [h.metadata.get(ROLE_FACTOR) for h in rg] == [0.5, None, 0.5]
    assert ROLE_FACTOR not in files[0].metadata
    asked = [found("rg", "CHANGES.rst")]
    mark_roles({"rg": asked}, "what does the changelog say about retry", {"rg"})
    assert ROLE_FACTOR not in asked[0].metadata  # the question asks for it
    # A file-name search lists a page's translations beside it: they are translations.
    names = [found("fs", "docs/en/docs/response-model.md"), found("fs", "docs/de/docs/response-model.md")]
    mark_roles({"fs": names}, "how is the response model used", {"fs"})
    assert names[0].metadata[ROLE_FACTOR] == priors.FACTORS[priors.DOC]
    assert names[1].metadata[ROLE_FACTOR] == priors.FACTORS[priors.TRANSLATION]
