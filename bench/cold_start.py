"""Cold start with many servers: from opening the engine to the first hits of a query
asked at once, and to every source's answer.

    .venv/bin/python bench/cold_start.py [--fakes N] [--runs K] [--slots S] [--delay SECONDS]

A fresh ``TRIBUTARY_HOME`` holds an index of this repository's ``tributary/engine/config``
folder (so the built-in ``files`` and ``tasks`` servers run) and N fake stdio servers
(``tests/fakes/fake_server.py``, each a Python process importing the MCP SDK, as most
third-party servers are). Each run opens the engine as the app and ``serve`` do
(``Engine.open``, which starts every server in the background), waits ``--delay``
seconds, asks one question and prints when each server was ready, when the first hits
arrived and when the last source answered. ``--slots`` sets how many servers may start
at once (default: one per core; 100 starts them all together, as before the start
gate). Prints the machine and its load: on two cores the figures are all start-up CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._machine import load, machine  # noqa: E402
from tributary.engine.config.load import load_config  # noqa: E402
from tributary.engine.engine import Engine  # noqa: E402
from tributary.engine.model import SearchRequest  # noqa: E402
from tributary.engine.sources.start_gate import StartGate  # noqa: E402

FAKE = ROOT / "tests" / "fakes" / "fake_server.py"
QUERY = "how are routing rules matched"


def make_home(home: Path, fakes: int) -> None:
    lines = ["servers:"]
    for n in range(fakes):
        lines += [f"  fake{n}:", f"    command: {sys.executable}",
                  f"    args: [{str(FAKE)!r}, --name, fake{n}, --hits, '3']"]
    (home / "config.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {**os.environ, "TRIBUTARY_HOME": str(home)}
    subprocess.run([sys.executable, "-m", "tributary", "index", "add", str(ROOT / "tributary" / "engine" / "config")],
                   env=env, check=True, capture_output=True)


async def one_run(config_path: Path, slots: int | None, delay: float) -> tuple[float | None, float, dict[str, float]]:
    t0 = time.monotonic()
    gate = StartGate(slots=slots) if slots is not None else None
    engine = await Engine.open(config=load_config(config_path), persistent=False, start_gate=gate)
    ready: dict[str, float] = {}

    async def watch() -> None:
        while True:
            for state in engine.server_states():
                if state.name not in ready and state.status.value in ("ready", "backoff", "stopped"):
                    ready[state.name] = time.monotonic() - t0
            await asyncio.sleep(0.02)

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(delay)
    first: float | None = None
    async for update in engine.search_stream(SearchRequest(QUERY, use_cache=False)):
        if first is None and update.source is not None and update.source.hits:
            first = time.monotonic() - t0
    done = time.monotonic() - t0
    watcher.cancel()
    await engine.aclose()
    return first, done, ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fakes", type=int, default=12)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--slots", type=int, default=None)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    print(machine(), "·", load())
    with tempfile.TemporaryDirectory(prefix="tributary-cold-") as tmp:
        home = Path(tmp)
        os.environ["TRIBUTARY_HOME"] = str(home)
        make_home(home, args.fakes)
        firsts, dones = [], []
        for run in range(args.runs):
            first, done, ready = asyncio.run(one_run(home / "config.yaml", args.slots, args.delay))
            builtin = " ".join(f"{n} {ready[n]:.1f}s" for n in ("files", "tasks") if n in ready)
            print(f"run {run + 1}: first hits {first:.1f}s, every source {done:.1f}s; ready: {builtin}, "
                  f"last server {max(ready.values()):.1f}s · {load()}")
            firsts.append(first or float("nan"))
            dones.append(done)
        print(f"median over {args.runs}: first hits {statistics.median(firsts):.1f}s, "
              f"every source {statistics.median(dones):.1f}s ({args.fakes} fake servers + files + tasks, "
              f"{args.slots or StartGate().slots} starts at once)")


if __name__ == "__main__":
    main()
