"""The protocol every embedding model meets, and the vectors it makes.

The code index and the task history both store what an :class:`Embedder` returns and
record its ``name``/``version``/``dim`` to notice a model change; the packaged model
itself is loaded by ``tributary.engine.index.embed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows (``len(texts) x dim``)."""

    name: str
    dim: int
    version: str  # changes whenever the same text could map to a different vector

    def encode(self, texts: Sequence[str]) -> Vectors: ...
