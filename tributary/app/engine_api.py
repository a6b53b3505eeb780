"""The slice of the engine facade (``tributary.engine.engine.Engine``) the UI programs against.

The UI depends on this Protocol, not on the concrete class, so tests can drive every
surface with a small double and the GUI process never imports more of the engine
than it needs at start. ``open_engine`` imports the real facade lazily.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

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

if TYPE_CHECKING:  # (tributary.engine.sources pulls in the MCP SDK: not at the GUI's start)
    from tributary.engine.sources.state import ServerState, ServerTest

__all__ = ["EngineLike", "ReputationRow", "open_engine"]


class EngineLike(Protocol):
    @property
    def config(self) -> Config: ...

    @property
    def effective_config(self) -> Config:
        """The config the engine runs: the file's, plus the built-in servers it added."""
        ...

    async def search(self, request: SearchRequest) -> SearchResponse: ...

    def search_stream(self, request: SearchRequest) -> AsyncIterator[SearchUpdate]: ...

    def route(self, query: str) -> RouteDecision: ...

    async def test_server(self, server: ServerConfig) -> ServerTest: ...

    def server_states(self) -> list[ServerState]: ...

    def stderr_lines(self, name: str) -> list[str]: ...

    async def apply_config(self, config: Config) -> None: ...

    async def repository_changed(self, path: str | Path) -> int: ...

    async def feedback(
        self, hit: Hit, useful: bool, query: str = "", *, group: DedupGroup | None = None
    ) -> dict[str, float]: ...

    async def reputations(self) -> list[ReputationRow]: ...

    async def reset_reputation(self, source: str | None = None) -> int: ...

    async def aclose(self) -> None: ...


async def open_engine(config_path: Path | None = None) -> EngineLike:
    """Open the real engine on its own thread and loop (see ``tributary.app.engine_host``): its
    imports, start-up and per-update pipeline work never block the GUI loop."""
    from tributary.app.engine_host import open_threaded

    engine: EngineLike = await open_threaded(config_path)
    return engine
