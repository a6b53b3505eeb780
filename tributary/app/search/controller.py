"""Search-as-you-type: debounce, one live query, cancellation, stale-result protection.

Typing restarts a 100 ms timer; when it fires, the query's stream starts
through ``run_async`` under one key, which cancels the superseded query's stream
(closing it cancels that query's in-flight source calls in the engine). Every update
carries the generation it was started for and is dropped unless that generation is
still current, so an older query's answer can never replace a newer one's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from PySide6.QtCore import QObject, QTimer, Signal

from tributary.app import safe_text
from tributary.app.background import run_async
from tributary.engine.api import EngineLike
from tributary.engine.config.schema import TOP_K_MAX, TOP_K_MIN
from tributary.engine.model import (
    ContextFormat,
    Hints,
    SearchRequest,
    SearchResponse,
    SearchUpdate,
    TaskType,
)

DEBOUNCE_MS = 100
ENGINE_WAIT_MS = 200  # how often a query asked before the engine opened looks for it


@dataclass(slots=True, frozen=True)
class SearchOptions:
    """What the controls above the results set on every request."""

    strategy: str | None = None
    top_k: int = 30
    max_tokens: int = 8000
    reserved_tokens: int = 1000
    format: ContextFormat = ContextFormat.MARKDOWN
    task_type: TaskType = TaskType.IMPLEMENTATION
    hints: Hints = field(default_factory=Hints)

    def request(self, query: str) -> SearchRequest:
        return SearchRequest(
            query=query,
            strategy=self.strategy,
            top_k=min(TOP_K_MAX, max(TOP_K_MIN, self.top_k)),
            max_tokens=self.max_tokens,
            reserved_tokens=min(self.reserved_tokens, self.max_tokens),
            format=self.format,
            task_type=self.task_type,
            # A copy: the request outlives these options and travels to the engine thread.
            hints=Hints(list(self.hints.related_files), list(self.hints.related_issues),
                        self.hints.language, self.hints.framework),
        )


class SearchController(QObject):
    """Owns the one live query of a search surface (window or popup)."""

    started = Signal(str)  # query
    updated = Signal(object)  # SearchUpdate for the current query
    finished = Signal(object)  # final SearchResponse for the current query
    failed = Signal(str)
    waiting = Signal(str)  # the query waits for the engine to open, then runs
    cleared = Signal()

    def __init__(
        self,
        engine: Callable[[], EngineLike | None],
        *,
        key: str = "search",
        debounce_ms: int = DEBOUNCE_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._engine = engine
        self._key = key
        self.options = SearchOptions()
        self.generation = 0
        self.query = ""
        self.response: SearchResponse | None = None
        self.final = False
        self._pending = ""
        self._timer = QTimer(self, singleShot=True, interval=debounce_ms)
        self._timer.timeout.connect(lambda: self.submit(self._pending))
        self._waiting = ""  # asked before the engine opened: runs once it has
        self.engine_problem: str | None = None  # why the engine did not start, if it did not
        self._engine_wait = QTimer(self, interval=ENGINE_WAIT_MS)
        self._engine_wait.timeout.connect(self._engine_opened)

    def schedule(self, text: str) -> None:
        """Typing: (re)start the debounce; an empty box cancels and clears."""
        self._pending = text
        if not text.strip():
            self._timer.stop()
            self.cancel()
            self.cleared.emit()
            return
        self._timer.start()

    def set_options(self, **changes: object) -> None:
        """Change controls; re-runs the current query so the view matches them."""
        self.options = replace(self.options, **changes)  # type: ignore[arg-type]
        if self.query:
            self.submit(self.query)

    def submit(self, text: str | None = None) -> None:
        """Run ``text`` now (Enter), superseding whatever is running."""
        self._timer.stop()
        query = (self._pending if text is None else text).strip()
        if not query:
            return
        engine = self._engine()
        if engine is None:
            self._waiting = query
            self._engine_wait.start()
            self.waiting.emit("The engine could not start (see why below) — the search runs once it does."
                              if self.engine_problem else
                              "The engine is starting — the search runs as soon as it is ready.")
            return
        self._waiting = ""
        self._engine_wait.stop()
        self.generation += 1
        self.query = query
        self.response = None
        self.final = False
        self.started.emit(query)
        request = self.options.request(query)
        run_async(
            self._stream(engine, request, self.generation),
            label=f"Searching “{safe_text.one_line(query, 80)}”",
            key=self._key,
            on_error=functools.partial(self._failed, self.generation),
        )

    def _engine_opened(self) -> None:
        if self._engine() is not None:
            self._engine_wait.stop()
            if self._waiting:
                self.submit(self._waiting)

    def cancel(self) -> None:
        """Forget the current query (and one waiting for the engine); a running stream
        is cancelled, late answers dropped."""
        self._waiting = ""
        self._engine_wait.stop()
        self.generation += 1
        self.query = ""
        self.response = None
        run_async(_noop(), label="", key=self._key, quiet=True)

    def is_current(self, generation: int) -> bool:
        return generation == self.generation

    def is_current_response(self, response: SearchResponse) -> bool:
        """True when ``response`` belongs to the query now shown (for deferred renders)."""
        return self.response is not None and response.request_id == self.response.request_id

    async def _stream(self, engine: EngineLike, request: SearchRequest, generation: int) -> None:
        stream = engine.search_stream(request)
        try:
            async for update in stream:
                if not self.is_current(generation):
                    break
                self._deliver(update)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]

    def _deliver(self, update: SearchUpdate) -> None:
        self.response = update.response
        self.final = update.final
        self.updated.emit(update)
        if update.final:
            self.finished.emit(update.response)

    def _failed(self, generation: int, error: BaseException) -> None:
        if self.is_current(generation):
            self.failed.emit(f"{type(error).__name__}: {error}")


async def _noop() -> None:
    """Replaces (and so cancels) the task running under a key."""
