"""Feedback moves a source's reputation (a bounded Beta posterior mean), decays, resets."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlean

from tests.insights.helpers import Clock
from tributary.engine.insights.reputation import BetaPrior, ReputationStore
from tributary.engine.insights.store import QueryLog

DAY = 86400.0
SECRET = "sk-proj-abcdef0123456789"


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> Iterator[ReputationStore]:
    s = ReputationStore(tmp_path / "history.sqlite", clock=clock, half_life_days=None)
    yield s
    s.close()


def vote(store: ReputationStore, source: str, useful: bool, n: int = 1) -> None:
    for i in range(n):
        store.record(hit_id=f"{source}-{i}", source=source, useful=useful, query="q")


def test_unrated_sources_sit_at_the_prior_mean(store: ReputationStore) -> None:
    assert store.reputation("files") == 0.5
    assert store.default == 0.5
    assert store.all_reputations() == {}


def test_feedback_moves_reputation_as_a_beta_posterior(store: ReputationStore) -> None:
    vote(store, "files", True)
    assert store.reputation("files") == pytest.approx(3 / 5)
    vote(store, "web", False)
    assert store.reputation("web") == pytest.approx(2 / 5)
    vote(store, "files", True, 3)
    vote(store, "files", False)
    # Beta(2,2) + 4 useful + 1 not: (2 + 4) / (4 + 5)
    assert store.reputation("files") == pytest.approx(6 / 9)
    assert store.all_reputations() == pytest.approx({"files": 6 / 9, "web": 2 / 5})
    standing = store.standings()["files"]
    assert (standing.useful, standing.not_useful, standing.votes) == (4, 1, 5)


def test_reputation_is_bounded(tmp_path: Path) -> None:
    store = ReputationStore(tmp_path / "h.sqlite", floor=0.1, ceiling=0.9, half_life_days=None)
    vote(store, "great", True, 200)
    vote(store, "awful", False, 200)
    assert store.reputation("great") == 0.9
    assert store.reputation("awful") == 0.1
    store.close()


def test_a_stronger_prior_moves_slower(tmp_path: Path) -> None:
    store = ReputationStore(tmp_path / "h.sqlite", prior=BetaPrior(10, 10), half_life_days=None)
    vote(store, "s", True)
    assert store.reputation("s") == pytest.approx(11 / 21)
    store.close()
    with pytest.raises(ValueError):
        BetaPrior(0, 1)


def test_old_feedback_fades_with_the_half_life(tmp_path: Path, clock: Clock) -> None:
    store = ReputationStore(tmp_path / "h.sqlite", clock=clock, half_life_days=30)
    vote(store, "web", False, 4)
    fresh = store.reputation("web")
    assert fresh == pytest.approx(2 / 8)
    clock.now += 30 * DAY  # each old vote now weighs 1/2
    assert store.reputation("web") == pytest.approx(2 / (4 + 2))
    vote(store, "web", True, 2)
    assert store.reputation("web") == pytest.approx((2 + 2) / (4 + 2 + 2))
    clock.now += 3650 * DAY  # ten years on, the prior is back in charge
    assert store.reputation("web") == pytest.approx(0.5, abs=1e-6)
    store.close()


def test_reset_one_source_or_all(store: ReputationStore) -> None:
    vote(store, "files", True, 3)
    vote(store, "web", False, 2)
    assert store.reset("web") == 2
    assert store.reputation("web") == 0.5
    assert store.reputation("files") > 0.5
    assert store.reset() == 3
    assert store.all_reputations() == {}


def test_events_are_kept_with_their_details(store: ReputationStore, clock: Clock) -> None:
    event = store.record(hit_id="h1", source="files", useful=True, query="how to cache")
    assert event.time == datetime.fromtimestamp(clock.now, UTC)
    store.record(hit_id="h2", source="web", useful=False, at=clock.now - 5)
    newest, oldest = store.events()
    assert (newest.hit_id, newest.source, newest.useful, newest.query) == ("h2", "web", False, None)
    assert (oldest.hit_id, oldest.query, oldest.useful) == ("h1", "how to cache", True)
    assert [e.hit_id for e in store.events("files")] == ["h1"]
    with pytest.raises(ValueError):
        store.record(hit_id="h", source="", useful=True)


def test_shares_the_history_file_and_persists(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    history = QueryLog(path)
    first = ReputationStore.open(path, half_life_days=None)
    vote(first, "tasks", True)
    first.close()
    again = ReputationStore(path, half_life_days=None)
    assert again.reputation("tasks") == pytest.approx(0.6)
    assert history.count() == 0
    again.close()
    history.close()


def test_feedback_queries_are_scrubbed_or_dropped(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    keep = ReputationStore(path, secrets=[SECRET])
    assert keep.record(hit_id="h", source="s", useful=True, query=f"x {SECRET}").query == "x ****"
    keep.close()
    omit = ReputationStore(path, redaction="omit", secrets=[SECRET])
    assert omit.record(hit_id="h", source="s", useful=True, query=f"x {SECRET}").query is None
    omit.close()
    conn = sqlean.connect(str(path))
    rows = conn.execute("SELECT * FROM feedback").fetchall()
    conn.close()
    assert SECRET not in repr(rows)


def test_bad_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        ReputationStore(tmp_path / "h.sqlite", floor=0.6, ceiling=0.4)
    with pytest.raises(ValueError):
        ReputationStore(tmp_path / "h.sqlite", half_life_days=0)
