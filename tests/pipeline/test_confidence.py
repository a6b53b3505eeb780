"""Confidence: the sources' raw evidence tells a relevant hit, and a real question, from noise."""

from __future__ import annotations

from tests.pipeline.helpers import FUNC_A, hit
from tributary.engine.model import (
    ContextFormat,
    DedupGroup,
    DedupReason,
    GroupMember,
    SearchRequest,
)
from tributary.engine.pipeline.assemble import NOTHING_FOUND
from tributary.engine.pipeline.confidence import (
    CONFIDENCE_MODEL,
    KEYWORD_ONLY_MODEL,
    hit_signals,
    model_for,
    query_words,
    score_confidence,
    source_views,
)
from tributary.engine.pipeline.run import run_pipeline

QUERY = "validate the server entries of a config file"


def _code(rank: int, cosine: float | None, keyword_rank: int | None, content: str = FUNC_A):
    return hit("files", rank, content, path=f"engine/c{rank}.py", lines=(1, 8),
               metadata={"cosine": cosine, "keyword_rank": keyword_rank, "bm25": 7.5 if keyword_rank else None})


def test_query_words_drop_stop_words_and_split_identifiers() -> None:
    assert query_words("how are the ServerEntries validated?") == {"server", "entry", "validat", "serverentry"}
    assert query_words("?!... --- ;;") == frozenset()


def test_a_matching_chunk_is_confident_and_noise_is_not() -> None:
    good = _code(1, cosine=0.62, keyword_rank=1)
    noise = _code(2, cosine=0.12, keyword_rank=None, content="x = 1\n")
    judged = score_confidence([good, noise], {}, QUERY)
    assert judged.confident and judged.overall == good.confidence
    assert good.confidence > CONFIDENCE_MODEL.bar > noise.confidence
    assert all(0.0 <= h.confidence <= 1.0 for h in (good, noise))
    alone = _code(1, cosine=0.12, keyword_rank=None, content="x = 1\n")
    assert not score_confidence([alone], {}, "qwzxv frobnicator zzyzx").confident


def test_a_folded_members_evidence_and_a_defined_name_raise_confidence() -> None:
    """The history's hit folded into a chunk brings its own cosine and words (how many
    sources agree is counted, though the fit gives it no weight of its own)."""
    kept = _code(1, cosine=0.35, keyword_rank=4)
    history = hit("tasks", 2, "Validate server entries (2024-01-02)", path="engine/c1.py",
                  metadata={"cosine": 0.4})
    group = DedupGroup(kept, [GroupMember(history, DedupReason.FILE, 1.0)])
    words = query_words(QUERY)
    alone, agreed = hit_signals(kept, None, words), hit_signals(kept, group, words)
    assert agreed["agreement"] == 1.0 and alone["agreement"] == 0.0
    assert CONFIDENCE_MODEL.probability(agreed) > CONFIDENCE_MODEL.probability(alone)
    named = _code(1, cosine=0.35, keyword_rank=4)
    named.metadata["symbol_match"] = True
    assert CONFIDENCE_MODEL.probability(hit_signals(named, None, words)) > CONFIDENCE_MODEL.probability(alone)


def test_a_source_without_raw_scores_is_judged_on_the_words_it_holds() -> None:
    holds = hit("web", 1, "How to validate every server entry in a config file.")
    lacks = hit("web", 2, "Release notes for version 2.")
    score_confidence([holds, lacks], {}, QUERY)
    assert holds.confidence > CONFIDENCE_MODEL.bar > lacks.confidence


def test_a_keyword_only_answer_is_judged_without_the_cosine_it_lacks() -> None:
    """While the model loads (or the index has no vectors) no hit has a cosine: the
    matching chunk is still confident, a chunk holding few of the words is not."""
    good = _code(1, cosine=None, keyword_rank=1)
    weak = _code(2, cosine=None, keyword_rank=2, content="def entries():\n    return []\n")
    assert model_for([good, weak], {}) is KEYWORD_ONLY_MODEL
    assert score_confidence([good, weak], {}, QUERY).confident
    assert not score_confidence([weak], {}, QUERY).confident
    assert not CONFIDENCE_MODEL.probability(hit_signals(good, None, query_words(QUERY))) >= CONFIDENCE_MODEL.bar
    with_meaning = _code(3, cosine=0.2, keyword_rank=None)
    assert model_for([good, with_meaning], {}) is CONFIDENCE_MODEL
    assert model_for([hit("web", 1, "Validate server entries.")], {}) is CONFIDENCE_MODEL  # no raw scores at all


def test_a_keyword_only_answer_keeps_its_context() -> None:
    """``get_context`` over a keyword-only answer that matches gives the code, not
    "nothing relevant found"."""
    done = run_pipeline({"files": [_code(1, cosine=None, keyword_rank=1)]},
                        SearchRequest(query=QUERY, format=ContextFormat.MARKDOWN))
    assert done.confident and done.context is not None and NOTHING_FOUND not in done.context.text


def test_punctuation_only_is_never_confident() -> None:
    good = _code(1, cosine=0.9, keyword_rank=1)
    assert not score_confidence([good], {}, "?!?").confident


def test_the_breakdown_shows_each_sources_own_rank_and_score() -> None:
    kept = _code(3, cosine=0.5, keyword_rank=2)
    kept.source_score = 0.031
    history = hit("tasks", 1, "Validate server entries", path="engine/c3.py", score=0.8)
    views = source_views(kept, DedupGroup(kept, [GroupMember(history, DedupReason.FILE, 1.0)]))
    assert [(v.source, v.rank, v.score) for v in views] == [("files", 3, 0.031), ("tasks", 1, 0.8)]
    assert views[0].text() == "files: rank 3, score 0.031, cosine 0.50, BM25 7.50"


def test_an_answer_without_a_confident_hit_gets_a_short_context() -> None:
    noise = [_code(i, cosine=0.1, keyword_rank=None, content=f"{FUNC_A}\n# part {i}\n" * i) for i in range(1, 6)]
    done = run_pipeline({"files": noise}, SearchRequest(query="qwzxv frobnicator zzyzx",
                                                        format=ContextFormat.MARKDOWN))
    assert not done.confident
    assert done.context is not None and done.context.text.startswith(NOTHING_FOUND)
    assert done.context.chunks == [] and done.context.token_count < 30
    assert len(done.hits) == 5  # the list still shows the closest matches


ISSUE = (
    "Config validation accepts a server entry without a command\n\n"
    "When a `ServerEntry` has neither `command` nor `url`, `validate_servers` lets it pass and "
    "the engine fails later:\n\n```\nTraceback (most recent call last):\n"
    '  File "engine/config.py", line 40, in validate_servers\n    check(entry)\n```\n\n'
    + "The entry should be refused with a message naming the key. " * 10
)


def test_an_issue_is_judged_by_its_title_and_names_and_always_gets_context() -> None:
    """No hit holds the words of a whole issue; an agent acting on one gets the
    likeliest code even when no hit clears the bar."""
    words = query_words(ISSUE)
    assert {"config", "serverentry", "command"} <= words and "refused" not in words
    weak = [_code(i, cosine=0.1, keyword_rank=i) for i in range(1, 4)]
    done = run_pipeline({"files": weak}, SearchRequest(query=ISSUE, format=ContextFormat.MARKDOWN))
    assert not done.confident
    assert done.context is not None and not done.context.text.startswith(NOTHING_FOUND)
    assert done.context.chunks
