"""run_async: results, failures shown to the user, supersession by key."""

from __future__ import annotations

import asyncio

import pytest

from tributary.app.background import TaskIndicator, TaskRunner, run_async


async def _value(x: int, delay: float = 0.0) -> int:
    await asyncio.sleep(delay)
    return x


async def _boom() -> None:
    raise ValueError("bad value")


@pytest.mark.asyncio
async def test_success_and_failure_callbacks(qtbot: object, fresh_runner: TaskRunner) -> None:
    got: list[object] = []
    failures: list[tuple[str, str]] = []
    fresh_runner.failed.connect(lambda label, msg: failures.append((label, msg)))
    run_async(_value(7), label="seven", on_success=got.append)
    run_async(_boom(), label="explode")
    await fresh_runner.wait_idle()
    assert got == [7]
    assert failures == [("explode", "ValueError: bad value")]


@pytest.mark.asyncio
async def test_same_key_cancels_the_superseded_task(qtbot: object, fresh_runner: TaskRunner) -> None:
    got: list[object] = []
    first = run_async(_value(1, 0.5), label="first", key="k", on_success=got.append)
    second = run_async(_value(2, 0.01), label="second", key="k", on_success=got.append)
    await fresh_runner.wait_idle()
    assert first.cancelled() and not second.cancelled()
    assert got == [2]


@pytest.mark.asyncio
async def test_indicator_shows_running_and_failed(qtbot: object, fresh_runner: TaskRunner) -> None:
    indicator = TaskIndicator(fresh_runner)
    qtbot.addWidget(indicator)  # type: ignore[attr-defined]
    run_async(_value(1, 0.2), label="Indexing repo")
    await asyncio.sleep(0.01)
    assert indicator.label.text() == "Indexing repo" and not indicator.bar.isHidden()
    run_async(_boom(), label="Saving")
    await fresh_runner.wait_idle()
    assert indicator.label.text() == "Saving failed — ValueError: bad value"
    assert indicator.bar.isHidden()


@pytest.mark.asyncio
async def test_quiet_tasks_are_cancelled_at_shutdown_too(qtbot: object, fresh_runner: TaskRunner) -> None:
    got: list[object] = []
    task = run_async(_value(1, delay=30.0), label="", quiet=True, on_success=got.append)
    assert fresh_runner.labels() == []  # not in the indicator
    fresh_runner.cancel_all()
    await fresh_runner.wait_idle()
    assert task.cancelled() and got == []


@pytest.mark.asyncio
async def test_engine_work_runs_off_the_gui_thread_and_loop() -> None:
    """A function runs in a worker thread; a coroutine function on a loop of its own."""
    import threading

    from tributary.app.background import off_the_gui

    gui_thread, gui_loop = threading.current_thread(), asyncio.get_running_loop()

    def where(label: str) -> tuple[str, threading.Thread]:
        return label, threading.current_thread()

    async def where_async(label: str) -> tuple[str, threading.Thread, asyncio.AbstractEventLoop]:
        return label, threading.current_thread(), asyncio.get_running_loop()

    label, thread = await off_the_gui(where, "sync")
    assert label == "sync" and thread is not gui_thread
    label, thread, loop = await off_the_gui(where_async, label="async")
    assert label == "async" and thread is not gui_thread and loop is not gui_loop
