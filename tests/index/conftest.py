"""Fixtures for the index tests (helpers live in index_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.index.index_helpers import HashingEmbedder, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return tmp_path / "indexes"


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()
