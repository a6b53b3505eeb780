"""Each set of choices is written out once: fusion strategies, overflow strategies and
context formats live in ``tributary.engine.model`` and everything else imports them.

A second literal copy drifts: a strategy added to the pipeline would be refused by the
config check, missing from the CLI's choices or absent from the app's combo boxes.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tributary.engine import model
from tributary.engine.pipeline.fusion import STRATEGIES

ROOT = Path(__file__).resolve().parents[1]
OWNER = Path("tributary/engine/model.py")
VOCABULARIES = {
    "fusion strategies": frozenset(model.FUSION_STRATEGIES),
    "overflow strategies": frozenset(model.OVERFLOW_STRATEGIES),
    "context formats": frozenset(model.CONTEXT_FORMATS),
}
# Deliberate subsets, not the list of choices: the settings an experiment compares.
ALLOWED = {
    (Path("tributary/engine/eval/adaptive.py"), frozenset({"rrf", "weighted", "vote"})),
    (Path("tributary/engine/eval/experiment.py"), frozenset({"rrf", "weighted"})),
}


def literal_lists(source: str) -> list[tuple[int, frozenset[str]]]:
    """(line, names) for each list, tuple or set of two or more string literals and
    nothing else (an empty string or None, standing for "the default", is left out)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.List | ast.Tuple | ast.Set):
            continue
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str | None) for e in node.elts):
            names = frozenset(e.value for e in node.elts if isinstance(e, ast.Constant) and e.value)
            if len(names) >= 2:
                found.append((node.lineno, names))
    return found


def repeated_choices(path: Path, source: str) -> list[str]:
    """The literal lists in ``source`` made only of one vocabulary's names."""
    return [
        f"{path}:{line}: {what} {sorted(names)}"
        for line, names in literal_lists(source)
        for what, vocabulary in VOCABULARIES.items()
        if names <= vocabulary and (path, names) not in ALLOWED
    ]


def test_a_copied_list_is_found() -> None:
    source = 'CHOICES = ["", "rrf", "weighted"]\nOTHER = ("markdown", "rst", "xml")\nF = ("xml", "plain")\n'
    assert [r.split(":")[1] for r in repeated_choices(Path("x.py"), source)] == ["1", "3"]
    assert repeated_choices(Path("x.py"), 'X = ("rrf", "vote")\n') != []


def test_choices_are_written_out_only_in_the_model() -> None:
    offenders = []
    for folder in ("tributary", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative != OWNER:
                offenders += repeated_choices(relative, path.read_text(encoding="utf-8"))
    assert offenders == []


def test_the_pipeline_implements_exactly_the_named_strategies() -> None:
    assert tuple(STRATEGIES) == model.FUSION_STRATEGIES
    assert set(model.RRF_K_STRATEGIES) <= set(model.FUSION_STRATEGIES)
    assert tuple(f.value for f in model.ContextFormat) == model.CONTEXT_FORMATS
