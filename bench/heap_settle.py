"""What a full garbage-collector pass costs in each long-running Tributary process,
before and after ``tributary.engine.runtime.heap.settle()``; prints the figures.

    .venv/bin/python bench/heap_settle.py [--repeat 5]

Each process kind is rebuilt in a fresh subprocess, loaded as it is once started:

- app: the Qt application and its window, with the real engine open;
- serve: ``tributary serve``'s engine (the MCP face);
- files server: the built-in code server with its embedding model loaded;
- tasks server: the built-in task-history server with its model loaded.

A full (generation 2) pass stops every thread, so its length is how long the
window cannot repaint, or every pending source call stands still, whenever
CPython decides to run one. Printed per kind: objects the collector tracks,
the median full pass before settling; then, after settling, the objects a full
pass still walks and its median.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KINDS = ("app", "serve", "files server", "tasks server")


def full_pass_ms(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        gc.collect()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def load(kind: str) -> object:
    """Build the process's long-lived state; return it so it stays alive."""
    import asyncio

    if kind == "app":
        from PySide6.QtWidgets import QApplication

        from tributary.app.engine_host import open_threaded
        from tributary.app.shell import Shell

        qt = QApplication([])

        async def opened() -> object:
            return await open_threaded(None)

        shell = Shell(single_instance=False)  # the window, tray and pages; its engine is below
        return qt, shell, asyncio.run(opened())
    if kind == "serve":
        from tributary.engine.engine import Engine
        from tributary.engine.servers.face import build_server

        async def opened_engine() -> object:
            return await Engine.open(None, warm=False)

        return build_server(opened_engine), asyncio.run(opened_engine())  # type: ignore[arg-type]
    if kind == "files server":
        from tributary.engine.index.embed import load_code_embedder
        from tributary.engine.servers import files  # noqa: F401

        model = load_code_embedder()
        model.encode(["def settle(): pass"])
        return model
    if kind == "tasks server":
        from tributary.engine.index.embed import load_default_embedder
        from tributary.engine.servers import tasks  # noqa: F401

        model = load_default_embedder()
        model.encode(["settle the heap after start-up"])
        return model
    raise ValueError(kind)


def child(kind: str, repeat: int) -> None:
    import tributary.engine.runtime.heap

    settle = tributary.engine.runtime.heap.settle
    tributary.engine.runtime.heap.settle = lambda: 0  # the app settles once its engine is open: not yet
    state = load(kind)
    tributary.engine.runtime.heap.settle = settle
    tracked = len(gc.get_objects())
    before = full_pass_ms(repeat)
    settle()
    walked = len(gc.get_objects())
    after = full_pass_ms(repeat)
    print(json.dumps({"tracked": tracked, "before": before, "walked": walked, "after": after}))
    del state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="full passes timed per point")
    parser.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.repeat)
        return 0
    print(f"python {sys.version.split()[0]}, cpus {os.cpu_count()}; "
          f"median of {args.repeat} full passes")
    print(f"{'':<14} {'before settling':>22}   {'after settling':>20}")
    print(f"{'process':<14} {'objects':>9} {'full pass':>12}   {'objects':>7} {'full pass':>12}")
    with tempfile.TemporaryDirectory(prefix="tributary-home-") as home:
        env = {**os.environ, "TRIBUTARY_HOME": home, "QT_QPA_PLATFORM": "offscreen"}
        for kind in KINDS:
            out = subprocess.run(
                [sys.executable, __file__, "--child", kind, "--repeat", str(args.repeat)],
                env=env, capture_output=True, text=True, check=True,
            ).stdout.strip().splitlines()[-1]
            row = json.loads(out)
            print(f"{kind:<14} {row['tracked']:>9,} {row['before']:>9.1f} ms   "
                  f"{row['walked']:>7,} {row['after']:>9.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
