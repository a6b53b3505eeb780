"""The vectorised and short-cut code paths against plain reference versions (hypothesis).

Each reference is the straightforward way to compute the same thing: per-text Python
sets and a pair counter for blocking, the line-by-line walk for span merging and block
starts, pricing each chunk on its own for the budget's one-batch pricing (the token
counter's shortcut has its own tests, ``test_token_shortcut.py``). They must agree
exactly on any input, so speed never changes a decision.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from tests.pipeline.helpers import hit
from tributary.engine.model import ContextFormat, Hit
from tributary.engine.pipeline import blocking, dedup, text
from tributary.engine.pipeline.blocking import candidate_pairs, sample_features
from tributary.engine.pipeline.budget import _priced, _priced_whole
from tributary.engine.pipeline.dedup import merge_span
from tributary.engine.pipeline.formats import frame_pieces
from tributary.engine.pipeline.overflow import (
    _CODE_START,
    _DEFINITION,
    _HEADING,
    GAP,
    _block_starts,
    truncate,
)
from tributary.engine.pipeline.tokens import clear_cache, count_tokens, fill_tokens, get_tokenizer

PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _gram_hash(gram: bytes) -> int:
    return (int.from_bytes(gram, "big") * int(blocking._MULTIPLIER)) % (1 << 64) >> 32


def _reference_features(text: bytes) -> set[int]:
    """A text's sampled features, one gram at a time."""
    grams = [_gram_hash(text[i : i + blocking.GRAM]) for i in range(len(text) - blocking.GRAM + 1)]
    sampled = [h for h in grams if h < int(blocking.SAMPLE_BELOW)]
    if len(sampled) < blocking.MIN_SAMPLES:  # counted with repeats, as the fast path does
        sampled += sorted(set(grams))[: blocking.MIN_SAMPLES]
    return set(sampled)


def _reference_pairs(texts: list[bytes], min_shared: float = blocking.MIN_SHARED) -> list[tuple[int, int]]:
    features = [_reference_features(t) for t in texts]
    holders: dict[int, list[int]] = {}
    for doc, feats in enumerate(features):
        for feat in feats:
            holders.setdefault(feat, []).append(doc)
    shared: Counter[tuple[int, int]] = Counter()
    for docs in holders.values():
        if 2 <= len(docs) <= blocking.MAX_DF:
            shared.update(combinations(docs, 2))
    return sorted(
        (a, b)
        for (a, b), count in shared.items()
        if count >= max(1.0, min_shared * min(len(features[a]), len(features[b])))
    )


# Few distinct bytes, so that texts share grams (and some grams are sampled) often.
_TEXTS = st.lists(st.binary(min_size=0, max_size=120).map(lambda b: bytes(97 + x % 6 for x in b)), max_size=30)


@PROPERTY
@given(_TEXTS)
def test_candidate_pairs_match_a_plain_pair_count(texts: list[bytes]) -> None:
    assert [tuple(p) for p in candidate_pairs(texts).tolist()] == _reference_pairs(texts)


@PROPERTY
@given(_TEXTS)
def test_sampled_features_match_a_per_text_computation(texts: list[bytes]) -> None:
    docs, feats = sample_features(texts)
    found: dict[int, set[int]] = {}
    for doc, feat in zip(docs.tolist(), feats.tolist(), strict=True):
        found.setdefault(doc, set()).add(feat)
    assert {d: f for d, f in found.items()} == {
        d: f for d, f in ((d, _reference_features(t)) for d, t in enumerate(texts)) if f
    }


@PROPERTY
@given(_TEXTS)
def test_smallest_hashes_of_many_texts_match_each_text_alone(texts: list[bytes]) -> None:
    expected = [
        sorted({_gram_hash(t[i : i + blocking.GRAM]) for i in range(len(t) - blocking.GRAM + 1)})[: blocking.MIN_SAMPLES]
        for t in texts
    ]
    found = [
        list(np.frombuffer(blob, dtype=np.uint64).tolist()) for blob in blocking._smallest_hashes(texts)
    ]
    assert found == expected


@PROPERTY
@given(_TEXTS, _TEXTS)
def test_remembered_features_equal_fresh_ones(earlier: list[bytes], texts: list[bytes]) -> None:
    """Texts met in an earlier search (some of these) take their features from the memo,
    the rest are hashed together: the pairs are those of a cold computation, also
    when the memo starts afresh midway."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(blocking, "FEATURE_MEMO_BYTES", 600)
        blocking.clear_features()
        candidate_pairs(earlier + texts[::2])
        assert [tuple(p) for p in candidate_pairs(texts).tolist()] == _reference_pairs(texts)
        assert blocking._FEATURE_TEXT_BYTES[0] <= 600 + sum(map(len, texts))
    blocking.clear_features()


def _reference_similarity(a: bytes, b: bytes, cutoff: float) -> float:
    """One pair scored alone, as the dedup scored every pair before it remembered them."""
    return float(process.cpdist([a], [b], scorer=Levenshtein.normalized_similarity, score_cutoff=cutoff)[0])


_PAIR_TEXTS = st.lists(st.text("abc ", max_size=30).map(str.encode), min_size=1, max_size=6)


@PROPERTY
@given(_PAIR_TEXTS, _PAIR_TEXTS, st.sampled_from([0.0, 0.5, 0.8]))
def test_remembered_pair_scores_equal_fresh_ones(earlier: list[bytes], texts: list[bytes], cutoff: float) -> None:
    """Pairs met in an earlier search (either way round, some of these) are looked up,
    the rest scored: every score is rapidfuzz's own, also when the memo starts afresh
    midway or the same pair comes twice in one batch."""
    pairs = list(combinations(texts, 2)) + [(b, a) for a, b in combinations(texts, 2)][:3]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dedup, "PAIR_MEMO_ENTRIES", 8)
        dedup.clear_pair_scores()
        dedup.pair_similarities(earlier, earlier[::-1], cutoff)
        got = dedup.pair_similarities([a for a, _ in pairs], [b for _, b in pairs], cutoff)
        assert got == [_reference_similarity(a, b, cutoff) for a, b in pairs]
        assert len(dedup._PAIR_SCORES) <= 8 + len(pairs)
    dedup.clear_pair_scores()


def test_a_remembered_pair_is_not_scored_again() -> None:
    a, b = b"def load(path): return open(path).read()", b"def load(path):return open(path).read() "
    dedup.clear_pair_scores()
    score = _reference_similarity(a, b, 0.8)
    assert dedup.pair_similarities([a], [b], 0.8) == [score] and score > 0.9
    dedup._PAIR_SCORES[(min(a, b), max(a, b), 0.8)] = 0.5  # planted: only the memo says so
    assert dedup.pair_similarities([b], [a], 0.8) == [0.5]
    assert dedup.pair_similarities([a], [b], 0.7) == [score]  # another cutoff is another key
    dedup.clear_pair_scores()
    assert dedup.pair_similarities([a], [b], 0.8) == [score]


def test_blocks_larger_than_one_hashing_block_agree() -> None:
    # one text spanning several of _sampled_grams's blocks, another sharing its tail
    body = bytes(97 + (i * 7919 % 13) for i in range(3 * blocking._BLOCK + 17))
    texts = [body, body[-5000:] + b"xyz", b"short"]
    assert [tuple(p) for p in candidate_pairs(texts).tolist()] == _reference_pairs(texts)


@PROPERTY
@given(_TEXTS)
def test_hashing_shared_with_the_helper_thread_agrees(texts: list[bytes]) -> None:
    # tiny blocks, so that these texts span many and the helper thread takes some
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(blocking, "_BLOCK", 16)
        patch.setattr(blocking, "PARALLEL_BYTES", 32)
        assert [tuple(p) for p in candidate_pairs(texts).tolist()] == _reference_pairs(texts)


def _reference_merge(kept: Hit, others: list[Hit]) -> tuple[str, int, int, list[str]] | None:
    """The line-by-line walk over every chunk, copies included."""
    chain = sorted([kept, *others], key=lambda h: (h.start_line or 0, h.end_line or 0))
    merged: list[str] | None = None
    first = end = 0
    for chunk in chain:
        lines = chunk.content.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if chunk.start_line is None or chunk.end_line is None or len(lines) != chunk.end_line - chunk.start_line + 1:
            return None
        start = chunk.start_line
        if merged is None:
            merged, first, end = list(lines), start, start + len(lines) - 1
            continue
        if start > end + 1:
            return None
        shared = min(end, start + len(lines) - 1) - start + 1
        if merged[start - first : start - first + shared] != lines[:shared]:
            return None
        merged.extend(lines[shared:])
        end = max(end, start + len(lines) - 1)
    assert merged is not None
    return "\n".join(merged), first, end, [h.id for h in chain]


@st.composite
def _chunks_of_one_file(draw: st.DrawFn) -> list[Hit]:
    """Chunks of one file as servers send them: copies, reformatted copies, shifted
    windows, wrong ranges, a final newline or not."""
    lines = [f"line {i} {draw(st.sampled_from(['a', 'b']))}" for i in range(1, 31)]
    out: list[Hit] = []
    for rank in range(1, draw(st.integers(1, 6)) + 1):
        start = draw(st.integers(1, 14))
        end = draw(st.integers(start - 1, min(30, start + 10)))
        text = "\n".join(lines[start - 1 : end])
        kind = draw(st.sampled_from(["same"] * 5 + ["newline", "reformatted", "range_off", "copy", "copy"]))
        if kind == "copy" and out:
            previous = draw(st.sampled_from(out))
            text, start, end = previous.content, previous.start_line or 0, previous.end_line or 0
        elif kind == "newline":
            text += "\n"
        elif kind == "reformatted":
            text = text.replace("line", "Line")
        elif kind == "range_off":
            end += 1
        out.append(hit(f"s{rank}", rank, text, path="m.py", lines=(start, end)))
    return out


@PROPERTY
@given(_chunks_of_one_file())
def test_merge_span_matches_the_line_walk(chunks: list[Hit]) -> None:
    kept, others = chunks[0], chunks[1:]
    merged = merge_span(kept, others)
    expected = _reference_merge(kept, others)
    if expected is None:
        assert merged is None
        return
    assert merged is not None
    assert (merged.content, merged.start_line, merged.end_line, merged.metadata["merged_span"]) == expected
    assert merged.id == kept.id and merged.tokens == 0
    assert kept.content == chunks[0].content  # the input is not mutated


def _reference_block_starts(lines: list[str], code: bool) -> list[int]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    base = min(indents) if indents else 0
    starts = [0]
    for i in range(1, len(lines)):
        line, prev = lines[i], lines[i - 1]
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if code:
            opens = bool(_CODE_START.match(line[indent:]))
            after_decorator = prev.lstrip().startswith("@")
            defines = bool(_DEFINITION.match(line[indent:]))
            at_base = indent <= base and (not prev.strip() or opens)
            if (at_base or defines) and not after_decorator:
                starts.append(i)
        elif not prev.strip() or _HEADING.match(line):
            starts.append(i)
    return sorted(set(starts))


_LINE = st.sampled_from([
    "", "   ", "def f(x):", "    return x", "@decorator", "class A:", "    def g(self):", "async def h():",
    "x = 1", "  y = 2", "# Title", "Some prose here.", "---", "\tindented", "let z = 3", "export const q = 1",
])


@PROPERTY
@given(st.lists(_LINE, max_size=25), st.booleans())
def test_block_starts_match_the_plain_walk(lines: list[str], code: bool) -> None:
    assert _block_starts(lines, code) == _reference_block_starts(lines, code)


@PROPERTY
@given(st.lists(st.tuples(st.text(max_size=60), st.booleans()), max_size=20))
def test_remembered_dedup_keys_equal_fresh_ones(items: list[tuple[str, bool]]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(text, "SQUEEZE_MEMO_CHARS", 100)  # small: the memo starts afresh now and then
        text.clear_squeezed()
        for _ in range(2):  # the second round mostly reads the memo
            for content, prose in items:
                expected = text.squeeze_prose(content) if prose else text.squeeze(content)
                assert text.squeezed_key(content, prose) == expected
        assert text._SQUEEZED_CHARS[0] <= 100 + max((len(c) for c, _ in items), default=0)


@pytest.mark.parametrize("fmt", list(ContextFormat))
def test_pricing_in_one_batch_matches_pricing_each_hit(fmt: ContextFormat) -> None:
    hits = [
        hit("files", 1, "def f():\n    return ']]>' + '```'\n", path="a.py", lines=(1, 2), score=0.5),
        hit("web", 2, "Naïve prose · with a [link](https://x.org) and ``` fences", uri="https://x.org/a"),
        hit("tasks", 3, "x\x07y [CLS] control and special", path="notes/log.txt"),
        hit("grep", 4, "", path="empty.py", lines=(3, 3)),
    ]
    fill_tokens(hits[:2])  # some counts known, as after ``fill_tokens``; others not
    for h, score in zip(hits, (0.25, 0.125, 0.0625, 0.0), strict=True):
        h.score = score
    clear_cache()
    batch = _priced_whole(hits, fmt)
    clear_cache()
    assert batch == [_priced(h, h.content, "full", fmt) for h in hits]


_FRAME_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=24)


@PROPERTY
@given(
    st.sampled_from(list(ContextFormat)),
    st.sampled_from(["full", "truncated", "compressed", "summarised"]),
    _FRAME_TEXT, _FRAME_TEXT, st.one_of(st.none(), _FRAME_TEXT),
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.one_of(st.none(), st.tuples(st.integers(0, 10**6), st.integers(0, 10**6))),
)
def test_a_head_costs_what_its_pieces_cost(
    fmt: ContextFormat, treatment: str, source: str, title: str, path: str | None, score: float,
    lines: tuple[int, int] | None,
) -> None:
    """The budget counts a head as its three pieces (so the ones around the score are
    counted once per chunk): the middle one is the score, and the tokenizer's own
    ``encode`` gives the head as many tokens as the pieces together."""
    chunk = hit(source or "s", 1, "body", path=path, lines=lines, title=title)
    chunk.score = score
    pieces = frame_pieces(chunk, fmt, treatment, "body")
    assert pieces[1] == f"{score:.4f}"
    tokenizer = get_tokenizer()
    def encoded(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)
    assert sum(map(encoded, pieces[:3])) == encoded("".join(pieces[:3]))


def _reference_truncate(text: str, limit: int, code: bool) -> str | None:
    """truncate as first written: every line counted, every block start listed."""
    if limit <= 0:
        return None
    lines = text.split("\n")
    per_line = [count_tokens(line) for line in lines]
    if sum(per_line) <= limit:
        return text
    starts = _reference_block_starts(lines, code)
    ends = [*starts[1:], len(lines)]
    room = limit - count_tokens(f"{GAP} [{len(lines)} more lines]")
    cut = used = 0
    for start, end in zip(starts, ends, strict=True):
        cost = sum(per_line[start:end])
        if used + cost > room:
            break
        used += cost
        cut = end
    if cut == 0:
        for i, n in enumerate(per_line):
            if used + n > room:
                break
            used += n
            cut = i + 1
    while cut > 0 and not lines[cut - 1].strip():
        cut -= 1
    if cut == 0:
        return None
    return "\n".join([*lines[:cut], f"{GAP} [{len(lines) - cut} more lines]"])


_TRUNCATE_LINE = st.one_of(
    _LINE,
    st.text(alphabet=st.sampled_from(list("abcXYZ_ (),.:=#é€😀\t")), max_size=120),
    st.just(" " * 80 + "x"),  # indentation: characters without tokens
)


@PROPERTY
@given(st.lists(_TRUNCATE_LINE, min_size=1, max_size=60), st.integers(0, 300), st.booleans())
def test_truncate_counting_only_leading_lines_matches_counting_all(lines: list[str], limit: int, code: bool) -> None:
    text = "\n".join(lines)
    assert truncate(text, limit, code) == _reference_truncate(text, limit, code)
