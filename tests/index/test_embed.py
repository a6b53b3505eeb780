"""The packaged MiniLM embedder: parallel batches give the library's own vectors, in order."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from engine.index.embed import encode_workers, load_code_embedder, load_default_embedder


def _library_vectors(texts: list[str], max_seq_length: int) -> np.ndarray:
    """sentence-transformers' own encode, as the embedder would call it in one thread."""
    embedder = load_default_embedder()
    model = embedder._model  # type: ignore[attr-defined]
    torch = embedder._torch  # type: ignore[attr-defined]
    model.max_seq_length = max_seq_length
    autocast = (torch.autocast("cpu", dtype=torch.bfloat16)
                if embedder._bf16 else contextlib.nullcontext())  # type: ignore[attr-defined]
    with torch.inference_mode(), autocast:
        out = model.encode(texts, batch_size=64, normalize_embeddings=True,
                           convert_to_numpy=True)
    return np.asarray(out, dtype=np.float32)


def test_parallel_batches_match_the_library_and_keep_the_input_order() -> None:
    # Lengths vary so batches are sorted and split; 150 texts make three batches.
    texts = [f"def handler_{i}(request):\n    " + "return value + 1\n    " * (i % 13)
             for i in range(150)]
    texts[7] = "class Config:\n    '''Settings read from the environment.'''"
    embedder = load_code_embedder()
    ours = embedder.encode(texts)
    theirs = _library_vectors(texts, embedder.max_seq_length)  # type: ignore[attr-defined]
    assert ours.shape == (150, 384) and ours.dtype == np.float32
    cosine = (ours * theirs).sum(axis=1)
    assert cosine.min() > 0.999
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_views_keep_their_own_sequence_length_when_sharing_the_model() -> None:
    long_text = "word " * 400
    short = load_code_embedder().encode([long_text, "tail " + long_text])
    default = load_default_embedder().encode([long_text, "tail " + long_text])
    # 64 and 128 tokens of the same text embed differently; each view keeps its own.
    assert float((short[0] * default[0]).sum()) < 0.9999
    again = load_code_embedder().encode([long_text, "tail " + long_text])
    assert np.allclose(short, again, atol=1e-6)


def test_empty_input_gives_an_empty_matrix() -> None:
    assert load_code_embedder().encode([]).shape == (0, 384)


@pytest.mark.parametrize(("value", "expected"), [("3", 3), ("1", 1), ("0", None), ("x", None)])
def test_worker_count_comes_from_the_environment_or_the_cores(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: int | None
) -> None:
    monkeypatch.setenv("TRIBUTARY_EMBED_THREADS", value)
    workers = encode_workers()
    assert workers == expected if expected is not None else workers >= 1
