"""``--repo`` with an engine running: the engine brings the repository up to date.

The command line then loads no index code: it sends the repository with the request,
and the running engine re-reads what changed, imports new commits, drops the answers
that drew on them, asks the repository only and says what it did. A repository not
indexed yet is left to the command line, which indexes it with its progress bar.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_attach_imports import HEAVY, PROBE
from tributary.engine import attach
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.index.manager import open_index_store
from tributary.engine.model import SearchRequest, SearchResponse
from tributary.engine.repos.manage import refresh_repository

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not attach.supported(), reason="no Unix sockets")


class _Engine:
    """What the socket needs of an engine, with the built-in servers of an index."""

    def __init__(self) -> None:
        self.config = Config()
        self.effective_config = Config(servers={
            name: ServerConfig(name=name, command="x", builtin=name) for name in ("files", "tasks", "alpha")
        })  # fmt: skip
        self.requests: list[SearchRequest] = []
        self.changed: list[Path] = []

    async def search(self, request: SearchRequest) -> SearchResponse:
        self.requests.append(request)
        return SearchResponse(request=request)

    async def adopt_new_indexes(self) -> None:
        pass

    async def apply_config(self, config: Config) -> None:
        pass

    async def repository_changed(self, path: str | Path) -> int:
        self.changed.append(Path(path))
        return 1

    def repository_refreshed(self, root: Path) -> None:
        pass


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _committed(repo: Path) -> Path:
    """A git work tree with one file in one commit."""
    repo.mkdir()
    (repo / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "Add the app")
    return repo


def _indexed(repo: Path) -> Path:
    refresh_repository(repo, embed_later=lambda _root: None)
    return repo


def _config(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.yaml"
    config.write_text("servers: {}\n", encoding="utf-8")
    return config


@pytest.mark.asyncio
async def test_the_running_engine_updates_the_repository_and_asks_it_only(attach_home: Path, tmp_path: Path) -> None:
    repo = _indexed(_committed(tmp_path / "repo"))
    (repo / "retry.py").write_text("def retry_on_503():\n    return 'again'\n", encoding="utf-8")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "Retry on 503")
    engine, embedded = _Engine(), list[Path]()
    server = attach.AttachServer(engine, _config(attach_home), embed_later=embedded.append)
    assert await server.start()
    try:
        first = await attach.ask(SearchRequest("retry on 503"), _config(attach_home),
                                 repo=attach.RepoScope(repo))
        again = await attach.ask(SearchRequest("retry on 503"), _config(attach_home),
                                 repo=attach.RepoScope(repo))
    finally:
        await server.close()
    assert first is not None and again is not None
    assert first.notes[0].startswith("indexing repo: 2 files, 2 chunks (1 file updated in")
    assert "repo: history: 1 new commit in" in "\n".join(first.notes)
    assert again.notes[0] == "indexing repo: 2 files, up to date"
    assert engine.changed == [repo]  # once: the second search changed nothing
    asked = engine.requests[0]
    assert asked.filters.repos == [str(repo)]
    assert asked.sources == ["files", "tasks"]  # the built-in servers only
    assert embedded == [repo, repo]  # the new chunk and commit wait for vectors: a pass each time
    store = open_index_store(repo)
    try:
        chunks = store.chunks_by_id(sorted(store.chunk_ids_matching("retry.py")))
        assert [chunk.symbol for chunk in chunks.values()] == ["retry_on_503"]
    finally:
        store.close()


@pytest.mark.asyncio
async def test_files_only_leaves_the_history_alone(attach_home: Path, tmp_path: Path) -> None:
    repo = _indexed(_committed(tmp_path / "repo"))
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "Later")
    engine = _Engine()
    server = attach.AttachServer(engine, _config(attach_home), embed_later=lambda _root: None)
    assert await server.start()
    try:
        request = SearchRequest("main", sources=["files"])
        answer = await attach.ask(request, _config(attach_home), repo=attach.RepoScope(repo, history=False))
    finally:
        await server.close()
    assert answer is not None
    assert answer.notes[0] == "indexing repo: 1 file, up to date"
    assert not [note for note in answer.notes if "history" in note]
    assert engine.requests[0].sources == ["files"]  # as named
    assert engine.changed == []  # the commit since is not imported


@pytest.mark.asyncio
async def test_a_repository_not_indexed_yet_is_left_to_the_command_line(attach_home: Path, tmp_path: Path) -> None:
    repo = _committed(tmp_path / "repo")
    engine = _Engine()
    server = attach.AttachServer(engine, _config(attach_home), embed_later=lambda _root: None)
    assert await server.start()
    try:
        answer = await attach.ask(SearchRequest("main"), _config(attach_home), repo=attach.RepoScope(repo))
    finally:
        await server.close()
    assert answer is None
    assert engine.requests == []
    with pytest.raises(FileNotFoundError):
        open_index_store(repo)  # not indexed behind the command line's back


@pytest.mark.asyncio
async def test_an_attached_repo_search_loads_no_index_code(attach_home: Path, tmp_path: Path) -> None:
    repo = _indexed(_committed(tmp_path / "repo"))
    config = _config(attach_home)
    imported = tmp_path / "imported.json"
    engine = _Engine()
    server = attach.AttachServer(engine, config, embed_later=lambda _root: None)
    assert await server.start()
    try:
        found = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", PROBE, str(imported), "--config", str(config), "search", "main",
             "--repo", str(repo)],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT, timeout=120,
        )  # fmt: skip
    finally:
        await server.close()
    assert found.returncode == 0, found.stderr
    assert "indexing repo: 1 file, up to date" in found.stderr
    assert "answered by the running engine" in found.stderr
    assert engine.requests[0].filters.repos == [str(repo)]
    loaded = set(json.loads(imported.read_text()))
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
