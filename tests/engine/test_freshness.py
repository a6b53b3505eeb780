"""A headless engine (``serve``, the background engine) searches its repositories as they
are now: an LLM client edits the code it asks about, and nothing else re-indexes it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tributary.engine.cache.layers import ResponseCache
from tributary.engine.cache.memory import MemoryCache
from tributary.engine.config.schema import CacheConfig, Config, IndexConfig, RepoConfig
from tributary.engine.engine import Engine
from tributary.engine.index.manager import index_path_for, open_index_store
from tributary.engine.localsearch.embed_lock import indexing_held
from tributary.engine.model import SearchRequest
from tributary.engine.repos.freshness import Freshness
from tributary.engine.repos.manage import refresh_repository
from tributary.engine.servers.inprocess import in_process_builtins
from tributary.engine.tasks.api import tasks_db_path

ZEBRA = "def count_zebra_stripes(zebra):\n    return len(zebra.stripes)\n"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _repo(tmp_path: Path, *, history: bool = True) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "Add the app")
    refresh_repository(repo, history=history, embed_later=lambda _root: None)
    return repo


def _symbols(repo: Path) -> set[str | None]:
    store = open_index_store(repo)
    try:
        return {c.symbol for c in store.chunks_by_id(sorted(store.chunk_ids_matching("*"))).values()}
    finally:
        store.close()


def _indexing(repo: Path) -> bool:
    """Whether a pass over ``repo`` holds its turn now."""
    return indexing_held(index_path_for(repo))


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))


@pytest.mark.asyncio
async def test_an_edit_is_indexed_before_the_next_search_once_the_interval_passes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    clock, embedded = Clock(), list[Path]()
    freshness = Freshness(clock=clock, embed_later=embedded.append)
    assert await freshness.refresh(Config()) == []  # nothing changed: nothing to drop
    (repo / "zebra.py").write_text(ZEBRA, encoding="utf-8")
    assert await freshness.refresh(Config()) == []  # checked a moment ago
    assert "count_zebra_stripes" not in _symbols(repo)
    clock.now += 2.5
    assert await freshness.refresh(Config()) == [repo]
    assert "count_zebra_stripes" in _symbols(repo)
    assert embedded == [repo]  # its vector is left to a background pass (not what waited before)
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "Count the stripes")
    clock.now += 2.5
    assert await freshness.refresh(Config()) == [repo]  # the new commit joins the history


@pytest.mark.asyncio
async def test_a_repositorys_own_settings_are_kept(tmp_path: Path) -> None:
    """A repository indexed without its history, or with some files excluded, is
    brought up to date as it was indexed."""
    repo = _repo(tmp_path, history=False)
    (repo / "zebra.py").write_text(ZEBRA, encoding="utf-8")
    (repo / "skipped.py").write_text("def skipped_function():\n    return 0\n", encoding="utf-8")
    config = Config(repos=[RepoConfig(path=str(repo), exclude=["skipped.py"])])
    assert await Freshness(embed_later=lambda _root: None).refresh(config) == [repo]
    assert "count_zebra_stripes" in _symbols(repo)
    assert "skipped_function" not in _symbols(repo)
    assert not tasks_db_path(repo).exists()


@pytest.mark.asyncio
async def test_a_missing_folder_and_a_shared_index_are_left_alone(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "zebra.py").write_text(ZEBRA, encoding="utf-8")
    shared = Config(index=IndexConfig(backend="postgres", dsn="postgresql://nowhere/db"))
    assert await Freshness(embed_later=lambda _root: None).refresh(shared) == []  # CI's to update
    assert "count_zebra_stripes" not in _symbols(repo)
    repo.rename(tmp_path / "moved")
    assert await Freshness(embed_later=lambda _root: None).refresh(Config()) == []


@pytest.mark.integration
@pytest.mark.timeout(300)  # the real model loads in this process
@pytest.mark.asyncio
async def test_a_search_after_an_edit_finds_it_and_replays_no_answer_from_before(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    clock = Clock()
    config = Config(cache=CacheConfig(backend="memory"))
    engine = Engine(config, connector=in_process_builtins(), cache=ResponseCache(MemoryCache(), config),
                    freshness=Freshness(clock=clock, embed_later=lambda _root: None))
    try:
        request = SearchRequest(query="count zebra stripes", sources=["files"])
        before = await engine.search(request)
        assert "zebra.py" not in {hit.path for hit in before.hits}
        (repo / "zebra.py").write_text(ZEBRA, encoding="utf-8")
        clock.now += 2.5
        after = await engine.search(SearchRequest(query="count zebra stripes", sources=["files"]))
    finally:
        await engine.aclose()
    assert after.hits[0].path == "zebra.py"
    assert all(report.status != "cached" for report in after.sources)


@pytest.mark.asyncio
async def test_a_repository_a_repo_search_just_updated_is_not_checked_again(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    clock = Clock()
    freshness = Freshness(clock=clock, embed_later=lambda _root: None)
    (repo / "zebra.py").write_text(ZEBRA, encoding="utf-8")
    freshness.brought_up_to_date(repo)  # (as the --repo search would have, before this edit)
    assert await freshness.refresh(Config()) == []
    clock.now += 2.5
    assert await freshness.refresh(Config()) == [repo]


def _written_at(database: Path) -> tuple[int, ...]:
    return tuple(p.stat().st_mtime_ns for p in (database, Path(f"{database}-wal")) if p.exists())


@pytest.mark.asyncio
async def test_a_repository_with_nothing_new_is_not_written(tmp_path: Path) -> None:
    """Each write to an index makes every process searching it read its vectors again
    (seconds for a large one), so a check that finds nothing to do writes nothing."""
    from tributary.engine.index.manager import index_path_for

    repo = _repo(tmp_path)
    clock = Clock()
    freshness = Freshness(clock=clock, embed_later=lambda _root: None)
    await freshness.refresh(Config())
    code, history = index_path_for(repo), tasks_db_path(repo)
    before = _written_at(code), _written_at(history)
    clock.now += 2.5
    assert await freshness.refresh(Config()) == []
    assert (_written_at(code), _written_at(history)) == before
    (repo / "app.py").write_text("def main():\n    return 2\n", encoding="utf-8")
    clock.now += 2.5
    assert await freshness.refresh(Config()) == [repo]
    assert _written_at(code) != before[0]


@pytest.mark.asyncio
async def test_a_long_update_does_not_hold_the_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch switched under a large repository means minutes of chunking: the search
    waits a moment, then answers from the index as it is, and the answers that drew on
    the repository are dropped once the update ends."""
    import threading

    repo = _repo(tmp_path)
    release = threading.Event()
    slow = Freshness(wait_s=0.05, embed_later=lambda _root: None)
    update = slow._update

    def held(root: Path, history: bool, config: RepoConfig | None) -> bool:
        release.wait(30)
        return update(root, history, config)

    monkeypatch.setattr(slow, "_update", held)
    (repo / "zebra.py").write_text(ZEBRA, encoding="utf-8")
    told: list[Path] = []

    async def changed(root: Path) -> int:
        told.append(root)
        return 1

    assert await slow.refresh(Config(), later=changed) == []  # answered meanwhile
    assert await slow.refresh(Config(), later=changed) == []  # the same update, not a second
    release.set()
    await slow.close()
    assert told == [repo, repo]  # each search that went on without it hears of the change
    assert "count_zebra_stripes" in _symbols(repo)


@pytest.mark.asyncio
async def test_a_repository_another_process_is_indexing_is_searched_as_far_as_it_got(tmp_path: Path) -> None:
    """`tributary index add` (or the app's worker) indexing a repository while `serve`
    answers: the search takes the index as that pass has written it so far instead of
    indexing the same files beside it, and says so; once that pass ends, the next check
    brings the index up to date as usual."""
    from filelock import FileLock

    from tributary.engine.localsearch.embed_lock import indexing_lock_path

    repo = _repo(tmp_path)
    (repo / "zebra.py").write_text(ZEBRA, encoding="utf-8")
    embedded: list[Path] = []
    pass_lock = FileLock(indexing_lock_path(index_path_for(repo)))
    with pass_lock:  # held as a pass in another process holds it
        assert _indexing(repo)
        refresh = refresh_repository(repo, embed_later=embedded.append)
        assert refresh.elsewhere and not refresh.changed and embedded == []
        assert refresh.code_summary() == "1 file so far, being indexed by another process"
        clock = Clock()
        assert await Freshness(clock=clock, embed_later=embedded.append).refresh(Config()) == []
        assert "count_zebra_stripes" not in _symbols(repo)
    assert not _indexing(repo)
    assert refresh_repository(repo, embed_later=embedded.append).changed
    assert "count_zebra_stripes" in _symbols(repo)


def test_a_repositorys_pass_is_taken_in_turn(tmp_path: Path) -> None:
    """A pass over a repository (the app's worker, `tributary index add`) holds its turn
    while it indexes the files and imports the history: a search's update meanwhile
    takes none, and another pass waits for it."""
    from tributary.engine.repos.manage import repository_pass

    repo = _repo(tmp_path)
    with repository_pass(repo) as ours:
        assert ours and _indexing(repo)
        with repository_pass(repo, wait=False) as again:
            assert not again
    assert not _indexing(repo)


@pytest.mark.asyncio
async def test_the_apps_engine_leaves_a_watched_repository_to_its_watcher(tmp_path: Path) -> None:
    """The app's engine checks its repositories before a search too, except one the
    config says to watch: the app's watcher re-indexes it as files change."""
    repo = _repo(tmp_path)
    (repo / "zebra.py").write_text(ZEBRA, encoding="utf-8")
    watched = Config(repos=[RepoConfig(path=str(repo), watch=True)])
    assert await Freshness(embed_later=lambda _root: None, leave_watched=True).refresh(watched) == []
    assert "count_zebra_stripes" not in _symbols(repo)
    assert await Freshness(embed_later=lambda _root: None).refresh(watched) == [repo]  # (serve: no watcher)
    assert "count_zebra_stripes" in _symbols(repo)
