"""The one way the UI runs an async operation: ``run_async``; and the one way it runs
engine work that is not the engine facade's: ``off_the_gui``.

Every UI-triggered coroutine (a search, a server test, saving the config, indexing)
goes through the :class:`TaskRunner`, which keeps the task alive, shows it in the
status bar while it runs, reports failure to the user (and the log), and cancels a
superseded task when a new one with the same ``key`` starts (search-as-you-type).
The engine facade runs on its own thread (``tributary.app.engine_host``) and indexing
in child processes (``tributary.app.workers``); the engine's other functions the app
calls (listing and removing indexes, reading the query log, the keyring, signing in)
go through ``off_the_gui``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, overload

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from tributary.app import safe_text

log = logging.getLogger(__name__)

SuccessCallback = Callable[[Any], None]
ErrorCallback = Callable[[BaseException], None]


@dataclass(slots=True)
class _Running:
    label: str
    task: asyncio.Task[Any]
    key: str | None


class TaskRunner(QObject):
    """Runs coroutines on the (qasync) event loop and tells the UI how they go."""

    changed = Signal()  # the set of running tasks changed
    failed = Signal(str, str)  # label, message
    succeeded = Signal(str)  # label

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._running: dict[int, _Running] = {}
        self._by_key: dict[str, asyncio.Task[Any]] = {}
        self._quiet: dict[int, asyncio.Task[Any]] = {}  # quiet tasks: no indicator, still tracked

    def run(
        self,
        coro: Coroutine[Any, Any, Any],
        *,
        label: str,
        on_success: SuccessCallback | None = None,
        on_error: ErrorCallback | None = None,
        key: str | None = None,
        quiet: bool = False,
    ) -> asyncio.Task[Any]:
        """Start ``coro``; a running task with the same ``key`` is cancelled first.

        ``on_error`` replaces the default report (status bar + log) when given;
        cancellation is never reported. ``quiet`` keeps the task out of the
        status-bar indicator (for frequent, short operations).
        """
        if key is not None and (previous := self._by_key.get(key)) is not None:
            previous.cancel()
        task = asyncio.ensure_future(coro)
        entry = _Running(label, task, key)
        if not quiet:
            self._running[id(task)] = entry
        else:  # not shown, but cancelled and awaited at shutdown like every other task
            self._quiet[id(task)] = task
        if key is not None:
            self._by_key[key] = task
        task.add_done_callback(lambda t: self._done(t, entry, on_success, on_error))
        self.changed.emit()
        return task

    def _done(
        self,
        task: asyncio.Task[Any],
        entry: _Running,
        on_success: SuccessCallback | None,
        on_error: ErrorCallback | None,
    ) -> None:
        self._running.pop(id(task), None)
        self._quiet.pop(id(task), None)
        if entry.key is not None and self._by_key.get(entry.key) is task:
            del self._by_key[entry.key]
        self.changed.emit()
        if task.cancelled():
            return
        error = task.exception()
        if error is None:
            if on_success is not None:
                on_success(task.result())
            self.succeeded.emit(entry.label)
            return
        log.error("%s failed", entry.label, exc_info=error)
        if on_error is not None:
            on_error(error)
        else:
            self.failed.emit(entry.label, describe_error(error))

    def labels(self) -> list[str]:
        return [entry.label for entry in self._running.values()]

    def tasks(self) -> list[asyncio.Task[Any]]:
        listed = [entry.task for entry in self._running.values()]
        listed += [t for t in self._quiet.values() if id(t) not in self._running]
        return listed + [t for t in self._by_key.values() if id(t) not in self._running and id(t) not in self._quiet]

    def cancel_all(self) -> None:
        for task in self.tasks():
            task.cancel()

    async def wait_idle(self) -> None:
        """Wait for every task started so far (used by shutdown and tests)."""
        while pending := [t for t in self.tasks() if not t.done()]:
            await asyncio.gather(*pending, return_exceptions=True)


_P = ParamSpec("_P")
_T = TypeVar("_T")


@overload
async def off_the_gui(work: Callable[_P, Coroutine[Any, Any, _T]], *args: _P.args,
                      **kwargs: _P.kwargs) -> _T: ...


@overload
async def off_the_gui(work: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T: ...


async def off_the_gui(work: Callable[_P, Any], *args: _P.args, **kwargs: _P.kwargs) -> Any:
    """``work(*args, **kwargs)`` away from the GUI thread, awaited from it: a function in
    a worker thread (its disk, database or keyring waits never freeze the window); a
    coroutine function run to its end on an event loop of its own in a worker thread
    (a sign-in's loopback server and the SDK's flow never share the GUI's loop)."""
    if inspect.iscoroutinefunction(work):
        return await asyncio.to_thread(lambda: asyncio.run(work(*args, **kwargs)))
    return await asyncio.to_thread(work, *args, **kwargs)


def describe_error(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


_runner: TaskRunner | None = None


def runner() -> TaskRunner:
    """The application's task runner (created on first use)."""
    global _runner
    if _runner is None:
        _runner = TaskRunner()
    return _runner


def set_runner(new: TaskRunner | None) -> None:
    global _runner
    _runner = new


def run_async(
    coro: Coroutine[Any, Any, Any],
    *,
    label: str,
    on_success: SuccessCallback | None = None,
    on_error: ErrorCallback | None = None,
    key: str | None = None,
    quiet: bool = False,
) -> asyncio.Task[Any]:
    """Run ``coro`` through the application's :class:`TaskRunner`."""
    return runner().run(
        coro, label=label, on_success=on_success, on_error=on_error, key=key, quiet=quiet
    )


class TaskIndicator(QWidget):
    """Status-bar widget: a busy bar and the running tasks' labels; failures in red."""

    def __init__(self, tasks: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 6, 0)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # failures quote servers' words
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)
        self.bar.setFixedWidth(90)
        self.bar.setFixedHeight(10)
        self.bar.setTextVisible(False)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        self._clear = QTimer(self, singleShot=True, interval=8000)
        self._clear.timeout.connect(self._refresh)
        tasks.changed.connect(self._refresh)
        tasks.failed.connect(self._failed)
        self._refresh()

    def _refresh(self) -> None:
        labels = self._tasks.labels()
        self.bar.setVisible(bool(labels))
        if labels:
            self.label.setObjectName("")
            self.label.setText(labels[-1] + (f"  (+{len(labels) - 1})" if len(labels) > 1 else ""))
        elif not self._clear.isActive():
            self.label.setText("")
        self.label.style().polish(self.label)

    def _failed(self, label: str, message: str) -> None:
        self.label.setObjectName("Error")
        self.label.setText(f"{label} failed — {message}")
        self.label.setToolTip(safe_text.tooltip(message))
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.style().polish(self.label)
        self._clear.start()
