"""tributary.engine.runtime.heap.settle: start-up's garbage is collected, its survivors leave later full
GC passes, and every long-running process settles once it has loaded."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tributary.engine.runtime.heap import settle


class Node:
    """A container the collector tracks; ``me`` makes a reference cycle."""

    me: Node | None = None


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()


def _in_later_passes(obj: object) -> bool:
    # gc.get_objects() lists generations 0-2: what a full pass walks, not the frozen.
    return any(o is obj for o in gc.get_objects())


def test_garbage_left_by_start_up_is_collected_not_frozen() -> None:
    cycle = Node()
    cycle.me = cycle
    ref = weakref.ref(cycle)
    del cycle
    settle()
    assert ref() is None


def test_survivors_leave_later_full_passes() -> None:
    kept = Node()
    assert _in_later_passes(kept)
    frozen = settle()
    # Not ==: in a long test run other threads settle too, and frozen objects that die
    # leave the count; that this object left the later passes is what matters.
    assert frozen > 0 and gc.get_freeze_count() > 0
    assert gc.is_tracked(kept) and not _in_later_passes(kept)


def test_objects_made_after_settling_are_still_collected() -> None:
    settle()
    cycle = Node()
    cycle.me = cycle
    ref = weakref.ref(cycle)
    assert _in_later_passes(cycle)
    del cycle
    gc.collect()
    assert ref() is None


class _Calls:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> int:
        self.count += 1
        return 0


class _Embedder:
    def encode(self, texts: Any) -> np.ndarray[Any, Any]:
        return np.zeros((len(texts), 4), dtype=np.float32)


def test_the_files_server_settles_once_its_model_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tributary.engine.servers import files

    calls = _Calls()
    monkeypatch.setattr(files, "settle", calls)
    monkeypatch.setattr(files, "load_code_embedder", _Embedder)
    service = files.FilesService(tmp_path)
    service._load()
    assert calls.count == 1
    assert isinstance(service.embedder(0), _Embedder)


def test_the_tasks_server_settles_once_its_indexes_are_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tributary.engine.servers import tasks

    calls = _Calls()
    monkeypatch.setattr(tasks, "settle", calls)
    backend = tasks.TaskBackend([], embed=False)
    backend._open()
    assert calls.count == 1 and backend.error is None


@pytest.mark.asyncio
async def test_tributary_serve_settles_once_its_engine_is_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tributary.engine.servers import face

    calls = _Calls()
    monkeypatch.setattr(face, "settle", calls)
    config = tmp_path / "config.toml"
    engine = await face.default_factory(config)()
    try:
        assert calls.count == 1
    finally:
        await engine.aclose()
