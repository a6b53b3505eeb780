"""A source's own warnings reach the response, and a degraded answer is never cached.

Over a real built-in files server (a subprocess) whose model has not loaded yet: it
answers on keywords alone and says so; the engine must say so too and must not keep
that answer in either cache level, then cache the full answer once the model is in.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from tests.index.index_helpers import HashingEmbedder, make_repo
from tributary.engine.cache import MemoryCache
from tributary.engine.cache.codec import to_jsonable
from tributary.engine.cache.keys import QUERY_PREFIX
from tributary.engine.cache.layers import ResponseCache
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.engine import Engine
from tributary.engine.index.manager import index_repository
from tributary.engine.model import SearchRequest, SourceStatus
from tributary.engine.repos.builtins import project_root

pytestmark = [pytest.mark.asyncio, pytest.mark.integration, pytest.mark.timeout(300)]

LOADING = "embedding model still loading: keyword search only for now"


def slow_model_files(index_dir: Path, gate: Path) -> ServerConfig:
    """The files server as the engine runs it, but its model arrives only once ``gate``
    exists; generous timeouts, so a loaded machine only makes it slower."""
    return ServerConfig(
        name="files", command=sys.executable,
        args=["-m", "tests.fakes.slow_model_files", str(gate), "--index-dir", str(index_dir),
              "--model-wait", "0"],
        env={"PYTHONPATH": str(project_root())}, cwd=str(project_root()),
        tool="search_code", timeout=60.0, startup_timeout=120.0, builtin="files",
    )


async def stored(cache: MemoryCache) -> int:
    """How many entries the engine has written to ``cache`` so far."""
    return (await cache.stats()).sets


async def test_a_keyword_only_answer_is_said_and_never_cached(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    index_dir = tmp_path / "indexes"
    index_repository(repo, embedder=HashingEmbedder(), index_dir=index_dir)
    gate = tmp_path / "model-may-load"
    config = Config(servers={"files": slow_model_files(index_dir, gate)})
    store = MemoryCache()
    async with Engine(config, cache=ResponseCache(store, config)) as engine:
        response = await engine.search(SearchRequest("parse invoice number", top_k=5))
        report = {r.name: r for r in response.sources}["files"]
        assert report.status is SourceStatus.OK and response.hits  # keywords still answer
        assert report.degraded and LOADING in report.warnings
        assert f"files: {LOADING}" in response.notes
        assert LOADING in (report.detail or "")
        shown = to_jsonable(response)  # what `tributary search --json` prints
        assert shown["sources"][0]["degraded"] is True and shown["notes"] == [f"files: {LOADING}"]
        assert await stored(store) == 0  # neither the query nor the source level kept it

        again = await engine.search(SearchRequest("parse invoice number", top_k=5))
        assert {r.name: r for r in again.sources}["files"].status is SourceStatus.OK  # asked again
        assert await stored(store) == 0

        gate.touch()  # the model loads now; poll until the server answers with it
        full = again
        for _ in range(600):
            full = await engine.search(SearchRequest("parse invoice number", top_k=5))
            if not {r.name: r for r in full.sources}["files"].degraded:
                break
            await asyncio.sleep(0.1)
        report = {r.name: r for r in full.sources}["files"]
        assert not report.degraded and not report.warnings and not full.notes
        assert await stored(store) == 2  # the full answer: query and source level
        cached = await engine.search(SearchRequest("parse invoice number", top_k=5))
        assert {r.name: r for r in cached.sources}["files"].status is SourceStatus.CACHED
        assert await store.invalidate(prefix=QUERY_PREFIX) == 1
