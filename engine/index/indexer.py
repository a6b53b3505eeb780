"""Bring one repository's index up to date: discover, diff, chunk, embed, write.

Only files whose content hash changed are re-chunked; of their chunks only those
whose embedding text is new are sent to the model (the rest reuse stored vectors,
looked up by hash). Chunks of many files are embedded together — the model is far
faster on full batches, and it runs in the background while the next files are chunked
and the previous batch is written — and each file is written in its own transaction,
so a crash loses at most the two batches in flight and finished files are never redone.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.index.chunking import CHUNKER_VERSION, Chunk, chunk_text
from engine.index.discovery import DEFAULT_MAX_BYTES, SourceFile, discover, discover_paths
from engine.index.embed import Embedder, Vectors
from engine.index.progress import IndexProgress, IndexStats, ProgressCallback
from engine.index.store import FileRecord, IndexStore, ModelInfo

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
class _Embedding:
    """A batch whose new embedding texts are with the model."""

    batch: list[_Pending]
    vectors: dict[str, Vectors]  # embed hash -> vector: stored ones now, new ones at flush
    missing: list[str]  # hashes the model is embedding, in the order it returns them
    future: Future[Vectors]
    previous: _Embedding | None  # the batch in flight when this one started


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
        embedder: Embedder,
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        max_bytes: int = DEFAULT_MAX_BYTES,
        on_progress: ProgressCallback | None = None,
        index_path: Path | None = None,
    ) -> None:
        self.store = store
        self.root = root.resolve()
        self.embedder = embedder
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.max_bytes = max_bytes
        self.on_progress = on_progress
        self.index_path = index_path or Path()

    # public -------------------------------------------------------------------
    def run(self) -> IndexStats:
        """A full incremental pass over the repository."""
        started = time.perf_counter()
        stats = IndexStats(self.root, self.index_path)
        stats.model_reset = self._ensure_model()
        self._emit(IndexProgress("scan", 0, 0, 0, 0, 0.0, None))
        files = list(
            discover(
                self.root, include=self.include, exclude=self.exclude, max_bytes=self.max_bytes
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
        self._index_files(changed, known, stats, started)
        return self._finish(stats, started)

    def update_paths(self, rel_paths: Iterable[str]) -> IndexStats:
        """Re-check only ``rel_paths`` (from a watcher): index, re-index or delete them."""
        started = time.perf_counter()
        stats = IndexStats(self.root, self.index_path)
        stats.model_reset = self._ensure_model()
        if stats.model_reset:
            return self.run()
        wanted = set(rel_paths)
        found = discover_paths(
            self.root, sorted(wanted), include=self.include, exclude=self.exclude,
            max_bytes=self.max_bytes,
        )  # fmt: skip
        current = {f.path: f for f in found}
        known = self.store.file_states()
        gone = sorted(p for p in wanted if p in known and p not in current)
        if gone:
            self.store.delete_files(gone)
            stats.files_deleted = len(gone)
        candidates = [current[p] for p in sorted(current)]
        changed = [f for f in candidates if not self._unchanged(f, known.get(f.path))]
        stats.files_seen = len(candidates)
        stats.files_unchanged = len(candidates) - len(changed)
        self._index_files(changed, known, stats, started)
        return self._finish(stats, started)

    # steps --------------------------------------------------------------------
    def _ensure_model(self) -> bool:
        info = ModelInfo(self.embedder.name, self.embedder.dim, self.embedder.version)
        wiped = self.store.set_model(info)
        if self.store.get_meta("chunker_version") != CHUNKER_VERSION:
            # New chunk boundaries: every file is re-chunked; unchanged embed texts keep
            # their vectors (looked up by hash), so this costs little model time.
            self.store.forget_file_states()
            self.store.set_meta("chunker_version", CHUNKER_VERSION)
        return wiped

    @staticmethod
    def _unchanged(source: SourceFile, record: FileRecord | None) -> bool:
        # Size and mtime equal: trust it (as git does); otherwise the hash decides later.
        return (
            record is not None
            and record.size == source.size
            and record.mtime_ns == source.mtime_ns
            and record.language == source.language
        )

    def _index_files(
        self,
        files: list[SourceFile],
        known: dict[str, FileRecord],
        stats: IndexStats,
        started: float,
    ) -> None:
        total_bytes = sum(f.size for f in files) or 1
        done_bytes = 0
        batch: list[_Pending] = []
        batch_chunks = 0
        progress = _ProgressState(len(files), started)
        # The model runs in the background while this thread chunks the next files and
        # writes the previous batch: the writes and chunking hide behind the encoding.
        with ThreadPoolExecutor(1, thread_name_prefix="index-embed") as model:
            in_flight: _Embedding | None = None
            for source in files:
                pending = self._prepare(source, known.get(source.path), stats)
                if pending is None:
                    progress.files_done += 1
                    done_bytes += source.size
                    continue
                batch.append(pending)
                batch_chunks += len(pending.chunks)
                if batch_chunks >= BATCH_CHUNKS:
                    launched = self._launch(batch, model, in_flight)
                    if in_flight is not None:
                        done_bytes += self._flush(in_flight, stats, progress, total_bytes,
                                                  done_bytes)
                    in_flight, batch, batch_chunks = launched, [], 0
            if batch:
                launched = self._launch(batch, model, in_flight)
                if in_flight is not None:
                    done_bytes += self._flush(in_flight, stats, progress, total_bytes, done_bytes)
                in_flight = launched
            if in_flight is not None:
                done_bytes += self._flush(in_flight, stats, progress, total_bytes, done_bytes)
        self._emit(progress.event("index", stats, total_bytes, done_bytes, None, force=True))

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
        text = data.decode("utf-8", errors="replace")
        try:
            chunks = chunk_text(source.path, source.language, text)
        except Exception as exc:  # a grammar crash must not stop the run
            log.warning("chunking %s failed: %s", source.path, exc)
            stats.errors.append(f"{source.path}: chunking failed: {exc}")
            chunks = chunk_text(source.path, "text", text)
        return _Pending(source, new_record, chunks)

    def _launch(
        self, batch: list[_Pending], model: ThreadPoolExecutor, previous: _Embedding | None
    ) -> _Embedding:
        """Look up stored vectors here (the store is this thread's) and start the model
        on the rest; texts the previous batch is still embedding wait for its vectors."""
        chunks = [c for p in batch for c in p.chunks]
        hashes = list(dict.fromkeys(c.embed_hash for c in chunks))
        vectors = self.store.cached_vectors(hashes)
        borrowed = set(previous.missing) if previous is not None else set()
        missing = [h for h in hashes if h not in vectors and h not in borrowed]
        text_of = {c.embed_hash: c.embed_text for c in chunks}
        future = model.submit(self.embedder.encode, [text_of[h] for h in missing])
        return _Embedding(batch, vectors, missing, future, previous)

    def _flush(
        self,
        embedding: _Embedding,
        stats: IndexStats,
        progress: _ProgressState,
        total_bytes: int,
        done_bytes: int,
    ) -> int:
        vectors = embedding.vectors
        for embed_hash, row in zip(embedding.missing, embedding.future.result(), strict=True):
            vectors[embed_hash] = row
        stats.chunks_embedded += len(embedding.missing)
        if embedding.previous is not None:  # flushed already; lend its new vectors
            earlier = embedding.previous.vectors
            for chunk in (c for p in embedding.batch for c in p.chunks):
                if chunk.embed_hash not in vectors and chunk.embed_hash in earlier:
                    vectors[chunk.embed_hash] = earlier[chunk.embed_hash]
            embedding.previous = None  # keep only one batch of vectors alive
        flushed = 0
        for pending in embedding.batch:
            rows = [vectors[c.embed_hash] for c in pending.chunks]
            matrix: Vectors = (
                np.vstack(rows).astype(np.float32)
                if rows
                else np.zeros((0, self.embedder.dim), dtype=np.float32)
            )
            self.store.replace_file(pending.record, pending.chunks, matrix)
            stats.files_indexed += 1
            stats.chunks_written += len(pending.chunks)
            progress.files_done += 1
            flushed += pending.source.size
            self._emit(
                progress.event(
                    "index", stats, total_bytes, done_bytes + flushed, pending.source.path
                )
            )
        return flushed

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
        return IndexProgress(
            phase, self.files_done, self.files_total, stats.chunks_written,
            stats.chunks_embedded, stats.chunks_written / elapsed, eta, path,
        )  # fmt: skip
