"""What one code chunk costs to embed, per setting: chunks per CPU-second and per second.

    .venv/bin/python bench/embed_cost.py [--chunks 1500] [--repeat 2]

Chunks this repository's tributary/engine/ folder, then for each setting runs a fresh process that
loads the code embedder (ONNX Runtime int8 unless ``TRIBUTARY_EMBED_BACKEND`` says
otherwise) and encodes the same chunks, timing wall and process CPU (all threads).
Settings: sequence length (``TRIBUTARY_EMBED_SEQ``: 32, 48 the default, 64) and encode
workers (``TRIBUTARY_EMBED_THREADS``: 1, or one per core, the default). The vectors of
one sequence length do not depend on the worker count; a shorter sequence changes them,
so its quality must come from ``bench/eval_benchmarks.py pytest``. Prints the machine
and its load: on a busy machine wall time says little, CPU time more.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._avx2 import add_option, run_as_avx2  # noqa: E402
from bench._machine import load, machine  # noqa: E402

CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from tributary.engine.index.embed import load_code_embedder
texts = json.load(open({texts!r}))
embedder = load_code_embedder()
embedder.encode(texts[:64])  # warm-up
best = None
for _ in range({repeat}):
    cpu, wall = time.process_time(), time.perf_counter()
    embedder.encode(texts)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    best = (cpu, wall) if best is None or cpu < best[0] else best
print(json.dumps({{"cpu": best[0], "wall": best[1]}}))
"""

SETTINGS: list[tuple[str, dict[str, str]]] = [
    ("seq 48, one worker per core (default)", {}),
    ("seq 48, 1 worker", {"TRIBUTARY_EMBED_THREADS": "1"}),
    ("seq 32, one worker per core", {"TRIBUTARY_EMBED_SEQ": "32"}),
    ("seq 64, one worker per core", {"TRIBUTARY_EMBED_SEQ": "64"}),
]


def chunk_texts(limit: int) -> list[str]:
    from tributary.engine.index.chunking import chunk_text
    from tributary.engine.index.discovery import discover

    texts: list[str] = []
    for source in discover(ROOT / "tributary" / "engine"):
        text = source.abspath.read_text(encoding="utf-8", errors="replace")
        texts.extend(c.embed_text for c in chunk_text(source.path, source.language, text))
        if len(texts) >= limit:
            break
    return texts[:limit]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=2, help="encodes per setting; the least CPU counts")
    add_option(parser)
    args = parser.parse_args(argv)
    if args.avx2:
        run_as_avx2(sys.argv)
    texts = chunk_texts(args.chunks)
    scratch = Path(os.environ.get("TMPDIR", "/tmp")) / "tributary-embed-cost.json"
    scratch.write_text(json.dumps(texts), encoding="utf-8")
    print(f"machine: {machine()}; {load()}; {len(texts)} chunks of tributary/engine/")
    print(f"{'setting':<40} {'chunks/CPU-s':>12} {'chunks/s':>9}")
    for name, env in SETTINGS:
        code = CHILD.format(root=str(ROOT), texts=str(scratch), repeat=args.repeat)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**os.environ, **env}, check=True).stdout
        figures = json.loads(out.strip().splitlines()[-1])
        print(f"{name:<40} {len(texts) / figures['cpu']:>12.0f} {len(texts) / figures['wall']:>9.0f}")
    print(f"after: {load()}")
    scratch.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
