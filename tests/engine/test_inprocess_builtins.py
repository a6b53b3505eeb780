"""A one-shot command runs Tributary's own servers in its process, every other as a process."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from mcp import ClientSession, types

from tests.fakes import fake_server_config
from tributary.engine.cli.repo_setup import ensure_repo_indexed
from tributary.engine.config.schema import Config, IndexConfig, ServerConfig
from tributary.engine.engine import Engine
from tributary.engine.model import SearchRequest, SearchResponse
from tributary.engine.repos.builtins import builtin_server
from tributary.engine.servers.inprocess import in_process_args, in_process_builtins
from tributary.engine.sources.connect import Connection, default_connector
from tributary.engine.sources.stderr import StderrLog


def test_only_builtins_with_their_own_command_run_in_process(tmp_path: Path) -> None:
    files = builtin_server("files", tmp_path)
    assert in_process_args(files) == ("tributary.engine.servers.files", ["--index-dir", str(tmp_path)])
    assert in_process_args(builtin_server("tasks", tmp_path)) == (
        "tributary.engine.servers.tasks", ["--index-dir", str(tmp_path)])
    assert in_process_args(replace(files, command="/opt/my-files-server")) is None
    assert in_process_args(replace(files, args=["-m", "my.own.module", "--index-dir", "x"])) is None
    shared = builtin_server("files", index=IndexConfig(backend="postgres", dsn="${DSN}"))
    assert in_process_args(shared) is None  # its connection string goes in a process's environment
    assert in_process_args(ServerConfig(name="rg", command="npx", args=["-y", "mcp-ripgrep"])) is None


@pytest.mark.integration
@pytest.mark.timeout(300)  # the real model loads in this process
def test_builtins_answer_in_process_and_others_start_as_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "invoice.py").write_text(
        "def invoice_total(lines, tax):\n    return sum(lines) * (1 + tax)\n", encoding="utf-8")
    for args in (["init", "-q"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "Add the invoice total"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    assert ensure_repo_indexed(repo, embed_later=lambda _repo: None) == 0

    spawned: list[str] = []
    checked: list[str] = []  # the tools whose answers the SDK checked against their schema
    check = ClientSession.validate_tool_result

    async def checking(session: ClientSession, name: str, result: types.CallToolResult) -> None:
        checked.append(name)
        await check(session, name, result)

    monkeypatch.setattr(ClientSession, "validate_tool_result", checking)

    @asynccontextmanager
    async def recording(config: ServerConfig, log: StderrLog) -> AsyncIterator[Connection]:
        spawned.append(config.name)
        async with default_connector(config, log) as connection:
            yield connection

    async def ask() -> SearchResponse:
        config = Config(servers={"alpha": fake_server_config("alpha", "--hits", "2")})
        engine = Engine(config, connector=in_process_builtins(fallback=recording))
        try:
            await engine.start_sources(list(engine.effective_config.servers))
            return await engine.search(SearchRequest(query="invoice total tax"))
        finally:
            await engine.aclose()

    response = asyncio.run(ask())
    answered = {report.name: report for report in response.sources}
    assert {"files", "tasks", "alpha"} <= set(answered)
    assert all(answered[name].status == "ok" and answered[name].hits for name in ("files", "tasks", "alpha"))
    assert spawned == ["alpha"]
    assert any(hit.path == "invoice.py" and hit.source == "files" for hit in response.hits)
    # Tributary's own servers' answers are built from typed models: not walked again
    assert checked == ["search"]


@pytest.mark.integration
def test_a_search_that_ends_while_the_model_loads_waits_for_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-shot search over an index that needs no model ended while the model was
    still loading in a daemon thread: the interpreter then stopped that thread inside
    ONNX Runtime's native code and the process aborted ("terminate called without an
    active exception"). The close now waits for the load, in a thread the interpreter
    waits for even though the engine's own wait is cancelled."""
    import threading

    from tributary.engine.servers import files

    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    indexes = tmp_path / "home" / "data" / "indexes"
    indexes.mkdir(parents=True)
    (indexes / "old.files.sqlite").write_bytes(b"")  # not an index: nothing is searched
    release = threading.Event()
    order: list[str] = []

    def slow_model() -> object:
        release.wait(60)
        order.append("loaded")
        raise RuntimeError("no model in this test")

    monkeypatch.setattr(files, "load_code_embedder", slow_model)
    closed = files.FilesService.close

    def close(self: files.FilesService) -> None:
        closed(self)
        order.append("closed")

    monkeypatch.setattr(files.FilesService, "close", close)

    async def ask() -> None:
        engine = Engine(Config(), connector=in_process_builtins())
        try:
            await engine.start_sources(list(engine.effective_config.servers))
            await engine.search(SearchRequest(query="retry logic"))
        finally:
            await engine.aclose()

    threading.Timer(1.0, release.set).start()  # the load outlasts the search
    asyncio.run(ask())
    # The engine's close may have waited for the load, or been cancelled before it did:
    # either the load is over, or a thread the interpreter waits for will wait for it.
    loading = [t for t in threading.enumerate() if t.name == "embedder-load" and t.is_alive()]
    closing = [t for t in threading.enumerate() if t.name.startswith("closing ") and t.is_alive()]
    assert not loading or (closing and not any(t.daemon for t in closing))
    release.set()
    for thread in closing:
        thread.join(60)
    assert order[0] == "loaded" and set(order) == {"loaded", "closed"}  # (the server's own close may run too)
