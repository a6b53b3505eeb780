"""A large index's worth of real code for the at-scale benchmarks, and its vectors.

The text is real: CPython's standard library (``Lib/`` of the running Python) and then
the packages installed beside Tributary, chunked by Tributary's own chunker. Past the
unique chunks those sources hold, the same files are repeated under other top-level
folders (``copy01/``, ``copy02/``…), as a monorepo holding several vendored copies would.

Each unique chunk is embedded once by the real default model and kept in
``.bench-data/corpus/`` for later runs. A repeated copy's vector is its original's with a
little noise added (cosine about 0.97 to it), so an approximate index does not meet a
million exact duplicates, which no real corpus has.
"""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tributary.engine.index.chunking import Chunk, chunk_text
from tributary.engine.localsearch.embedder import Embedder
from tributary.engine.query.languages import detect_language

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".bench-data" / "corpus"
MAX_FILE_BYTES = 200_000
COPY_NOISE = 0.25  # relative norm of the noise added to a repeated chunk's vector
EMBED_BATCH = 256


@dataclass(frozen=True, slots=True)
class CorpusFile:
    path: str  # as indexed: the source's name, then the file's path inside it
    language: str
    chunks: tuple[Chunk, ...]


def sources() -> list[tuple[str, Path]]:
    """The folders read, in order: CPython's ``Lib/`` first, then site-packages."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    found = [("cpython/Lib", stdlib)]
    found += [(f"site-packages-{n}", Path(p)) for n, p in enumerate(sorted({*sys.path}))
              if p.endswith("site-packages") and Path(p).is_dir()]  # fmt: skip
    return found


def _files(label: str, folder: Path) -> Iterator[tuple[str, str, str]]:
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__") and not d.startswith("."))
        for name in sorted(filenames):
            full = Path(dirpath, name)
            rel = full.relative_to(folder).as_posix()
            language = detect_language(rel)
            if language is None:
                continue
            try:
                data = full.read_bytes()
            except OSError:
                continue
            if len(data) > MAX_FILE_BYTES or b"\0" in data:
                continue
            yield f"{label}/{rel}", language, data.decode("utf-8", "replace")


def unique_files(limit: int) -> list[CorpusFile]:
    """Files of the sources, in order, until they hold ``limit`` chunks."""
    out: list[CorpusFile] = []
    total = 0
    for label, folder in sources():
        for path, language, text in _files(label, folder):
            chunks = tuple(chunk_text(path, language, text))
            if not chunks:
                continue
            out.append(CorpusFile(path, language, chunks))
            total += len(chunks)
            if total >= limit:
                return out
    return out


def _digest(files: list[CorpusFile]) -> str:
    h = hashlib.blake2b(digest_size=12)
    for f in files:
        for c in f.chunks:
            h.update(c.embed_hash.encode())
    return h.hexdigest()


def unique_vectors(files: list[CorpusFile], embedder: Embedder) -> dict[str, np.ndarray]:
    """The real model's vector of every distinct embed text, embedded once and cached."""
    texts: dict[str, str] = {}
    for f in files:
        for c in f.chunks:
            texts.setdefault(c.embed_hash, c.embed_text)
    CACHE.mkdir(parents=True, exist_ok=True)
    cached = CACHE / f"vectors-{_digest(files)}.npz"
    hashes = list(texts)
    if cached.exists():
        data = np.load(cached)
        return dict(zip(data["hashes"].tolist(), data["vectors"], strict=True))
    started = time.perf_counter()
    parts = []
    for start in range(0, len(hashes), EMBED_BATCH):
        parts.append(np.asarray(embedder.encode([texts[h] for h in hashes[start : start + EMBED_BATCH]]), dtype=np.float32))
        done = start + EMBED_BATCH
        if done % (EMBED_BATCH * 20) == 0:
            rate = done / (time.perf_counter() - started)
            print(f"  embedded {done:,}/{len(hashes):,} ({rate:.0f}/s)", file=sys.stderr, flush=True)
    vectors = np.vstack(parts)
    np.savez(cached, hashes=np.array(hashes), vectors=vectors)
    return dict(zip(hashes, vectors, strict=True))


def repeated(files: list[CorpusFile], total: int) -> Iterator[tuple[CorpusFile, int]]:
    """``(file, copy)`` until ``total`` chunks: copy 0 is the original path, copy ``r``
    the same file under ``copyNN/``."""
    count = 0
    copy = 0
    while True:
        for f in files:
            if count >= total:
                return
            yield (f if copy == 0 else _moved(f, copy)), copy
            count += len(f.chunks)
        copy += 1


def _moved(f: CorpusFile, copy: int) -> CorpusFile:
    path = f"copy{copy:02d}/{f.path}"
    return CorpusFile(path, f.language, tuple(replace(c, path=path) for c in f.chunks))


def copy_vector(vector: np.ndarray, embed_hash: str, copy: int) -> np.ndarray:
    """The vector of copy ``copy`` of a chunk: the original for copy 0, else the
    original with deterministic noise, renormalised."""
    if copy == 0:
        return vector
    seed = int(hashlib.blake2b(f"{embed_hash}:{copy}".encode(), digest_size=8).hexdigest(), 16)
    noise = np.random.default_rng(seed).standard_normal(vector.shape[0]).astype(np.float32)
    noisy = vector + COPY_NOISE * noise / np.linalg.norm(noise)
    result: np.ndarray = (noisy / np.linalg.norm(noisy)).astype(np.float32)
    return result
