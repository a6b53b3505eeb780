"""The built-in tasks MCP server: similar past tasks, and the files they point to.

Run as ``python -m tributary.engine.servers.tasks --repo PATH [--index-dir DIR]`` (or
``--db FILE``; with only ``--index-dir``, every ``*.tasks.sqlite`` in it is served; with
``--postgres``, every history in the shared index whose DSN is in ``$TRIBUTARY_INDEX_DSN``).
Tools: ``search_tasks(query, top_k)`` and ``files_for_task(query, top_k)``, both
with an ``outputSchema``. ``files_for_task`` answers with the files *and*, after them
(before them for a question about the past, ``query.kinds.asks_history``), the best
few matching tasks themselves as items of ``kind`` "task", each with its own ``rank``;
each file names the functions those tasks changed most, and for an issue-length
question the code of those functions in the first files follows, as items of ``kind``
"function". The embedding model is loaded once, in the background as soon as the
server starts, so the first query does not pay for importing torch.
Nothing but the protocol goes to stdout; logs go to stderr.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import re
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from tributary.engine.errors import TributaryError
from tributary.engine.index.backend import IndexBackend, add_postgres_options, postgres_backend
from tributary.engine.index.manager import INDEX_SUFFIX
from tributary.engine.index.naming import in_scope
from tributary.engine.index.priors import (
    ASSET,
    CODE,
    GENERATED,
    RECORD,
    TOOLING,
    TRANSLATION,
    VENDORED,
    asked_roles,
    factor,
    role_among,
    role_of,
    task_asked_roles,
    translated,
)
from tributary.engine.index.search import SearchHit, hybrid_search
from tributary.engine.index.store import IndexStore, SearchFilter, SqliteStore, StoredChunk
from tributary.engine.localsearch.embedder import Embedder
from tributary.engine.localsearch.longquery import is_task_question, read_task
from tributary.engine.model import vectors_ready
from tributary.engine.query.kinds import asks_history
from tributary.engine.runtime.heap import settle
from tributary.engine.servers import check_scope
from tributary.engine.servers.merge import (
    STRENGTH_HITS,
    chunk_evidence,
    index_factors,
    repository_names,
    task_evidence,
)
from tributary.engine.tasks.api import tasks_db_path
from tributary.engine.tasks.model import FileScore, TaskHit
from tributary.engine.tasks.ranking import DEFAULT_FILE_RANK, FileRankParams
from tributary.engine.tasks.search import TaskIndex

if TYPE_CHECKING:
    from tributary.engine.postgres.db import Database

log = logging.getLogger("tributary.engine.servers.tasks")

MAX_TOP_K = 100
CONTENT_CHARS = 4000
TASKS_WITH_FILES = 5  # matching tasks files_for_task returns beside the files
# A history weighed below this against the other indexed repositories answers nothing: it
# is another repository's past, and the engine fuses each source's answer by rank, so
# scaled-down scores alone would still put its first files level with the code's first.
FAINT_HISTORY = 0.7
SHORT_ID = 12


class TaskItem(BaseModel):
    kind: Literal["task"] = "task"
    id: str
    short_id: str
    title: str
    date: str
    author: str | None = None
    score: float
    rank: int
    files: list[str]
    content: str = Field(description="title and body")
    cosine: float | None = Field(default=None, description="cosine of query and task")
    bm25_rank: int | None = None
    dense_rank: int | None = None
    repo: str | None = None


_VECTORS_DUE = (
    "answered on keywords alone where meaning-based search was due (a history's commits "
    "are still being embedded): a later answer may be better"
)


class TaskResults(BaseModel):
    results: list[TaskItem]
    warnings: list[str] = Field(default_factory=list)
    degraded: bool = Field(default=False, description=_VECTORS_DUE)


class FileItem(BaseModel):
    kind: Literal["file"] = "file"
    path: str
    score: float
    rank: int
    content: str = Field(description="why: the supporting tasks")
    start_line: int | None = None
    title: str
    tasks: list[str] = Field(description="ids of the supporting tasks")
    functions: list[str] = Field(
        default_factory=list, description="names of the file's functions those tasks changed, most first"
    )
    cosine: float | None = Field(default=None, description="best supporting task's cosine")
    exists: bool | None = None
    repo: str | None = None


class FunctionItem(BaseModel):
    """A function of one of the first files that the similar past tasks changed: its
    code as the code index holds it, so an issue's answer can read it."""

    kind: Literal["function"] = "function"
    path: str
    title: str
    start_line: int
    end_line: int
    score: float
    rank: int
    content: str
    tasks: list[str] = Field(description="ids of the supporting tasks")
    changed_by: str = Field(description="the titles of the similar past tasks that changed this function")
    repo: str | None = None


class FileResults(BaseModel):
    results: list[FileItem | TaskItem | FunctionItem]
    warnings: list[str] = Field(default_factory=list)
    degraded: bool = Field(default=False, description=_VECTORS_DUE)


class TaskBackend:
    """The task indexes this server answers from, opened once in the background."""

    def __init__(
        self,
        db_paths: Sequence[Path],
        *,
        embed: bool = True,
        file_params: FileRankParams = DEFAULT_FILE_RANK,
        model_wait_s: float | None = None,
        backend: IndexBackend | None = None,
    ) -> None:
        self.db_paths = list(db_paths)
        self.backend = backend if backend is not None and backend.dsn is not None else None
        self.model_wait_s = MODEL_WAIT_S if model_wait_s is None else model_wait_s
        self.embed = embed
        self.file_params = file_params
        self.indexes: list[tuple[str, TaskIndex]] = []
        # Each index's repository, for scoping: a history file's is read from the code
        # index beside it when first asked (``_repo_identity``); the shared index's rows
        # carry theirs.
        self._files: dict[int, Path] = {}  # id(index) -> its task history file
        self._shared: dict[int, tuple[str, Path, int]] = {}  # id(index) -> (name, root, row id)
        # Code indexes read to weigh the histories against repositories that have none.
        self._code_stores: dict[Path | int, IndexStore] = {}  # index file or row id -> store
        self._code_files: dict[Path, int] = {}  # index file -> the inode its store was opened on
        # id(index) -> its "updated_at" when every task of it had a vector: counted again
        # only after an import (counting a large history's vectors takes milliseconds).
        self._embedded_at: dict[int, str | None] = {}
        self._database: Database | None = None  # the shared index's connection, when it is served
        self.error: BaseException | None = None
        self._opened = threading.Event()  # indexes open: keyword search works
        self._ready = threading.Event()  # the model is loaded too (or failed to)
        self.warmed = threading.Event()  # each history's caches read ahead (or given up)
        self._lock = threading.Lock()  # one query at a time: SQLite handles, one model
        self._opener: threading.Thread | None = None
        self._closed = False

    def start(self) -> None:
        self._opener = threading.Thread(target=self._open, name="tasks-warmup", daemon=True)
        self._opener.start()

    def _open(self) -> None:
        try:
            for path in self.db_paths:
                index = TaskIndex(path, load_embedder=False, check_same_thread=False)
                self.indexes.append((_repo_label(path), index))
                self._files[id(index)] = Path(path)
            if self.backend is not None:
                self._database = _connect(self.backend)
                for row_id, name, root, index in _postgres_indexes(self._database):
                    self.indexes.append((name, index))
                    self._shared[id(index)] = (name, root, row_id)
            self._opened.set()
            # A history imported a moment ago may have no vector yet (its words were
            # searchable first): the model is loaded for the vectors on their way.
            if self.embed and any(index.store.has_vectors() or index.store.vector_counts()[1]
                                  for _, index in self.indexes):
                from tributary.engine.index.embed import load_default_embedder

                embedder: Embedder = load_default_embedder()
                for _, index in self.indexes:
                    index.use_embedder(embedder)
        except BaseException as exc:  # reported to every caller instead of dying silently
            log.exception("cannot open task indexes")
            self.error = exc
        finally:
            self._opened.set()
            self._ready.set()
        if self.error is None:
            # After "ready": a question asked meanwhile holds the lock while it waits
            # for it, and would otherwise keep this from ever starting.
            self._warm()
            settle()  # loaded: later full GC passes skip the model and the indexes (tributary.engine.runtime.heap)
            log.info("tasks server ready: %d index(es)", len(self.indexes))
        self.warmed.set()

    def _warm(self) -> None:
        """Each history's caches read before the first question needs them. Only a head
        start: a history that cannot be read now says why when it is asked."""
        with self._lock:  # one query at a time on a history's connection
            if self._closed:
                return
            for label, index in self.indexes:
                try:
                    index.warm()
                except Exception as exc:  # the first search that reads it reports it
                    log.warning("tasks server: %s not read ahead: %s", label, exc)

    def _wait(self) -> list[tuple[str, TaskIndex]]:
        """The open indexes. A query that arrives while the model is still loading
        waits a little for it, then runs on keywords alone rather than time out."""
        self._opened.wait()
        self._ready.wait(self.model_wait_s)
        if self.error is not None:
            raise RuntimeError(f"task history unavailable: {self.error}")
        return self.indexes

    def close(self) -> None:
        """Close the indexes and the shared index's connection once they are open and the
        model's load is over: a process that ends while a thread is inside the model's
        native code is aborted by it."""
        if self._opener is not None and self._opener is not threading.current_thread():
            self._opener.join()
        self._opened.wait()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for _, index in self.indexes:
                index.close()
            for store in self._code_stores.values():
                if isinstance(store, SqliteStore):
                    store.close()
            if self._database is not None:
                self._database.close()

    def scoped(
        self, repos: Sequence[str] = (), exclude_repos: Sequence[str] = ()
    ) -> list[tuple[str, TaskIndex]]:
        """The open indexes of the repositories ``repos`` names (all when empty)."""
        indexes = self._wait()
        if not repos and not exclude_repos:
            return indexes
        return [(label, index) for label, index in indexes
                if in_scope(*self._identity(label, index), repos, exclude_repos)]

    def _identity(self, label: str, index: TaskIndex) -> tuple[str, Path]:
        """The name and folder of the repository whose history ``index`` is."""
        shared = self._shared.get(id(index))
        return shared[:2] if shared is not None else _repo_identity(self._files[id(index)], label)

    def _factors(
        self, query: str, scoped: Sequence[tuple[str, TaskIndex]], answers: Sequence[Sequence[TaskHit]],
        others: Sequence[_Code],
    ) -> list[float]:
        """What each history's scores are scaled by (``index_factors``): by how well its
        first tasks hold the question, against the other histories'. A repository indexed
        without a history (``others``: a folder outside git, a team index's code alone)
        may be the one asked about, and it has no tasks to compare: then each history is
        weighed by its own repository's code against theirs, as the code search weighs
        them, so another repository's past changes do not answer for it."""
        if others:
            own = [self._code_of(label, index) for label, index in scoped]
            codes = [code for code in own if code is not None]
            if len(codes) == len(own):
                hits = [_keyword_hits(code, query) for code in (*codes, *others)]
                if all(found is not None for found in hits[: len(codes)]):
                    names = [repository_names(name, root) for name, root, _ in (*codes, *others)]
                    evidence = [chunk_evidence(found or []) for found in hits]
                    return index_factors(evidence, query, names)[: len(codes)]
        names = [repository_names(*self._identity(label, index)) for label, index in scoped]
        return index_factors([task_evidence(hits) for hits in answers], query, names)

    def _weighed(
        self, query: str, scoped: Sequence[tuple[str, TaskIndex]], answers: Sequence[Sequence[TaskHit]],
        repos: Sequence[str], exclude_repos: Sequence[str],
    ) -> list[tuple[str | None, float] | None]:
        """For each history, the repository its hits are labelled with (its index name,
        as the code search calls it, when several repositories are indexed; None for one)
        and the factor its scores are scaled by (``_factors``); None for a history weighed
        below ``FAINT_HISTORY``, which answers nothing."""
        others = self._code_without_history(repos, exclude_repos)
        several = len(self.indexes) > 1 or self._database is not None or bool(others)
        return [
            (self._identity(label, index)[0] if several else None, factor) if factor >= FAINT_HISTORY else None
            for (label, index), factor in zip(scoped, self._factors(query, scoped, answers, others), strict=True)
        ]

    def _code_of(self, label: str, index: TaskIndex) -> _Code | None:
        """The code index of a history's repository, if it has one."""
        shared = self._shared.get(id(index))
        if shared is not None:
            name, root, row_id = shared
            return name, root, self._postgres_code(row_id)
        return self._sqlite_code(_code_path(self._files[id(index)], label))

    def _code_without_history(self, repos: Sequence[str], exclude_repos: Sequence[str]) -> list[_Code]:
        """The code indexes in scope whose repository has no history served here."""
        served = {_code_path(self._files[id(index)], label) for label, index in self.indexes if id(index) in self._files}
        found: list[_Code] = []
        for folder in sorted({path.parent for path in self.db_paths}):
            for path in sorted(folder.glob(f"*{INDEX_SUFFIX}")) if folder.is_dir() else ():
                code = None if path in served else self._sqlite_code(path)
                if code is not None and in_scope(code[0], code[1], repos, exclude_repos):
                    found.append(code)
        if self._database is not None:
            from tributary.engine.postgres.repositories import served_repositories

            found.extend(
                (row.name, Path(row.root), self._postgres_code(row.id))
                for row in served_repositories(self._database)
                if row.has_code and not row.has_tasks and in_scope(row.name, Path(row.root), repos, exclude_repos)
            )
        return found

    def _sqlite_code(self, path: Path) -> _Code | None:
        """A code index file's repository name, folder and store (opened once, read-only;
        again when the file is made anew, as removing and adding a repository does)."""
        store = self._code_stores.get(path)
        try:
            made = path.stat().st_ino
        except OSError:
            made = None
        if store is not None and made != self._code_files.get(path):
            if isinstance(store, SqliteStore):
                store.close()
            self._code_stores.pop(path, None)
            store = None
        if made is None:
            return None
        try:
            if store is None:
                store = self._code_stores[path] = SqliteStore(path, readonly=True, check_same_thread=False)
                self._code_files[path] = made
            name, root = store.get_meta("name"), store.get_meta("root")
        except Exception as exc:  # a damaged or half-written index: not weighed
            log.warning("cannot read %s: %s", path, exc)
            return None
        return (name or Path(root).name, Path(root), store) if root else None

    def _postgres_code(self, row_id: int) -> IndexStore:
        """The shared index's code store of one repository."""
        from tributary.engine.index.pg_store import PgIndexStore

        store = self._code_stores.get(row_id)
        if store is None:
            assert self._database is not None and self.backend is not None
            store = self._code_stores[row_id] = PgIndexStore(
                self._database, row_id, vector_index=self.backend.vector_index)
        return store

    def unembedded(self, repos: Sequence[str] = (), exclude_repos: Sequence[str] = ()) -> list[str]:
        """What to say of each history in scope whose tasks are not all embedded yet (a
        repository added a moment ago, its vectors on their way): those tasks are found by
        their words alone for now. Empty when embedding is off here."""
        if not self.embed:
            return []
        said: list[str] = []
        with self._lock:
            for label, index in self.scoped(repos, exclude_repos):
                try:
                    updated = index.store.get_meta("updated_at")
                    if id(index) in self._embedded_at and self._embedded_at[id(index)] == updated:
                        continue
                    embedded, total = index.store.vector_counts()
                except Exception as exc:  # a damaged history: its searches say so themselves
                    log.warning("cannot count the vectors of %s: %s", label, exc)
                    continue
                if embedded >= total:
                    self._embedded_at[id(index)] = updated
                    continue
                name = self._identity(label, index)[0]
                said.append(f"{name}: meaning-based matches of its history {vectors_ready(100 * embedded // total)} "
                            f"({embedded:,} of {total:,} past tasks embedded); keyword search covers every one")
        return said

    def search_tasks(
        self, query: str, top_k: int, repos: Sequence[str] = (), exclude_repos: Sequence[str] = (),
        before: datetime | None = None,
    ) -> list[tuple[str | None, TaskHit]]:
        top_k = max(1, min(top_k, MAX_TOP_K))
        as_of = _as_of(before)
        with self._lock:
            scoped = self.scoped(repos, exclude_repos)
            answers = [index.search(query, top_k, as_of=as_of) for _, index in scoped]
            weighed = self._weighed(query, scoped, answers, repos, exclude_repos)
        found = [(said[0], _scaled(hit, said[1]))
                 for hits, said in zip(answers, weighed, strict=True) if said is not None for hit in hits]
        found.sort(key=lambda pair: -pair[1].score)
        return found[:top_k]

    def files_for_task(self, query: str, top_k: int) -> list[tuple[str | None, FileScore]]:
        return self.files_and_tasks(query, top_k, 0)[0]

    def files_and_tasks(
        self, query: str, top_k: int, task_k: int,
        repos: Sequence[str] = (), exclude_repos: Sequence[str] = (),
        before: datetime | None = None,
    ) -> tuple[list[tuple[str | None, FileScore]], list[tuple[str | None, TaskHit]]]:
        """The files ranked by the tasks like ``query``, and the best ``task_k`` of those
        tasks: one task search serves both. ``before``: only tasks dated earlier count.
        Each comes with its repository's name when several repositories are indexed."""
        files, tasks, _ = self.answer(query, top_k, task_k, repos, exclude_repos, before)
        return files, tasks

    def answer(
        self, query: str, top_k: int, task_k: int,
        repos: Sequence[str] = (), exclude_repos: Sequence[str] = (),
        before: datetime | None = None,
    ) -> tuple[list[tuple[str | None, FileScore]], list[tuple[str | None, TaskHit]], list[NamedChunk]]:
        """``files_and_tasks``, and for an issue-length question the code of the
        functions the similar tasks changed in the first ``FUNCTION_FILES`` files
        (``named_chunks``)."""
        top_k = max(1, min(top_k, MAX_TOP_K))
        as_of = _as_of(before)
        files: list[tuple[str | None, FileScore]] = []
        tasks: list[tuple[str | None, TaskHit]] = []
        task = is_task_question(query)
        weigh = weigh_roles if task else weigh_incidental
        answers: list[tuple[list[TaskHit], list[FileScore]]] = []
        by_label: dict[str | None, tuple[str, TaskIndex]] = {}
        with self._lock:
            scoped = self.scoped(repos, exclude_repos)
            for _, index in scoped:
                hits = index.search(query, self.file_params.top_tasks, as_of=as_of)
                found = index.files_for_task(query, top_k, file_params=self.file_params, hits=hits, as_of=as_of)
                held = index.resolver().existing  # the repository's files now, when known
                weigh(query, found, held.__contains__ if held is not None else None)
                answers.append((hits, found))
            # Each history ranks its own tasks: weighed by how well they hold the question.
            weighed = self._weighed(query, scoped, [hits for hits, _ in answers], repos, exclude_repos)
        for (own, index), (hits, found), said in zip(scoped, answers, weighed, strict=True):
            if said is None:
                continue
            label, weight = said
            by_label[label] = (own, index)
            tasks.extend((label, _scaled(hit, weight)) for hit in hits[:task_k])
            files.extend((label, _scaled(f, weight)) for f in found)
        files.sort(key=lambda pair: -pair[1].score)
        tasks.sort(key=lambda pair: -pair[1].score)
        files = files[:top_k]
        named: list[NamedChunk] = []
        if task:
            with self._lock:
                for label, file in files[:FUNCTION_FILES]:
                    code = self._code_of(*by_label[label]) if label in by_label else None
                    named.extend(NamedChunk(label, file, name, chunk) for name, chunk in named_chunks(code, file))
        return files, tasks[:task_k], named


FUNCTION_FILES = 3  # an issue's first files whose functions past tasks changed are read
FUNCTIONS_PER_FILE = 2  # ... the ones they changed most, of each


@dataclass(frozen=True, slots=True)
class NamedChunk:
    """The code of a function similar past tasks changed, in a file they rank."""

    repo: str | None
    file: FileScore
    name: str
    chunk: StoredChunk


def named_chunks(code: _Code | None, file: FileScore, limit: int = FUNCTIONS_PER_FILE) -> list[tuple[str, StoredChunk]]:
    """The chunks of ``file`` in its repository's code index that define the functions
    its supporting tasks changed most, up to ``limit``. Where several of the file's
    chunks define a name (``eval`` of many classes), the one the hunks' definition lines
    single out (``same_definition``), else none. Only code is read so (a past fix's
    tests are not this fix's); a path with glob characters is not looked up."""
    if code is None or not file.functions or role_of(file.path) != CODE or any(c in file.path for c in "*?["):
        return []
    store = code[2]
    try:
        ids = store.chunk_ids_matching(file.path)
        if not ids:
            return []
        where = SearchFilter(path_ids=ids)
        found: list[tuple[str, StoredChunk]] = []
        for name in file.likely_functions(limit):
            chunks = store.chunks_by_id(store.symbol_search([name], NAMESAKES, where))
            defining = [c for c in chunks.values() if c.path == file.path]
            chosen = same_definition(defining, file.functions[name].lines)
            if chosen is not None:
                found.append((name, chosen))
        return found
    except Exception as exc:  # a damaged or half-written index: no functions
        log.warning("could not read the functions of %s: %s", file.path, exc)
        return []


NAMESAKES = 50  # a file's chunks of one name looked at to find the one a hunk named
SAME_WORDS = 0.4  # the share of words a chunk's signature must share with a hunk's definition line ...
WORDS_MARGIN = 0.2  # ... and by how much more than any namesake's
_WORD = re.compile(r"\w+")
# Words every definition of a name has: they tell no two apart.
_COMMON_WORDS = frozenset({"def", "async", "class", "self", "cls", "None", "fn", "func", "function", "pub",
                           "static", "public", "private", "void", "return", "const"})  # fmt: skip


def same_definition(defining: Sequence[StoredChunk], lines: Sequence[str]) -> StoredChunk | None:
    """The one of ``defining`` (chunks of a file that define one name) that past hunks
    named: the only one, or the one whose signature's words (its parameters, their
    types) are clearly the nearest to a definition line the hunks showed (``lines``,
    the best-supported first: the first that tells one chunk from its namesakes
    decides; a signature changes a little over time). None when no one is: then the
    engine takes the namesake the code search placed best."""
    if len(defining) <= 1:
        return defining[0] if defining else None
    for line in lines:
        shown = _words(line)
        scored = sorted(((_alike(_words(_signature(chunk)), shown), chunk) for chunk in defining),
                        key=lambda pair: -pair[0])  # fmt: skip
        (best, chosen), (second, _) = scored[0], scored[1]
        if best >= SAME_WORDS and best - second >= WORDS_MARGIN:
            return chosen
    return None


def _words(line: str) -> frozenset[str]:
    return frozenset(_WORD.findall(line)) - _COMMON_WORDS


def _alike(a: frozenset[str], b: frozenset[str]) -> float:
    """The share of their words two definition lines have in common (Jaccard)."""
    return len(a & b) / len(a | b) if a and b else 0.0


def _signature(chunk: StoredChunk) -> str:
    """A chunk's definition line, as a hunk's header would show it."""
    return chunk.signature or chunk.content.partition("\n")[0]


# What past changes touch on their way to the code a short question is about: CI and
# build files, changelogs, generated and vendored copies, translations. The code search
# weighs them down for such a question; tests, docs and examples can be the answer.
INCIDENTAL = frozenset({TOOLING, RECORD, GENERATED, VENDORED, TRANSLATION, ASSET})

_Scored = TypeVar("_Scored", TaskHit, FileScore)
_Code = tuple[str, Path, "IndexStore"]  # a repository's name, folder and code index


def _keyword_hits(code: _Code, query: str) -> list[SearchHit] | None:
    """A code index's first hits for ``query`` by keywords and names alone (None when
    the index cannot be searched)."""
    name, _root, store = code
    try:
        return hybrid_search(store, query, None, repo=name, top_k=STRENGTH_HITS)
    except Exception as exc:  # a damaged or half-written index: not weighed
        log.warning("cannot search %s: %s", name, exc)
        return None


def _scaled(item: _Scored, weight: float) -> _Scored:
    """A task hit or a file vote with its score times ``weight`` (itself at 1)."""
    return item if weight >= 1.0 else replace(item, score=item.score * weight)


def weigh_roles(task: str, files: Iterable[FileScore], exists: Callable[[str], bool] | None = None) -> None:
    """An issue-length task weighs the files past changes touched by their role, as the
    code search does: the tests, docs, changelog and author list that nearly every fix
    also touches rank below the code that would change, unless the issue's title asks
    for them. A page's translations count as translations when its original is listed
    or ``exists`` (the repository's files: a set's membership)."""
    asked = task_asked_roles(read_task(task).title)
    listed = list(files)
    copies = translated((entry.path for entry in listed), exists, cheap=True)
    for entry in listed:
        entry.score *= factor(role_among(entry.path, copies=copies), asked, task=True)


def weigh_incidental(
    question: str, files: Iterable[FileScore], exists: Callable[[str], bool] | None = None
) -> None:
    """A question's files weighed down as the code search weighs them where past changes
    touched them only on the way (``INCIDENTAL``: a workflow, a lock or changelog file,
    the translations of a page listed or that ``exists``), unless the question asks for
    them. An autoupdate of a CI config touched in forty commits outranked the code."""
    asked = asked_roles(question)
    listed = list(files)
    copies = translated((entry.path for entry in listed), exists, cheap=True)
    for entry in listed:
        role = role_among(entry.path, copies=copies)
        if role in INCIDENTAL:
            entry.score *= factor(role, asked)


def _as_of(before: datetime | None) -> float | None:
    """The task search's inclusive cutoff for "dated strictly before ``before``"."""
    return None if before is None else before.timestamp() - 1


def parse_before(value: str | None) -> datetime | None:
    """``before`` as the tools take it: an ISO 8601 date or date and time (UTC when it
    names no zone)."""
    if value is None or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ToolError(f"before: not an ISO 8601 date or date and time: {value[:40]!r}") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


# How long a query waits for the embedding model before answering on keywords alone.
MODEL_WAIT_S = 3.0


def _connect(backend: IndexBackend) -> Database:
    from tributary.engine.postgres.db import Database

    assert backend.dsn is not None
    return Database(backend.dsn, application_name="tributary-tasks")


def _postgres_indexes(db: Database) -> list[tuple[int, str, Path, TaskIndex]]:
    """The task histories of the shared PostgreSQL index, on its one connection ``db``,
    each with its repository's row id, name and folder."""
    from tributary.engine.postgres.repositories import served_repositories
    from tributary.engine.tasks.pg_store import PgTaskStore

    return [
        (row.id, row.name, Path(row.root), TaskIndex(PgTaskStore(db, row.id), load_embedder=False))
        for row in served_repositories(db)
        if row.has_tasks
    ]


def _code_path(db_path: Path, label: str) -> Path:
    """The code index beside a task history (the two share their file stem, ``label``)."""
    return db_path.parent / f"{label}{INDEX_SUFFIX}"


def _repo_label(db_path: Path) -> str:
    return db_path.name.removesuffix(".tasks.sqlite")


@functools.cache
def _repo_identity(db_path: Path, label: str) -> tuple[str, Path]:
    """The index name and folder of a task history's repository, read from the code
    index beside it (the two share their file stem); the label when there is none."""
    code_index = _code_path(db_path, label)
    if code_index.is_file():
        try:
            store = SqliteStore(code_index, readonly=True)
            try:
                name, root = store.get_meta("name"), store.get_meta("root")
            finally:
                store.close()
            if name and root:
                return name, Path(root)
        except Exception as exc:  # a damaged index only loses the name
            log.warning("cannot read %s: %s", code_index, exc)
    return label, Path(label)


# Only tasks dated earlier count: what the history looked like then.
Before = Annotated[str | None, Field(description="ISO date: only tasks dated before it")]


def build_server(backend: TaskBackend) -> MCPServer:
    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        try:
            yield
        finally:  # a server run inside another process leaves no index open behind it
            await anyio.to_thread.run_sync(backend.close)

    server = MCPServer("tributary-tasks", instructions="Past tasks (commits, issues) of a repo.",
                       lifespan=lifespan)

    @server.tool(description="Find past tasks (commits, issues) similar to the query.")
    def search_tasks(
        query: str, top_k: int = 10, repos: list[str] | None = None,
        exclude_repos: list[str] | None = None, before: Before = None,
    ) -> TaskResults:
        check_scope(repos, exclude_repos)
        found = backend.search_tasks(query, top_k, repos or (), exclude_repos or (), parse_before(before))
        warnings = backend.unembedded(repos or (), exclude_repos or ())
        return TaskResults(results=[task_item(hit, rank, label) for rank, (label, hit) in enumerate(found, 1)],
                           warnings=warnings, degraded=bool(warnings))

    @server.tool(description="Files (and the best few tasks) ranked by past tasks like the query.")
    def files_for_task(
        query: str, top_k: int = 10, repos: list[str] | None = None,
        exclude_repos: list[str] | None = None, before: Before = None,
    ) -> FileResults:
        check_scope(repos, exclude_repos)
        files, tasks, named = backend.answer(query, top_k, TASKS_WITH_FILES, repos or (), exclude_repos or (),
                                             parse_before(before))
        file_items: list[FileItem | TaskItem | FunctionItem] = [
            FileItem(
                path=f.path,
                title=f.path,
                score=round(f.score, 6),
                rank=rank,
                content=f.why(),
                tasks=[hit.task.id for hit in f.tasks],
                functions=f.likely_functions(),
                cosine=_best_similarity(f.tasks),
                exists=f.exists,
                repo=label,
            )
            for rank, (label, f) in enumerate(files, 1)
        ]
        # Commits answer a question about the past; for any other query they follow the files.
        offset = 0 if asks_history(query) else len(files)
        task_items: list[FileItem | TaskItem | FunctionItem] = [task_item(hit, offset + rank, label)
                      for rank, (label, hit) in enumerate(tasks, 1)]
        function_items: list[FileItem | TaskItem | FunctionItem] = [
            FunctionItem(
                path=n.file.path, title=n.chunk.symbol or n.file.path, start_line=n.chunk.start_line,
                end_line=n.chunk.end_line, score=round(n.file.score, 6), rank=len(file_items) + len(task_items) + rank,
                content=n.chunk.content, tasks=[hit.task.id for hit in n.file.functions[n.name].tasks],
                changed_by=n.file.changed_by(n.name), repo=n.repo,
            )
            for rank, n in enumerate(named, 1)
        ]  # fmt: skip
        listed = task_items + file_items if offset == 0 else file_items + task_items
        warnings = backend.unembedded(repos or (), exclude_repos or ())
        return FileResults(results=[*listed, *function_items], warnings=warnings, degraded=bool(warnings))

    return server


def task_item(hit: TaskHit, rank: int, repo: str | None) -> TaskItem:
    """One matching task as an answer of its own."""
    task = hit.task
    return TaskItem(
        id=task.id,
        short_id=task.id[:SHORT_ID] if _is_hash(task.id) else task.id,
        title=task.title,
        date=task.date.isoformat(),
        author=task.author or None,
        score=round(hit.score, 6),
        rank=rank,
        files=list(task.files),
        content=task.text[:CONTENT_CHARS],
        cosine=None if hit.similarity is None else round(float(hit.similarity), 4),
        bm25_rank=hit.bm25_rank,
        dense_rank=hit.dense_rank,
        repo=repo,
    )


def _is_hash(task_id: str) -> bool:
    return len(task_id) >= 20 and all(c in "0123456789abcdef" for c in task_id)


def _best_similarity(tasks: Sequence[TaskHit]) -> float | None:
    values = [float(hit.similarity) for hit in tasks if hit.similarity is not None]
    return round(max(values), 4) if values else None


def resolve_db_paths(args: argparse.Namespace) -> list[Path]:
    """The task databases named on the command line (see the module docstring)."""
    dbs = [Path(p).expanduser() for p in args.db or []]
    dbs += [tasks_db_path(repo, args.index_dir) for repo in args.repo or []]
    if not dbs and args.index_dir:
        dbs = sorted(Path(args.index_dir).expanduser().glob("*.tasks.sqlite"))
    return dbs


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tributary.engine.servers.tasks", description=__doc__)
    parser.add_argument("--index-dir", help="folder of task databases (default: Tributary's)")
    parser.add_argument("--repo", action="append", help="a repository whose history to serve")
    parser.add_argument("--db", action="append", help="a task database file to serve")
    parser.add_argument("--no-embed", action="store_true", help="BM25 only; never load a model")
    parser.add_argument(
        "--prefer-code",
        type=float,
        default=1.0,
        metavar="W",
        help="weight of non-code files (docs, config) in files_for_task: 1 = no preference, "
        "0 = code files only",
    )
    parser.add_argument("--model-wait", type=float, default=MODEL_WAIT_S, metavar="S",
                        help="how long a query waits for the model to load before "
                        "answering on keywords alone (default %(default)s)")
    add_postgres_options(parser)
    parser.add_argument("--log-level", default="WARNING")
    return parser.parse_args(argv)


class SetupError(TributaryError):
    """The command line names nothing to serve, or an option out of its range."""


def service_from_args(argv: Sequence[str] | None = None) -> TaskBackend:
    """The history the command line ``argv`` describes, its indexes opening in the
    background: ``main`` serves it over stdio, a one-shot command in its own process
    (``servers.inprocess``). Raises ``SetupError`` for a command line it cannot serve."""
    args = parse_args(argv)
    dbs = resolve_db_paths(args)
    shared = postgres_backend(args)
    if not dbs and shared is None:
        raise SetupError("tasks server: no task database given (--repo, --db or --index-dir)")
    if not 0.0 <= args.prefer_code <= 1.0:
        raise SetupError("tasks server: --prefer-code must be from 0 to 1")
    params = replace(DEFAULT_FILE_RANK, non_code_weight=args.prefer_code)
    backend = TaskBackend(dbs, embed=not args.no_embed, file_params=params,
                          model_wait_s=args.model_wait, backend=shared)
    backend.start()
    return backend


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # Queries encode one short text at a time: a second intra-op thread only adds
    # synchronisation, and on a busy machine made a query encode 3-10x slower.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())
    try:
        backend = service_from_args(argv)
    except SetupError as exc:
        print(exc, file=sys.stderr)
        return 2
    build_server(backend).run("stdio")
    return 0

if __name__ == "__main__":
    sys.exit(main())
