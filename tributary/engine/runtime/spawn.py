"""How Tributary starts its own modules as subprocesses (the built-in MCP servers, the
desktop app's index workers) and its own command (the background engine).

From a Python installation that is ``python -m MODULE``. A frozen desktop bundle has
no Python to run: its own executable runs the module instead (``tributary _run
MODULE``), which is why only the modules listed here can be run that way.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Sequence

RUN_COMMAND = "_run"
RUNNABLE = frozenset(
    {"tributary.engine.servers.files", "tributary.engine.servers.tasks", "tributary.app.index_worker", "tributary.engine.sources.reaper"}
)


def frozen() -> bool:
    """True inside a bundle made by PyInstaller (``packaging/build.sh``)."""
    return bool(getattr(sys, "frozen", False))


def module_command(module: str, *args: str) -> list[str]:
    """The command line that runs ``module`` as ``__main__`` with ``args``."""
    if module not in RUNNABLE:
        raise ValueError(f"{module} is not one of the modules Tributary runs: {sorted(RUNNABLE)}")
    if frozen():
        return [sys.executable, RUN_COMMAND, module, *args]
    return [sys.executable, "-m", module, *args]


def cli_command(*args: str) -> list[str]:
    """The command line that runs ``tributary ARGS...`` with this installation."""
    if frozen():
        return [sys.executable, *args]
    return [sys.executable, "-m", "tributary", *args]


def run_module(argv: Sequence[str]) -> int:
    """``tributary _run MODULE ARGS...``: what ``python -m MODULE ARGS...`` does."""
    if not argv or argv[0] not in RUNNABLE:
        print(f"tributary {RUN_COMMAND}: expected one of {', '.join(sorted(RUNNABLE))}",
              file=sys.stderr)
        return 2
    module, *args = argv
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0
