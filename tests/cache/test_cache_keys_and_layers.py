"""Cache keys and fingerprints (no secrets, the right things change them) and the
two cache levels the engine uses (query and source), with tag invalidation."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path

import pytest

from tributary.engine.cache import open_response_cache
from tributary.engine.cache.codec import to_jsonable
from tributary.engine.cache.keys import (
    config_fingerprint,
    query_key,
    repo_tag,
    server_fingerprint,
    source_key,
)
from tributary.engine.cache.layers import ResponseCache
from tributary.engine.cache.memory import MemoryCache
from tributary.engine.cache.redact import Scrubber, referenced_variables, secret_values
from tributary.engine.config.schema import CacheConfig, Config, RepoConfig, ServerConfig
from tributary.engine.model import Hit, SearchRequest, SearchResponse, SourceReport, SourceStatus

SECRET = "tok_live_7f3a9b2c1d"


def make_config(repo: Path | None = None) -> Config:
    return Config(
        servers={
            "web": ServerConfig(
                name="web",
                transport="http",
                url="https://search.example/mcp",
                headers={"Authorization": "Bearer ${WEB_TOKEN}"},
            ),
            "files": ServerConfig(name="files", command="python", builtin="files"),
            "git": ServerConfig(
                name="git", command="uvx", args=["mcp-server-git"], env={"K": "${GIT_KEY:-x}"}
            ),
        },
        repos=[RepoConfig(path=str(repo))] if repo else [],
        cache=CacheConfig(backend="memory"),
    )


def make_response(request: SearchRequest, *statuses: SourceStatus) -> SearchResponse:
    names = ["files", "web", "git"]
    return SearchResponse(
        request=request,
        hits=[Hit(id="h1", source="files", tool="search_code", title="t", content="body")],
        sources=[
            SourceReport(name, status, 5.0, 1)
            for name, status in zip(names, statuses, strict=False)
        ],
    )


# --- keys -----------------------------------------------------------------------------


def test_fingerprints_use_references_not_secret_values(monkeypatch: pytest.MonkeyPatch) -> None:
    config = make_config()
    monkeypatch.setenv("WEB_TOKEN", SECRET)
    first = config_fingerprint(config), server_fingerprint(config.servers["web"])
    monkeypatch.setenv("WEB_TOKEN", "a-rotated-token-value")
    assert (config_fingerprint(config), server_fingerprint(config.servers["web"])) == first
    request = SearchRequest(query=f"why {SECRET}?")  # even a query quoting a secret
    for key in (
        query_key(request, first[0]),
        source_key(config.servers["web"], "search", {"q": "x"}),
    ):
        assert SECRET not in key
        assert key[:2] in ("q:", "s:") and len(key) == 34


def test_query_key_ignores_request_id_whitespace_and_use_cache() -> None:
    fp = config_fingerprint(make_config())
    a = SearchRequest(query="  cache   invalidation\n")
    b = SearchRequest(query="cache invalidation", use_cache=False)
    assert a.request_id != b.request_id
    assert query_key(a, fp) == query_key(b, fp)
    # An issue is read by its lines: the same words on one line are another question.
    issue = "Title of it\n```python\nrun()\n```"
    assert query_key(SearchRequest(query=issue + "  \r\n"), fp) == query_key(SearchRequest(query=issue), fp)
    assert query_key(SearchRequest(query=issue), fp) != query_key(SearchRequest(query=issue.replace("\n", " ")), fp)


@pytest.mark.parametrize(
    "change",
    [
        {"query": "Cache invalidation"},
        {"top_k": 50},
        {"strategy": "composite"},
        {"max_tokens": 4000},
        {"sources": ["files"]},
        {"source_weights": {"files": 2.0}},
        {"dedup": False},
    ],
)
def test_every_answer_changing_option_changes_the_query_key(change: dict[str, object]) -> None:
    fp = config_fingerprint(make_config())
    base = SearchRequest(query="cache invalidation")
    changed = copy.deepcopy(base)
    for name, value in change.items():
        setattr(changed, name, value)
    assert query_key(base, fp) != query_key(changed, fp)


def test_config_fingerprint_tracks_answers_not_cache_settings() -> None:
    base = make_config()
    fp = config_fingerprint(base)
    cache_only = make_config()
    cache_only.cache.ttl_s = 5
    cache_only.path = Path("/elsewhere.yaml")
    assert config_fingerprint(cache_only) == fp
    fused = make_config()
    fused.fusion.rrf_k = 60
    assert config_fingerprint(fused) != fp


def test_server_fingerprint_tracks_what_the_server_answers() -> None:
    server = make_config().servers["git"]
    fp = server_fingerprint(server)
    server.weight, server.timeout, server.enabled = 3.0, 9.0, False
    assert server_fingerprint(server) == fp
    server.args = ["mcp-server-git", "--repository", "/r"]
    assert server_fingerprint(server) != fp


def test_an_upgrade_stops_an_older_releases_answers_matching(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another release ranks and assembles differently: what an older one cached is not
    its answer, however fresh."""
    from tributary.engine.cache import keys

    request, config = SearchRequest("retry logic"), make_config()
    server = config.servers["git"]
    before = query_key(request, config_fingerprint(config)), source_key(server, "search", {"q": "x"})
    monkeypatch.setattr(keys, "code_identity", lambda: "99.0.0+0")
    after = query_key(request, config_fingerprint(config)), source_key(server, "search", {"q": "x"})
    assert before[0] != after[0] and before[1] != after[1]


def test_secret_values_come_from_referenced_variables() -> None:
    config = make_config()
    assert referenced_variables(config) == {"WEB_TOKEN", "GIT_KEY"}
    env = {"WEB_TOKEN": SECRET, "GIT_KEY": "abc", "UNRELATED": "zzzzzzzz"}
    assert secret_values(config, env) == frozenset({SECRET})  # "abc" is too short to mask
    assert Scrubber([SECRET, SECRET[:6]]).text(f"x{SECRET}y {SECRET[:6]}") == "x****y ****"


def test_repo_tag_is_the_same_for_any_spelling(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    assert repo_tag(tmp_path / "r") == repo_tag(f"{tmp_path}/./r/") == f"repo:{tmp_path / 'r'}"


# --- the two levels -------------------------------------------------------------------


@pytest.mark.asyncio
async def test_query_level_round_trip_marks_the_answer_cached() -> None:
    layer = ResponseCache(MemoryCache(), make_config())
    first = SearchRequest(query="where is the cache")
    response = make_response(first, SourceStatus.OK, SourceStatus.SKIPPED)
    assert await layer.get_response(first) is None
    assert await layer.put_response(first, response)
    again = SearchRequest(query="where is  the cache")
    cached = await layer.get_response(again)
    assert cached is not None
    assert cached.request is again
    assert cached.hits == response.hits
    assert [s.status for s in cached.sources] == [SourceStatus.CACHED, SourceStatus.SKIPPED]
    assert (cached.metrics.cache_hits, cached.metrics.cache_lookups) == (1, 1)
    assert (
        await layer.get_response(SearchRequest(query="where is the cache", use_cache=False)) is None
    )
    stats = await layer.stats()
    assert (stats.hits, stats.misses, stats.size) == (1, 1, 1)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "statuses",
    [
        (SourceStatus.OK, SourceStatus.TIMEOUT),
        (SourceStatus.OK, SourceStatus.ERROR),
        (SourceStatus.OK, SourceStatus.CIRCUIT_OPEN),
    ],
)
async def test_incomplete_answers_are_not_cached(statuses: tuple[SourceStatus, ...]) -> None:
    layer = ResponseCache(MemoryCache(), make_config())
    request = SearchRequest(query="q")
    assert not await layer.put_response(request, make_response(request, *statuses))
    failed = make_response(request, SourceStatus.OK)
    failed.error = "every source failed"
    assert not await layer.put_response(request, failed)
    assert await layer.get_response(request) is None


@pytest.mark.asyncio
async def test_repo_change_drops_answers_from_builtin_servers(tmp_path: Path) -> None:
    config = make_config(repo=tmp_path)
    layer = ResponseCache(MemoryCache(), config)
    from_files = SearchRequest(query="a")
    from_web = SearchRequest(query="b", sources=["web"])
    await layer.put_response(from_files, make_response(from_files, SourceStatus.OK))
    web_only = make_response(from_web, SourceStatus.SKIPPED, SourceStatus.OK)
    await layer.put_response(from_web, web_only)
    files = config.servers["files"]
    await layer.put_hits(files, "search_code", {"query": "a"}, [make_response(from_files).hits[0]])
    assert await layer.invalidate_repo(str(tmp_path) + "/") == 2
    assert await layer.get_response(from_files) is None
    assert await layer.get_hits(files, "search_code", {"query": "a"}) is None
    assert await layer.get_response(from_web) is not None


@pytest.mark.asyncio
async def test_source_level_hits_round_trip_and_follow_server_config() -> None:
    config = make_config()
    layer = ResponseCache(MemoryCache(), config)
    git = config.servers["git"]
    hits = make_response(SearchRequest(query="q")).hits
    await layer.put_hits(git, "search", {"query": "q", "limit": 5}, hits)
    assert await layer.get_hits(git, "search", {"limit": 5, "query": "q"}) == hits
    assert await layer.get_hits(git, "search", {"query": "q", "limit": 6}) is None

    changed = make_config()
    changed.servers["git"].args = ["mcp-server-git", "--repository", "/elsewhere"]
    changed.servers["web"].weight = 2.0  # does not change what web answers
    request = SearchRequest(query="q", sources=["web"])
    await layer.put_response(request, make_response(request, SourceStatus.SKIPPED, SourceStatus.OK))
    assert await layer.apply_config(changed) == 1  # git's hits; web's answer survives…
    assert await layer.get_hits(git, "search", {"query": "q", "limit": 5}) is None
    # …but whole answers are keyed on the config, so that one no longer matches.
    assert await layer.get_response(request) is None


@pytest.mark.asyncio
async def test_undecodable_entries_are_dropped() -> None:
    layer = ResponseCache(MemoryCache(), make_config())
    request = SearchRequest(query="q")
    await layer.cache.set(layer.key_for(request), {"request": {"query": 5}})
    assert await layer.get_response(request) is None
    assert (await layer.stats()).size == 0


@pytest.mark.asyncio
async def test_no_secret_reaches_keys_or_stored_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """${VAR} values never reach cache keys or values (SQLite file inspected)."""
    monkeypatch.setenv("WEB_TOKEN", SECRET)
    config = make_config()
    config.cache = CacheConfig(backend="sqlite")
    layer = open_response_cache(config, path=tmp_path / "cache.sqlite")
    request = SearchRequest(query=f"what does {SECRET} unlock")
    response = make_response(request, SourceStatus.OK, SourceStatus.OK)
    response.hits[0].content = f"header Authorization: Bearer {SECRET}"
    response.hits[0].metadata = {SECRET: SECRET}
    response.sources[1].detail = f"sent {SECRET}"
    assert await layer.put_response(request, response)
    web = config.servers["web"]
    await layer.put_hits(web, "search", {"query": "x"}, response.hits)
    cached = await layer.get_response(request)
    assert cached is not None
    # The answer carries the caller's own request back; everything that came from
    # storage is masked.
    stored_parts = [cached.hits, cached.sources, cached.groups, cached.metrics]
    assert SECRET not in json.dumps(to_jsonable(stored_parts))
    assert cached.hits[0].content == "header Authorization: Bearer ****"
    await layer.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("cache.sqlite*"))
    assert stored and SECRET.encode() not in stored


def test_plain_variables_are_not_treated_as_secrets() -> None:
    config = make_config()
    config.servers["git"].cwd = "${HOME}/src"
    config.cache.redis_url = "redis://:${REDIS_PASSWORD}@cache.internal:6379/0"
    env = {"HOME": "/home/dev", "WEB_TOKEN": SECRET, "REDIS_PASSWORD": "hunter22"}
    # Masking /home/dev would mangle every path in every cached hit.
    assert secret_values(config, env) == frozenset({SECRET, "hunter22"})


@pytest.mark.asyncio
async def test_a_repository_the_config_does_not_list_still_drops_builtin_answers(tmp_path: Path) -> None:
    """``tributary index add`` lists no repository in the config; the built-in servers
    search it all the same, so a change to it must drop their answers."""
    layer = ResponseCache(MemoryCache(), make_config())  # no repos listed
    from_files = SearchRequest(query="a")
    from_web = SearchRequest(query="b", sources=["web"])
    await layer.put_response(from_files, make_response(from_files, SourceStatus.OK))
    await layer.put_response(from_web, make_response(from_web, SourceStatus.SKIPPED, SourceStatus.OK))
    files = make_config().servers["files"]
    await layer.put_hits(files, "search_code", {"query": "a"}, [make_response(from_files).hits[0]])
    assert await layer.invalidate_repo(tmp_path / "any-indexed-repo") == 2
    assert await layer.get_response(from_files) is None
    assert await layer.get_hits(files, "search_code", {"query": "a"}) is None
    assert await layer.get_response(from_web) is not None  # asked no built-in server


@pytest.mark.asyncio
async def test_another_process_can_invalidate_a_repository(tmp_path: Path) -> None:
    """The indexer/watcher drops answers from the shared cache it does not hold."""
    from tributary.engine.cache import invalidate_repository, invalidate_repository_blocking

    repo = tmp_path / "repo"
    repo.mkdir()
    config = make_config(repo=repo)
    config.cache = CacheConfig(backend="sqlite")
    cache_file = tmp_path / "cache.sqlite"
    layer = open_response_cache(config, path=cache_file)
    request = SearchRequest(query="q")
    assert await layer.put_response(request, make_response(request, SourceStatus.OK))
    assert await invalidate_repository(config, repo, path=cache_file) == 1
    assert await layer.get_response(request) is None
    assert await layer.put_response(request, make_response(request, SourceStatus.OK))
    # From a plain thread, as a watcher callback would.
    dropped = await asyncio.to_thread(
        invalidate_repository_blocking, config, str(repo), path=cache_file
    )
    assert dropped == 1
    await layer.close()
    config.cache = CacheConfig(backend="memory")
    assert await invalidate_repository(config, repo) == 0
