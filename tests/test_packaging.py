"""Tributary's distribution name is its own, and nothing tells users to install by a
name that belongs to another project on PyPI."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tributary.engine.extras import DISTRIBUTION, install_hint

ROOT = Path(__file__).resolve().parents[1]
# "pip install tributary", "pip install 'tributary[postgres]'" … but not "-e '.[postgres]'"
_BY_NAME = re.compile(r"pip install\s+(?:-\S+\s+)*['\"]?tributary(?![-\w])")


def test_the_distribution_is_named_tributary_context_and_installed_so() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DISTRIBUTION == "tributary-context"
    assert f"{DISTRIBUTION}[model,eval,redis,postgres]" in project["optional-dependencies"]["dev"]
    assert set(project["scripts"]) == {"tributary"} and set(project["gui-scripts"]) == {"tributary-gui"}
    assert importlib.metadata.version(DISTRIBUTION) == project["version"]
    assert "--copy-metadata tributary-context" in (ROOT / "packaging" / "build.sh").read_text()


def test_no_message_or_page_says_to_install_tributary_by_name() -> None:
    texts = [*(ROOT / "tributary").rglob("*.py"), *(ROOT / "docs").glob("*.md")]
    offending = []
    for path in texts:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _BY_NAME.search(line) and not re.search(r"\b(never|not|unrelated|somebody else|another project)\b", line, re.I):
                offending.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offending == []


def test_the_install_hint_works_from_the_checkout() -> None:
    hint = install_hint("postgres")
    assert hint == f"{sys.executable} -m pip install -e '{ROOT}[postgres]'"


def test_a_postgres_index_without_the_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [m for m in sys.modules if m.startswith("tributary.engine.postgres")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as on the base install
    from tributary.engine.errors import TributaryError

    with pytest.raises(TributaryError, match=r"install the postgres extra: .* -m pip install -e '.*\[postgres\]'"):
        import tributary.engine.postgres.db  # noqa: F401


@pytest.mark.integration
def test_index_list_on_the_base_install_names_the_extra(tmp_path: Path) -> None:
    blocker = tmp_path / "site"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nsys.modules['psycopg'] = None  # the base install: no postgres extra\n")
    config = tmp_path / "config.yaml"
    config.write_text("index:\n  backend: postgres\n  dsn: postgresql://127.0.0.1:9/none\n")
    env = {**os.environ, "PYTHONPATH": f"{blocker}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-m", "tributary", "--config", str(config), "index", "list"],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "ModuleNotFoundError" not in done.stderr
    assert "install the postgres extra:" in done.stderr
