"""The JSON codec round-trips the data model exactly, and rejects data of the wrong shape."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from tributary.engine.cache.codec import (
    CodecError,
    from_jsonable,
    hit_from_dict,
    hits_from_list,
    hits_to_list,
    response_from_dict,
    to_jsonable,
)
from tributary.engine.model import (
    AssembledContext,
    ContextChunk,
    ContextFormat,
    DedupGroup,
    DedupReason,
    GroupMember,
    Hints,
    Hit,
    Metrics,
    RouteDecision,
    ScoreParts,
    SearchRequest,
    SearchResponse,
    SourceReport,
    SourceStatus,
    TaskType,
)


def make_hit(n: int, source: str = "files", **extra: object) -> Hit:
    parts = ScoreParts()
    parts.add("rrf", 0.016 / n, raw=float(n))
    parts.add("reputation", 0.1)
    hit = Hit(
        id=f"h{n}",
        source=source,
        tool="search_code",
        title=f"def thing_{n}()",
        content=f"def thing_{n}():\n    return {n}  # ünïcode ✓",
        path=f"src/mod{n}.py",
        start_line=n,
        end_line=n + 3,
        timestamp=datetime(2026, 1, n, 12, 30, tzinfo=timezone(timedelta(hours=2))),
        source_score=0.5 + n / 10,
        source_rank=n,
        priority=0.8,
        tokens=12 * n,
        metadata={"language": "python", "nested": {"k": [1, 2]}},
        score=parts.total,
        parts=parts,
    )
    for key, value in extra.items():
        setattr(hit, key, value)
    return hit


def make_response() -> SearchResponse:
    hits = [make_hit(1), make_hit(2, "tasks"), make_hit(3, uri="https://x/y", path=None)]
    duplicate = make_hit(4, "web")
    request = SearchRequest(
        query="how is  the cache\tinvalidated",
        task_type=TaskType.REVIEW,
        top_k=10,
        sources=["files", "tasks"],
        strategy="composite",
        strategy_params={"k": 60},
        source_weights={"files": 1.5},
        format=ContextFormat.XML,
        hints=Hints(related_files=["a.py"], language="python"),
    )
    return SearchResponse(
        request=request,
        hits=hits,
        groups=[
            DedupGroup(kept=hits[0], members=[GroupMember(duplicate, DedupReason.FUZZY, 0.87)])
        ],
        sources=[
            SourceReport("files", SourceStatus.OK, 12.5, 2, 30, tool="search_code"),
            SourceReport("web", SourceStatus.TIMEOUT, 3000.0, error="timed out", weight=0.5),
        ],
        route=RouteDecision(
            matched_rules=["code"], servers=["files"], skipped={"web": "rule"}, fallback=False
        ),
        context=AssembledContext(
            text="<context/>",
            chunks=[ContextChunk("h1", "files", "src/mod1.py:1-4", 0.9, "def", 3, "truncated")],
            token_count=3,
            format=ContextFormat.XML,
            budget=7000,
            dropped=1,
        ),
        metrics=Metrics(
            total_ms=41.2,
            stage_ms={"fuse": 0.4},
            raw_hits=5,
            unique_hits=4,
            tokens_total=72,
            tokens_per_source={"files": 36},
            budget_utilisation=0.01,
            cache_hits=1,
            cache_lookups=3,
        ),
        strategy="composite",
    )


def test_response_round_trips_through_json() -> None:
    response = make_response()
    text = json.dumps(to_jsonable(response))
    back = response_from_dict(json.loads(text))
    assert back == response
    assert back.hits[0].timestamp == response.hits[0].timestamp
    assert back.hits[0].timestamp is not None and back.hits[0].timestamp.utcoffset() == timedelta(
        hours=2
    )
    assert isinstance(back.request.task_type, TaskType)
    assert back.sources[1].status is SourceStatus.TIMEOUT
    assert back.groups[0].members[0].reason is DedupReason.FUZZY
    assert back.metrics.dedup_rate == pytest.approx(0.2)
    # The kept hit is the ranked hit object itself, as before encoding.
    assert back.groups[0].kept is back.hits[0]
    assert back.group_of("h1") is back.groups[0]


def test_jsonable_form_is_plain_json() -> None:
    data = to_jsonable(make_response())
    assert data["request"]["task_type"] == "review"
    assert data["hits"][0]["timestamp"] == "2026-01-01T12:30:00+02:00"
    assert data["sources"][0]["status"] == "ok"
    assert json.loads(json.dumps(data)) == data


def test_hits_round_trip_as_a_list() -> None:
    hits = [make_hit(1), make_hit(2, timestamp=None, source_score=None)]
    assert hits_from_list(json.loads(json.dumps(hits_to_list(hits)))) == hits


def test_unknown_keys_are_ignored_and_missing_keys_defaulted() -> None:
    hit = hit_from_dict(
        {"id": "x", "source": "s", "tool": "t", "title": "T", "content": "C", "future": 1}
    )
    assert hit == Hit(id="x", source="s", tool="t", title="T", content="C")
    request = from_jsonable(SearchRequest, {"query": "q"})
    assert request.query == "q" and request.top_k == 30


@pytest.mark.parametrize(
    "bad",
    [
        {"id": "x", "source": "s", "tool": "t", "title": "T", "content": 5},
        {"id": "x", "source": "s", "tool": "t", "title": "T", "content": "C", "tokens": "many"},
        {"id": "x", "source": "s", "tool": "t", "title": "T", "content": "C", "tokens": 1.5},
        {"id": "x", "source": "s", "tool": "t", "title": "T", "content": "C", "timestamp": 3},
        {"id": "x", "source": "s", "tool": "t", "title": "T", "content": "C", "parts": []},
    ],
)
def test_wrong_shapes_raise_codec_error(bad: dict[str, object]) -> None:
    with pytest.raises(CodecError):
        hit_from_dict(bad)


def test_a_missing_required_field_is_an_error() -> None:
    with pytest.raises(TypeError):
        hit_from_dict({"id": "x"})


def test_unknown_enum_value_is_an_error() -> None:
    with pytest.raises(ValueError):
        from_jsonable(SourceStatus, "exploded")


@dataclass
class Other:
    when: datetime
    path: Path
    blob: bytes
    tags: frozenset[str]
    pair: tuple[int, str]
    rest: tuple[float, ...] = ()
    maybe: int | str | None = None
    nested: list[dict[str, Other]] = field(default_factory=list)


def test_general_dataclasses_round_trip() -> None:
    leaf = Other(
        datetime(2026, 5, 1, tzinfo=UTC), Path("/a/b"), b"\x00\xff", frozenset({"b", "a"}), (1, "x")
    )
    obj = Other(
        datetime(2026, 5, 2),
        Path("rel"),
        b"",
        frozenset(),
        (2, "y"),
        (0.5, 1.0),
        "text",
        [{"k": leaf}],
    )
    data = json.loads(json.dumps(to_jsonable(obj)))
    assert data["tags"] == [] and data["nested"][0]["k"]["tags"] == ["a", "b"]
    assert from_jsonable(Other, data) == obj


def test_values_of_unknown_types_become_text() -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd!"

    assert to_jsonable({"x": Odd(), 3: {1, 2}}) == {"x": "odd!", "3": [1, 2]}
