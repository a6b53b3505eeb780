"""Dedup: fold duplicate hits into visible groups, keeping the most relevant version.

Five kinds of evidence join two hits (each edge keeps its reason and similarity):

* ``hash``     — same text once all whitespace is removed (``text.squeeze``; for prose —
  hits that are not code by path or look — Markdown markup and URLs too, so one
  document served as Markdown and as plain text matches), or the same uri for
  content-less hits; similarity 1.0. Hits naming a whole file (a path, no lines,
  text that does not read as code) must also name the same path: their text is
  *about* the file, and a task history gives every file one change touched the same
  text.
* ``fuzzy``    — Levenshtein similarity (rapidfuzz, normalised to 0..1) of those
  squeezed texts >= ``fuzzy_threshold`` (0.80). Only candidate pairs from
  ``blocking.candidate_pairs`` within a length bound, not joined yet and not at
  disjoint lines of one file, are scored, in one C++ batch (two threads when large).
* ``semantic`` — cosine of embeddings >= ``semantic_threshold`` (0.90): vectors a source
  put in ``Hit.metadata["embedding"]``, else from an injected embedder
  ``embed(texts) -> (n, d) array`` (rows are normalised here); skipped without either.
* ``overlap``  — same path, overlapping line ranges; similarity is the overlapping
  lines over the shorter range.
* ``file``     — a hit naming a whole file (as above: e.g. a task history's "files
  changed") joins the best chunk of that file, so sources agreeing on a file are seen
  to agree. Code sent without its lines (a symbol server's snippet) is not such a hit:
  it is one part of the file, and other parts of the file are other results. A grep
  answer's lines scattered over a file (``line_numbers`` with gaps) stand for the file
  the same way, joining the best chunk that holds one of their lines: their first and
  last line are not one passage, and read as a range they would fold every chunk
  between them into one result.

Similar-looking hits are kept apart when there is evidence they are different results
(``distinct``: two different whole files, disjoint lines of one file, or different
defined names); so are hits of one path in two different indexed repositories
(``other_repositories``), for overlaps and whole files too. A union-find
joins edges transitively. In each group the kept hit is the most relevant
by this rule: best (lowest) source rank, then higher MCP ``priority``, then longer
content (the more complete version), then source name and id for determinism. When
overlapping chunks of one file agree line by line, the kept hit becomes the union span
(a copy; inputs are never mutated); otherwise the best chunk is kept and the overlap is
still recorded in the group.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from tributary.engine.config.schema import DedupConfig
from tributary.engine.model import (
    DedupGroup,
    DedupReason,
    GroupMember,
    Hit,
    ScoreParts,
    is_task,
    repository_of,
)

from .blocking import candidate_pairs
from .definitions import first_definition
from .text import is_code, looks_like_code, squeezed_key
from .unionfind import UnionFind

Embedder = Callable[[list[str]], npt.NDArray[np.floating]]

MIN_FUZZY_CHARS = 40  # shorter texts (titles, one-liners) only fold on an exact match
PARALLEL_PAIRS = 256  # fuzzy batches this large are scored on every core
_REASON_ORDER = {
    DedupReason.HASH: 0,
    DedupReason.OVERLAP: 1,
    DedupReason.FILE: 2,
    DedupReason.FUZZY: 3,
    DedupReason.SEMANTIC: 4,
}


@dataclass(slots=True)
class Edge:
    a: int
    b: int
    reason: DedupReason
    similarity: float


@dataclass(slots=True)
class DedupResult:
    """The unique hits (kept versions, input order) and the groups that folded others."""

    hits: list[Hit]
    groups: list[DedupGroup]
    by_kept: dict[str, DedupGroup] = field(default_factory=dict)

    @property
    def folded(self) -> int:
        return sum(len(g.members) for g in self.groups)


def relevance_key(hit: Hit) -> tuple[int, float, int, str, str]:
    """Sort key, best first, choosing which member of a group is kept."""
    rank = hit.source_rank if hit.source_rank > 0 else 1 << 30
    return (rank, -(hit.priority or 0.0), -len(hit.content), hit.source, hit.id)


@dataclass(slots=True)
class _Facts:
    """What the edge finders ask of every hit, found once per hit: whether it has a line
    range that is one passage (``_passage``) and whether it stands for a whole file
    (``_names_file``)."""

    spans: list[bool]
    refs: list[bool]

    @staticmethod
    def of(hits: Sequence[Hit]) -> _Facts:
        return _Facts([_passage(hit) for hit in hits], [_names_file(hit) for hit in hits])


def _hash_edges(hits: Sequence[Hit], refs: Sequence[bool]) -> tuple[list[Edge], list[int], list[bytes]]:
    """Edges for identical texts (or uris); a representative per text and its squeezed form."""
    first: dict[bytes, int] = {}
    edges: list[Edge] = []
    reps: list[int] = []
    squeezed: list[bytes] = []
    same_text = DedupReason.HASH
    for i, hit in enumerate(hits):
        key = squeezed_key(hit.content, not is_code(hit.path, hit.content))  # each distinct text squeezed once
        if not key:
            if not hit.uri:
                continue
            key = b"\x00uri:" + hit.uri.encode("utf-8", "surrogatepass")
        if is_task(hit):  # a commit's message is never the same item as a chunk's text
            key += b"\x00task"
        elif refs[i] and hit.path:  # (hit.path: for the type checker)
            # Text *about* a file (a task history's "why"): equal for every file one task
            # touched, yet each names a different result (in each repository).
            key += b"\x00path:" + hit.path.encode("utf-8", "surrogatepass")
            repo = repository_of(hit)
            if repo is not None:
                key += b"\x00repo:" + repo.encode("utf-8", "surrogatepass")
        j = first.setdefault(key, i)
        if j != i:
            edges.append(Edge(j, i, same_text, 1.0))
        elif not key.startswith(b"\x00uri:"):
            reps.append(i)
            squeezed.append(key)
    return edges, reps, squeezed


def is_file_reference(hit: Hit) -> bool:
    """A hit that names a whole file (a path, no line range) with text *about* it, such
    as a task history's "why", rather than quoting it: code sent without its lines (a
    symbol server's snippet) is a snippet like any other, not the file."""
    return bool(hit.path) and not _has_span(hit) and not looks_like_code(hit.content)


def _scattered(hit: Hit) -> bool:
    """Lines of a file with gaps between them (a grep answer's matches: their
    ``line_numbers`` hold None where lines were left out)."""
    numbers = hit.metadata.get("line_numbers")
    return isinstance(numbers, list) and None in numbers


def _passage(hit: Hit) -> bool:
    """A line range whose lines are all there: one passage of its file."""
    return _has_span(hit) and not _scattered(hit)


def _names_file(hit: Hit) -> bool:
    """A hit that stands for its whole file when joining others: text about the file
    (``is_file_reference``) or lines scattered over it (``_scattered``)."""
    return is_file_reference(hit) or (bool(hit.path) and _scattered(hit))


def distinct(a: Hit, b: Hit) -> bool:
    """Evidence that two similar-looking hits are different results, which vetoes fuzzy and
    semantic edges: they name two different whole files, sit at disjoint lines of one
    file, or define different names (``safe_load`` vs ``full_load`` share most characters
    but are not the same function)."""
    return _apart(a, b) or _named_apart(a, b, {}, 0, 1)


def _apart(a: Hit, b: Hit, facts: _Facts | None = None, i: int = 0, j: int = 0) -> bool:
    """The cheap half of ``distinct``: a task beside anything else, different whole
    files, disjoint lines of one file.
    ``facts`` of the hits, if known, with ``a`` and ``b`` at ``i`` and ``j``."""
    if is_task(a) != is_task(b) or other_repositories(a, b):  # two answers
        return True
    if facts is None:
        refs, spans = (_names_file(a), _names_file(b)), (_passage(a), _passage(b))
    else:
        refs, spans = (facts.refs[i], facts.refs[j]), (facts.spans[i], facts.spans[j])
    if refs[0] and refs[1] and a.path != b.path:
        return True
    same_file = spans[0] and spans[1] and a.path == b.path
    return same_file and ((a.end_line or 0) < (b.start_line or 0) or (b.end_line or 0) < (a.start_line or 0))


def other_repositories(a: Hit, b: Hit) -> bool:
    """Two hits that say they come from two different indexed repositories: one path in
    each (``pyproject.toml``, ``tests/test_basic.py``) is two files. A hit that does not
    say (a single history, another server) may be either's."""
    first = repository_of(a)
    if first is None:
        return False
    second = repository_of(b)
    return second is not None and first != second


def _named_apart(a: Hit, b: Hit, names: dict[int, str | None], i: int, j: int) -> bool:
    """The costly half of ``distinct`` (a regex over each text): different defined names.
    ``names`` keeps each hit's name under its index ``i`` / ``j``."""
    name_a = names[i] if i in names else names.setdefault(i, first_definition(a.content))
    if name_a is None:
        return False
    name_b = names[j] if j in names else names.setdefault(j, first_definition(b.content))
    return name_b is not None and name_a != name_b


def _fuzzy_edges(
    hits: Sequence[Hit], reps: list[int], squeezed: list[bytes], threshold: float, sets: UnionFind, facts: _Facts
) -> list[Edge]:
    keep = [k for k, s in enumerate(squeezed) if len(s) >= MIN_FUZZY_CHARS]
    if len(keep) < 2:
        return []
    texts = [squeezed[k] for k in keep]
    pairs = candidate_pairs(texts)
    if not pairs.size:
        return []
    lengths = np.fromiter(map(len, texts), dtype=np.float64, count=len(texts))
    la, lb = lengths[pairs[:, 0]], lengths[pairs[:, 1]]
    # Levenshtein >= |la - lb|, so similarity <= min/max: skip pairs that cannot pass.
    pairs = pairs[np.minimum(la, lb) / np.maximum(la, lb) >= threshold].tolist()
    # Pairs already joined (by hash or overlap) need no scoring, nor pairs ``distinct``
    # already keeps apart by their line ranges; the name check waits for a passing score.
    scored: list[tuple[int, int]] = []
    for a, b in pairs:
        i, j = reps[keep[a]], reps[keep[b]]
        if sets.find(i) != sets.find(j) and not _apart(hits[i], hits[j], facts, i, j):
            scored.append((a, b))
    if not scored:
        return []
    scores = pair_similarities([texts[a] for a, _ in scored], [texts[b] for _, b in scored], threshold)
    names: dict[int, str | None] = {}
    edges: list[Edge] = []
    for (a, b), score in zip(scored, scores, strict=True):
        if score < threshold:
            continue
        i, j = reps[keep[a]], reps[keep[b]]
        if not _named_apart(hits[i], hits[j], names, i, j):
            edges.append(Edge(i, j, DedupReason.FUZZY, score))
    return edges


# pair_similarities's memo: the similarity of pairs scored in earlier searches, by their
# two squeezed texts (the objects ``squeezed_key`` keeps) and the cutoff. The same chunks
# come back query after query, and so do their near-duplicate pairs; looking a pair up
# costs far less than scoring it again. Started afresh beyond PAIR_MEMO_ENTRIES.
_PAIR_SCORES: dict[tuple[bytes, bytes, float], float] = {}
PAIR_MEMO_ENTRIES = 100_000


def pair_similarities(firsts: Sequence[bytes], seconds: Sequence[bytes], cutoff: float) -> list[float]:
    """Levenshtein similarity (0..1) of each pair, 0.0 where below ``cutoff``; pairs met
    before are looked up, the rest scored in one rapidfuzz batch."""
    keys = [(x, y, cutoff) if x <= y else (y, x, cutoff) for x, y in zip(firsts, seconds, strict=True)]
    known: dict[tuple[bytes, bytes, float], float] = {}
    for key in keys:
        score = _PAIR_SCORES.get(key)
        if score is not None:
            known[key] = score
    missing = [key for key in dict.fromkeys(keys) if key not in known]
    if missing:
        scores = process.cpdist(
            [key[0] for key in missing],
            [key[1] for key in missing],
            scorer=Levenshtein.normalized_similarity,
            score_cutoff=cutoff,
            # Scoring a pair is slow enough that a big batch is worth a second thread.
            workers=1 if len(missing) < PARALLEL_PAIRS else -1,
        )
        fresh = dict(zip(missing, scores.tolist(), strict=True))
        if len(_PAIR_SCORES) + len(fresh) > PAIR_MEMO_ENTRIES:
            _PAIR_SCORES.clear()
        _PAIR_SCORES.update(fresh)  # (each key's score is the same whichever thread wrote it)
        known.update(fresh)
    return [known[key] for key in keys]


def clear_pair_scores() -> None:
    """Forget remembered pair scores (benchmarks measure cold and warm runs)."""
    _PAIR_SCORES.clear()


EMBEDDING_KEY = "embedding"  # Hit.metadata key for a vector a source already computed
MODEL_KEY = "embedding_model"  # ... and for the model that computed it


def _vectors(
    hits: Sequence[Hit], reps: list[int], embed: Embedder | None
) -> tuple[list[int], npt.NDArray[np.float32]]:
    """Unit vectors for the representatives that have or can get one, and which those are.

    A vector in ``Hit.metadata["embedding"]`` (e.g. from an index server) is used as is
    when it comes from the same model (``metadata["embedding_model"]``) and dimension as
    most such vectors here — vectors of different models are not comparable; the rest
    are embedded in one call, when an embedder is given (which must be that same model:
    the engine's embedder is the one its index servers use).
    """
    kinds: dict[int, tuple[object, int]] = {}
    for i in [i for i in reps if EMBEDDING_KEY in hits[i].metadata]:
        vector = hits[i].metadata[EMBEDDING_KEY]
        if isinstance(vector, list | tuple | np.ndarray) and len(vector) > 0:
            kinds[i] = (hits[i].metadata.get(MODEL_KEY), len(vector))
    if not kinds and embed is None:
        return [], np.empty((0, 0), dtype=np.float32)
    common = Counter(kinds.values()).most_common(1)[0][0] if kinds else None  # ties: first seen
    known = [i for i in reps if kinds.get(i) == common] if kinds else []
    have = set(known)
    missing = [i for i in reps if i not in have] if embed is not None else []
    rows: list[npt.NDArray[np.float32]] = []
    if known:
        rows.append(np.asarray([hits[i].metadata[EMBEDDING_KEY] for i in known], dtype=np.float32))
    if missing and embed is not None:
        rows.append(np.asarray(embed([hits[i].content for i in missing]), dtype=np.float32))
    which = known + missing
    if len(which) < 2 or len({r.shape[1] for r in rows}) != 1:
        return [], np.empty((0, 0), dtype=np.float32)
    vectors = np.concatenate(rows)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: npt.NDArray[np.float32] = (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return which, unit


def _semantic_edges(
    hits: Sequence[Hit], reps: list[int], threshold: float, embed: Embedder | None, sets: UnionFind, facts: _Facts
) -> list[Edge]:
    which, vectors = _vectors(hits, reps, embed)
    if not which:
        return []
    sims = np.triu(vectors @ vectors.T, k=1)
    rows, cols = np.nonzero(sims >= threshold)
    names: dict[int, str | None] = {}
    return [
        Edge(which[r], which[c], DedupReason.SEMANTIC, min(1.0, float(sims[r, c])))
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True)
        if sets.find(which[r]) != sets.find(which[c])
        and not _apart(hits[which[r]], hits[which[c]], facts, which[r], which[c])
        and not _named_apart(hits[which[r]], hits[which[c]], names, which[r], which[c])
    ]


def _has_span(hit: Hit) -> bool:
    return bool(hit.path) and hit.start_line is not None and hit.end_line is not None


def _overlap_edges(hits: Sequence[Hit]) -> list[Edge]:
    # Only a path with two or more spans can overlap: group by path, sort within.
    by_path: dict[str, list[tuple[int, int, int]]] = {}
    for i, h in enumerate(hits):
        if _passage(h) and h.path and h.start_line is not None and h.end_line is not None:
            by_path.setdefault(h.path, []).append((h.start_line, h.end_line, i))
    edges: list[Edge] = []
    overlap = DedupReason.OVERLAP
    for spans in by_path.values():
        if len(spans) < 2:
            continue
        spans.sort()  # by start, end; ties in input order
        # the hit reaching furthest in this path so far, and its range
        reach_start, reach_end, reach = spans[0]
        for start, end, i in spans[1:]:
            if start <= reach_end and not other_repositories(hits[reach], hits[i]):
                shared = min(end, reach_end) - start + 1
                shorter = min(end - start + 1, reach_end - reach_start + 1)
                edges.append(Edge(reach, i, overlap, max(0.0, min(1.0, shared / max(1, shorter)))))
                if end > reach_end:
                    reach, reach_start, reach_end = i, start, end
            else:
                reach, reach_start, reach_end = i, start, end
    return edges


def _file_edges(hits: Sequence[Hit], facts: _Facts) -> list[Edge]:
    """A hit naming a whole file (a path, no line range: e.g. a task history's "files
    changed") joins the best chunk of that file, so sources that agree on a file are
    seen to agree. Only the best chunk: the file's other chunks stay separate results.
    A grep answer's scattered lines join the best chunk holding one of them, if any."""
    wholes = [i for i, ref in enumerate(facts.refs) if ref]
    if not wholes:
        return []
    chunks_of: dict[str, list[tuple[tuple[int, float, int, str, str], int]]] = {}
    for i, hit in enumerate(hits):
        if facts.spans[i] and hit.path:
            chunks_of.setdefault(hit.path, []).append((relevance_key(hit), i))
    edges: list[Edge] = []
    first_wholes: dict[str, list[int]] = {}  # each repository's first whole hit of a path
    for i in wholes:
        path = hits[i].path or ""
        chunks = [chunk for chunk in chunks_of.get(path, ()) if not other_repositories(hits[chunk[1]], hits[i])]
        if chunks:
            target: int | None = _joined_chunk(hits, hits[i], chunks)
        else:
            seen = first_wholes.setdefault(path, [])
            target = next((j for j in seen if not other_repositories(hits[j], hits[i])), None)
            if target is None:
                seen.append(i)
        if target is not None:
            edges.append(Edge(target, i, DedupReason.FILE, 1.0))
    return edges


def _joined_chunk(hits: Sequence[Hit], whole: Hit, chunks: list[tuple[tuple[int, float, int, str, str], int]]) -> int:
    """The chunk (of ``chunks``, one file's) a hit standing for that file joins: the best
    one holding a line the hit quotes (a grep answer's), else the best one."""
    quoted = [n for n in whole.metadata.get("line_numbers") or () if isinstance(n, int)]
    if quoted:
        holding = [(key, i) for key, i in chunks
                   if any((hits[i].start_line or 0) <= n <= (hits[i].end_line or 0) for n in quoted)]
        if holding:
            return min(holding)[1]
    return min(chunks)[1]


def _line_count(text: str) -> int:
    """Lines in ``text`` (split at newlines, a final newline not counting as a line)."""
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def merge_span(kept: Hit, others: Sequence[Hit]) -> Hit | None:
    """The union of ``kept`` and overlapping chunks of its file, or None if they disagree.

    Each chunk's lines must match its declared range exactly, and overlapping lines
    must be equal; chunks are walked by start line (``_joined``).
    """
    chain = sorted([kept, *others], key=lambda h: (h.start_line or 0, h.end_line or 0))
    # Copies of one chunk from several servers add nothing once one of them is in: walk
    # each (text, range) once. Before comparing anything, the cheap verdicts: a chunk
    # whose line count is not its range, or two texts for one range (a reformatted copy),
    # cannot merge; copies of one text and range need no merging.
    texts: dict[tuple[int, int], str] = {}  # by range, in chain order
    for hit in {(h.content, h.start_line, h.end_line): h for h in chain}.values():
        start, end = hit.start_line, hit.end_line
        if start is None or end is None or _line_count(hit.content) != end - start + 1:
            return None
        text = hit.content[:-1] if hit.content.endswith("\n") else hit.content
        if texts.setdefault((start, end), text) != text:
            return None
    if len(texts) == 1:
        (start, end), text = next(iter(texts.items()))
        return _spanned(kept, text, start, end, chain)
    joined = _joined(texts)
    if joined is None:
        return None
    text, first, last = joined
    return _spanned(kept, text, first, last, chain)


def _joined(texts: Mapping[tuple[int, int], str]) -> tuple[str, int, int] | None:
    """Chunk texts (no final newline; each with as many lines as its range, ranges in
    order) joined into one span ``(text, first line, last line)``, or None at a gap or
    where overlapping lines differ.

    Works on the strings, not on lists of lines: the lines a chunk shares with the span
    so far are one slice of each, found by stepping over that many newlines, and
    compared in one go (splitting every chunk into lines and joining them again cost
    several times more)."""
    merged, first, end = "", 0, -1
    for index, ((start, stop), text) in enumerate(texts.items()):
        if index == 0:
            merged, first, end = text, start, stop
        elif start > end + 1:
            return None  # a gap: not one span
        elif stop <= end:  # no new lines: the ones it has must be there already
            if stop >= start and not _holds_lines(merged, _line_start_from_end(merged, end - start + 1), text):
                return None
        elif start == end + 1:  # adjacent: nothing shared
            merged = f"{merged}\n{text}" if end >= first else text
            end = stop
        else:  # the span's last ``end - start + 1`` lines must be the text's first
            cut = _after_lines(text, end - start + 1)
            if not _holds_lines(merged, len(merged) - cut, text[:cut]):
                return None
            merged += text[cut:]
            end = stop
    return merged, first, end


def _line_start_from_end(text: str, lines: int) -> int:
    """Where the ``lines``-th line from the end of ``text`` starts (it has that many)."""
    at = len(text)
    for _ in range(lines):
        at = text.rfind("\n", 0, at)
    return at + 1


def _after_lines(text: str, lines: int) -> int:
    """Where the newline ending the ``lines``-th line of ``text`` is (it has more lines)."""
    at = -1
    for _ in range(lines):
        at = text.find("\n", at + 1)
    return at


def _holds_lines(text: str, at: int, lines: str) -> bool:
    """Whether ``lines`` (whole lines) stand in ``text`` from ``at`` on."""
    if at < 0 or (at > 0 and text[at - 1] != "\n") or not text.startswith(lines, at):
        return False
    after = at + len(lines)
    return after == len(text) or text[after] == "\n"


def _spanned(kept: Hit, content: str, start: int, end: int, chain: Sequence[Hit]) -> Hit:
    """A copy of ``kept`` standing for the merged span of ``chain``.

    Built field by field rather than with ``dataclasses.replace``, which costs several
    times more (it walks the dataclass fields) and runs for most shown groups."""
    parts = kept.parts
    return Hit(
        id=kept.id,
        source=kept.source,
        tool=kept.tool,
        title=_span_title(kept, start, chain),
        content=content,
        path=kept.path,
        start_line=start,
        end_line=end,
        uri=kept.uri,
        timestamp=kept.timestamp,
        source_score=kept.source_score,
        source_rank=kept.source_rank,
        priority=kept.priority,
        tokens=0,
        metadata={**kept.metadata, "merged_span": [h.id for h in chain]},
        score=kept.score,
        parts=ScoreParts(dict(parts.parts), dict(parts.raw), parts.combine, parts.total),
    )


def _span_title(kept: Hit, start: int, chain: Sequence[Hit]) -> str:
    """The kept hit's title, unless it only repeats its path (a grep tool's hit for a
    line, code-index-mcp's ``src/click/decorators.py``) and a chunk of the span that
    starts where it does has a name of its own (``help_option``)."""
    if kept.title != kept.path:
        return kept.title
    return next((h.title for h in chain if h.start_line == start and h.title and h.title != h.path), kept.title)


def _overlapping_same_file(kept: Hit, members: Sequence[Hit]) -> list[Hit]:
    """Members of the kept hit's file whose ranges chain-overlap the kept range."""
    if not _passage(kept):
        return []
    lo, hi = kept.start_line or 0, kept.end_line or 0
    chain: list[Hit] = []
    pending = [m for m in members if m.path == kept.path and _passage(m)]
    if len(pending) == 1:  # the common case: one other copy of the chunk
        overlaps = (pending[0].start_line or 0) <= hi and (pending[0].end_line or 0) >= lo
        return pending if overlaps else []
    pending.sort(key=lambda h: h.start_line or 0)
    grew = True
    while grew:
        grew = False
        for hit in list(pending):
            if (hit.start_line or 0) <= hi and (hit.end_line or 0) >= lo:
                lo, hi = min(lo, hit.start_line or 0), max(hi, hit.end_line or 0)
                chain.append(hit)
                pending.remove(hit)
                grew = True
    return chain


def _member_reason(node: int, kept: int, edges_of: Mapping[int, list[Edge]]) -> tuple[DedupReason, float]:
    """The edge that best explains why ``node`` is in the group: one to the kept hit if any."""
    edges = edges_of[node]
    if len(edges) == 1:  # the common case: no choice to make (and mostly a hash match)
        similarity = edges[0].similarity
        return edges[0].reason, similarity if similarity == 1.0 else round(similarity, 4)
    best: Edge | None = None
    best_key = (2, 9, 0.0)
    for edge in edges:
        key = (0 if kept in (edge.a, edge.b) else 1, _REASON_ORDER[edge.reason], -edge.similarity)
        if key < best_key:
            best, best_key = edge, key
    assert best is not None  # every member has at least one edge
    return best.reason, round(best.similarity, 4)


def find_edges(
    hits: Sequence[Hit], config: DedupConfig, embed: Embedder | None = None, sets: UnionFind | None = None
) -> list[Edge]:
    """All duplicate evidence between ``hits`` under ``config``, joined into ``sets``.

    Cheap evidence first (hash, overlap); the costly kinds only score pairs that are
    not joined yet.
    """
    sets = sets or UnionFind(len(hits))
    facts = _Facts.of(hits)
    edges, reps, squeezed = _hash_edges(hits, facts.refs)
    if config.merge_overlaps:
        edges += _overlap_edges(hits)
        edges += _file_edges(hits, facts)
    for edge in edges:
        sets.union(edge.a, edge.b)
    fuzzy = _fuzzy_edges(hits, reps, squeezed, config.fuzzy_threshold, sets, facts)
    for edge in fuzzy:
        sets.union(edge.a, edge.b)
    edges += fuzzy
    if config.semantic:
        semantic = _semantic_edges(hits, reps, config.semantic_threshold, embed, sets, facts)
        for edge in semantic:
            sets.union(edge.a, edge.b)
        edges += semantic
    return edges


def deduplicate(
    hits: Sequence[Hit],
    config: DedupConfig | None = None,
    embed: Embedder | None = None,
    *,
    merge_spans: bool = True,
    quote_files: bool = False,
) -> DedupResult:
    """Group duplicate hits; return the kept version of each item and the visible groups.

    ``merge_spans=False`` leaves overlapping chunks unmerged, for callers that merge only
    the groups they will show (``merge_group_spans``), since merging costs per group.
    ``quote_files=True`` keeps a file's chunk rather than a higher-ranked hit that only
    names the file (``_quote_first``): for lookups, where the code is the answer.
    """
    config = config or DedupConfig()
    if not config.enabled or len(hits) < 2:
        return DedupResult(hits=list(hits), groups=[])
    sets = UnionFind(len(hits))
    edges = find_edges(hits, config, embed, sets)
    if not edges:
        return DedupResult(hits=list(hits), groups=[])
    edges_of: defaultdict[int, list[Edge]] = defaultdict(list)
    for edge in edges:
        edges_of[edge.a].append(edge)
        edges_of[edge.b].append(edge)
    components: dict[int, list[int]] = {}
    for node in edges_of:  # only hits with an edge can share a group
        components.setdefault(sets.find(node), []).append(node)
    kept_at: dict[int, Hit] = {}
    folded: set[int] = set()
    groups: list[DedupGroup] = []
    group_keys: list[tuple[int, float, int, str, str]] = []
    for members in components.values():
        if len(members) == 2:  # most groups: a pair, no sorting needed
            a, b = members
            key_a, key_b = relevance_key(hits[a]), relevance_key(hits[b])
            keys = {a: key_a, b: key_b}
            order = [a, b] if key_a <= key_b else [b, a]  # a first on a tie, as a stable sort
        else:
            keys = {i: relevance_key(hits[i]) for i in members}
            order = sorted(members, key=keys.__getitem__)
        if quote_files and _names_file(hits[order[0]]):
            order = _quote_first(order, hits)
        best = order[0]
        group = DedupGroup(kept=hits[best])
        for i in order[1:]:
            reason, similarity = _member_reason(i, best, edges_of)
            group.members.append(GroupMember(hits[i], reason, similarity))
        folded.update(order[1:])
        if merge_spans and config.merge_overlaps:
            merge_group_span(group)
        kept_at[best] = group.kept
        groups.append(group)
        group_keys.append(keys[best] if group.kept is hits[best] else relevance_key(group.kept))
    unique = [kept_at.get(i, hit) for i, hit in enumerate(hits) if i not in folded]
    groups = [groups[g] for g in sorted(range(len(groups)), key=group_keys.__getitem__)]
    return DedupResult(hits=unique, groups=groups, by_kept={g.kept.id: g for g in groups})


def _quote_first(order: list[int], hits: Sequence[Hit]) -> list[int]:
    """``order`` with its best chunk (a hit with lines) first, if it has one.

    A group led by a hit that names a whole file (a task history's "files changed")
    and holding a chunk of that file stands for the file. Unless the question is about
    the past, the chunk is the answer: it is kept and shown, and the history is the
    member that says another source agrees; otherwise a question shows a run of commit
    titles where the code should be (for lookups it puts the definition first far more
    often: ``bench/identifier_queries.py``, figures in docs/benchmarks.md)."""
    for at, i in enumerate(order):
        if _passage(hits[i]):
            return [i, *order[:at], *order[at + 1 :]]
    return order


def merge_group_span(group: DedupGroup) -> Hit:
    """Make ``group.kept`` the union span of its file's overlapping chunks, when they agree."""
    if "merged_span" in group.kept.metadata:
        return group.kept
    chain = _overlapping_same_file(group.kept, [m.hit for m in group.members])
    merged = merge_span(group.kept, chain) if chain else None
    if merged is not None:
        group.kept = merged
    return group.kept


def why_folded(member: GroupMember, kept: Hit | None = None) -> str:
    """Why ``member`` was folded into ``kept`` (the result above, when not given), in
    words, for the list and the detail."""
    if kept is None:
        where = "the result above"
    else:
        where = kept.location if kept.path or kept.uri else kept.title
    reason = member.reason
    if reason is DedupReason.HASH:
        return f"same text as {where}"
    if reason is DedupReason.FUZZY:
        return f"near-identical ({member.similarity:.0%}) to {where}"
    if reason is DedupReason.SEMANTIC:
        return f"same meaning ({member.similarity:.0%} similar) as {where}"
    if reason is DedupReason.OVERLAP:
        return "overlapping lines of the same file"
    if _names_file(member.hit):
        return f"names the same file: evidence for {where}"
    return f"the same file as {where}"


def fold_label(member: GroupMember) -> str:
    """``why_folded`` in a few words, for a narrow cell: "near-identical (92%)"."""
    reason = member.reason
    if reason is DedupReason.HASH:
        return "same text"
    if reason is DedupReason.FUZZY:
        return f"near-identical ({member.similarity:.0%})"
    if reason is DedupReason.SEMANTIC:
        return f"same meaning ({member.similarity:.0%})"
    if reason is DedupReason.OVERLAP:
        return "overlapping lines"
    return "evidence: same file" if _names_file(member.hit) else "same file"
