"""A repository indexed while the engine runs (by ``tributary index`` in another
process, or the app's worker) is asked from the next search: its built-in server is
derived then, without a config change or a restart."""

from __future__ import annotations

import pytest

from tests.fakes import fake_server_object
from tributary.engine import paths
from tributary.engine.config.schema import Config
from tributary.engine.engine import Engine
from tributary.engine.model import SearchRequest, SourceStatus
from tributary.engine.sources.memory import memory_connector

pytestmark = pytest.mark.asyncio


async def test_an_index_that_appears_is_asked_by_the_next_search() -> None:
    connector = memory_connector(lambda cfg: fake_server_object(cfg.name, "--hits", "3", "--tool", "search_code"))
    async with Engine(Config(), connector=connector) as engine:  # type: ignore[arg-type]
        before = await engine.search(SearchRequest("parse invoice", top_k=5))
        assert before.error is not None and before.error.startswith("no source to ask")

        # What the indexer writes first: the keyword tier of a new repository.
        paths.indexes_dir().mkdir(parents=True, exist_ok=True)
        (paths.indexes_dir() / "repo-1234.files.sqlite").touch()
        after = await engine.search(SearchRequest("parse invoice", top_k=5))

        assert after.error is None
        assert {r.name: r.status for r in after.sources} == {"files": SourceStatus.OK}
        assert "files" in engine.effective_config.servers
        assert engine.effective_config.servers["files"].builtin == "files"


async def test_a_user_server_named_like_a_built_in_is_not_re_applied_each_search() -> None:
    from tributary.engine.config.schema import ServerConfig

    connector = memory_connector(lambda cfg: fake_server_object(cfg.name, "--hits", "3"))
    paths.indexes_dir().mkdir(parents=True, exist_ok=True)
    (paths.indexes_dir() / "repo-1234.files.sqlite").touch()
    mine = ServerConfig(name="files", command="unused", timeout=0.5)
    async with Engine(Config(servers={"files": mine}), connector=connector) as engine:  # type: ignore[arg-type]
        applied: list[Config] = []
        original = engine.apply_config

        async def counting(config: Config) -> None:
            applied.append(config)
            await original(config)

        engine.apply_config = counting  # type: ignore[method-assign]
        for _ in range(3):
            response = await engine.search(SearchRequest("parse invoice", top_k=5))
            assert response.error is None
        assert applied == []  # the user's "files" stands for the built-in: nothing to adopt
        assert engine.effective_config.servers["files"].builtin is None
