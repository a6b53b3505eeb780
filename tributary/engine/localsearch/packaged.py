"""Where the default embedding model's packaged files are: ``tributary/engine/index/minilm``
(see its ``NOTICE``).

The folder is data, shipped as package data and by the desktop bundle at that path;
this module only locates it, so token counting (``tributary.engine.pipeline.tokens``) and
the embedders (``tributary.engine.index``) find the tokenizer without the pipeline
importing the code index.
"""

from __future__ import annotations

from pathlib import Path

MODEL_FOLDER = Path(__file__).resolve().parent.parent / "index" / "minilm"
TOKENIZER = MODEL_FOLDER / "tokenizer.json"
