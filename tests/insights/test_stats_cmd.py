"""``tributary stats``: the summary table, JSON, recent searches, reputation reset."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tributary.engine.cli import stats_cmd
from tributary.engine.insights.reputation import ReputationStore
from tributary.engine.insights.store import QueryLog
from tributary.engine.model import (
    Metrics,
    SearchRequest,
    SearchResponse,
    SourceReport,
    SourceStatus,
)


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="tributary")
    stats_cmd.register(parser.add_subparsers())
    args = parser.parse_args(["stats", *argv])
    status: int = args.func(args)
    return status


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path))
    return tmp_path


def seed(queries: int = 4) -> None:
    store = QueryLog.open()
    for i in range(queries):
        store.record(
            SearchResponse(
                request=SearchRequest(query=f"query \x1b[31m{i}"),
                sources=[
                    SourceReport("files", SourceStatus.OK, 20.0 + i, 3, 120),
                    SourceReport("web", SourceStatus.TIMEOUT if i == 0 else SourceStatus.OK, 300.0),
                ],
                metrics=Metrics(
                    total_ms=50.0 + i,
                    raw_hits=10,
                    unique_hits=7,
                    cache_lookups=2,
                    cache_hits=1,
                    budget_utilisation=0.8,
                    tokens_total=100,
                ),
                strategy="composite",
            )
        )
    store.close()
    reputation = ReputationStore.open()
    reputation.record(hit_id="h", source="files", useful=True)
    reputation.close()


def test_empty_history(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run() == 0
    assert "no searches recorded" in capsys.readouterr().out


def test_one_search_is_counted_in_the_singular(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(1)
    assert run() == 0
    assert capsys.readouterr().out.startswith("1 search, ")


def test_summary_table(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed()
    assert run("--since", "7d") == 0
    out = capsys.readouterr().out
    assert "4 searches" in out
    assert "50% hit rate (4/8 lookups)" in out
    assert "30% of raw hits folded" in out
    assert "80% utilisation" in out
    lines = {
        line.split()[0]: line for line in out.splitlines() if line.startswith(("files", "web"))
    }
    assert "0.60 (1+/0-)" in lines["files"]
    assert "25%" in lines["web"]  # one timeout in four calls
    assert "0.50" in lines["web"]


def test_summary_json(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed()
    assert run("--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["queries"] == 4
    assert data["sources"]["web"]["timeout_rate"] == 0.25
    assert data["reputation"]["files"]["reputation"] == pytest.approx(0.6)
    assert data["query_log_file"] == str(home / "data" / "insights.sqlite")


def test_recent_escapes_control_characters(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(3)
    assert run("--recent", "2") == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "query \\x1b[31m2" in out and "query \\x1b[31m0" not in out
    assert run("--recent", "5", "--json") == 0
    assert len(json.loads(capsys.readouterr().out)) == 3


def test_reset_reputation(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(1)
    assert run("--reset-reputation", "web") == 0
    assert "0 feedback events" in capsys.readouterr().out
    assert run("--reset-reputation") == 0
    assert "every source: 1 feedback event forgotten" in capsys.readouterr().out
    store = ReputationStore.open()
    assert store.all_reputations() == {}
    store.close()


def test_bad_since_is_a_usage_error(home: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run("--since", "yesterday-ish")
    assert exit_info.value.code == 2
