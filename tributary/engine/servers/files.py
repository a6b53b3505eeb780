"""The built-in ``files`` MCP server: hybrid code search over local repository indexes.

    python -m tributary.engine.servers.files [--index-dir DIR] [--index FILE ...] [--repo PATH ...]
    TRIBUTARY_INDEX_DSN=postgresql://... python -m tributary.engine.servers.files --postgres

Serves every index under the index folder (default: Tributary's) or only the named
ones, or every repository of a shared PostgreSQL index (``--postgres``); an index
created while the server runs is picked up on the next call. Search
fuses dense KNN (sqlite-vec) and BM25 (FTS5) by RRF inside each index, then merges
the repositories by fused score. ``get_file`` reads only files inside an indexed
root that indexing would accept (no ``..``, no symlinks out, nothing git-ignored).

The embedding model starts loading in a background thread as soon as the session
starts, so ``initialize`` stays fast and the first query waits only for what is
left of the load (about 1 s warm; ~4 s when torch must be read from disk).
Nothing but the protocol is written to stdout: the SDK points fd 1 at stderr while
serving, and the model is loaded only after that.
"""

from __future__ import annotations

import argparse
import functools
import logging
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, closing, contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from tributary.engine.index.backend import IndexBackend, add_postgres_options, postgres_backend
from tributary.engine.index.credentials import source_text
from tributary.engine.index.decoding import UndecodableError
from tributary.engine.index.discovery import discover_paths
from tributary.engine.index.embed import load_code_embedder
from tributary.engine.index.manager import INDEX_SUFFIX, index_path_for
from tributary.engine.index.naming import in_scope
from tributary.engine.index.search import SearchHit, encode_query, hybrid_search, make_filter
from tributary.engine.index.store import QueryVector, SqliteStore
from tributary.engine.localsearch.embed_lock import indexing_held
from tributary.engine.localsearch.embedder import Embedder
from tributary.engine.localsearch.longquery import code_embedding_text
from tributary.engine.model import vectors_ready
from tributary.engine.paths import indexes_dir
from tributary.engine.runtime.heap import settle
from tributary.engine.servers import check_scope
from tributary.engine.servers.merge import merged_chunks, repository_names
from tributary.engine.servers.stores import CodeIndex

log = logging.getLogger("tributary.files")

MAX_TOP_K = 100
MAX_FILE_LINES = 2000


class CodeHit(BaseModel):
    path: str = Field(description="repo-relative path")
    repo: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str = Field(description="function | method | class | block | text")
    language: str
    score: float
    content: str
    signature: str | None = None
    role: str = Field(default="code", description="code | test | doc | example | vendored | generated | record")
    fused: float | None = Field(default=None, description="the score before the file role's prior")
    cosine: float | None = Field(default=None, description="cosine of query and chunk embeddings")
    bm25: float | None = Field(default=None, description="keyword (BM25) score, higher is better")
    dense_rank: int | None = None
    keyword_rank: int | None = None
    symbol_match: bool = Field(default=False, description="defines a name the query looks up")
    name_match: bool = Field(default=False, description="the file's name is made of the query's words")
    led_by: str = Field(default="", description=(
        "why a task's answer begins with this file when its score did not put it there: "
        "'traceback' (the task's traceback raised in it) or 'quote' (it holds a line of code "
        "the task quotes)"))


class CodeSearchResult(BaseModel):
    hits: list[CodeHit]
    repos: list[str] = Field(description="indexes searched")
    warnings: list[str] = Field(default_factory=list)
    degraded: bool = Field(default=False, description=(
        "answered on keywords alone where meaning-based search was due (the model is "
        "loading or failed, or vectors are still being made): a later answer may be better"))


class FileContent(BaseModel):
    repo: str
    path: str
    language: str
    start_line: int
    end_line: int
    total_lines: int
    content: str


class RepoInfo(BaseModel):
    name: str
    root: str
    files: int
    chunks: int


class RepoList(BaseModel):
    repos: list[RepoInfo]


@dataclass
class _Index:
    name: str
    root: Path
    path: Path
    store: CodeIndex
    lock: threading.Lock
    model_version: str | None = None  # a shared index's: a new model means a new store
    stamp: int | None = None  # the index file's change time when ``name`` was read


def _changed_at(path: Path) -> int | None:
    """When the index file (or its write-ahead log) last changed, in ns; None if gone."""
    try:
        return max(p.stat().st_mtime_ns for p in (path, Path(f"{path}-wal")) if p.exists())
    except (OSError, ValueError):
        return None


def _rename(index: _Index) -> None:
    """Take the name another process's re-index gave the repository (a remote added
    since): ``repo:`` filters and answers use the name the Indexes page shows. Read on
    a connection of its own, so no search's lock is waited on."""
    stamp = _changed_at(index.path)
    if stamp is None or stamp == index.stamp:
        return
    try:
        with closing(SqliteStore(index.path, readonly=True)) as store:
            index.name = store.get_meta("name") or index.root.name
    except Exception as exc:  # mid-rewrite or gone: keep the name it had
        log.debug("cannot re-read the name of %s: %s", index.path, exc)
        return
    index.stamp = stamp


# How long a query waits for the embedding model before answering on keywords alone.
MODEL_WAIT_S = 3.0


def semantic_warning(
    name: str, embedded: int, total: int, code_done: bool = False, indexing: bool = False
) -> str:
    """Said while an index's vectors are still being made: keyword and symbol search
    already cover every file (or, while a pass still writes it, ``indexing``, the files
    it has written), meaning-based matches only the embedded share (all of the code,
    once ``code_done``: the queue takes it first)."""
    percent = int(100 * embedded / total) if total else 100
    code = ", all of its code" if code_done else ""
    covered = "the files indexed so far (indexing now)" if indexing else "every file"
    return (
        f"{name}: semantic index {vectors_ready(percent)} ({embedded}/{total} chunks embedded{code}); "
        f"keyword and symbol search cover {covered}"
    )


class FilesService:
    """The state behind the tools: open indexes and the (lazily ready) embedder."""

    def __init__(
        self,
        index_dir: Path | None,
        index_files: Sequence[Path] = (),
        embedder: Embedder | None = None,
        model_wait_s: float = MODEL_WAIT_S,
        backend: IndexBackend | None = None,
    ) -> None:
        self.index_dir = index_dir
        self.backend = backend if backend is not None and backend.dsn is not None else None
        self._database: Any = None  # the shared PostgreSQL connection, opened on first use
        self.model_wait_s = model_wait_s
        self.index_files = [p.resolve() for p in index_files]
        self._indexes: dict[Path, _Index] = {}
        self._lock = threading.Lock()
        self._embedder = embedder
        self._embedder_error: BaseException | None = None
        self._ready = threading.Event()
        self._loader: threading.Thread | None = None
        self._starting = threading.Lock()
        if embedder is not None:
            self._ready.set()

    # model --------------------------------------------------------------------
    def start_loading(self) -> None:
        """Load the model in the background, once: queries that come while it loads wait
        for that load rather than each starting another."""
        with self._starting:
            if self._ready.is_set() or self._loader is not None:
                return
            self._loader = threading.Thread(target=self._load, name="embedder-load", daemon=True)
            self._loader.start()

    def _load(self) -> None:
        try:
            self._embedder = load_code_embedder()
        except BaseException as exc:  # reported per query; keyword search still works
            log.error("embedding model failed to load: %s", exc)
            self._embedder_error = exc
        finally:
            self._ready.set()
        for index in self.indexes():  # vectors into memory before the first query
            with index.lock:
                try:
                    index.store.warm()
                except Exception as exc:
                    log.warning("cannot load vectors of %s: %s", index.name, exc)
        settle()  # loaded: later full GC passes skip the model and the vectors (tributary.engine.runtime.heap)

    def embedder(self, timeout: float | None = None) -> Embedder | None:
        """The model, waiting at most ``timeout`` seconds for it to finish loading."""
        self.start_loading()
        self._ready.wait(timeout)
        return self._embedder

    def model_loading(self) -> bool:
        return not self._ready.is_set()

    # indexes ------------------------------------------------------------------
    def _candidate_files(self) -> list[Path]:
        if self.index_files:
            return [p for p in self.index_files if p.exists()]
        directory = self.index_dir or indexes_dir()
        return sorted(directory.glob(f"*{INDEX_SUFFIX}")) if directory.is_dir() else []

    def indexes(self) -> list[_Index]:
        if self.backend is not None:
            return self._postgres_indexes()
        with self._lock:
            current = {p.resolve() for p in self._candidate_files()}
            for gone in set(self._indexes) - current:
                self._indexes.pop(gone).store.close()
            for path in sorted(current - set(self._indexes)):
                opened = self._open(path)
                if opened is not None:
                    self._indexes[path] = opened
            for index in self._indexes.values():
                _rename(index)
            return [self._indexes[p] for p in sorted(self._indexes)]

    def _postgres_indexes(self) -> list[_Index]:
        """Every repository of the shared database that has code indexed (asked again
        each time: a CI job may have added one)."""
        from tributary.engine.index.pg_store import PgIndexStore
        from tributary.engine.postgres.db import Database, redact
        from tributary.engine.postgres.repositories import served_repositories

        assert self.backend is not None and self.backend.dsn is not None
        with self._lock:
            if self._database is None:
                self._database = Database(self.backend.dsn, application_name="tributary-files")
            rows = [r for r in served_repositories(self._database) if r.has_code]
            location = redact(self.backend.dsn)
            current = {Path(f"{location}#{r.id}"): r for r in rows}
            for gone in set(self._indexes) - set(current):
                self._indexes.pop(gone)
            for key, row in current.items():
                index = self._indexes.get(key)
                if index is None or index.model_version != row.model_version or index.name != row.name:
                    store = PgIndexStore(self._database, row.id, vector_index=self.backend.vector_index)
                    self._indexes[key] = _Index(row.name, Path(row.root), key, store,
                                                threading.Lock(), row.model_version)
            return [self._indexes[k] for k in current]

    @staticmethod
    def _open(path: Path) -> _Index | None:
        try:
            store = SqliteStore(path, readonly=True, check_same_thread=False)
            root_text = store.get_meta("root")
            if root_text is None:
                store.close()
                return None
        except Exception as exc:
            log.warning("skipping index %s: %s", path, exc)
            return None
        root = Path(root_text)
        name = store.get_meta("name") or root.name
        return _Index(name, root, path, store, threading.Lock(), stamp=_changed_at(path))

    # tools --------------------------------------------------------------------
    def search(
        self,
        query: str,
        top_k: int,
        *,
        path_glob: str | None = None,
        language: str | None = None,
        kinds: Sequence[str] | None = None,
        repos: Sequence[str] = (),
        exclude_repos: Sequence[str] = (),
    ) -> CodeSearchResult:
        top_k = max(1, min(int(top_k), MAX_TOP_K))
        indexes = [i for i in self.indexes() if in_scope(i.name, i.root, repos, exclude_repos)]
        warnings: list[str] = []
        if not indexes and (repos or exclude_repos):
            warnings.append(f"no indexed repository matches repos={list(repos)} exclude_repos={list(exclude_repos)}")
        elif not indexes:
            warnings.append("no repository is indexed yet: run `tributary index add PATH`")
        # Right after start-up the model may still be loading: answer on keywords
        # alone rather than make the caller time out.
        embedder = self.embedder(self.model_wait_s) if indexes else None
        if embedder is None and indexes and self.model_loading():
            warnings.append("embedding model still loading: keyword search only for now")
        elif embedder is None and indexes:
            warnings.append(
                f"embedding model unavailable, keyword search only: {self._embedder_error}"
            )
        # Embedded once, on the search's worker thread, while the first index answers the
        # keyword query; later indexes reuse it.
        vector: QueryVector = (
            functools.cache(functools.partial(encode_query, embedder, code_embedding_text(query)))
            if embedder is not None else None
        )
        degraded = embedder is None and bool(indexes)
        answers: list[list[SearchHit]] = []
        names = [repository_names(index.name, index.root) for index in indexes]
        for index in indexes:
            use_vector = vector
            with index.lock:
                model = index.store.model()  # a new index records its model when embedding starts
                embedded, total = index.store.vector_counts()
                code_done = 0 < embedded < total and not index.store.code_waiting()
            if embedded < total:
                warnings.append(semantic_warning(index.name, embedded, total, code_done, indexing_held(index.path)))
                degraded = True
            if (
                vector is not None
                and embedder is not None
                and model is not None
                and model.version != embedder.version
            ):
                warnings.append(f"{index.name}: indexed with another model; keyword search only")
                use_vector = None
                degraded = True
            with index.lock:
                where = make_filter(
                    index.store, language=language, kinds=kinds, path_glob=path_glob
                )
                answers.append(
                    hybrid_search(
                        index.store, query, use_vector, repo=index.name, top_k=top_k, where=where
                    )
                )
        hits = merged_chunks(answers, query, names)
        return CodeSearchResult(
            hits=[CodeHit.model_validate(h.as_dict()) for h in hits[:top_k]],
            repos=[i.name for i in indexes],
            warnings=warnings,
            degraded=degraded,
        )

    def read_file(
        self, path: str, start_line: int | None, end_line: int | None, repo: str | None
    ) -> FileContent:
        index, rel = self._resolve(path, repo)
        source = next(iter(discover_paths(index.root, [rel])), None)
        if source is None:
            raise ValueError(f"{path}: not an indexable file of {index.name}")
        try:
            lines = source_text(source.abspath.read_bytes()).splitlines()
        except UndecodableError as exc:
            raise ValueError(f"{path}: {exc}") from None
        total = len(lines)
        first = max(1, start_line or 1)
        last = min(total, end_line or total, first + MAX_FILE_LINES - 1)
        if first > max(total, 1):
            raise ValueError(f"{path} has {total} lines; start_line {first} is past the end")
        return FileContent(
            repo=index.name,
            path=rel,
            language=source.language,
            start_line=first,
            end_line=last,
            total_lines=total,
            content="\n".join(lines[first - 1 : last]),
        )

    def _resolve(self, path: str, repo: str | None) -> tuple[_Index, str]:
        """The index and the repo-relative path ``path`` names, refusing escapes."""
        if not path or "\x00" in path:
            raise ValueError("empty or invalid path")
        candidates = [i for i in self.indexes() if repo in (None, i.name)]
        if not candidates:
            raise ValueError(f"no indexed repository named {repo!r}" if repo else "nothing indexed")
        given = Path(path).expanduser()
        if ".." in PurePosixPath(path.replace("\\", "/")).parts:
            raise ValueError(f"{path}: '..' is not allowed")
        for index in candidates:
            root = index.root.resolve()
            target = given if given.is_absolute() else root / given
            resolved = target.resolve()
            # resolve() follows symlinks, so a link pointing out of the root fails here.
            if not resolved.is_relative_to(root) or not target.absolute().is_relative_to(root):
                continue
            if resolved.is_file():
                return index, resolved.relative_to(root).as_posix()
        raise ValueError(f"{path}: not a file inside an indexed repository")

    def repos(self) -> RepoList:
        infos = []
        for index in self.indexes():
            with index.lock:
                files, chunks = index.store.counts()
            infos.append(
                RepoInfo(name=index.name, root=str(index.root), files=files, chunks=chunks)
            )
        return RepoList(repos=infos)

    def close(self) -> None:
        """Close the indexes once the model's load is over: a process that ends while a
        thread is inside the model's native code is aborted by it."""
        if self._loader is not None and self._loader is not threading.current_thread():
            self._loader.join()
        with self._lock:
            for index in self._indexes.values():
                index.store.close()
            self._indexes.clear()
            if self._database is not None:
                self._database.close()
                self._database = None


@contextmanager
def _reason_kept() -> Iterator[None]:
    """A refused request's reason reaches the client: the SDK replaces the text of
    any exception but a ``ToolError`` with just "Error executing tool NAME"."""
    try:
        yield
    except ValueError as exc:
        raise ToolError(str(exc)) from None


def build_server(service: FilesService) -> MCPServer[None]:
    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        service.start_loading()  # fd 1 is already diverted to stderr here
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(service.close)

    app: MCPServer[None] = MCPServer(
        "tributary-files",
        instructions="Search and read code in locally indexed repositories.",
        lifespan=lifespan,
    )

    @app.tool()
    def search_code(
        query: str,
        top_k: int = 10,
        path_glob: str | None = None,
        language: str | None = None,
        kind: str | None = None,
        repos: list[str] | None = None,
        exclude_repos: list[str] | None = None,
    ) -> CodeSearchResult:
        """Search indexed code by meaning and keywords. kind: function|method|class|block|text.
        repos: only these repositories (index names such as owner/name, or folders)."""
        check_scope(repos, exclude_repos)
        with _reason_kept():
            return service.search(
                query, top_k, path_glob=path_glob, language=language,
                kinds=[kind] if kind else None,
                repos=repos or (), exclude_repos=exclude_repos or (),
            )

    @app.tool()
    def search_functions(query: str, top_k: int = 10) -> CodeSearchResult:
        """Search functions and methods in indexed code."""
        return service.search(query, top_k, kinds=["function", "method"])

    @app.tool()
    def search_classes(query: str, top_k: int = 10) -> CodeSearchResult:
        """Search classes, structs, interfaces and traits in indexed code."""
        return service.search(query, top_k, kinds=["class"])

    @app.tool()
    def get_file(
        path: str,
        start_line: int | None = None,
        end_line: int | None = None,
        repo: str | None = None,
    ) -> FileContent:
        """Read a file (or a line range) of an indexed repository."""
        with _reason_kept():
            return service.read_file(path, start_line, end_line, repo)

    @app.tool()
    def list_repos() -> RepoList:
        """List the indexed repositories this server searches."""
        return service.repos()

    return app


def service_from_args(argv: Sequence[str] | None = None) -> FilesService:
    """The service the command line ``argv`` describes: ``main`` serves it over stdio,
    a one-shot command in its own process (``servers.inprocess``)."""
    parser = argparse.ArgumentParser(prog="python -m tributary.engine.servers.files", description=__doc__)
    parser.add_argument("--index-dir", type=Path, help="serve every index in this folder")
    parser.add_argument("--index", type=Path, action="append", default=[], help="an index file")
    parser.add_argument("--repo", type=Path, action="append", default=[], help="an indexed repo")
    parser.add_argument("--model-wait", type=float, default=MODEL_WAIT_S, metavar="S",
                        help="how long a query waits for the model to load before "
                        "answering on keywords alone (default %(default)s)")
    add_postgres_options(parser)
    args = parser.parse_args(argv)
    files = list(args.index) + [index_path_for(r, directory=args.index_dir) for r in args.repo]
    return FilesService(args.index_dir, files, model_wait_s=args.model_wait, backend=postgres_backend(args))


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s: %(message)s")
    build_server(service_from_args(argv)).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
