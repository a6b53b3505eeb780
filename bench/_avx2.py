"""Run a benchmark as a laptop's AVX2-only CPU would: ``--avx2`` on the scripts that time
embedding.

ONNX Runtime, NumPy and the other native libraries choose their kernels from CPUID, so
on an AVX-512 machine every figure is the AVX-512 kernels' (with VNNI, int8 products
run several times faster than an AVX2 CPU's). ``bench/avx2_only.c``, preloaded into
every process of the run, answers CPUID without AVX-512, AMX and VNNI, through the
kernel's CPUID faulting (``cpuid_fault`` in ``/proc/cpuinfo``). The figures are then
the AVX2 kernels on this machine's cores, not on another vendor's: say so beside them.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("avx2_only.c")
MARK = "TRIBUTARY_BENCH_CPUID"  # set in a run whose processes see AVX2 only
FLAG = "--avx2"


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        FLAG, action="store_true",
        help="hide AVX-512, AMX and VNNI from every process of the run (CPUID faulting), "
             "so the native kernels are those of an AVX2-only CPU",
    )  # fmt: skip


def hidden() -> bool:
    """Whether this process runs with AVX-512 hidden."""
    return os.environ.get(MARK) == "avx2"


def run_as_avx2(argv: list[str]) -> None:
    """Start this script again, ``--avx2`` dropped, with the preload in its environment
    (and so in its children's); does not return. Exits with the reason where the
    machine cannot do it."""
    if hidden():
        return
    reason = _unavailable()
    if reason:
        raise SystemExit(f"{FLAG}: {reason}")
    env = {**os.environ, MARK: "avx2", "LD_PRELOAD": _joined(os.environ.get("LD_PRELOAD"), str(_library()))}
    # A SIGSEGV handler installed after the preload's (Python's faulthandler) would take
    # the CPUID faults for crashes.
    env.pop("PYTHONFAULTHANDLER", None)
    args = [a for a in argv if a != FLAG]
    os.execve(sys.executable, [sys.executable, *args], env)


def _unavailable() -> str | None:
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return "needs Linux (/proc/cpuinfo)"
    if " avx2" not in flags:
        return "this CPU has no AVX2"
    if " cpuid_fault" not in flags:
        return "this CPU or kernel has no CPUID faulting (cpuid_fault in /proc/cpuinfo)"
    if shutil.which("cc") is None:
        return "needs a C compiler (cc) to build bench/avx2_only.c"
    return None


def _library() -> Path:
    """The preload, built once per version of its source."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    target = Path(tempfile.gettempdir()) / f"tributary-avx2-only-{digest}.so"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(partial), str(SOURCE)], check=True)
        os.replace(partial, target)
    return target


def _joined(existing: str | None, library: str) -> str:
    return f"{existing}:{library}" if existing else library
