"""The version is written once, in pyproject.toml; everything else reads it."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tributary.engine.sources.client import CLIENT_INFO
from tributary.engine.version import code_identity, package_version, sources_digest

ROOT = Path(__file__).resolve().parents[1]


def test_the_mcp_client_announces_the_package_version() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert package_version() == declared
    assert CLIENT_INFO.version == declared


def test_cached_answers_carry_the_code_that_made_them(tmp_path: Path) -> None:
    """A development tree keeps its version across edits that rank differently: the
    identity its cache keys hold follows the sources."""
    assert code_identity().startswith(package_version() + "+")
    (tmp_path / "pipeline").mkdir()
    source = tmp_path / "pipeline" / "rank.py"
    source.write_text("WEIGHT = 1\n", encoding="utf-8")
    before = sources_digest(tmp_path)
    assert sources_digest(tmp_path) == before
    source.write_text("WEIGHT = 2\n", encoding="utf-8")
    edited = sources_digest(tmp_path)
    assert edited != before
    source.rename(tmp_path / "pipeline" / "order.py")
    assert sources_digest(tmp_path) != edited
