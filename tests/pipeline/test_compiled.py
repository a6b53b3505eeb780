"""The mypyc-compiled pipeline (setup.py): used only while current, and the same as Python."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tributary import engine
from tributary.engine._compiled import compiled_modules, describe, stale_sources

ROOT = Path(__file__).resolve().parents[2]
PURE = {**os.environ, "TRIBUTARY_PURE_PYTHON": "1"}
needs_compiled = pytest.mark.skipif(not engine.COMPILED, reason="the pipeline is not compiled here (no C compiler?)")

# The pipeline over the benchmark's 150 hits, summed up as JSON: every figure a
# compiled module could get wrong (ranking, scores, groups, budget, the context's text).
SUMMARY = """
import json, sys
sys.path.insert(0, {root!r})
from tributary import engine
from bench._hits import make_hits
from tributary.engine.config.schema import BudgetConfig, DedupConfig, FusionConfig
from tributary.engine.model import SearchRequest
from tributary.engine.pipeline import run_pipeline

out = {{"compiled": engine.COMPILED}}
for strategy in ("rrf", "weighted", "cascade", "vote"):
    for overflow in ("truncate", "compress", "summarise"):
        result = run_pipeline(
            make_hits(150), SearchRequest(query="how does pytest collect fixtures", strategy=strategy),
            fusion=FusionConfig(), dedup=DedupConfig(semantic=False), budget=BudgetConfig(overflow=overflow),
        )
        out[strategy + "/" + overflow] = {{
            "ranked": [(h.id, round(h.score, 9), h.tokens) for h in result.ranked],
            "groups": [(g.kept.id, [(m.hit.id, m.reason.value, m.similarity) for m in g.members])
                       for g in result.groups],
            "context": result.context.text,
            "tokens": result.context.token_count,
            "per_source": result.tokens_per_source,
        }}
print(json.dumps(out))
"""


def _summary(env: dict[str, str]) -> dict[str, object]:
    script = SUMMARY.format(root=str(ROOT))
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    summary: dict[str, object] = json.loads(out.stdout)
    return summary


@needs_compiled
def test_compiled_and_python_pipelines_give_the_same_results() -> None:
    compiled, pure = _summary(dict(os.environ)), _summary(PURE)
    assert compiled.pop("compiled") is True
    assert pure.pop("compiled") is False
    assert compiled.keys() == pure.keys()
    for case in compiled:
        assert compiled[case] == pure[case], case


@pytest.mark.slow  # a fresh interpreter
def test_pure_python_can_be_asked_for() -> None:
    script = "import tributary.engine as engine, tributary.engine.pipeline.dedup as d; print(engine.COMPILED, d.__file__)"
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=PURE, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", str(ROOT / "tributary" / "engine" / "pipeline" / "dedup.py")]
    version = subprocess.run(
        [sys.executable, "-m", "tributary", "--version"], cwd=ROOT, env=PURE, capture_output=True, text=True, check=True
    )
    assert version.stdout.endswith("; pipeline: Python (TRIBUTARY_PURE_PYTHON is set)\n")


@pytest.mark.slow  # a fresh interpreter
def test_the_version_says_which_pipeline_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "tributary", "--version"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.startswith("tributary ")
    assert out.stdout.rstrip().endswith(f"; pipeline: {describe(engine.COMPILED)}")
    assert ("compiled (mypyc)" in out.stdout) == engine.COMPILED


@needs_compiled
def test_an_edited_source_runs_as_python_and_so_do_the_others(tmp_path: Path) -> None:
    """Python loads an extension before a source of the same name: without the check,
    an edit made after the build would not run at all."""
    shutil.copytree(ROOT / "tributary", tmp_path / "tributary", ignore=shutil.ignore_patterns("__pycache__"))
    limits = tmp_path / "tributary" / "engine" / "pipeline" / "limits.py"
    limits.write_text(limits.read_text(encoding="utf-8") + "\nEDITED = True\n", encoding="utf-8")
    script = (
        "import tributary.engine as engine, tributary.engine.pipeline.limits as l, tributary.engine.pipeline.dedup as d, tributary.engine.pipeline.text as t\n"
        "print(engine.COMPILED, l.EDITED, d.__file__.endswith('.py'), t.__file__.endswith('.py'))"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    env.pop("TRIBUTARY_PURE_PYTHON", None)
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True", "True"]
    version = subprocess.run(
        [sys.executable, "-m", "tributary", "--version"], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    assert "pipeline: Python (tributary.engine.pipeline.limits changed since compiled; reinstall" in version.stdout


def test_stale_sources_names_what_changed_since_the_record(tmp_path: Path) -> None:
    package = tmp_path / "engine"
    (package / "pipeline").mkdir(parents=True)
    for name in ("model.py", "pipeline/__init__.py", "pipeline/dedup.py", "pipeline/fusion.py"):
        (package / name).write_text(f"# {name}\n", encoding="utf-8")
    assert set(compiled_modules(package)) == {"tributary.engine.pipeline.dedup", "tributary.engine.pipeline.fusion"}
    assert stale_sources(package) == ["tributary.engine.pipeline.dedup", "tributary.engine.pipeline.fusion"]  # no record

    import hashlib

    record = {
        f"engine/{name}": hashlib.sha256((package / name).read_bytes()).hexdigest()
        for name in ("pipeline/dedup.py", "pipeline/fusion.py")
    }
    (package / "_compiled.json").write_text(json.dumps(record), encoding="utf-8")
    assert stale_sources(package) == []
    (package / "pipeline" / "fusion.py").write_text("# changed\n", encoding="utf-8")
    assert stale_sources(package) == ["tributary.engine.pipeline.fusion"]
    (package / "pipeline" / "new.py").write_text("# not compiled\n", encoding="utf-8")
    assert stale_sources(package) == ["tributary.engine.pipeline.fusion", "tributary.engine.pipeline.new"]
    (package / "_compiled.json").write_text("{not json", encoding="utf-8")
    assert len(stale_sources(package)) == 3


@pytest.mark.skipif(not os.environ.get("TRIBUTARY_REQUIRE_COMPILED"), reason="only where a compiled build is expected")
def test_the_pipeline_runs_compiled_where_required() -> None:
    """CI sets TRIBUTARY_REQUIRE_COMPILED: a build that quietly fell back to Python
    would pass every other test and lose the speed."""
    assert engine.COMPILED
    assert stale_sources() == []
