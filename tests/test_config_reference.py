"""docs/configuration.md is generated from the config schema and kept up to date."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tributary.engine.config import schema

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_reference", ROOT / "scripts" / "config_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("config_reference", module)
    spec.loader.exec_module(module)
    return module


def test_the_reference_is_up_to_date() -> None:
    script = _script()
    assert (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8") == script.render(), (
        "docs/configuration.md is out of date: run scripts/config_reference.py"
    )


def test_every_key_of_the_schema_is_described() -> None:
    script = _script()
    comments = script.field_comments((ROOT / "tributary" / "engine" / "config" / "schema.py").read_text(encoding="utf-8"))
    documented = {cls for _, cls, _ in script.SECTIONS} | {schema.Config}
    undescribed = []
    for cls in documented - {schema.Config}:
        for spec in dataclasses.fields(cls):
            key = f"{cls.__name__}.{spec.name}"
            if key not in script.DESCRIPTIONS and key not in comments:
                undescribed.append(key)
    sections = [f for f in dataclasses.fields(schema.Config) if f.name != "path"]
    missing_sections = [
        f.name for f in sections
        if not any(path.split(".")[0].split("[")[0] == f.name for path, _, _ in script.SECTIONS)
    ]
    assert undescribed == [] and missing_sections == []


def test_the_reference_reads_field_comments() -> None:
    script = _script()
    source = "class A:\n    # above\n    x: int = 1\n    y: str = ''  # beside\n"
    assert script.field_comments(source) == {"A.x": "above", "A.y": "beside"}
