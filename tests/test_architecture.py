"""The project's shape rules, enforced: the engine is a Qt-free library."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "qasync", "tributary.app")


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def _imported_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_engine_sources_never_import_ui_code() -> None:
    offenders = []
    for path in sorted((ROOT / "tributary" / "engine").rglob("*.py")):
        for name in _imported_modules(path):
            if _forbidden(name):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_importing_the_whole_engine_loads_no_qt() -> None:
    """Import every engine module in a fresh interpreter and look at sys.modules."""
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in (ROOT / "tributary" / "engine").rglob("*.py")
        if p.name != "__main__.py"
    )
    script = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        f"bad = sorted(m for m in sys.modules if any(m == f or m.startswith(f + '.') for f in {FORBIDDEN!r}))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


def test_everything_installs_under_one_top_level_package() -> None:
    """Only ``tributary`` lands in site-packages: no ``engine`` or ``app`` to collide with
    another distribution's."""
    import tomllib

    from setuptools import find_packages

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = find_packages(where=str(ROOT), include=include)
    assert "tributary" in packages
    assert {name.split(".")[0] for name in packages} == {"tributary"}


# What the app may import of the engine: the seam, the data model, the config schema and
# the errors. Everything else it needs is named in the seam.
APP_MAY_IMPORT = ("tributary.engine.api", "tributary.engine.model", "tributary.engine.config.schema",
                  "tributary.engine.errors")


def _engine_imports(path: Path) -> list[str]:
    """The engine modules ``path`` imports, anywhere in it, by ``import``, ``from``
    (``from tributary.engine import api`` counts as ``tributary.engine.api``) or
    ``importlib.import_module("...")``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "tributary.engine":
                names.extend(f"tributary.engine.{alias.name}" for alias in node.names)
            else:
                names.append(node.module)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.append(node.args[0].value)
    return [n for n in names if n == "tributary.engine" or n.startswith("tributary.engine.")]


def test_the_app_reaches_the_engine_only_through_the_seam() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "tributary" / "app").rglob("*.py"))
        for name in _engine_imports(path)
        if name not in APP_MAY_IMPORT
    ]
    assert offenders == []


def test_every_name_of_the_seam_resolves() -> None:
    """Each name the seam lends out exists where it says (imported here, on first use)."""
    from tributary.engine import api

    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert missing == []
    assert api.validate is __import__("tributary.engine.config.validate", fromlist=["x"]).validate


# Where the app may start threads, loops or worker-thread calls: the engine's host
# thread, the one helper for the engine's other work, the program's own loop, and the
# index worker (a child process of its own).
WORK_RUNNERS = {"background.py", "engine_host.py", "main.py", "index_worker.py"}
_RUNNING = {"to_thread", "run_in_executor", "new_event_loop", "run_until_complete", "Thread"}


def test_the_app_runs_engine_work_one_way() -> None:
    offenders = []
    for path in sorted((ROOT / "tributary" / "app").rglob("*.py")):
        if path.name in WORK_RUNNERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                called = node.func
                if called.attr in _RUNNING or (called.attr == "run" and isinstance(called.value, ast.Name)
                                               and called.value.id == "asyncio"):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} calls {called.attr}")
    assert offenders == []
