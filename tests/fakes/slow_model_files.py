"""The built-in files server whose embedding model loads only when the test says so.

    python -m tests.fakes.slow_model_files GATE [files server options...]

The real server (``tributary.engine.servers.files``) with one change: loading the
model waits until the file ``GATE`` exists and then gives the tests' hashing
embedder. Until then every query is answered on keywords alone, as right after a
real start-up on a slow machine, for as long as the test needs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.servers import files


def main(argv: list[str]) -> int:
    gate, *options = argv

    def load_when_allowed() -> HashingEmbedder:
        while not Path(gate).exists():
            time.sleep(0.02)
        return HashingEmbedder()

    files.load_code_embedder = load_when_allowed  # type: ignore[assignment]
    return files.main(options)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
