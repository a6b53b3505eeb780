from __future__ import annotations

import pytest

from tests.insights.helpers import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()
