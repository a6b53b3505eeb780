"""Each source's line under a search: what it did, and the time only of an answer."""

from __future__ import annotations

from tributary.engine.cli.render import source_line
from tributary.engine.model import SourceReport, SourceStatus


def test_a_source_not_asked_shows_no_time() -> None:
    tripped = SourceReport(name="dead", status=SourceStatus.CIRCUIT_OPEN, latency_ms=0.0, error="circuit open")
    assert source_line(tripped) == "dead: circuit open — circuit open"
    answered = SourceReport(name="files", status=SourceStatus.OK, latency_ms=12.0, hits=3)
    assert source_line(answered) == "files: ok, 12 ms, 3 hits"


def test_one_hit_is_one_hit() -> None:
    one = SourceReport(name="git", status=SourceStatus.OK, latency_ms=13.0, hits=1)
    assert source_line(one) == "git: ok, 13 ms, 1 hit"
