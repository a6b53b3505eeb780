"""Search as you type: debounce, live updates per source, cancellation, stale answers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from tests.app.fakes import FakeEngine, by_query, fixed
from tributary.app.search.controller import SearchController
from tributary.engine.model import SearchUpdate


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


@pytest.mark.asyncio
async def test_updates_arrive_per_source_then_final(qtbot: object) -> None:
    engine = FakeEngine(sources=["a", "b", "c"], delay=lambda s, q: {"a": 0.01, "b": 0.03, "c": 0.05}[s])
    controller = SearchController(lambda: engine)
    updates: list[SearchUpdate] = []
    controller.updated.connect(updates.append)
    controller.submit("fixture")
    await until(lambda: controller.final)
    answered = [u.source.name for u in updates if u.source is not None]
    assert answered == ["a", "b", "c"]
    assert updates[-1].final and not any(u.final for u in updates[:-1])
    # Each update is fused over more sources than the one before.
    assert [len(u.response.hits) for u in updates] == [3, 5, 7, 7]


@pytest.mark.asyncio
async def test_typing_is_debounced_into_one_search(qtbot: object) -> None:
    """Each keystroke restarts the wait: while typing goes on nothing is asked, and the
    text as it stands is asked once. (The wait is longer than any pause here, however
    busy the machine, so the test does not hang on timing.)"""
    engine = FakeEngine(delay=fixed(0.0))
    controller = SearchController(lambda: engine, debounce_ms=600_000)
    for prefix in ("f", "fi", "fix", "fixt", "fixture"):
        controller.schedule(prefix)
        await asyncio.sleep(0.005)
    assert engine.started == [] and not controller.final
    controller.submit()  # Enter, or the wait running out, asks the text typed so far
    await until(lambda: controller.final)
    assert engine.started == ["fixture"]
    assert controller.response is not None and controller.response.request.query == "fixture"


@pytest.mark.asyncio
async def test_a_pause_in_typing_asks_by_itself(qtbot: object) -> None:
    engine = FakeEngine(delay=fixed(0.0))
    controller = SearchController(lambda: engine, debounce_ms=10)
    controller.schedule("fixture")
    await until(lambda: controller.final)
    assert engine.started == ["fixture"]


@pytest.mark.asyncio
async def test_older_slow_answer_never_replaces_newer_one(qtbot: object) -> None:
    # "old" answers after 0.3 s, "new" after 0.01 s: the old stream must be cancelled
    # and nothing of it may reach the view after the new query started.
    engine = FakeEngine(sources=["a", "b"], delay=by_query({"old": 0.3, "new": 0.01}))
    controller = SearchController(lambda: engine)
    seen: list[str] = []
    controller.updated.connect(lambda u: seen.append(u.response.request.query))
    controller.submit("old")
    await asyncio.sleep(0.05)
    controller.submit("new")
    await until(lambda: controller.final)
    await asyncio.sleep(0.4)  # past the moment "old" would have answered
    assert seen and set(seen) == {"new"}
    assert controller.response is not None and controller.response.request.query == "new"
    assert "old" in engine.cancelled and "old" not in engine.finished


@pytest.mark.asyncio
async def test_late_update_from_superseded_generation_is_dropped(qtbot: object) -> None:
    # Even if a stale stream were not cancelled in time, its updates are ignored.
    engine = FakeEngine(sources=["a"], delay=fixed(0.0))
    controller = SearchController(lambda: engine)
    controller.submit("first")
    await until(lambda: controller.final)
    stale_generation = controller.generation
    controller.submit("second")
    await until(lambda: controller.final and controller.query == "second")
    assert not controller.is_current(stale_generation)
    assert controller.response is not None and controller.response.request.query == "second"


@pytest.mark.asyncio
async def test_clearing_the_box_cancels_the_running_query(qtbot: object) -> None:
    engine = FakeEngine(sources=["a"], delay=fixed(0.3))
    controller = SearchController(lambda: engine)
    cleared: list[bool] = []
    controller.cleared.connect(lambda: cleared.append(True))
    controller.submit("slow")
    await asyncio.sleep(0.05)
    controller.schedule("")
    await until(lambda: "slow" in engine.cancelled)
    assert cleared and controller.response is None


@pytest.mark.asyncio
async def test_failed_sources_are_reported_not_raised(qtbot: object) -> None:
    engine = FakeEngine(sources=["a", "b"], failing={"b": "boom"})
    controller = SearchController(lambda: engine)
    controller.submit("q")
    await until(lambda: controller.final)
    assert controller.response is not None
    report = {r.name: r for r in controller.response.sources}
    assert report["b"].status == "error" and report["b"].error == "boom"
    assert report["a"].status == "ok"


@pytest.mark.asyncio
async def test_a_query_asked_before_the_engine_opens_runs_once_it_has(qtbot: object) -> None:
    """Enter pressed while the engine is still starting (a busy machine) is not lost:
    the page says the search waits, and it runs when the engine is there; clearing the
    box meanwhile forgets it."""
    engine = FakeEngine(delay=fixed(0.0))
    opened: list[FakeEngine] = []
    controller = SearchController(lambda: opened[0] if opened else None)
    said: list[str] = []
    controller.waiting.connect(said.append)
    controller.submit("fixture")
    assert said and "runs as soon as it is ready" in said[0] and engine.started == []
    opened.append(engine)
    await until(lambda: controller.final, timeout=120)  # (a deadline only for a failing run)
    assert engine.started == ["fixture"] and controller.query == "fixture"

    forgotten = SearchController(lambda: opened[1] if len(opened) > 1 else None)
    forgotten.submit("cache")
    forgotten.schedule("")  # the box cleared
    opened.append(FakeEngine(delay=fixed(0.0)))
    await asyncio.sleep(0.5)
    assert opened[1].started == [] and forgotten.query == ""
