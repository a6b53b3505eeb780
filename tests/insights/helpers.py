"""A settable clock for the insights stores' tests."""

from __future__ import annotations


class Clock:
    """Stands in for ``time.time``: returns ``now``, which a test moves on by hand."""

    def __init__(self) -> None:
        self.now = 1_763_000_000.0

    def __call__(self) -> float:
        return self.now
