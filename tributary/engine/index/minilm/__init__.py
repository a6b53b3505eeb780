"""The default embedding model's files that ship inside the package (see ``NOTICE``).

The tokenizer is always here: token counting and the ONNX Runtime embedder read it,
with neither the weights nor PyTorch installed. A prepared int8 model may be placed
beside it (the desktop bundle does), where ``tributary.engine.index.embed`` finds it first.
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent
TOKENIZER = FOLDER / "tokenizer.json"
