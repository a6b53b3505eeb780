"""The default embedding model's files that ship inside the package (see ``NOTICE``).

The tokenizer is always here: token counting and the ONNX Runtime embedder read it,
with neither the weights nor PyTorch installed. A prepared int8 model may be placed
beside it (the desktop bundle does), where ``tributary.engine.index.embed`` finds it first.
The folder is located by ``tributary.engine.localsearch.packaged``, which the pipeline
reads too.
"""

from __future__ import annotations

from tributary.engine.localsearch.packaged import MODEL_FOLDER as FOLDER
from tributary.engine.localsearch.packaged import TOKENIZER

__all__ = ["FOLDER", "TOKENIZER"]
