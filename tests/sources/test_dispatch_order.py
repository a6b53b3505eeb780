"""Fan-out dispatch order: slowest expected source first (tributary.engine.sources.latency)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sources.helpers import Recorder, memory_fake
from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SourceStatus
from tributary.engine.sources import SourcePool
from tributary.engine.sources.fanout import gather_all
from tributary.engine.sources.latency import LatencyEstimate, dispatch_order
from tributary.engine.sources.memory import memory_connector
from tributary.engine.sources.state import SourceOutcome


def test_estimate_is_an_ewma_and_starts_empty() -> None:
    est = LatencyEstimate(alpha=0.5)
    assert est.ms is None and est.samples == 0
    est.add(100.0)
    assert est.ms == 100.0  # the first sample is the estimate
    est.add(50.0)
    assert est.ms == 75.0
    est.add(-3.0)  # a clock step backwards never makes a negative latency
    assert est.ms == 37.5 and est.samples == 3
    with pytest.raises(ValueError):
        LatencyEstimate(alpha=0.0)


def test_order_is_slowest_first_with_unknown_sources_first_in_given_order() -> None:
    known = {"fast": 5.0, "slow": 90.0, "mid": 40.0, "mid2": 40.0}
    order = dispatch_order(["fast", "new1", "mid", "slow", "new2", "mid2"], known.get)
    assert order == ["new1", "new2", "slow", "mid", "mid2", "fast"]


def test_no_history_keeps_the_given_order() -> None:
    names = ["c", "a", "b"]
    assert dispatch_order(names, lambda _name: None) == names


class _OrderPool:
    """Just enough of SourcePool for fan_out: records the order calls start in."""

    def __init__(self, expected: dict[str, float | None]) -> None:
        self._expected = expected
        self.started: list[str] = []

    def names(self) -> list[str]:
        return list(self._expected)

    def config(self, name: str) -> ServerConfig:
        return ServerConfig(name=name, command="unused")

    def dispatch_order(self, names: Any) -> list[str]:
        return dispatch_order(names, self._expected.get)

    async def call(self, name: str, query: str, *, top_k: int,
                   timeout: float | None = None, scope: object = None) -> SourceOutcome:
        self.started.append(name)
        return SourceOutcome(name, SourceStatus.OK, 1.0)


@pytest.mark.asyncio
async def test_fan_out_starts_calls_slowest_first_and_answers_in_names_order() -> None:
    pool = _OrderPool({"a": 10.0, "b": None, "c": 80.0, "d": 30.0})
    results = await gather_all(pool, ["a", "b", "c", "d", "zz"], "q", top_k=5)  # type: ignore[arg-type]
    assert pool.started == ["b", "c", "d", "a"]
    assert [r.name for r in results] == ["a", "b", "c", "d", "zz"]
    assert results[-1].report.error == "unknown server"


@pytest.mark.asyncio
async def test_fan_out_without_history_starts_calls_in_config_order() -> None:
    pool = _OrderPool({"x": None, "y": None, "z": None})
    await gather_all(pool, ["z", "x", "y"], "q", top_k=5)  # type: ignore[arg-type]
    assert pool.started == ["z", "x", "y"]


def _pool(servers: dict[str, Any], **configs: ServerConfig) -> SourcePool:
    def factory(config: ServerConfig) -> Any:
        made = servers[config.name]
        return made() if callable(made) else made

    cfgs = [configs.get(n, ServerConfig(name=n, command="unused")) for n in servers]
    return SourcePool(cfgs, connector=memory_connector(factory))


@pytest.mark.asyncio
async def test_pool_learns_latencies_from_answers_and_timeouts_not_errors() -> None:
    hung = Recorder(hang=True)
    pool = _pool(
        {"quick": lambda: memory_fake("quick"),
         "slow": lambda: memory_fake("slow", "--delay", "0.3"),
         "broken": lambda: memory_fake("broken", "--mode", "error"),
         "hung": hung.server,
         "idle": lambda: memory_fake("idle")},
        hung=ServerConfig(name="hung", command="x", timeout=1.5),
    )
    try:
        assert pool.dispatch_order(pool.names()) == pool.names()  # no history: config order
        first = await gather_all(pool, ["quick", "slow"], "q", top_k=3)
        assert all(r.ok for r in first)
        # Those calls waited for start-up: they say nothing about query latency.
        assert pool.state("quick").latency_ms is None and pool.state("slow").latency_ms is None
        await pool.warm_up()
        results = await gather_all(pool, ["quick", "slow", "broken", "hung"], "q", top_k=3)
        assert [r.report.status for r in results] == [
            SourceStatus.OK, SourceStatus.OK, SourceStatus.ERROR, SourceStatus.TIMEOUT]
        quick, slow = pool.state("quick").latency_ms, pool.state("slow").latency_ms
        hung_ms = pool.state("hung").latency_ms
        assert quick is not None and slow is not None and hung_ms is not None
        assert slow >= 300.0 and hung_ms >= 1500.0
        assert pool.state("broken").latency_ms is None  # a fast failure says nothing
        # Never-asked and failed sources first (config order), then slowest first.
        assert pool.dispatch_order(pool.names()) == ["broken", "idle", "hung", "slow", "quick"]
    finally:
        await pool.aclose()
