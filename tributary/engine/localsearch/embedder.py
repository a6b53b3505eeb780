"""The protocol every embedding model meets, the vectors it makes, and the record of it.

The code index and the task history both store what an :class:`Embedder` returns and
record its ``name``/``dim``/``version`` (:class:`ModelInfo`) to notice a model change;
the packaged model itself is loaded by ``tributary.engine.index.embed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]

# Where a store records its model, in its meta table (both backends, both stores).
MODEL_KEYS = ("model_name", "model_dim", "model_version")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows (``len(texts) x dim``)."""

    name: str
    dim: int
    version: str  # changes whenever the same text could map to a different vector

    def encode(self, texts: Sequence[str]) -> Vectors: ...


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """The model an index's vectors were made by: vectors of another are meaningless."""

    name: str
    dim: int
    version: str

    @classmethod
    def of(cls, embedder: Embedder) -> ModelInfo:
        return cls(embedder.name, int(embedder.dim), embedder.version)

    @property
    def signature(self) -> str:
        """``name|version|dim``: how a task history shows its model (and once stored it)."""
        return f"{self.name}|{self.version}|{self.dim}"

    @classmethod
    def from_signature(cls, text: str) -> ModelInfo | None:
        """The record a :attr:`signature` names; None when ``text`` is not one."""
        name, bar, rest = text.partition("|")
        version, bar2, dim = rest.rpartition("|")
        if not (bar and bar2 and dim.isdigit()):
            return None
        return cls(name, int(dim), version)
