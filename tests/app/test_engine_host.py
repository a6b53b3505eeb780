"""The engine on its own thread: streams cross loops, cancellation reaches the engine,
the GUI loop keeps running while the engine computes, shutdown stops the thread."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.app.fakes import FakeEngine, by_query, fixed
from tributary.app.engine_host import ThreadedEngine
from tributary.app.search.controller import SearchController
from tributary.engine.model import SearchRequest


async def start(fake: FakeEngine) -> ThreadedEngine:
    async def opener() -> Any:
        fake.thread = threading.current_thread().name  # type: ignore[attr-defined]
        return fake

    return await ThreadedEngine.start(opener)


@pytest.mark.asyncio
async def test_stream_crosses_threads_and_closes(qtbot: object) -> None:
    fake = FakeEngine(sources=["a", "b"], delay=lambda s, q: {"a": 0.01, "b": 0.03}[s])
    engine = await start(fake)
    try:
        assert fake.thread == "tributary-engine"  # type: ignore[attr-defined]
        updates = [u async for u in engine.search_stream(SearchRequest(query="q"))]
        assert [u.final for u in updates] == [False, False, True]
        assert engine.route("anything").servers == ["a", "b"]
        assert [s.name for s in engine.server_states()] == ["a", "b"]
        response = await engine.search(SearchRequest(query="again"))
        assert response.request.query == "again"
    finally:
        await engine.aclose()
        await engine.aclose()  # idempotent
    assert fake.closed == 1


@pytest.mark.asyncio
async def test_superseded_query_is_cancelled_in_the_engine_thread(qtbot: object) -> None:
    fake = FakeEngine(sources=["a"], delay=by_query({"old": 1.0, "new": 0.01}))
    engine = await start(fake)
    try:
        controller = SearchController(lambda: engine)
        controller.submit("old")
        await asyncio.sleep(0.1)
        controller.submit("new")
        deadline = time.monotonic() + 5
        while not (controller.final and "old" in fake.cancelled):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        assert controller.response is not None and controller.response.request.query == "new"
        assert "old" not in fake.finished
    finally:
        await engine.aclose()


class BusyEngine(FakeEngine):
    """Computes for 300 ms without awaiting (like fusing a big update)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.busy: list[tuple[float, float]] = []

    async def search_stream(self, request: SearchRequest):  # type: ignore[override]
        async for update in super().search_stream(request):
            start = time.perf_counter()
            while time.perf_counter() < start + 0.3:
                pass
            self.busy.append((start, time.perf_counter()))
            yield update


@pytest.mark.asyncio
async def test_engine_cpu_work_does_not_block_the_gui_loop(qtbot: object) -> None:
    busy = BusyEngine(sources=["a"], delay=fixed(0.0))
    engine = await start(busy)
    try:
        ticks: list[float] = []

        async def ticker() -> None:
            while True:
                ticks.append(time.perf_counter())
                await asyncio.sleep(0.01)

        task = asyncio.ensure_future(ticker())
        updates = [u async for u in engine.search_stream(SearchRequest(query="q"))]
        task.cancel()
        assert updates[-1].final
        # The GUI loop kept ticking *while* the engine was computing.
        assert len(busy.busy) == 2
        during = [t for t in ticks for start, end in busy.busy if start < t < end]
        assert len(during) >= 2
    finally:
        await engine.aclose()


@pytest.mark.asyncio
async def test_feedback_and_reputation_run_on_the_engine_thread(qtbot: object, tmp_path: Any) -> None:
    from tests.fakes import fake_server_object
    from tributary.engine.config.schema import Config, ServerConfig
    from tributary.engine.engine import Engine
    from tributary.engine.insights.reputation import ReputationStore
    from tributary.engine.model import DedupGroup, DedupReason, GroupMember, Hit
    from tributary.engine.sources.memory import memory_connector

    threads: list[str] = []

    class Store(ReputationStore):
        def record(self, **kwargs: Any) -> Any:  # type: ignore[override]
            threads.append(threading.current_thread().name)
            return super().record(**kwargs)

    async def opener() -> Any:
        config = Config(servers={n: ServerConfig(name=n, command="unused") for n in ("files", "tasks")})
        return Engine(config, connector=memory_connector(lambda c: fake_server_object(c.name)),
                      reputation=Store(tmp_path / "history.sqlite3"))

    engine = await ThreadedEngine.start(opener)
    try:
        kept = Hit(id="k", source="files", tool="search", title="t", content="c")
        group = DedupGroup(kept, [GroupMember(Hit(id="m", source="tasks", tool="search", title="t",
                                                 content="c"), DedupReason.HASH, 1.0)])
        assert await engine.feedback(kept, True, "q", group=group) == pytest.approx({"files": 0.6, "tasks": 0.6})
        assert threads and threading.main_thread().name not in threads  # off the GUI thread
        rows = {r.source: r for r in await engine.reputation_rows()}
        assert set(rows) == {"files", "tasks"}
        assert rows["files"].useful == 1 and rows["files"].last_feedback is not None
        assert await engine.reset_reputation("tasks") == 1
        rows = {r.source: r for r in await engine.reputation_rows()}
        assert rows["tasks"].reputation == 0.5 and rows["tasks"].last_feedback is None
    finally:
        await engine.aclose()


@pytest.mark.asyncio
async def test_the_real_engine_settles_the_heap_once_open(
    qtbot: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tributary.app.engine_host import open_threaded
    from tributary.engine import api

    settled: list[str] = []
    monkeypatch.setattr(api, "settle", lambda: settled.append(threading.current_thread().name))
    threaded = await open_threaded(tmp_path / "config.toml")
    try:
        # Once, after start-up, on the GUI thread: collecting there frees Qt wrappers
        # where they belong, never on the engine thread.
        assert settled == [threading.current_thread().name]
        # It searches the code as it is now, as `serve` does, a watched repository left
        # to its watcher (tests/engine/test_freshness.py).
        freshness = threaded._engine._freshness  # type: ignore[attr-defined]
        assert freshness is not None and freshness._leave_watched
    finally:
        await threaded.aclose()


@pytest.mark.asyncio
async def test_config_file_changes_reach_the_gui_loop(qtbot: object, tmp_path: Path) -> None:
    from tributary.engine.engine import Engine

    path = tmp_path / "config.yaml"
    path.write_text("fusion:\n  top_k: 20\n", encoding="utf-8")

    async def opener() -> Any:
        return await Engine.open(path, persistent=False, warm=False)

    engine = await ThreadedEngine.start(opener)
    reports: list[tuple[bool, str, str]] = []
    try:
        await engine.watch_config(
            lambda ok, text: reports.append((ok, text, threading.current_thread().name)))
        path.write_text("fusion:\n  top_k: 5000\n", encoding="utf-8")
        deadline = time.monotonic() + 30
        while not reports:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        ok, text, thread = reports[-1]
        assert not ok and f"{path}:2: fusion.top_k" in text and thread == threading.current_thread().name
        assert engine.config.fusion.top_k == 20
        path.write_text("fusion:\n  top_k: 40\n", encoding="utf-8")
        while len(reports) < 2:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        assert reports[-1][0] and engine.config.fusion.top_k == 40
    finally:
        await engine.aclose()
