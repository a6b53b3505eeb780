"""One client's bad arguments are its own error, never the source's failure: they must
not open a circuit breaker that every other client then finds open."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.test_engine import make_config, make_engine
from tests.index.index_helpers import HashingEmbedder, make_repo
from tributary.engine.config.schema import Config
from tributary.engine.engine import Engine
from tributary.engine.index.manager import index_repository
from tributary.engine.model import SearchFilters, SearchRequest, SourceStatus
from tributary.engine.query.check import QueryError
from tributary.engine.repos.builtins import builtin_server
from tributary.engine.sources.health import BreakerState

LONG = "x" * 300  # longer than any file or folder name may be


@pytest.mark.asyncio
async def test_the_engine_refuses_a_filter_value_that_names_nothing_and_says_where() -> None:
    async with make_engine(make_config("alpha")) as engine:
        for _ in range(4):
            with pytest.raises(QueryError, match=r"the filter repo: value 1 has a part of 300 bytes.*"
                                                 r"\(at character 12 of the query\)"):
                await engine.search(SearchRequest(f"retry repo:{LONG}"))
        with pytest.raises(QueryError, match=r"the filter -path: .*control character.*request's filters"):
            await engine.search(SearchRequest("retry", filters=SearchFilters(exclude_paths=["a\x1b[2Jb"])))
        fine = await engine.search(SearchRequest("retry"))
        assert {r.name: r.status for r in fine.sources} == {"alpha": SourceStatus.OK}


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_bad_repos_sent_to_the_built_in_server_do_not_open_its_breaker(tmp_path: Path) -> None:
    index_dir = tmp_path / "indexes"
    index_repository(make_repo(tmp_path / "repo"), embedder=HashingEmbedder(), index_dir=index_dir)
    config = Config(servers={"files": builtin_server("files", index_dir)})
    async with Engine(config) as engine:
        # A client of the server itself (past the engine's own check) sends what the
        # engine refuses: each answer is an invalid-arguments error, none a failure.
        for _ in range(5):
            outcome = await engine.pool.call("files", "retry", top_k=5, scope={"repos": [LONG]})
            assert outcome.status is SourceStatus.ERROR, outcome
            assert outcome.error is not None and "refused the request" in outcome.error
            assert "300 bytes" in outcome.error
        assert engine.pool.state("files").breaker.state is BreakerState.CLOSED
        other = await engine.pool.call("files", "retry", top_k=5, scope={"repos": ["no/such-repo"]})
        assert other.status is SourceStatus.OK, other
