"""The base install runs without the extras: indexing, searching and serving import
no PyTorch, transformers, sentence-transformers, scipy or matplotlib.

Each command runs in a subprocess under ``lean_probe.py``, which refuses those imports
(as a base install would) and records every attempt, in the command and in the
built-in servers it spawns.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.index.index_helpers import make_repo
from tributary.engine.index.embed import MODEL_SHA256, load_code_embedder
from tributary.engine.index.onnx_model import find_prepared_model

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("lean_probe.py")


@pytest.fixture
def lean(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment for probed commands, and the log of refused imports."""
    load_code_embedder()  # the prepared model must exist (made here with PyTorch if not)
    assert find_prepared_model(MODEL_SHA256) is not None
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return env, tmp_path / "refused.log"


def _run(env: dict[str, str], log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PROBE), str(log), "tributary", *args], capture_output=True,
        text=True, env=env, cwd=ROOT, timeout=240, check=False,
    )


def _refused(log: Path) -> str:
    return log.read_text(encoding="utf-8") if log.exists() else ""


@pytest.mark.timeout(300)
def test_index_add_and_search_import_none_of_the_extras(
    lean: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, log = lean
    repo = make_repo(tmp_path / "repo")
    added = _run(env, log, "index", "add", str(repo), "--no-history")
    assert added.returncode == 0, added.stderr
    found = _run(env, log, "search", "compute the invoice total including tax")
    assert found.returncode == 0, found.stderr
    assert "src/billing/invoice.py" in found.stdout
    assert "files: ok" in found.stdout
    assert _refused(log) == ""


@pytest.mark.timeout(300)
@pytest.mark.asyncio
async def test_serve_imports_none_of_the_extras(
    lean: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, log = lean
    repo = make_repo(tmp_path / "repo")
    assert _run(env, log, "index", "add", str(repo), "--no-history").returncode == 0
    params = StdioServerParameters(
        command=sys.executable, args=[str(PROBE), str(log), "tributary", "serve"], env=env,
        cwd=str(ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("search", {"query": "download a web page"})
        assert not result.is_error
    assert _refused(log) == ""


def test_the_code_search_evaluation_imports_none_of_the_extras(tmp_path: Path) -> None:
    """``tributary eval code`` scores retrieval alone: no [eval] extra needed."""
    log = tmp_path / "refused.log"
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(PROBE.parent)!r})\n"
        "from lean_probe import Refuse\n"
        "from pathlib import Path\n"
        f"sys.meta_path.insert(0, Refuse(Path({str(log)!r})))\n"
        "import tributary.engine.eval.codesearch, tributary.engine.eval.retrieval, tributary.engine.eval.experiment\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert _refused(log) == ""
