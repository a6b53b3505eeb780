"""The index manager: add a repository, watch it index (rate, ETA), re-index, remove.

Indexing runs in a child process (``tributary.app.index_worker``) that reports progress as
JSON lines: the embedding model never loads in the GUI process and the indexer's
CPU work cannot stall the event loop. It writes the code's keyword tier, then the git
history's commits (the tasks server's), each searchable by its words at once, then
the vectors of both: a new repository answers in seconds, and by meaning when the
vectors are in. Listing and removing repositories are quick
calls into ``tributary.engine.repos.manage``, run in a worker thread; removing deletes the code index
and the history together.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tributary.app import safe_text, theme
from tributary.app.background import describe_error, off_the_gui, run_async
from tributary.app.elided import ElidedLabel
from tributary.app.tables import keyboard_rows
from tributary.app.watchers import RepoWatchers
from tributary.app.workers import embed_command, run_worker, worker_command
from tributary.engine import api
from tributary.engine.api import EngineLike


class EndElide(QStyledItemDelegate):
    """Cuts its column's text at the end where it does not fit (the view elides in the
    middle, which keeps both ends of a path but halves a status's words)."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideRight


COLUMNS = ("Repository", "Status", "Files", "Chunks", "Tasks", "Updated", "Watcher")
NO_HISTORY = "—"  # the Tasks column of a repository without a history (a folder outside git)
NO_HISTORY_TIP = "No history: not a git work tree, or indexed with --no-history. Its code is searched alone."


def repos() -> ModuleType:
    """The engine's repositories, code index and history (imported on first use: it pulls
    in the indexer)."""
    return importlib.import_module("tributary.engine.api")


def shown_name(path: str, entry: Any, shared_name: bool = False) -> str:
    """A repository as ``tributary index list`` and a query's ``repo:`` name it (``owner/name``
    from its remote); the folder's name while it has no index yet, and the folder too
    when another index has the same name (two clones of one repository)."""
    name = str(_get(entry, "name", default="") or "") if entry is not None else ""
    if not name:
        return Path(path).name or path
    return f"{name} ({path})" if shared_name else name


def short_time(seconds: float, now: float | None = None) -> str:
    """A moment as the table shows it: ``23:29`` today, ``2026-12-05`` before (the
    tooltip has both), so the column leaves room for the names."""
    moment, today = time.localtime(seconds), time.localtime(now)
    if moment[:3] == today[:3]:
        return time.strftime("%H:%M", moment)
    return time.strftime("%Y-%m-%d", moment)


def _history_waits(entry: Any) -> int | None:
    """The share (percent) of a history's past tasks with their vector, while some wait
    for one; None when none waits or it is not known."""
    embedded, tasks = _get(entry, "history_embedded"), _get(entry, "tasks", default=0)
    return int(100 * embedded / tasks) if isinstance(embedded, int) and embedded < tasks else None


def _vectors_wait(entry: Any) -> bool:
    """Whether chunks of an index, or past tasks of its history, wait for a vector."""
    embedded, chunks = _get(entry, "embedded"), _get(entry, "chunks", default=0)
    return (isinstance(embedded, int) and bool(chunks) and embedded < chunks) or _history_waits(entry) is not None


def _first_warning(stats: Any) -> str:
    """The first thing an index run could not do (a file too large, an ignore line
    skipped), and how many more, for its message; "" when there was none."""
    warnings = [str(w) for w in _get(stats, "warnings", default=None) or []]
    if not warnings:
        return ""
    return f"; {warnings[0]}" + (f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else "")


def _get(obj: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return default


@dataclass(slots=True)
class Progress:
    """What the progress bar shows, read from the manager's progress event (or the
    worker's for the history's vectors)."""

    done: int
    total: int
    chunks: int
    rate: float | None
    eta_s: float | None
    embedding: bool = False  # the second tier: done/total count chunks given their vector
    history: bool = False  # the history's vectors: done/total count past tasks given theirs

    @classmethod
    def of(cls, event: Any, started: float) -> Progress:
        if _get(event, "event") == "history-embed":  # its words are searchable already
            done = int(_get(event, "done", default=0) or 0)
            total = int(_get(event, "total", default=0) or 0)
            rate, eta = _get(event, "rate"), _get(event, "eta_s")
            return cls(done, total, done, float(rate) if rate else None,
                       float(eta) if eta is not None and done < total else None, embedding=True, history=True)
        embedding = _get(event, "phase") == "embed"
        if embedding:  # keyword search already covers every file; vectors fill in
            done = int(_get(event, "vectors_done", default=0) or 0)
            total = int(_get(event, "vectors_total", default=0) or 0)
            rate, eta = _get(event, "rate"), _get(event, "eta_s")
            return cls(done, total, done, float(rate) if rate else None,
                       float(eta) if eta is not None else None, embedding=True)
        done = int(_get(event, "files_done", "done", default=0) or 0)
        total = int(_get(event, "files_total", "total", default=0) or 0)
        chunks = int(_get(event, "chunks_done", "chunks", default=0) or 0)
        rate = _get(event, "rate")  # chunks per second
        eta = _get(event, "eta_s", "eta")
        elapsed = time.monotonic() - started
        if rate is None and elapsed > 0 and chunks:
            rate = chunks / elapsed
        if eta is None and done and total > done:
            eta = (total - done) * elapsed / done
        return cls(done, total, chunks, float(rate) if rate else None, float(eta) if eta is not None else None)

    @property
    def status(self) -> str:
        """The table's state column."""
        if self.history:
            return f"history {self.percent} % embedded"
        if self.embedding:
            return f"semantic index {self.percent} % ready"
        return f"indexing {self.done}/{self.total or '?'}"

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 100

    def text(self) -> str:
        if self.embedding:
            ready, noun, unit = (("code ready; the history's", "past tasks", "tasks") if self.history
                                 else ("keyword search ready;", "chunks", "chunks"))
            parts = [f"{ready} semantic index {self.percent} % ready ({self.done:,}/{self.total:,} {noun} embedded)"]
            if self.rate:
                parts.append(f"{self.rate:,.1f} {unit}/s")
            if self.eta_s is not None:
                parts.append(f"ETA {format_eta(self.eta_s)}")
            return " · ".join(parts)
        parts = [f"{self.done:,}/{self.total:,} files" if self.total else f"{self.done:,} files"]
        if self.chunks:
            parts.append(f"{self.chunks:,} chunks")
        if self.rate:
            parts.append(f"{self.rate:,.1f} chunks/s")
        if self.eta_s is not None:
            parts.append(f"ETA {format_eta(self.eta_s)}")
        return " · ".join(parts)


def format_eta(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class IndexPage(QWidget):
    message = Signal(str)
    indexes_changed = Signal()  # a repository was indexed, re-indexed or removed
    # The repositories being indexed that cannot be searched yet (keyword tier not written).
    indexing_changed = Signal(list)

    def __init__(
        self,
        engine: Callable[[], EngineLike | None],
        parent: QWidget | None = None,
        *,
        worker: Callable[[Path], list[str]] = worker_command,
        watchers: RepoWatchers | None = None,
        embedder: Callable[[Path], list[str]] = embed_command,
    ) -> None:
        super().__init__(parent)
        self._engine = engine
        self._worker = worker
        self._embedder = embedder
        self._running: dict[str, Progress] = {}
        self._finishing: dict[str, asyncio.Task[Any]] = {}  # running to finish a stopped index's vectors
        self._resumed: set[str] = set()  # those finished so this session (each once)
        # What a running repository's row says now ("semantic index 40 % ready",
        # "reading history"): a refill of the table keeps it.
        self._live_status: dict[str, str] = {}
        self._unsearchable: set[str] = set()
        self.confirm_box: QMessageBox | None = None  # the last "delete this index?" question
        self._owns_watchers = watchers is None  # else their owner reports a failed watcher
        self.watchers = watchers if watchers is not None else RepoWatchers(engine, parent=self)
        self.watchers.updated.connect(self._watched_update)
        self.watchers.stopped.connect(self._watch_stopped)
        title = QLabel("Indexes")
        title.setObjectName("SectionTitle")
        subtitle = QLabel("Local repositories searched by the built-in files and tasks servers.")
        subtitle.setObjectName("Muted")
        self.add_button = QPushButton(theme.icon("add", "#ffffff"), "Add repository…")
        self.add_button.setObjectName("Primary")
        self.add_button.clicked.connect(lambda: self.choose_folder())  # not its `checked` as `then`
        self.reindex_button = QPushButton(theme.icon("refresh"), "Re-index")
        self.reindex_button.clicked.connect(self.reindex_selected)
        self.remove_button = QPushButton(theme.icon("remove"), "Remove")
        self.remove_button.clicked.connect(self.remove_selected)
        self.watch_button = QPushButton(theme.icon("eye"), "Watch")
        self.watch_button.setCheckable(True)
        self.watch_button.setToolTip("Keep the index up to date as files change, while Tributary runs")
        self.watch_button.clicked.connect(self.toggle_watch_selected)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        keyboard_rows(self.table)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)  # no cut figures
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # A long status ("history 61 % embedded") shares the room with the name rather
        # than taking it, and is cut at its end (the tooltip has it whole).
        header.setSectionResizeMode(COLUMNS.index("Status"), QHeaderView.ResizeMode.Stretch)
        self.table.setItemDelegateForColumn(COLUMNS.index("Status"), EndElide(self.table))
        header.setMinimumSectionSize(60)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # long names keep both ends
        self.table.setWordWrap(False)  # wrapped at "/", a name showed only its owner ("clones/…")
        self.table.itemSelectionChanged.connect(self._selection)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.progress_label = ElidedLabel()  # a long path must not widen the window
        self.progress_label.setObjectName("Muted")
        self.empty = QLabel("No repository indexed yet. “Add repository…” indexes a folder: its code "
                            "and its git history become searchable by the built-in files and tasks servers.")
        self.empty.setObjectName("Muted")
        self.empty.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.reindex_button)
        buttons.addWidget(self.remove_button)
        buttons.addWidget(self.watch_button)
        buttons.addStretch()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 10)
        layout.addWidget(title)
        layout.addWidget(subtitle)
        layout.addLayout(buttons)
        # Progress right under the buttons that start it, above the list.
        layout.addWidget(self.progress)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.empty)
        layout.addWidget(self.table, 1)
        self._filler = layout.count()
        layout.addStretch(0)  # takes the room the hidden table leaves, so the page stays compact
        self._layout = layout
        self._selection()

    # -- listing ------------------------------------------------------------------------

    def refresh(self) -> asyncio.Task[Any]:
        """List the indexes (in a worker thread: it opens every index file)."""
        return run_async(off_the_gui(lambda: list(repos().list_repositories())),
                         label="Listing indexes", quiet=True, key="list-indexes",
                         on_success=self._fill, on_error=self._list_failed)

    def _list_failed(self, error: BaseException) -> None:
        self.message.emit(f"Could not list indexes: {describe_error(error)}")
        self._fill([])


    def _fill(self, entries: list[Any]) -> None:
        selected = self._selected_path()  # kept across the refill (watchers refresh often)
        paths = [str(_get(entry, "root", "path", "repo", default=entry)) for entry in entries]
        if self._row_paths() != paths + [path for path in self._running if path not in paths]:
            self.table.setRowCount(0)  # else the same rows are updated in place
        named = Counter(str(_get(entry, "name", default="")) for entry in entries)
        for path, entry in zip(paths, entries, strict=True):
            self._set_row(path, entry, shared_name=named[str(_get(entry, "name", default=""))] > 1)
        for path in self._running:
            if path not in paths:
                self._set_row(path, None)
        empty = self.table.rowCount() == 0
        self.empty.setVisible(empty)
        self.table.setVisible(not empty)
        self._layout.setStretch(self._filler, 1 if empty else 0)
        if selected is not None and selected in paths + list(self._running):
            self.table.selectRow(self._row_of(selected))
        self._selection()
        self._finish_stopped(entries)

    def _finish_stopped(self, entries: list[Any]) -> None:
        """Finish the vectors of an index whose first pass was stopped (the app quit while
        it embedded, a ``--repo`` search's background pass was killed): its meaning-based
        matches stayed partial until a re-index. One at a time, at the worker's lower
        priority, each once a session, never beside other indexing, and not for a
        watched repository (its watcher's first pass embeds what waits)."""
        if self._running:
            return
        for entry in entries:
            path = str(_get(entry, "root", "path", "repo", default=entry))
            if (path in self._resumed or self.watchers.watching(path)
                    or _get(entry, "exists", default=True) is False or not _vectors_wait(entry)):
                continue
            self._resumed.add(path)
            self._finish(Path(path))
            return

    def _finish(self, path: Path) -> None:
        key = str(path)
        started = time.monotonic()
        self._running[key] = Progress(0, 0, 0, None, None)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.progress_label.set_full_text(f"Finishing the semantic index of {path}…")
        self._finishing[key] = run_async(
            run_worker(self._embedder(path), lambda event: self._progress(key, Progress.of(event, started))),
            label=f"Embedding {path.name}", quiet=True,
            on_success=lambda stats: self._finished(key, stats), on_error=lambda error: self._failed(key, error))

    def _stop_finishing(self, key: str) -> None:
        """Stop finishing ``key``'s vectors, for what the person asked of it instead
        (re-index, watch, remove): that pass was the app's idea, not theirs."""
        task = self._finishing.pop(key, None)
        if task is None:
            return
        task.cancel()  # (the worker is killed; a cancelled task reports nothing)
        self._running.pop(key, None)
        self._live_status.pop(key, None)
        self._idle_progress()

    def _row_paths(self) -> list[str]:
        return [str(item.data(Qt.ItemDataRole.UserRole)) if (item := self.table.item(row, 0)) else ""
                for row in range(self.table.rowCount())]

    def _row_of(self, path: str) -> int:
        """The row of the repository at ``path``, added at the end if it has none."""
        rows = self._row_paths()
        if path in rows:
            return rows.index(path)
        row = self.table.rowCount()
        self.table.insertRow(row)
        return row

    def _set_row(self, path: str, entry: Any, shared_name: bool = False) -> None:
        row = self._row_of(path)
        running = path in self._running
        status = (self._live_status.get(path, "indexing…") if running
                  else str(_get(entry, "status", default="ready") or "ready"))
        if not running and status == "ready" and (share := _history_waits(entry)) is not None:
            status = f"history {share} % embedded"
        if entry is not None and _get(entry, "exists", default=True) is False:
            status = "folder missing"
        when = _get(entry, "updated_at", "last_update", "indexed_at", default="")
        last = last_whole = str(when or "")
        if isinstance(when, (int, float)) and when:
            last, last_whole = short_time(when), time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
        watch = self.watchers.watching(path)
        tasks = int(_get(entry, "tasks", default=0) or 0) if entry is not None else 0
        # None yet while a first index is made (its history is read last): not "0"; and a
        # folder outside git has no history at all, not an empty one.
        no_history = entry is not None and not running and _get(entry, "history", default=True) is False
        tasks_text = NO_HISTORY if no_history else f"{tasks:,}" if entry is not None and (tasks or not running) else ""
        values = [
            shown_name(path, entry, shared_name),
            status,
            f"{int(_get(entry, 'files', default=0) or 0):,}" if entry is not None else "",
            f"{int(_get(entry, 'chunks', default=0) or 0):,}" if entry is not None else "",
            tasks_text,
            last,
            "on" if watch else "off",
        ]
        for column, value in enumerate(values):
            item = self._cell(row, column)
            item.setText(value)
            item.setToolTip("")
            if column == 0:
                item.setData(Qt.ItemDataRole.UserRole, path)
                item.setToolTip(safe_text.tooltip(path if value == path else f"{value}\n{path}"))
            elif column == COLUMNS.index("Status"):
                item.setToolTip(safe_text.tooltip(value))
            elif column == COLUMNS.index("Updated") and last_whole:
                item.setToolTip(last_whole)
            elif column == COLUMNS.index("Tasks") and no_history:
                item.setToolTip(NO_HISTORY_TIP)

    def _cell(self, row: int, column: int) -> QTableWidgetItem:
        """The item at ``row``, ``column``, made if there is none. Cells are updated in
        place: the table is filled again whenever an index changes (watchers, progress),
        and an item replaced under the pointer takes away the tooltip being read."""
        item = self.table.item(row, column)
        if item is None:
            item = QTableWidgetItem()
            self.table.setItem(row, column, item)
        return item

    def _selected_path(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.table.item(rows[0].row(), 0)
        return str(item.data(Qt.ItemDataRole.UserRole)) if item else None

    def _selection(self) -> None:
        path = self._selected_path()
        idle = path is not None and (path not in self._running or path in self._finishing)
        watched = path is not None and self.watchers.watching(path)
        self.reindex_button.setEnabled(idle)
        self.remove_button.setEnabled(idle)
        self.watch_button.setEnabled(idle)
        self.watch_button.setChecked(watched)
        self.watch_button.setText("Watching" if watched else "Watch")

    # -- actions ------------------------------------------------------------------------

    def choose_folder(self, then: Callable[[], None] | None = None) -> None:
        """Ask for a folder and index it; ``then`` runs once indexing has started."""
        dialog = QFileDialog(self, "Add a repository", str(Path.home()))
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda p: self.index(Path(p)))
        if then is not None:
            dialog.fileSelected.connect(lambda _: then())
        dialog.open()  # not exec(): no nested event loop under qasync

    def reindex_selected(self) -> None:
        path = self._selected_path()
        if path is None:
            return
        self._stop_finishing(path)
        if not self.watchers.watching(path):
            self.index(Path(path))
            return
        # A watched repository's watcher is its index's one writer: it pauses meanwhile.
        run_async(self._reindex_watched(path), label=f"Re-indexing {path}", quiet=True,
                  on_error=lambda e: self.message.emit(f"Could not re-index {path}: {describe_error(e)}"))

    async def _reindex_watched(self, path: str) -> None:
        """Stop the repository's watcher, index it, and watch it again however that went."""
        if (watcher := self.watchers.stop(path)) is not None:
            await asyncio.gather(watcher, return_exceptions=True)
        try:
            if (job := self.index(Path(path))) is not None:
                await asyncio.gather(job, return_exceptions=True)
        finally:
            self.watchers.start(path)
            self.refresh()

    def remove_selected(self) -> None:
        """Ask first, naming what goes (the index and history, not the folder); Delete
        is never the default, and Escape cancels."""
        path = self._selected_path()
        if path is None:
            return
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Remove index")
        box.setText(f"Delete the index of {path}?")
        watched = " Tributary stops watching it first." if self.watchers.watching(path) else ""
        box.setInformativeText(
            f"{self._contents(path)} will be deleted from Tributary's indexes. The folder and "
            f"its files are not touched; indexing it again makes a new index.{watched}")
        box.setTextFormat(Qt.TextFormat.PlainText)
        delete = box.addButton("Delete index", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(lambda button: self._remove(path) if button is delete else None)
        self.confirm_box = box
        box.open()  # not exec(): no nested event loop under qasync

    def _contents(self, path: str) -> str:
        """What the index of ``path`` holds, in words, from its row."""
        row = self._row_of(path)
        cells = [self.table.item(row, column) for column in (2, 3, 4)]
        files, chunks, tasks = (cell.text() if cell is not None else "" for cell in cells)
        if not chunks:
            return "Its code index and task history"
        history = f" and its history of {tasks} commits" if tasks and tasks != "0" else ""
        return f"Its code index ({chunks} chunks from {files} files){history}"

    def _remove(self, path: str) -> None:
        self._stop_finishing(path)
        run_async(self._removed(path), label=f"Removing {path}",
                  on_success=lambda _: self._changed(path, f"Removed the index of {path}"),
                  on_error=lambda e: self.message.emit(f"Could not remove {path}: {describe_error(e)}"))

    async def _removed(self, path: str) -> None:
        """Stop watching the repository (in the config too, or the next start would index
        it again), then delete its index and history."""
        if self.watchers.watching(path):
            await self.watchers.set_watch(path, False)
        await off_the_gui(repos().remove_repository, Path(path))

    def toggle_watch_selected(self) -> None:
        path = self._selected_path()
        if path is None:
            return
        watch = not self.watchers.watching(path)
        self._stop_finishing(path)  # a watcher's first pass embeds what waits
        run_async(self.watchers.set_watch(path, watch), label=f"{'Watching' if watch else 'Not watching'} {path}",
                  on_success=lambda _: self._watch_set(path, watch),
                  on_error=lambda e: self._watch_failed(path, e))

    def _watch_set(self, path: str, watch: bool) -> None:
        self.message.emit(f"Watching {path} for changes" if watch else f"Stopped watching {path}")
        self.refresh()

    def _watch_failed(self, path: str, error: BaseException) -> None:
        self.message.emit(f"Could not change watching {path}: {describe_error(error)}")
        self.refresh()

    def _watched_update(self, path: str) -> None:
        self.refresh()  # new counts and last update

    def _watch_stopped(self, path: str, why: str) -> None:
        if why and self._owns_watchers:
            self.message.emit(f"Stopped watching {path}: {why}")
        self.refresh()

    def _changed(self, path: str, text: str) -> None:
        """A repository's index changed, appeared or went: list again; the engine drops
        the cached answers that drew on it and re-derives its built-in servers."""
        self.message.emit(text)
        self.refresh()
        engine = self._engine()
        if engine is not None:
            run_async(self._update_engine(engine, path), label="Updating sources", quiet=True,
                      on_success=lambda _: self.indexes_changed.emit())
        else:
            self.indexes_changed.emit()

    @staticmethod
    async def _update_engine(engine: EngineLike, path: str) -> None:
        await engine.repository_changed(path)
        await engine.apply_config(engine.config)

    def index(self, path: Path) -> asyncio.Task[Any] | None:
        key = str(path)
        if key in self._running:
            return None
        started = time.monotonic()
        self._running[key] = Progress(0, 0, 0, None, None)
        self.refresh()
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.progress_label.set_full_text(f"Indexing {path}…")
        self._unsearchable.add(key)
        self.indexing_changed.emit(sorted(self._unsearchable))

        def on_event(event: dict[str, Any]) -> None:
            kind = event.get("event")
            if kind == "history":
                self._reading_history(key)
            elif kind == "history-ready":
                self._history_ready(key, str(event.get("history") or ""))
            elif event.get("phase") == "keyword":
                self._keyword_ready(key)
            else:
                self._progress(key, Progress.of(event, started))

        return run_async(run_worker(self._worker(path), on_event), label=f"Indexing {path.name}",
                         on_success=lambda stats: self._finished(key, stats),
                         on_error=lambda error: self._failed(key, error))

    def _progress(self, key: str, progress: Progress) -> None:
        if key not in self._running:
            return
        self._running[key] = progress
        if progress.total:
            self.progress.setRange(0, progress.total)
            self.progress.setValue(progress.done)
        doing = "Finishing the semantic index of" if key in self._finishing else "Indexing"
        self.progress_label.set_full_text(f"{doing} {key}: {progress.text()}")
        self._show_status(key, progress.status)

    def _keyword_ready(self, key: str) -> None:
        """Every file is in the keyword index: the repository can be searched now, so the
        engine derives its built-in servers at once instead of when indexing ends."""
        if key not in self._unsearchable:
            return
        self.message.emit(f"{Path(key).name}: keyword and symbol search ready; "
                          "meaning-based matches join as the semantic index fills in")

        def searchable(_: object = None) -> None:  # the engine asks it from now on
            self._now_searchable(key)
            self.indexes_changed.emit()
            self.refresh()  # its name and the code index's counts, while vectors and history follow

        self._rederive(key, searchable)

    def _rederive(self, key: str, then: Callable[[object], None]) -> None:
        """Have the engine derive its built-in servers again for ``key``, a part of which
        can be searched now, then run ``then`` (whether that worked or not)."""
        engine = self._engine()
        if engine is None:
            then(None)
        else:
            run_async(self._update_engine(engine, key), label="Updating sources", quiet=True,
                      on_success=then, on_error=then)

    def _now_searchable(self, key: str) -> bool:
        """``key`` left the repositories that cannot be searched yet (if it was one)."""
        if key not in self._unsearchable:
            return False
        self._unsearchable.discard(key)
        self.indexing_changed.emit(sorted(self._unsearchable))
        return True

    def _reading_history(self, key: str) -> None:
        if key not in self._running:
            return
        self.progress.setRange(0, 0)  # busy: git gives no count up front
        self.progress_label.set_full_text(f"Reading the git history of {key}…")
        self._show_status(key, "reading history")

    def _history_ready(self, key: str, line: str) -> None:
        """The history's commits are written: its past tasks answer by their words from
        now on (the engine derives the tasks server), while the vectors are made."""
        if key not in self._running:
            return
        said = f" ({line.removeprefix('history: ')})" if line.startswith("history: ") else ""
        self.message.emit(f"{Path(key).name}: its history can be searched by its words{said}; "
                          "meaning-based matches join as the vectors are made")

        def searchable(_: object = None) -> None:
            self.indexes_changed.emit()
            self.refresh()  # the Tasks column

        self._rederive(key, searchable)

    def _show_status(self, key: str, status: str) -> None:
        """A running repository's state column (kept when the table is filled again)."""
        self._live_status[key] = status
        item = self._cell(self._row_of(key), COLUMNS.index("Status"))
        item.setText(status)
        item.setToolTip(safe_text.tooltip(status))

    def _finished(self, key: str, stats: Any) -> None:
        self._running.pop(key, None)
        self._live_status.pop(key, None)
        self._now_searchable(key)
        self._idle_progress()
        if self._finishing.pop(key, None) is not None:
            if _get(stats, "elsewhere"):
                self.message.emit(f"{Path(key).name}: another process is embedding it now")
                self.refresh()
                return
            embedded = [api.counted(n, noun) for n, noun in
                         ((int(_get(stats, "chunks_embedded", default=0) or 0), "chunk"),
                          (int(_get(stats, "tasks_embedded", default=0) or 0), "past task")) if n]
            said = _get(stats, "history", default="")
            self._changed(key, f"{Path(key).name}: semantic index finished"
                               + (f" ({' and '.join(embedded)} embedded)" if embedded else "")
                               + (f"; {said}" if said else ""))
            return
        files = _get(stats, "files_indexed", "files", default=None)
        chunks = _get(stats, "chunks_total", "chunks", default=None)
        seconds = _get(stats, "seconds", "elapsed_s", default=None)
        took = f" in {seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
        history = _get(stats, "history", default=None)
        files_text, chunks_text = (api.counted(n, noun) if isinstance(n, int) else f"? {noun}s"
                                   for n, noun in ((files, "file"), (chunks, "chunk")))
        done = (f"no file changed, {chunks_text}{took}" if files == 0
                else f"{files_text}, {chunks_text}{took}")  # (files: those indexed anew)
        self._changed(key, f"Indexed {key}: {done}" + (f"; {history}" if history else "") + _first_warning(stats))

    def _failed(self, key: str, error: BaseException) -> None:
        self._running.pop(key, None)
        self._live_status.pop(key, None)
        if self._finishing.pop(key, None) is not None:
            self._idle_progress()
            self.message.emit(f"Could not finish the semantic index of {key}: {describe_error(error)}; "
                              "keyword and symbol search cover it, and Re-index tries again")
            self.refresh()
            return
        self._now_searchable(key)
        self._idle_progress()
        self.message.emit(f"Indexing {key} failed: {describe_error(error)}")
        self.refresh()

    def _idle_progress(self) -> None:
        if not self._running:
            self.progress.setVisible(False)
            self.progress_label.set_full_text("")
