"""The whole pipeline, and properties that hold for any input (hypothesis)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.pipeline.helpers import FUNC_A, FUNC_B, hit
from tributary.engine.config.schema import BudgetConfig, DedupConfig, FusionConfig
from tributary.engine.model import ContextFormat, Hit, Metrics, SearchRequest
from tributary.engine.pipeline import run_pipeline
from tributary.engine.pipeline.dedup import deduplicate
from tributary.engine.pipeline.tokens import count_tokens


def _sources() -> dict[str, list[Hit]]:
    lines = [f"    value_{i} = compute({i})  # step {i}" for i in range(1, 81)]
    return {
        "files": [
            hit("files", 1, FUNC_A, path="conf.py", lines=(1, 9)),
            hit("files", 2, "\n".join(lines[0:40]), path="big.py", lines=(1, 40)),
        ],
        "serena": [
            hit("serena", 1, "\n".join(lines[30:80]), path="big.py", lines=(31, 80)),
            hit("serena", 2, FUNC_A.replace("    ", "  "), path="conf.py", lines=(1, 9)),
        ],
        "tasks": [hit("tasks", 1, "Config parsing fails on empty files; see conf.py.")],
        "web": [hit("web", 1, FUNC_B, uri="https://example.org/table")],
    }


def test_run_pipeline_end_to_end() -> None:
    request = SearchRequest(query="parse config", top_k=5, max_tokens=3000, reserved_tokens=500)
    result = run_pipeline(_sources(), request, fusion=FusionConfig(), dedup=DedupConfig(), budget=BudgetConfig())
    assert result.raw_hits == 6 and result.unique_hits == 4
    assert result.top_k == 5  # a request's own top_k is honoured
    assert result.strategy == "rrf"
    assert set(result.stage_ms) == {"normalise", "dedup", "fuse", "merge", "confidence", "tokens", "budget", "assemble"}
    assert result.hits[0].path == "conf.py"  # two sources agree on it
    big = next(h for h in result.hits if h.path == "big.py")
    assert (big.start_line, big.end_line) == (1, 80)  # overlapping chunks merged for display
    assert result.context is not None
    assert result.context.token_count <= 2500 == result.context.budget
    assert sum(result.tokens_per_source.values()) <= result.context.token_count
    assert all(h.tokens > 0 for h in result.hits)
    metrics = Metrics()
    result.fill_metrics(metrics)
    assert metrics.raw_hits == 6 and abs(metrics.dedup_rate - 2 / 6) < 1e-9
    assert metrics.budget_utilisation == result.context.utilisation


def test_request_selects_strategy_format_and_no_assembly() -> None:
    request = SearchRequest(query="parse", strategy="vote", format=ContextFormat.XML)
    result = run_pipeline(_sources(), request)
    assert result.strategy == "vote" and result.hits[0].parts.parts["votes"] == 2.0
    assert result.context is not None
    ET.fromstring(result.context.text)
    bare = run_pipeline(_sources(), SearchRequest(query="parse", assemble=False, dedup=False))
    assert bare.context is None and bare.unique_hits == bare.raw_hits == 6 and bare.groups == []


def test_hits_without_rank_get_their_position() -> None:
    a, b = hit("x", 0, "first answer text"), hit("x", 0, "second answer text")
    run_pipeline({"x": [a, b]}, SearchRequest(query="answer"))
    assert (a.source_rank, b.source_rank) == (1, 2)


_texts = st.sampled_from([FUNC_A, FUNC_B, FUNC_A.replace("    ", "  "), "short", "", "a b c " * 50,
                          "]]> `````` <x/> \x00 é 漢字"])


@st.composite
def _hit_lists(draw: st.DrawFn) -> dict[str, list[Hit]]:
    sources: dict[str, list[Hit]] = {}
    for s in range(draw(st.integers(1, 4))):
        name = f"src{s}"
        items = []
        for rank in range(1, draw(st.integers(0, 6)) + 1):
            text = draw(_texts) + draw(st.text(max_size=30))
            start = draw(st.integers(1, 30))
            with_path = draw(st.booleans())
            items.append(hit(name, rank, text, path="f.py" if with_path else None,
                             lines=(start, start + text.count("\n")) if with_path else None,
                             score=draw(st.none() | st.floats(0, 1))))
        sources[name] = items
    return sources


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_hit_lists(), st.integers(0, 600), st.sampled_from(["drop", "truncate", "compress", "summarise"]),
       st.sampled_from(list(ContextFormat)), st.sampled_from(["rrf", "weighted", "composite", "cascade", "vote"]))
def test_any_hits_respect_the_budget(
    sources: dict[str, list[Hit]], budget: int, overflow: str, fmt: ContextFormat, strategy: str
) -> None:
    request = SearchRequest(query="parse config", max_tokens=budget, reserved_tokens=0, format=fmt, strategy=strategy)
    result = run_pipeline(sources, request, budget=BudgetConfig(overflow=overflow))
    assert result.context is not None
    assert result.context.token_count <= budget
    assert count_tokens(result.context.text) == result.context.token_count
    if fmt is ContextFormat.XML and result.context.text:
        ET.fromstring(result.context.text)


@settings(max_examples=40, deadline=None)
@given(_hit_lists())
def test_groups_partition_any_input(sources: dict[str, list[Hit]]) -> None:
    hits = [h for items in sources.values() for h in items]
    result = deduplicate(hits)
    ids = [h.id for h in result.hits] + [m.hit.id for g in result.groups for m in g.members]
    assert sorted(ids) == sorted(h.id for h in hits)
    assert all(g.members for g in result.groups)
    assert {g.kept.id for g in result.groups} <= {h.id for h in result.hits}


def test_the_code_represents_a_file_unless_the_question_is_about_the_past() -> None:
    why = hit("tasks", 1, "Make config parsing strict about unknown keys (2024-05-01)", path="engine/config.py")
    chunk = hit("files", 2, FUNC_A, path="engine/config.py", lines=(10, 30))
    other = hit("files", 1, "config = parse_config(path)\nreturn config\n", path="tributary/app/main.py", lines=(3, 4))

    def first(query: str) -> Hit:
        hits = {"tasks": [replace(why)], "files": [replace(other), replace(chunk)]}
        return run_pipeline(hits, SearchRequest(query=query, assemble=False)).hits[0]

    top = first("parse_config")
    assert top.id == chunk.id and "defines" in top.parts.parts
    # any other question is answered by the code too; the history that agrees is evidence
    question = first("why is config parsing strict")
    assert question.id == chunk.id and "rrf:tasks" in question.parts.parts
    # a question about the past is answered by the history
    assert first("when did config parsing become strict").id == why.id
