"""The version is written once, in pyproject.toml; everything else reads it."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tributary.engine.sources.client import CLIENT_INFO
from tributary.engine.version import package_version

ROOT = Path(__file__).resolve().parents[1]


def test_the_mcp_client_announces_the_package_version() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert package_version() == declared
    assert CLIENT_INFO.version == declared
