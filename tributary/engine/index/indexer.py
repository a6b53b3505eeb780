"""Bring one repository's index up to date in two tiers: chunk, then embed.

First every new or changed file is chunked and written (its own transaction): keyword
and symbol search cover it at once, within seconds even for a large repository. Chunks
whose embedding text the index already holds reuse that vector (looked up by hash); the
others wait in the store's queue, and the second pass embeds them in full batches (the
model runs in the background while the previous batch is written). Dense search uses
the vectors present, so nothing waits for the model; a crash loses at most the batches
in flight, and the queue survives for the next run.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from tributary.engine.index.chunking import CHUNKER_VERSION, Chunk, chunk_text
from tributary.engine.index.credentials import source_text
from tributary.engine.index.decoding import UndecodableError
from tributary.engine.index.discovery import DEFAULT_MAX_BYTES, SourceFile, discover, discover_paths
from tributary.engine.index.priors import embed_order, role_among, translated
from tributary.engine.index.progress import IndexProgress, IndexStats, ProgressCallback
from tributary.engine.index.store import QUEUE_START, FileRecord, IndexStore, ModelChanged
from tributary.engine.localsearch.collection import CHECKED_AT
from tributary.engine.localsearch.embedder import Embedder, ModelInfo, Vectors

log = logging.getLogger(__name__)

BATCH_CHUNKS = 512  # chunks per model call: lengths group better, and the workers share it evenly
PROGRESS_INTERVAL_S = 0.1
# An ETA from the first file or two is noise (start-up, one huge or tiny file first):
# none until this much time has passed and this share of the bytes is done.
ETA_MIN_ELAPSED_S = 2.0
ETA_MIN_SHARE = 0.02


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(slots=True)
class _Pending:
    source: SourceFile
    record: FileRecord
    chunks: list[Chunk]


class Indexer:
    """Indexes ``root`` into ``store`` with ``embedder``; one instance, one writer."""

    def __init__(
        self,
        store: IndexStore,
        root: Path,
        embedder: Embedder | Callable[[], Embedder],
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        max_bytes: int = DEFAULT_MAX_BYTES,
        on_progress: ProgressCallback | None = None,
        index_path: Path | None = None,
    ) -> None:
        self.store = store
        self.root = root.resolve()
        self._embedder: Embedder | None = None
        self._load_embedder: Callable[[], Embedder] | None = None
        if isinstance(embedder, Embedder) and not isinstance(embedder, type):
            self._embedder = embedder
        else:
            self._load_embedder = cast(Callable[[], Embedder], embedder)
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.max_bytes = max_bytes
        self.on_progress = on_progress
        self.index_path = index_path or Path()

    # public -------------------------------------------------------------------
    def run(self, *, embed: bool = True) -> IndexStats:
        """A full incremental pass: chunk (keyword tier), then embed what waits (dense
        tier) unless ``embed`` is False (then :meth:`embed_pending` does it later)."""
        started = time.perf_counter()
        stats = IndexStats(self.root, self.index_path)
        self._chunk_all(stats, started)
        self.store.set_meta(CHECKED_AT, repr(time.time()))  # up to date now, even if nothing changed
        if embed:
            self._embed(stats, started)
        return self._finish(stats, started)

    def embed_pending(self) -> IndexStats:
        """The dense tier alone: embed every chunk that has no vector yet."""
        started = time.perf_counter()
        stats = IndexStats(self.root, self.index_path)
        self._embed(stats, started)
        return self._finish(stats, started)

    def update_paths(self, rel_paths: Iterable[str]) -> IndexStats:
        """Re-check only ``rel_paths`` (from a watcher): index, re-index or delete them."""
        started = time.perf_counter()
        stats = IndexStats(self.root, self.index_path)
        if self._model_changed():
            return self.run()
        self._ensure_chunker()
        wanted = set(rel_paths)
        found = discover_paths(
            self.root, sorted(wanted), include=self.include, exclude=self.exclude,
            max_bytes=self.max_bytes, warn=stats.warnings.append,
        )  # fmt: skip
        current = {f.path: f for f in found}
        known = self.store.file_states()
        gone = sorted(p for p in wanted if p in known and p not in current)
        if gone:
            self.store.delete_files(sorted(gone))
            stats.files_deleted = len(gone)
        candidates = [current[p] for p in sorted(current)]
        changed = [f for f in candidates if not self._unchanged(f, known.get(f.path))]
        stats.files_seen = len(candidates)
        stats.files_unchanged = len(candidates) - len(changed)
        self._chunk_files(changed, known, stats, started)
        self._embed(stats, started)
        return self._finish(stats, started)

    def settled(self) -> bool:
        """Whether a pass would find nothing to do: every file's size and modification
        time as recorded, none new and none gone, chunked by this chunker. Reads only."""
        if self.store.get_meta("chunker_version") != CHUNKER_VERSION:
            return False
        known = self.store.file_states()
        seen = 0
        for source in discover(self.root, include=self.include, exclude=self.exclude, max_bytes=self.max_bytes):
            if not self._unchanged(source, known.get(source.path)):
                return False
            seen += 1
        return seen == len(known)  # (fewer: a file is gone)

    # steps --------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The model, loaded on first use: the keyword tier never waits for it."""
        if self._embedder is None:
            assert self._load_embedder is not None
            self._embedder = self._load_embedder()
        return self._embedder

    def _model_info(self) -> ModelInfo:
        return ModelInfo.of(self.embedder)

    def _model_changed(self) -> bool:
        recorded = self.store.model()
        return recorded is not None and recorded != self._model_info()

    def _ensure_chunker(self) -> None:
        if self.store.get_meta("chunker_version") != CHUNKER_VERSION:
            # New chunk boundaries: every file is re-chunked; unchanged embed texts keep
            # their vectors (looked up by hash), so this costs little model time.
            self.store.forget_file_states()
            self.store.set_meta("chunker_version", CHUNKER_VERSION)

    def _chunk_all(self, stats: IndexStats, started: float) -> None:
        self._ensure_chunker()
        self._emit(IndexProgress("scan", 0, 0, 0, 0, 0.0, None))
        files = list(
            discover(
                self.root, include=self.include, exclude=self.exclude, max_bytes=self.max_bytes,
                warn=stats.warnings.append,
            )
        )
        stats.files_seen = len(files)
        known = self.store.file_states()
        gone = set(known) - {f.path for f in files}
        if gone:
            self.store.delete_files(sorted(gone))
            stats.files_deleted = len(gone)
        changed = [f for f in files if not self._unchanged(f, known.get(f.path))]
        stats.files_unchanged = len(files) - len(changed)
        self._chunk_files(changed, known, stats, started)

    def _embed(self, stats: IndexStats, started: float) -> None:
        """Record the model (another model's vectors are wiped: a repository's vectors all
        come from one model build), then embed the waiting texts: the model encodes one
        batch in the background while the previous one is written."""
        if self.store.set_model(self._model_info()):
            stats.model_reset = True
            self._chunk_all(stats, started)  # the wipe took the chunks: write them again
        done, total = self.store.vector_counts()
        progress = _ProgressState(0, time.perf_counter())
        progress.vectors_done, progress.vectors_total = done, total
        if done < total:  # the embedding bar appears before the first batch is done
            self._emit(progress.event("embed", stats, 1, 1, None, force=True))
        with ThreadPoolExecutor(1, thread_name_prefix="index-embed") as model:
            in_flight: tuple[list[str], Future[Vectors]] | None = None
            after = QUEUE_START
            while True:
                rows = self.store.pending_embeds(BATCH_CHUNKS, after)
                if not rows and after != QUEUE_START and in_flight is None:
                    after = QUEUE_START  # end of a sweep: texts queued meanwhile come next
                    continue
                launched = None
                if rows:
                    after = (rows[-1].order, rows[-1].embed_hash)
                    texts = [row.text for row in rows]
                    launched = ([row.embed_hash for row in rows], model.submit(self.embedder.encode, texts))
                if in_flight is not None:
                    try:
                        self._write_vectors(in_flight, stats, progress)
                    except ModelChanged as exc:  # that process embeds the index now
                        log.warning("%s; stopping this embedding pass", exc)
                        if launched is not None:
                            launched[1].cancel()
                        break
                in_flight = launched
                if in_flight is None and after == QUEUE_START:
                    break
        self._emit(progress.event("embed", stats, 1, 1, None, force=True))

    def _write_vectors(
        self,
        batch: tuple[list[str], Future[Vectors]],
        stats: IndexStats,
        progress: _ProgressState,
    ) -> None:
        hashes, future = batch
        matrix = future.result()
        written = self.store.add_vectors(dict(zip(hashes, matrix, strict=True)), self._model_info())
        stats.chunks_embedded += len(hashes)
        progress.vectors_done += written
        self._emit(progress.event("embed", stats, 1, 1, None))

    @staticmethod
    def _unchanged(source: SourceFile, record: FileRecord | None) -> bool:
        # Size and mtime equal: trust it (as git does); otherwise the hash decides later.
        return (
            record is not None
            and record.size == source.size
            and record.mtime_ns == source.mtime_ns
            and record.language == source.language
        )

    def _chunk_files(
        self,
        files: list[SourceFile],
        known: dict[str, FileRecord],
        stats: IndexStats,
        started: float,
    ) -> None:
        """The keyword tier: chunk and write every file, with the vectors the index
        already holds for its texts; the rest wait for :meth:`_embed`, code first
        (``embed_order``)."""
        total_bytes = sum(f.size for f in files) or 1
        held = {*known, *(f.path for f in files)}
        copies = translated((f.path for f in files), held.__contains__, cheap=True)
        done_bytes = 0
        progress = _ProgressState(len(files), started)
        for source in files:
            pending = self._prepare(source, known.get(source.path), stats)
            progress.files_done += 1
            done_bytes += source.size
            if pending is not None:
                vectors = self.store.cached_vectors(c.embed_hash for c in pending.chunks)
                order = embed_order(role_among(source.path, source.language, copies=copies))
                self.store.write_file(pending.record, pending.chunks, vectors, order)
                stats.files_indexed += 1
                stats.chunks_written += len(pending.chunks)
            self._emit(progress.event("chunk", stats, total_bytes, done_bytes, source.path))
        self._emit(progress.event("chunk", stats, total_bytes, done_bytes, None, force=True))
        # Keyword and symbol search now cover every file: say so before the model loads.
        self._emit(progress.event("keyword", stats, total_bytes, done_bytes, None, force=True))

    def _prepare(
        self, source: SourceFile, record: FileRecord | None, stats: IndexStats
    ) -> _Pending | None:
        try:
            data = source.abspath.read_bytes()
        except OSError as exc:
            stats.errors.append(f"{source.path}: {exc}")
            return None
        digest = content_hash(data)
        new_record = FileRecord(source.path, digest, source.size, source.mtime_ns, source.language)
        if record is not None and record.hash == digest and record.language == source.language:
            # Touched but identical: refresh size/mtime without re-chunking.
            stats.files_unchanged += 1
            self.store.touch_file(new_record)
            return None
        try:
            text = source_text(data)
        except UndecodableError as exc:
            stats.errors.append(f"{source.path}: {exc}")
            return None
        try:
            chunks = chunk_text(source.path, source.language, text)
        except Exception as exc:  # a grammar crash must not stop the run
            log.warning("chunking %s failed: %s", source.path, exc)
            stats.errors.append(f"{source.path}: chunking failed: {exc}")
            chunks = chunk_text(source.path, "text", text)
        return _Pending(source, new_record, chunks)

    def _finish(self, stats: IndexStats, started: float) -> IndexStats:
        stats.files_total, stats.chunks_total = self.store.counts()
        stats.seconds = time.perf_counter() - started
        self._emit(
            IndexProgress(
                "done", stats.files_indexed, stats.files_indexed, stats.chunks_written,
                stats.chunks_embedded, stats.rate, 0.0,
            )
        )  # fmt: skip
        return stats

    def _emit(self, event: IndexProgress | None) -> None:
        if event is not None and self.on_progress is not None:
            self.on_progress(event)


class _ProgressState:
    def __init__(self, files_total: int, started: float) -> None:
        self.files_total = files_total
        self.files_done = 0
        self.vectors_done = 0
        self.vectors_total = 0
        self.started = started
        self.last = 0.0

    def event(
        self,
        phase: str,
        stats: IndexStats,
        total_bytes: int,
        done_bytes: int,
        path: str | None,
        *,
        force: bool = False,
    ) -> IndexProgress | None:
        now = time.perf_counter()
        if not force and now - self.last < PROGRESS_INTERVAL_S:
            return None
        self.last = now
        elapsed = max(now - self.started, 1e-6)
        byte_rate = done_bytes / elapsed
        settled = elapsed >= ETA_MIN_ELAPSED_S and done_bytes >= total_bytes * ETA_MIN_SHARE
        eta = (total_bytes - done_bytes) / byte_rate if byte_rate > 0 and settled else None
        if phase == "embed":
            left = self.vectors_total - self.vectors_done
            rate = stats.chunks_embedded / elapsed
            return IndexProgress(
                phase, self.files_done, self.files_total, stats.chunks_written,
                stats.chunks_embedded, rate, left / rate if rate > 0 and elapsed >= ETA_MIN_ELAPSED_S else None,
                path, self.vectors_done, self.vectors_total,
            )  # fmt: skip
        return IndexProgress(
            phase, self.files_done, self.files_total, stats.chunks_written,
            stats.chunks_embedded, stats.chunks_written / elapsed, eta, path,
            self.vectors_done, self.vectors_total,
        )  # fmt: skip
