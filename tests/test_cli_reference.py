"""docs/cli.md is generated from the ``tributary`` argparse parser and kept up to date."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "cli_reference.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("cli_reference", module)
    spec.loader.exec_module(module)
    return module


def test_the_reference_is_up_to_date() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr or "docs/cli.md is out of date: run scripts/cli_reference.py"


def test_every_command_has_a_section() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for command in ("search", "context", "config import", "index add", "serve", "eval run"):
        assert f"# `tributary {command}`" in text


def test_arguments_are_written_as_typed() -> None:
    script = _script()
    parser = argparse.ArgumentParser()
    flag = parser.add_argument("--json", action="store_true")
    number = parser.add_argument("--top-k", type=int, metavar="N")
    choice = parser.add_argument("--format", choices=["xml", "plain"])
    paths = parser.add_argument("paths", nargs="*", metavar="PATH")
    assert script.argument_text(flag) == "--json"
    assert script.argument_text(number) == "--top-k N"
    assert script.argument_text(choice) == "--format {xml,plain}"
    assert script.argument_text(paths) == "[PATH ...]"
