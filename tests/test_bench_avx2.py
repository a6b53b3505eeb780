"""``--avx2`` on the benchmarks: every process of the run sees an AVX2-only CPU.

The figures a laptop's CPU gives are measured on AVX-512 machines this way, so the
preload must really hide what it says from the native libraries that choose kernels
by CPUID (NumPy reports what it found), and leave everything else working.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import _avx2  # noqa: E402

REASON = _avx2._unavailable()
needs_faulting = pytest.mark.skipif(REASON is not None, reason=f"cannot hide AVX-512 here: {REASON}")

FEATURES = """
import json
from numpy._core._multiarray_umath import __cpu_features__ as found
print(json.dumps({k: bool(v) for k, v in found.items()}))
"""


def _features(env: dict[str, str]) -> dict[str, bool]:
    done = subprocess.run([sys.executable, "-c", FEATURES], env=env, capture_output=True, text=True, check=True)
    features: dict[str, bool] = json.loads(done.stdout)
    return features


@needs_faulting
def test_the_preload_hides_avx512_amx_and_vnni_and_keeps_avx2() -> None:
    env = {**os.environ, "LD_PRELOAD": str(_avx2._library())}
    env.pop("PYTHONFAULTHANDLER", None)
    seen = _features(env)
    assert seen["AVX2"] and seen["FMA3"]
    assert not any(on for name, on in seen.items() if name.startswith("AVX512") or name == "AVX_VNNI")


@needs_faulting
def test_the_option_runs_the_script_again_with_avx2_only(tmp_path: Path) -> None:
    script = tmp_path / "probe.py"
    script.write_text(
        "import argparse, json, os, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from bench._avx2 import add_option, hidden, run_as_avx2\n"
        "from bench._machine import machine\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--n', type=int)\n"
        "add_option(parser)\n"
        "args = parser.parse_args()\n"
        "if args.avx2:\n"
        "    run_as_avx2(sys.argv)\n"
        "print(json.dumps({'n': args.n, 'avx2': args.avx2, 'hidden': hidden(), 'machine': machine()}))\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script), "--avx2", "--n", "3"], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    assert out["n"] == 3 and out["hidden"] and not out["avx2"]  # the flag is dropped on the way
    assert "run as AVX2 only" in out["machine"]


def test_a_machine_without_cpuid_faulting_is_told_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_avx2, "_unavailable", lambda: "this CPU or kernel has no CPUID faulting")
    monkeypatch.delenv(_avx2.MARK, raising=False)
    with pytest.raises(SystemExit, match="--avx2: this CPU or kernel has no CPUID faulting"):
        _avx2.run_as_avx2(["bench/x.py", "--avx2"])
