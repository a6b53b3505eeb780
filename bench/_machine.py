"""What machine a benchmark ran on, printed beside its figures."""

from __future__ import annotations

import os
import platform
import subprocess

from bench._avx2 import hidden


def machine() -> str:
    """CPU model, the widest vector units it has, its CPUs and the Python."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), "")
        flags = next((ln for ln in out.splitlines() if ln.startswith("Flags")), "")
        isa = "AMX" if "amx" in flags else "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "?"
    except OSError:
        model, isa = platform.processor(), "?"
    if hidden():
        isa += ", run as AVX2 only: AVX-512, AMX and VNNI hidden from CPUID"
    return f"{model} ({isa}), {os.cpu_count()} CPUs, Python {platform.python_version()}"


def load() -> str:
    """The load average: a shared machine's timings say little without it."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "?"
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min)"
