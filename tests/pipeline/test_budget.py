"""Token budget: allocation, limits never exceeded, and each overflow treatment."""

from __future__ import annotations

import itertools

import pytest

from tests.pipeline.helpers import FUNC_A, FUNC_B, hit
from tributary.engine.model import ContextFormat, TaskType
from tributary.engine.pipeline.budget import ROLE_PRIORITIES, allocate, default_role, plan_budget
from tributary.engine.pipeline.compress import outline
from tributary.engine.pipeline.limits import clamp_top_k
from tributary.engine.pipeline.overflow import GAP, compress, fit, summarise, truncate
from tributary.engine.pipeline.tokens import clear_cache, count_tokens, fill_tokens, get_tokenizer

MODULE = '''"""Helpers for reading and writing the configuration."""

import os


def load(path):
    """Load the file at path and return its parsed content."""
    with open(path) as handle:
        data = handle.read()
    return parse(data)


@cached
def parse(text, *, strict=False):
    """Parse text into a dict.

    Raises ValueError on malformed input when strict.
    """
    result = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        result[key.strip()] = value.strip()
    return result


class Store:
    """Keeps parsed configs by path."""

    def __init__(self, root):
        self.root = root
        self.items = {}

    def get(self, name):
        return self.items.get(name)
'''

PROSE = (
    "Tributary asks many sources at once. "
    "The cache keeps answers for five minutes, and entries expire after the ttl. "
    "Routing rules decide which servers are asked. "
    "A stale cache entry is refreshed when the indexed repository changes. "
    "The window shows each source's latency."
)


def test_top_k_clamped() -> None:
    assert clamp_top_k(None) == 30
    assert clamp_top_k(0) == 30
    assert clamp_top_k(5) == 5  # a request's own top_k is honoured
    assert clamp_top_k(55) == 55
    assert clamp_top_k(1000) == 100


def test_default_roles_by_name() -> None:
    assert default_role("files") == "code"
    assert default_role("tasks") == "tasks"
    assert default_role("mcp-server-git") == "tasks"
    assert default_role("tavily-search") == "web"
    assert default_role("memory") == "memory"
    assert default_role("context7") == "docs"


def test_allocation_follows_the_task_type_table() -> None:
    shares = allocate(["files", "tasks", "context7", "web"], TaskType.IMPLEMENTATION, 9000)
    assert shares == {"files": 4000, "tasks": 2000, "context7": 2000, "web": 1000}
    docs = allocate(["files", "web"], TaskType.DOCUMENTATION, 5000)
    assert docs == {"files": 2000, "web": 3000}
    custom = allocate(["a", "b"], TaskType.REVIEW, 500, roles={"a": "code", "b": "memory"})
    assert custom == {"a": 444, "b": 55}
    assert set(ROLE_PRIORITIES) == set(TaskType)


def test_truncate_cuts_at_definition_boundaries() -> None:
    limit = count_tokens(MODULE) // 2
    result = truncate(MODULE, limit, code=True)
    assert result is not None and count_tokens(result) <= limit
    body, marker = result.rsplit("\n", 1)
    assert marker.startswith(GAP)
    assert MODULE.startswith(body)  # a prefix of whole lines
    assert body.rstrip().endswith("return parse(data)")  # ends where a function ends


@pytest.mark.parametrize("fraction", [2, 3, 5])
def test_truncated_text_is_priced_exactly_without_a_recount(fraction: int) -> None:
    """truncate records its result's count from the lines' counts; a fresh count agrees."""
    text = MODULE + "\n# caf\u00e9 \u00fcber \U0001f600 [CLS]\n" + MODULE.replace("parse", "Parse\u00e9")
    result = truncate(text, count_tokens(text) // fraction, code=True)
    assert result is not None
    remembered = count_tokens(result)
    clear_cache(words=True)
    assert count_tokens(result) == remembered == len(get_tokenizer().encode(result, add_special_tokens=False).ids)


def test_truncate_prose_at_paragraphs_and_never_mid_line() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "words " * 30 for i in range(6))
    limit = count_tokens(text) // 3
    result = truncate(text, limit, code=False)
    assert result is not None and count_tokens(result) <= limit
    kept = result.rsplit("\n", 1)[0].split("\n")
    assert all(line in text.split("\n") for line in kept)
    assert kept[-1].startswith("Paragraph") or kept[-1].strip().endswith("words")


def test_truncate_falls_back_to_lines_when_one_block_is_too_big() -> None:
    long_func = "def f():\n" + "\n".join(f"    x{i} = {i}" for i in range(200))
    result = truncate(long_func, 60, code=True)
    assert result is not None and count_tokens(result) <= 60
    assert all(line in long_func.split("\n") for line in result.split("\n")[:-1])


def test_compress_keeps_signatures_and_docstrings_with_tree_sitter() -> None:
    skeleton = outline(MODULE, "conf.py")
    assert skeleton is not None
    for kept in ('"""Helpers for reading', "def load(path):", '"""Load the file', "@cached",
                 "def parse(text, *, strict=False):", "Raises ValueError", "class Store:",
                 "def __init__(self, root):", "def get(self, name):"):
        assert kept in skeleton
    for dropped in ("handle.read()", "line.partition", "self.items = {}"):
        assert dropped not in skeleton
    assert count_tokens(skeleton) < count_tokens(MODULE) * 0.7


def test_compress_regex_fallback_for_other_languages() -> None:
    go = (
        "// Open opens the store.\nfunc Open(path string) (*Store, error) {\n\tf, err := os.Open(path)\n"
        "\treturn &Store{f: f}, err\n}\n\n// Close closes it.\nfunc (s *Store) Close() error {\n\treturn s.f.Close()\n}\n"
    )
    skeleton = outline(go, "store.go")
    assert skeleton is not None
    assert "func Open(path string) (*Store, error) {" in skeleton and "// Open opens the store." in skeleton
    assert "os.Open(path)" not in skeleton


def test_compress_to_a_limit_and_prose_goes_to_summary() -> None:
    result = compress(MODULE, 40, "conf.py", "parse")
    assert result is not None and count_tokens(result) <= 40
    summary = compress(PROSE, 30, "notes.md", "cache ttl")
    assert summary is not None and "cache" in summary


def test_summarise_picks_query_sentences_in_original_order() -> None:
    result = summarise(PROSE, 40, "cache expire ttl")
    assert result is not None and count_tokens(result) <= 40
    kept = [u for u in result.split("\n") if u != GAP]
    assert kept[0].startswith("The cache keeps answers")
    assert all(PROSE.index(a) < PROSE.index(b) for a, b in itertools.pairwise(kept))
    assert "Routing rules" not in result


def test_fit_dispatch() -> None:
    assert fit(MODULE, 50, "drop", "a.py", "q") is None
    assert fit(MODULE, 50, "truncate", "a.py", "q")[1] == "truncated"  # type: ignore[index]
    assert fit(MODULE, 50, "compress", "a.py", "q")[1] == "compressed"  # type: ignore[index]
    assert fit(MODULE, 50, "summarise", "a.py", "parse")[1] == "summarised"  # type: ignore[index]
    with pytest.raises(ValueError):
        fit(MODULE, 50, "explode", "a.py", "q")


def _ranked() -> list:  # type: ignore[type-arg]
    hits = [
        hit("files", 1, MODULE, path="conf.py", lines=(1, 40)),
        hit("tasks", 1, PROSE),
        hit("files", 2, FUNC_A, path="load.py", lines=(1, 9)),
        hit("context7", 1, FUNC_B, path="table.py", lines=(1, 9)),
        hit("web", 1, PROSE * 4, uri="https://example.org/a"),
    ]
    fill_tokens(hits)
    for i, h in enumerate(hits):
        h.score = 1.0 - i / 10
    return hits


@pytest.mark.parametrize("overflow", ["drop", "truncate", "compress", "summarise"])
@pytest.mark.parametrize("budget", [60, 150, 400, 5000])
def test_budget_never_exceeded(overflow: str, budget: int) -> None:
    for fmt in ContextFormat:
        plan = plan_budget(_ranked(), budget=budget, overflow=overflow, fmt=fmt, query="parse cache")
        assert plan.used <= budget
        assert sum(s.tokens for s in plan.selected) <= budget
        assert len(plan.selected) + len(plan.dropped) == 5
        assert [s.hit.score for s in plan.selected] == sorted((s.hit.score for s in plan.selected), reverse=True)
        assert sum(plan.tokens_per_source.values()) == sum(s.tokens for s in plan.selected)


def test_large_budget_takes_everything_whole() -> None:
    plan = plan_budget(_ranked(), budget=100_000, overflow="truncate")
    assert len(plan.selected) == 5 and all(s.treatment == "full" for s in plan.selected)
    assert plan.utilisation < 0.1


def test_overflow_strategies_differ_under_pressure() -> None:
    dropped = plan_budget(_ranked(), budget=150, overflow="drop")
    assert all(s.treatment == "full" for s in dropped.selected) and dropped.dropped
    truncated = plan_budget(_ranked(), budget=150, overflow="truncate")
    assert any(s.treatment == "truncated" for s in truncated.selected)
    assert truncated.utilisation > dropped.utilisation


def test_compress_shrinks_large_code_even_when_it_would_fit() -> None:
    big = "\n\n".join(MODULE.replace("load", f"load{i}").replace("parse", f"parse{i}") for i in range(4))
    hits = [hit("files", 1, big, path="big.py", lines=(1, 200))]
    fill_tokens(hits)
    plan = plan_budget(hits, budget=hits[0].tokens * 2, overflow="compress", query="parse")
    assert plan.selected[0].treatment == "compressed"
    assert "def parse0(text, *, strict=False):" in plan.selected[0].body
    assert plan.selected[0].body_tokens < hits[0].tokens
