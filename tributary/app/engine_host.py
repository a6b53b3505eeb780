"""Runs the engine on its own asyncio loop in a worker thread.

The engine does real CPU work between awaits (fusion, dedup, token counting,
context assembly for every streamed update; imports and start-up when it opens).
On the GUI loop that work would freeze the window; on its own thread the GUI
thread keeps getting the GIL every few milliseconds and stays responsive. The MCP
server subprocesses and their sessions live on the engine loop too.

``ThreadedEngine`` implements the same facade as the engine (``EngineLike``, checked by
mypy as the engine is): every
coroutine is run on the engine loop and awaited from the GUI loop; a search stream
is driven by one task on the engine loop that forwards updates, and cancelling or
closing the GUI-side stream cancels that task, which closes the engine's stream and
so its in-flight source calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.model import (
    DedupGroup,
    Hit,
    ReputationRow,
    RouteDecision,
    SearchRequest,
    SearchResponse,
    SearchUpdate,
)

if TYPE_CHECKING:
    from tributary.engine.api import Engine, EngineLike, ServerState, ServerTest

T = TypeVar("T")
JOIN_TIMEOUT_S = 5.0
# How long a thread may hold the GIL while another waits for it (below CPython's
# default). A repaint of the results calls back into Python once per cell and role, and
# each callback may wait that long while the engine thread fuses, so a shorter interval
# shortens the longest stall of a streamed search (bench/gui_latency.py; the A/B figures
# are in docs/benchmarks.md).
GIL_SWITCH_INTERVAL_S = 0.001


class EngineThread:
    """A daemon thread running an asyncio loop until ``stop``."""

    def __init__(self, name: str = "tributary-engine") -> None:
        sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL_S))
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()
        # Let cancelled tasks finish their clean-up before the loop closes.
        pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the engine loop; await its result from the calling loop."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return await asyncio.wrap_future(future)

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(JOIN_TIMEOUT_S)


class ThreadedEngine:
    """The engine facade, proxied onto an :class:`EngineThread`."""

    def __init__(self, host: EngineThread, engine: Engine) -> None:
        self._host = host
        self._engine = engine
        self._closed = False

    @classmethod
    async def start(cls, opener: Callable[[], Coroutine[Any, Any, Engine]]) -> ThreadedEngine:
        """Open an engine with ``opener()`` (imports included) on a new engine thread."""
        host = EngineThread()
        try:
            engine = await host.call(opener())
        except BaseException:
            host.stop()
            raise
        return cls(host, engine)

    @property
    def engine(self) -> Engine:
        return self._engine

    @property
    def config(self) -> Config:
        config: Config = self._engine.config
        return config

    @property
    def effective_config(self) -> Config:
        config: Config = getattr(self._engine, "effective_config", self._engine.config)
        return config

    async def search(self, request: SearchRequest) -> SearchResponse:
        response: SearchResponse = await self._host.call(self._engine.search(request))
        return response

    async def search_stream(self, request: SearchRequest) -> AsyncIterator[SearchUpdate]:
        gui_loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def put(kind: str, value: Any) -> None:
            gui_loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

        async def drive() -> None:
            try:
                async with contextlib.aclosing(self._engine.search_stream(request)) as updates:
                    async for update in updates:
                        put("update", update)
                put("end", None)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                put("error", exc)

        future = asyncio.run_coroutine_threadsafe(drive(), self._host.loop)
        try:
            while True:
                kind, value = await queue.get()
                if kind == "update":
                    yield value
                elif kind == "end":
                    return
                else:
                    raise value
        finally:
            future.cancel()  # closes the engine's stream: its in-flight calls are cancelled

    def route(self, query: str) -> RouteDecision:
        decision: RouteDecision = self._engine.route(query)
        return decision

    async def test_server(self, server: ServerConfig) -> ServerTest:
        result: ServerTest = await self._host.call(self._engine.test_server(server))
        return result

    def server_states(self) -> list[ServerState]:
        return list(self._engine.server_states())

    def stderr_lines(self, name: str) -> list[str]:
        return list(self._engine.stderr_lines(name))

    def warm_up(self) -> None:
        warm = getattr(self._engine, "warm_up", None)
        if callable(warm):
            self._host.loop.call_soon_threadsafe(warm)

    async def apply_config(self, config: Config) -> None:
        await self._host.call(self._engine.apply_config(config))

    async def watch_config(self, report: Callable[[bool, str], None]) -> None:
        """Hot reload on the engine loop; ``report(ok, message)`` runs on the calling
        (GUI) loop after each change of the config file."""
        gui_loop = asyncio.get_running_loop()

        def forward(outcome: Any) -> None:
            gui_loop.call_soon_threadsafe(report, bool(outcome.ok), str(outcome.message))

        async def start() -> None:
            await self._engine.watch_config(forward).wait()

        await self._host.call(start())

    async def repository_changed(self, path: str | Path) -> int:
        dropped: int = await self._host.call(self._engine.repository_changed(path))
        return dropped

    async def feedback(
        self, hit: Hit, useful: bool, query: str = "", *, group: DedupGroup | None = None
    ) -> dict[str, float]:
        """Record feedback on the engine thread (its SQLite write never blocks the GUI)."""
        reputations: dict[str, float] = await self._host.call(
            self._engine.feedback(hit, useful, query, group=group))
        return reputations

    async def reputation_rows(self) -> list[ReputationRow]:
        """Each source's standing and when it was last rated, read off the GUI thread."""
        return await self._host.call(self._engine.reputation_rows())

    async def reset_reputation(self, source: str | None = None) -> int:
        dropped: int = await self._host.call(self._engine.reset_reputation(source))
        return dropped

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self._host.call(self._engine.aclose())
        finally:
            await asyncio.get_running_loop().run_in_executor(None, self._host.stop)


async def open_engine(config_path: Path | None = None) -> EngineLike:
    """The real engine on its own thread and loop: its imports, start-up and per-update
    pipeline work never block the GUI loop."""
    return await open_threaded(config_path)


async def open_threaded(config_path: Path | None = None) -> ThreadedEngine:
    """The real engine, opened on its own thread (its imports happen there too)."""

    async def opener() -> Engine:
        from tributary.engine.api import Engine, Freshness
        from tributary.engine.model import EngineKind

        # Searched as the code is now, as `serve` and the background engine do (a watched
        # repository is its watcher's to keep): edits made in an editor are found.
        engine = await Engine.open(config_path, freshness=Freshness(leave_watched=True))
        await engine.listen(config_path, kind=EngineKind.APP)  # `tributary search` asks this warm engine
        return engine

    threaded = await ThreadedEngine.start(opener)
    from tributary.engine.api import settle

    # Start-up is over: later full GC passes skip what it loaded
    # (tributary.engine.runtime.heap). Collected here, on the GUI thread: a Qt wrapper in
    # a cycle must never be freed on the engine's.
    settle()
    return threaded


if TYPE_CHECKING:

    def _the_host_is_engine_like(engine: ThreadedEngine) -> EngineLike:
        """Never called: mypy checks here that the threaded host satisfies the seam."""
        return engine
