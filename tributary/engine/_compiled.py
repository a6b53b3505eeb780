"""Run the pipeline's mypyc-compiled modules only while they match their sources.

``setup.py`` compiles ``tributary/engine/pipeline/*.py`` when a C compiler is at hand and records
a digest of each source (``_compiled.json``). Python imports an extension module before
a source of the same name, so a source edited after the build (a developer's working
tree) would silently run as the old compiled code. At import, before any of these
modules loads, the sources are checked against the record; unless all match, an import
hook makes every one of them load from its source. All or none: compiled modules call
each other directly, so a mix would still run stale code.

``TRIBUTARY_PURE_PYTHON=1`` also runs the sources (to compare, or to debug with the
Python tracebacks and profiles that compiled code lacks).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

PACKAGE_ROOT = Path(__file__).resolve().parent
RECORD = PACKAGE_ROOT / "_compiled.json"


def compiled_modules(package_root: Path = PACKAGE_ROOT) -> dict[str, Path]:
    """The modules ``setup.py`` compiles (module name -> source), as in this tree."""
    names: dict[str, Path] = {}
    for source in sorted((package_root / "pipeline").glob("*.py")):
        if source.name != "__init__.py":
            names[f"tributary.engine.pipeline.{source.stem}"] = source
    return names


def record_of(package_root: Path = PACKAGE_ROOT) -> dict[str, str]:
    """What ``setup.py`` writes to ``_compiled.json`` once it compiled this tree: each
    compiled source's path (as ``tributary/engine/pipeline/x.py``) and SHA-256."""
    return {_record_key(package_root, source): _digest(source) for source in compiled_modules(package_root).values()}


def _record_key(package_root: Path, source: Path) -> str:
    """A source's entry in the record: its path from the package's parent."""
    return f"{package_root.name}/{source.relative_to(package_root).as_posix()}"


def _digest(source: Path) -> str:
    return hashlib.sha256(source.read_bytes()).hexdigest()


def stale_sources(package_root: Path = PACKAGE_ROOT) -> list[str]:
    """Sources that differ from what was compiled (all of them without a record)."""
    sources = compiled_modules(package_root)
    try:
        record = json.loads((package_root / RECORD.name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return sorted(sources)
    stale = []
    for name, source in sources.items():
        try:
            same = record.get(_record_key(package_root, source)) == _digest(source)
        except OSError:
            same = False
        if not same:
            stale.append(name)
    return stale


class _SourcesFirst:
    """A meta path finder for the given modules' Python sources, ahead of any compiled
    extension. (Not an ``importlib.abc.MetaPathFinder``: importing that module alone
    costs ~18 ms at start-up.)"""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = sources

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        source = self.sources.get(fullname)
        return importlib.util.spec_from_file_location(fullname, source) if source is not None else None


def _native_library() -> bool:
    """Whether the compiled modules' shared library is here (``engine/_native__mypyc*``)."""
    return any(path.suffix in {".so", ".pyd"} for path in PACKAGE_ROOT.glob("_native__mypyc*"))


def describe(compiled: bool) -> str:
    """Which pipeline runs, and why, in words (``tributary --version``, the benchmarks)."""
    if compiled:
        return "compiled (mypyc)"
    if os.environ.get("TRIBUTARY_PURE_PYTHON"):
        return "Python (TRIBUTARY_PURE_PYTHON is set)"
    if not RECORD.exists():
        return "Python (not compiled: no C compiler at install, or installed without building)"
    stale = stale_sources()
    if not stale:
        return "Python (the compiled modules are missing; reinstall to compile again)"
    return f"Python ({', '.join(stale)} changed since compiled; reinstall to compile again)"


def choose() -> bool:
    """Let the compiled modules load if they are current; else make every one of them
    load from source. True when compiled code will run."""
    if _native_library() and not os.environ.get("TRIBUTARY_PURE_PYTHON") and not stale_sources():
        return True
    if not any(isinstance(finder, _SourcesFirst) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SourcesFirst(compiled_modules()))
    return False
