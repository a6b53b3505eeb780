"""Time to first answer: from ``tributary index add`` in an empty home to the first
search with hits, and to full embeddings.

    .venv/bin/python bench/first_answer.py [PATH ...] [--no-self] [--query TEXT]

For a copy of this repository (its tracked files, unless ``--no-self``) and for each
PATH, in a fresh ``TRIBUTARY_HOME``, starts the real command (``python -m tributary index
add PATH --no-history``) and, while it runs, searches two ways: the index itself, the
way the files server does before vectors exist (keyword + symbol, ``hybrid_search``
with no query vector) every 0.2 s; and through the product, one ``tributary search
--json`` after another, as a user would (the first starts the background engine,
the next ones attach to it; it is stopped at the end). Prints per target: files, chunks, seconds to the first search with hits
(store and CLI: the CLI figure is when the answering command returned),
to the end of the chunking pass, to every vector of the code (the files whose role is
code: the embedding queue takes them first), to full embeddings (the command's exit), the
embedding pass's CPU seconds (the child's user+system time after chunking, from
``/proc``) and chunks embedded per CPU-second, plus the machine and its load: other
work on the machine slows every figure, so say how loaded it was.

The per-machine ONNX model file is made before timing (it is shared by every home).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._avx2 import add_option, run_as_avx2  # noqa: E402
from bench._machine import load, machine  # noqa: E402
from tributary.engine.index.search import hybrid_search  # noqa: E402
from tributary.engine.index.store import SqliteStore  # noqa: E402

POLL_S = 0.2
DEFAULT_QUERY = "where is the search request fused and ranked"


@dataclass(slots=True)
class Result:
    name: str
    files: int = 0
    chunks: int = 0
    first_hits_s: float | None = None
    cli_hits_s: float | None = None
    chunked_s: float | None = None
    code_s: float | None = None
    full_s: float | None = None
    embed_cpu_s: float | None = None
    embedded: int = 0


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a running process (all its threads), Linux only."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def copy_of_this_repository(target: Path) -> Path:
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        source = ROOT / rel
        if source.is_file() and not source.is_symlink():
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(source.read_bytes())
    subprocess.run(["git", "init", "-q", str(target)], check=True)
    return target


def _search_hits(index_path: Path, query: str) -> int:
    if not index_path.exists():
        return 0
    try:
        store = SqliteStore(index_path, readonly=True)
    except Exception:
        return 0
    try:
        return len(hybrid_search(store, query, None, repo="bench", top_k=10))
    except Exception:  # tables still being made
        return 0
    finally:
        store.close()


def _cli_hits(env: dict[str, str], query: str) -> int:
    """Hits of one ``tributary search --json`` (the one-shot CLI, as a user runs it)."""
    import json

    done = subprocess.run([sys.executable, "-m", "tributary", "search", query, "--json"],
                          env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    try:
        return len(json.loads(done.stdout).get("hits") or [])
    except ValueError:
        return 0


def _poll_cli(env: dict[str, str], query: str, started: float, done: threading.Event,
              result: Result) -> None:
    """Run the CLI search again and again until it answers with hits or indexing ends."""
    while not done.is_set():
        if _cli_hits(env, query):
            result.cli_hits_s = time.perf_counter() - started
            return


def _progress(index_path: Path) -> tuple[int, int, bool]:
    """(embedded, chunks, model recorded) of the index being written."""
    try:
        store = SqliteStore(index_path, readonly=True)
    except Exception:
        return 0, 0, False
    try:
        embedded, total = store.vector_counts()
        return embedded, total, store.model() is not None
    except Exception:
        return 0, 0, False
    finally:
        store.close()


def _code_waiting(index_path: Path) -> bool | None:
    """Whether a chunk of a code file still waits for its vector (None: not known yet)."""
    try:
        store = SqliteStore(index_path, readonly=True)
    except Exception:
        return None
    try:
        return store.code_waiting()
    except Exception:
        return None
    finally:
        store.close()


def measure(name: str, path: Path, query: str) -> Result:
    from tributary.engine.index.manager import index_path_for

    result = Result(name)
    with tempfile.TemporaryDirectory(prefix="tributary-first-") as home:
        env = {**os.environ, "TRIBUTARY_HOME": home, "PYTHONPATH": str(ROOT)}
        os.environ["TRIBUTARY_HOME"] = home  # so index_path_for agrees with the child
        index_path = index_path_for(path)
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "tributary", "index", "add", str(path), "--no-history"],
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        cpu_at_embed: float | None = None
        done = threading.Event()
        cli = threading.Thread(target=_poll_cli, args=(env, query, started, done, result), daemon=True)
        cli.start()
        own_cpu = 0.0
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:  # reaped here, so its CPU time is its own (not the CLI searches')
                child.returncode = os.waitstatus_to_exitcode(status)
                own_cpu = usage.ru_utime + usage.ru_stime
                break
            now = time.perf_counter() - started
            if result.first_hits_s is None and _search_hits(index_path, query):
                result.first_hits_s = now
            if result.chunked_s is None:
                _, _, modelled = _progress(index_path)
                if modelled:  # the model is recorded when the embedding pass starts
                    result.chunked_s = now
                    cpu_at_embed = cpu_seconds(child.pid)
            elif result.code_s is None and _code_waiting(index_path) is False:
                result.code_s = now
            time.sleep(POLL_S)
        result.full_s = time.perf_counter() - started
        if result.code_s is None:
            result.code_s = result.full_s
        done.set()
        cli.join()
        # The first CLI search started the background engine of this home: stop it.
        subprocess.run([sys.executable, "-m", "tributary", "engine", "stop"], env=env, cwd=ROOT,
                       capture_output=True, check=False)
        stderr = child.stderr.read() if child.stderr else ""
        if child.returncode:
            raise SystemExit(f"index add failed on {path}:\n{stderr}")
        if result.first_hits_s is None and _search_hits(index_path, query):
            result.first_hits_s = result.full_s
        total_cpu = own_cpu
        result.embedded, result.chunks, _ = _progress(index_path)
        store = SqliteStore(index_path, readonly=True)
        try:
            result.files = store.counts()[0]
        finally:
            store.close()
        if cpu_at_embed is not None:
            result.embed_cpu_s = total_cpu - cpu_at_embed
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path, help="other repositories to measure")
    parser.add_argument("--no-self", action="store_true", help="skip the copy of this repository")
    parser.add_argument("--query", default=DEFAULT_QUERY, help="the search polled for hits")
    add_option(parser)
    args = parser.parse_args(argv)
    if args.avx2:
        run_as_avx2(sys.argv)

    from tributary.engine.index.embed import load_code_embedder

    load_code_embedder()  # makes the per-machine ONNX file now, outside the timings
    print(f"machine: {machine()}; {load()}")
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="tributary-copy-") as scratch:
        targets: list[tuple[str, Path]] = []
        if not args.no_self:
            targets.append(("this repository (copy)", copy_of_this_repository(Path(scratch) / "tributary")))
        targets += [(str(p), p.expanduser().resolve()) for p in args.paths]
        for name, path in targets:
            results.append(measure(name, path, args.query))
    print(f"after: {load()}")
    header = f"{'target':<28} {'files':>6} {'chunks':>7} {'1st hits s':>10} {'CLI hits s':>10} " \
             f"{'chunked s':>9} {'code s':>7} " \
             f"{'full s':>7} {'embed CPU s':>11} {'chunks/CPU-s':>12}"
    print(header)
    for r in results:
        rate = r.embedded / r.embed_cpu_s if r.embed_cpu_s else None
        print(f"{r.name[:28]:<28} {r.files:>6} {r.chunks:>7} {_fmt(r.first_hits_s):>10} {_fmt(r.cli_hits_s):>10} "
              f"{_fmt(r.chunked_s):>9} {_fmt(r.code_s):>7} {_fmt(r.full_s):>7} {_fmt(r.embed_cpu_s):>11} {_fmt(rate, 0):>12}")
    return 0


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


if __name__ == "__main__":
    raise SystemExit(main())
