"""Build hook: compile the pipeline's modules to C with mypyc, when a C compiler is at hand.

Everything else about the package is in ``pyproject.toml``. The pipeline (dedup, fusion,
token budget, assembly: ``tributary/engine/pipeline``) runs for every search, and its cost is
spread over thousands of small Python operations per search — attribute reads, dict
and list work — which is what mypyc's compiled code does faster
(``bench/pipeline_cost.py``; figures in the README). The code is the same typed Python
either way: mypyc compiles it as ``mypy --strict`` already checks it.

The compiled modules are optional. Without a compiler (or with
``TRIBUTARY_PURE_PYTHON=1`` set when installing) the package installs as plain Python
and behaves the same. The build records a digest of each source it compiled
(``engine/_compiled.json``); ``tributary/engine/_compiled.py`` checks it at import, so sources
edited since the last build run as Python rather than as stale compiled code.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.extension import Extension

ROOT = Path(__file__).resolve().parent
GROUP = "tributary.engine._native"  # the shared library's module: engine/_native__mypyc.*.so


def _checker() -> ModuleType:
    """``tributary/engine/_compiled.py``, which decides what is compiled and checks the record at
    run time, loaded by path: importing the package would run its ``__init__``."""
    spec = importlib.util.spec_from_file_location("_tributary_compiled", ROOT / "tributary" / "engine" / "_compiled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECKER = _checker()


def compiled_sources() -> list[str]:
    """The modules compiled, as paths relative to the project root."""
    return [path.relative_to(ROOT).as_posix() for path in CHECKER.compiled_modules(ROOT / "tributary" / "engine").values()]


def extensions() -> list[Extension]:
    if os.environ.get("TRIBUTARY_PURE_PYTHON"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # (a build without the build-system requirements: plain Python)
        return []
    modules = mypycify(compiled_sources(), group_name=GROUP, opt_level="3", debug_level="0")
    for module in modules:
        module.optional = True  # no compiler: a warning, and the package stays plain Python
    return modules


class BuildExt(build_ext):  # type: ignore[misc]  # (setuptools is untyped here)
    """``build_ext`` that records what it compiled, once every module of it was built."""

    def run(self) -> None:
        super().run()
        built = [Path(self.get_ext_fullpath(ext.name)) for ext in self.extensions]
        inplace = self.inplace or getattr(self, "editable_mode", False)
        target = (ROOT if inplace else Path(self.build_lib)) / "tributary" / "engine" / CHECKER.RECORD.name
        if not built or not all(path.exists() for path in built):
            target.unlink(missing_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(CHECKER.record_of(ROOT / "tributary" / "engine"), indent=1, sort_keys=True) + "\n", encoding="utf-8")


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
