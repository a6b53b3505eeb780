"""Hit content is only ever data: nothing a server returns is evaluated,
expanded or executed on its way to the response and the assembled context.

A real stdio server answers with code, shell, template and ``${VAR}`` payloads
that would leave a marker file (or change the text) if any stage ran them; and
no module of the engine or the app calls ``eval``/``exec`` or another
deserialiser that can run code.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.sources.helpers import stdio_config
from tributary.engine.config.schema import Config
from tributary.engine.engine import Engine
from tributary.engine.model import SearchRequest, SourceStatus

ROOT = Path(__file__).resolve().parents[2]
# Calls that can run code hidden in data, as (module or "", attribute).
RUNS_CODE = {
    ("", "eval"), ("", "exec"), ("", "compile"), ("", "__import__"),
    ("os", "system"), ("os", "popen"), ("pickle", "loads"), ("pickle", "load"),
    ("marshal", "loads"), ("yaml", "load"), ("yaml", "unsafe_load"), ("yaml", "full_load"),
}


def payload(marker: Path) -> str:
    return (
        f"__import__('pathlib').Path({str(marker)!r}).write_text('pwned')\n"
        f"$(touch {marker}) `touch {marker}` ${{HOME}} {{{{7*7}}}} {{% raw %}}\n"
        "<script>alert(1)</script> <img src=x onerror=alert(1)>\n"
    )


@pytest.mark.asyncio
@pytest.mark.integration
async def test_hostile_hit_content_arrives_verbatim_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = payload(marker)
    faults = tmp_path / "faults.json"  # the content reaches the server as data, not as config
    faults.write_text(json.dumps({"h": {"content": text}}))
    server = stdio_config("h", "--hits", "2", "--fault-file", str(faults), timeout=30.0)
    engine = Engine(Config(servers={"h": server}))
    try:
        response = await engine.search(SearchRequest(f"why {{{{7*7}}}} ${{HOME}} $(id) {text}"))
    finally:
        await engine.aclose()
    assert [s.status for s in response.sources] == [SourceStatus.OK], response.sources
    assert response.hits and all(h.content == text for h in response.hits)
    assert response.context is not None
    for piece in ("{{7*7}}", "${HOME}", f"$(touch {marker})", "__import__('pathlib')",
                  "<script>alert(1)</script>"):
        assert piece in response.context.text
    assert not marker.exists()


def _calls(tree: ast.AST) -> set[tuple[str, str]]:
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            found.add(("", func.id))
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            found.add((func.value.id, func.attr))
        if any(k.arg == "shell" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
               for k in node.keywords):
            found.add(("subprocess", "shell=True"))
    return found


def test_no_module_can_run_code_from_data() -> None:
    offenders = []
    for package in ("engine", "app"):
        for path in sorted((ROOT / package).rglob("*.py")):
            bad = _calls(ast.parse(path.read_text(encoding="utf-8"))) & (
                RUNS_CODE | {("subprocess", "shell=True")})
            offenders += [f"{path.relative_to(ROOT)}: {m + '.' if m else ''}{f}" for m, f in bad]
    assert offenders == []
