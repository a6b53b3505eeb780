"""Fusion strategies: order and ScoreParts on hand-made inputs; hints; determinism."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.pipeline.helpers import FUNC_A, hit
from tributary.engine.config.schema import CompositeWeights, DedupConfig, FusionConfig
from tributary.engine.model import Hints, SearchRequest
from tributary.engine.pipeline.dedup import deduplicate
from tributary.engine.pipeline.definitions import definition_signal, first_definition
from tributary.engine.pipeline.fusion import STRATEGIES, FusionParams, fuse
from tributary.engine.pipeline.hints import mentioned_paths
from tributary.engine.pipeline.quality import domain_authority, recency_score, url_quality

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def test_registry_names_every_strategy() -> None:
    assert set(STRATEGIES) == {"rrf", "weighted", "composite", "cascade", "vote"}
    with pytest.raises(ValueError, match="unknown fusion strategy"):
        fuse([hit("a", 1, "x")], [], "bogus")


def test_rrf_scores_and_parts() -> None:
    a1, a2 = hit("a", 1, "alpha one"), hit("a", 2, "alpha two")
    b1 = hit("b", 1, "beta one")
    ranked = fuse([a2, b1, a1], [], "rrf", FusionParams(rrf_k=60))
    assert ranked[0].parts.parts == {"rrf:a": pytest.approx(1 / 61)} or ranked[0].parts.parts == {
        "rrf:b": pytest.approx(1 / 61)
    }
    # a1 and b1 tie at 1/61: the tie goes to source name order, deterministically
    assert [h.id for h in ranked] == [a1.id, b1.id, a2.id]
    assert a2.score == pytest.approx(1 / 62)
    assert a2.parts.raw == {"rrf:a": 2.0}


def test_a_file_name_match_counts_for_a_share_of_a_content_match() -> None:
    """server-filesystem's search_files put ``doc/markers.rst`` first for "xfail marker
    added dynamically is ignored" on its name alone, level with the code search's first
    chunk; a name-only match counts for NAME_ONLY_SHARE of its rank's value."""
    from tributary.engine.model import NAME_ONLY, NAME_ONLY_SHARE
    from tributary.engine.pipeline.confidence import source_views

    named = hit("docs", 1, "doc/markers.rst", path="doc/markers.rst")
    named.metadata[NAME_ONLY] = True
    code = hit("files", 1, "def evaluate_xfail_marks(item): ...", path="src/skipping.py")
    for strategy in ("rrf", "weighted"):
        ranked = fuse([named, code], [], strategy, FusionParams(rrf_k=60))
        assert [h.path for h in ranked] == ["src/skipping.py", "doc/markers.rst"], strategy
        assert named.score == pytest.approx(NAME_ONLY_SHARE * code.score), strategy
    assert source_views(named, None)[0].text() == "docs: rank 1 by its file name"
    assert source_views(code, None)[0].text() == "files: rank 1"
    # The code search's own mark for a file the question names is no name-only match.
    code.metadata["name_match"] = True
    fuse([named, code], [], "rrf", FusionParams(rrf_k=60))
    assert code.score == pytest.approx(1 / 61)


def test_a_marked_role_keeps_its_share_unless_another_source_found_it_unmarked() -> None:
    """A grep server's changelog ranked as high as its code: the engine marks what its
    file's role keeps (``ROLE_FACTOR``), and the fusion scales the score by it."""
    from tributary.engine.model import ROLE_FACTOR

    changelog = hit("rg", 1, "retry twice", path="CHANGES.rst")
    changelog.metadata[ROLE_FACTOR] = 0.5
    code = hit("rg", 2, "def retry(): ...", path="src/retry.py")
    ranked = fuse([changelog, code], [], "rrf", FusionParams(rrf_k=60))
    assert [h.path for h in ranked] == ["src/retry.py", "CHANGES.rst"]
    assert changelog.parts.parts["role"] == pytest.approx(-0.5 / 61)
    assert changelog.parts.raw["role"] == 0.5
    # The same file from a source that weighs roles itself (no mark): its part is not
    # scaled twice, the marked source's part is (a file-name search's rank 1 for a test
    # put it first for "why does echo strip ansi codes on windows").
    marked = hit("rg", 1, FUNC_A, path="tests/test_retry.py")
    marked.metadata[ROLE_FACTOR] = 0.7
    unmarked = hit("files", 1, FUNC_A.replace("    ", "  "), path="tests/test_retry.py")
    result = deduplicate([marked, unmarked])
    (kept,) = fuse(result.hits, result.groups, "rrf", FusionParams(rrf_k=60))
    assert kept.parts.parts["role"] == pytest.approx(-0.3 / 61)
    assert kept.score == pytest.approx(1 / 61 + 0.7 / 61)
    # A strategy without a part per source scales only what every source marked.
    result = deduplicate([marked, unmarked])
    (voted,) = fuse(result.hits, result.groups, "vote", FusionParams(rrf_k=60))
    assert "role" not in voted.parts.parts


def test_rrf_agreement_from_groups_raises_the_score() -> None:
    shared_a = hit("a", 3, FUNC_A)
    shared_b = hit("b", 3, FUNC_A.replace("    ", "  "))
    solo = hit("c", 1, "a different and unrelated answer text")
    result = deduplicate([shared_a, shared_b, solo])
    ranked = fuse(result.hits, result.groups, "rrf", FusionParams(rrf_k=60))
    assert ranked[0].id == shared_a.id
    assert ranked[0].parts.parts == {"rrf:a": pytest.approx(1 / 63), "rrf:b": pytest.approx(1 / 63)}
    assert ranked[0].score > solo.score == pytest.approx(1 / 61)


def test_rrf_k_and_source_weights() -> None:
    a, b = hit("a", 1, "alpha"), hit("b", 1, "beta")
    ranked = fuse([a, b], [], "rrf", FusionParams(rrf_k=10, source_weights={"b": 2.0}))
    assert ranked[0] is b
    assert b.score == pytest.approx(2 / 11)
    assert a.score == pytest.approx(1 / 11)


def test_weighted_normalises_per_source_and_falls_back_to_rank() -> None:
    a1, a2, a3 = hit("a", 1, "a1", score=10.0), hit("a", 2, "a2", score=6.0), hit("a", 3, "a3", score=2.0)
    b1, b2 = hit("b", 1, "b1"), hit("b", 2, "b2")  # no scores: rank-based
    ranked = fuse([a1, a2, a3, b1, b2], [], "weighted", FusionParams(source_weights={"a": 1.0, "b": 0.8}))
    assert a1.parts.raw["weighted:a"] == pytest.approx(1.0)
    assert a2.parts.raw["weighted:a"] == pytest.approx(0.5)
    assert a3.score == pytest.approx(0.0)
    assert b1.parts.raw["weighted:b"] == pytest.approx(1.0)
    assert b2.parts.raw["weighted:b"] == pytest.approx(0.5)
    assert b2.score == pytest.approx(0.4)
    assert [h.id for h in ranked] == [a1.id, b1.id, a2.id, b2.id, a3.id]


def test_composite_parts_follow_the_seed_weights() -> None:
    fresh = hit("a", 1, "parse the config file " * 10, timestamp=NOW - timedelta(days=10))
    old = hit("b", 1, "parse something else " * 10, timestamp=NOW - timedelta(days=800))
    params = FusionParams(query="parse config", reputation={"a": 0.9, "b": 0.1}, now=NOW)
    ranked = fuse([old, fresh], [], "composite", params)
    assert ranked[0] is fresh
    assert fresh.parts.raw == {"keyword": 1.0, "freshness": 1.0, "reputation": 0.9, "length_penalty": 1.0}
    assert fresh.parts.parts["keyword"] == pytest.approx(0.4)
    assert fresh.parts.parts["freshness"] == pytest.approx(0.3)
    assert fresh.parts.parts["reputation"] == pytest.approx(0.18)
    assert fresh.parts.parts["length_penalty"] == pytest.approx(0.1)
    assert fresh.score == pytest.approx(0.98)
    assert old.parts.raw["keyword"] == 0.5 and old.parts.raw["freshness"] == 0.4


def test_composite_weights_are_tunable_and_length_penalised() -> None:
    long = hit("a", 1, "cache " * 3000)
    long.tokens = 4000
    short = hit("b", 1, "cache entries expire after ttl seconds " * 5)
    short.tokens = 50
    params = FusionParams(query="cache", now=NOW, composite=CompositeWeights(0, 0, 0, 1.0))
    ranked = fuse([long, short], [], "composite", params)
    assert ranked[0] is short
    assert long.parts.raw["length_penalty"] == pytest.approx(400 / 4000)


def test_composite_uses_url_quality_for_web_hits() -> None:
    gov = hit("web", 1, "x " * 100, uri="https://www.nist.gov/page", timestamp=NOW - timedelta(days=5))
    blog = hit("web", 2, "x " * 100, uri="https://random-blog.example/post", timestamp=NOW - timedelta(days=5))
    params = FusionParams(now=NOW, reputation={"web": 0.5})
    fuse([gov, blog], [], "composite", params)
    assert gov.parts.raw["reputation"] == pytest.approx((0.5 + 0.4 * 0.9 + 0.3 * 1.0 + 0.3 * 0.4) / 2)
    assert gov.parts.raw["reputation"] > blog.parts.raw["reputation"]


def test_seed_004_quality_tiers() -> None:
    assert domain_authority("https://docs.python.org/3/") == 0.85
    assert domain_authority("https://stackoverflow.com/q/1") == 0.65
    assert domain_authority("https://unknown.example/") == 0.40
    assert domain_authority("https://pytest.readthedocs.io/en/latest/") == 0.80
    assert recency_score(None, NOW) == 0.6
    assert recency_score(NOW - timedelta(days=100), NOW) == 0.8
    assert recency_score(NOW - timedelta(days=300), NOW) == 0.6
    assert recency_score(datetime(2020, 1, 1), NOW) == 0.4  # naive timestamps count as UTC
    assert url_quality("https://arxiv.org/abs/1", "w " * 3000, NOW, NOW) == pytest.approx(0.34 + 0.3 + 0.24)


def test_cascade_puts_each_source_after_the_previous() -> None:
    a1, a2 = hit("a", 1, "a1"), hit("a", 2, "a2")
    b1, b2 = hit("b", 1, "b1"), hit("b", 2, "b2")
    ranked = fuse([a1, a2, b1, b2], [], "cascade", FusionParams(order=["b", "a"]))
    assert [h.id for h in ranked] == [b1.id, b2.id, a1.id, a2.id]
    assert b2.parts.parts == {"cascade_tier": 2.0, "rank": pytest.approx(1 / 3)}
    # default order: by source weight
    ranked = fuse([a1, a2, b1, b2], [], "cascade", FusionParams(source_weights={"a": 2.0}))
    assert [h.source for h in ranked] == ["a", "a", "b", "b"]


def test_vote_counts_agreeing_sources_then_rrf() -> None:
    x_a, x_b = hit("a", 5, FUNC_A), hit("b", 5, FUNC_A.replace("    ", "\t"))
    y = hit("c", 1, "something only one source said, in enough words")
    z = hit("d", 2, "another single-source answer with different wording")
    result = deduplicate([x_a, x_b, y, z])
    ranked = fuse(result.hits, result.groups, "vote", FusionParams())
    assert [h.id for h in ranked] == [x_a.id, y.id, z.id]
    assert x_a.parts.parts["votes"] == 2.0
    assert y.parts.parts["votes"] == 1.0 and y.parts.parts["rrf"] < 1.0


def test_every_strategy_fills_parts_for_every_hit_and_is_deterministic() -> None:
    def build() -> list:  # type: ignore[type-arg]
        return [hit(f"s{i % 3}", i // 3 + 1, f"text number {i} about parsing", score=float(i % 4)) for i in range(12)]

    for name in STRATEGIES:
        first = fuse(build(), [], name, FusionParams(query="parsing", now=NOW))
        second = fuse(build(), [], name, FusionParams(query="parsing", now=NOW))
        assert [h.id for h in first] == [h.id for h in second]
        assert all(h.parts.parts and h.score == pytest.approx(h.parts.total) for h in first)
        assert [h.score for h in first] == sorted((h.score for h in first), reverse=True)


def test_hints_boost_is_its_own_part_and_changes_order() -> None:
    top = hit("files", 1, "def run(): pass", path="src/cli/main.py")
    near = hit("files", 2, "def helper(): pass", path="src/engine/pipeline/util.py")
    params = FusionParams(hints=Hints(related_files=["engine/pipeline/fusion.py"]))
    ranked = fuse([top, near], [], "rrf", params)
    assert ranked[0] is near
    assert near.parts.raw["hint"] == pytest.approx(0.6)  # same directory
    assert near.parts.parts["hint"] == pytest.approx(0.6 * 0.5 * (1 / (params.rrf_k + 1)))
    assert "hint" not in top.parts.parts


def test_each_hint_kind() -> None:
    same = hit("f", 1, "x", path="pkg/mod.py")
    lang = hit("f", 2, "x", path="other/thing.go")
    framework = hit("f", 3, "we use Django views here", path="README.md")
    issue = hit("f", 4, "fixes #123 in the parser", path="CHANGES.txt")
    hints = Hints(related_files=["pkg/mod.py"], related_issues=["123"], language="golang", framework="django")
    fuse([same, lang, framework, issue], [], "rrf", FusionParams(hints=hints))
    assert same.parts.raw["hint"] == 1.0
    assert lang.parts.raw["hint"] == pytest.approx(0.3)
    assert framework.parts.raw["hint"] == pytest.approx(0.3)
    assert issue.parts.raw["hint"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("query", "paths"),
    [
        ("Enable type-checking in scripts/", ["scripts/"]),
        ("fix the crash in src/app/views.py.", ["src/app/views.py"]),
        ("conftest.py reads pytest.ini (e.g. 3.12, importlib.metadata)", ["conftest.py", "pytest.ini"]),
        ("see https://example.com/a/b or mail me@example.com", []),
        ("Fix teardown error reporting when `--maxfail=1`", []),
        ("jump to pkg/mod.go:12", ["pkg/mod.go"]),
    ],
)
def test_paths_written_in_the_question(query: str, paths: list[str]) -> None:
    assert mentioned_paths(query) == paths


def test_a_mentioned_path_is_a_related_one() -> None:
    script = hit("files", 3, "def main(): ...", path="scripts/release.py")
    nested = hit("files", 4, "def bump(): ...", path="tools/scripts/bump.py")
    other = hit("files", 1, "def run(): ...", path="src/app.py")
    named = hit("files", 5, "x = 1", path="src/conftest.py")
    request = SearchRequest(query="type-check scripts/ and conftest.py", hints=Hints(language="python"))
    params = FusionParams.build(request)
    assert params.hints.related_files == ["scripts/", "conftest.py"] and params.hints.language == "python"
    ranked = fuse([other, script, nested, named], [], "rrf", params)
    # every file under the folder, anywhere, and the named file count as related
    assert script.parts.raw["hint"] == nested.parts.raw["hint"] == named.parts.raw["hint"] == 1.0
    assert other.parts.raw["hint"] == pytest.approx(0.3)  # only the language
    assert ranked[0] is script
    # a question without paths leaves the caller's hints as they were
    plain = SearchRequest(query="how is caching done", hints=Hints(related_files=["a.py"]))
    assert FusionParams.build(plain).hints is plain.hints


def test_params_built_from_request_and_config() -> None:
    request = SearchRequest(
        query="q",
        source_weights={"a": 3.0},
        strategy_params={"k": 10, "keyword": 0.7, "order": ["b"], "hint_weight": 1.0},
        hints=Hints(language="python"),
    )
    params = FusionParams.build(request, FusionConfig(rrf_k=60), {"a": 0.8})
    assert params.rrf_k == 10
    assert params.composite.keyword == 0.7 and params.composite.freshness == 0.3
    assert params.order == ["b"] and params.hint_weight == 1.0
    assert params.reputation == {"a": 0.8} and params.weight("a") == 3.0
    assert params.hints.language == "python"


def test_reputation_scales_weighted_scores() -> None:
    a, b = hit("a", 1, "a1"), hit("b", 1, "b1")
    fuse([a, b], [], "weighted", FusionParams(reputation={"a": 0.9, "b": 0.2}))
    assert a.score == pytest.approx(1.8) and b.score == pytest.approx(0.4)
    c = hit("c", 1, "c1")
    fuse([c], [], "weighted", FusionParams())
    assert c.score == pytest.approx(1.0)  # unknown reputation is neutral


def test_config_weights_under_request_weights() -> None:
    request = SearchRequest(query="q", source_weights={"a": 3.0})
    params = FusionParams.build(request, weights={"a": 1.5, "b": 0.5})
    assert params.weight("a") == 3.0 and params.weight("b") == 0.5 and params.weight("c") == 1.0


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("@final\nclass FixtureDef(Generic[T]):\n    pass", "FixtureDef"),
        ("    async def fetch(self):\n        ...", "fetch"),
        ("func (s *Server) ListenAndServe() error {", "ListenAndServe"),
        ("func main() {", "main"),
        ("pub(crate) fn parse_args() -> Args {", "parse_args"),
        ("pub struct Point { x: i32 }", "Point"),
        ("export default function App() {", "App"),
        ("export const useCart = (items) => items.length", "useCart"),
        ("export interface Shipment { id: string }", "Shipment"),
        ("    public String greet(String name) {", "greet"),
        ("  public static async Task<int> RunAsync(int x)", "RunAsync"),
        ("res.send = function send(body) {", "send"),
        ("Router.prototype.route = async function (path) {", "route"),
        ("res.locals = {}", None),
        ("public int count = 0;", None),
        ("const LIMIT = 5\nconst other = 6", None),  # constants are not looked up by this rule
        ("Fix the routing of fallback servers (2024-05-01)", None),
    ],
)
def test_first_definition_across_languages(text: str, name: str | None) -> None:
    assert first_definition(text) == name


def test_the_definition_spelled_as_asked_wins_over_other_cases() -> None:
    method = hit("files", 1, "fn serialize<S>(&self, s: S) -> Result<S::Ok, S::Error> {", path="ser/impls.rs")
    trait_ = hit("files", 2, "pub trait Serialize {\n    fn serialize<S>(&self, s: S);\n}", path="ser/mod.rs")
    ranked = fuse([method, trait_], [], "rrf", FusionParams.build(SearchRequest(query="Serialize")))
    assert ranked[0] is trait_
    assert method.parts.parts["defines"] == pytest.approx(trait_.parts.parts["defines"] / 2)
    # typed in another case than any definition: every case-folded match counts in full
    method, trait_ = (hit("files", 1, method.content, path="a.rs"), hit("files", 2, trait_.content, path="b.rs"))
    fuse([method, trait_], [], "rrf", FusionParams.build(SearchRequest(query="SERIALIZE")))
    assert method.parts.raw["defines"] == trait_.parts.raw["defines"] == 1.0


def test_definition_signal_first_or_later() -> None:
    nested = "def test_it():\n    class Helper:\n        pass\n"
    assert definition_signal(nested, frozenset({"test_it"})) == 1.0
    assert definition_signal(nested, frozenset({"helper"})) == 0.5
    assert definition_signal(nested, frozenset({"other"})) == 0.0


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_a_lookup_ranks_the_definition_first(strategy: str) -> None:
    # Two sources agree on two files that use parse_config; only one source found
    # where it is defined, and lower down. Agreement outranks it without the boost.
    use = "config = parse_config(path)\nreturn config.servers\n"
    agreed = [hit("a", 1, use, path="tributary/app/main.py", lines=(1, 2)), hit("b", 1, use + " ", path="tributary/app/main.py", lines=(1, 2)),
              hit("a", 2, use + "x = 1\n", path="app/cli.py", lines=(5, 7)),
              hit("b", 2, use + "x = 1\n ", path="app/cli.py", lines=(5, 7))]
    definition = hit("a", 5, FUNC_A, path="engine/config.py", lines=(10, 30))
    hits = [*agreed, definition]
    groups = deduplicate(hits, DedupConfig(semantic=False))

    def ranked(query: str, weight: float | None = None) -> list[str]:
        params = FusionParams.build(SearchRequest(
            query=query, strategy_params={} if weight is None else {"definition_weight": weight}), FusionConfig())
        return [h.id for h in fuse(groups.hits, groups.by_kept, strategy, params)]

    assert ranked("parse_config")[0] == definition.id
    assert ranked("where is parse_config defined")[0] == definition.id
    assert ranked("parse config")[0] == definition.id  # the name typed as its words
    top = fuse(groups.hits, groups.by_kept, strategy,
               FusionParams.build(SearchRequest(query="parse_config"), FusionConfig()))[0]
    assert top.parts.raw["defines"] == 1.0 and "defines" in top.parts.parts
    if strategy in ("rrf", "vote", "weighted"):  # where agreement counts, it wins without the boost
        assert ranked("parse_config", 0.0)[0] != definition.id
        assert ranked("why does parse_config read the file twice")[0] != definition.id
