"""Dedup: fold duplicate hits into visible groups, keeping the most relevant version.

Four kinds of evidence join two hits (each edge keeps its reason and similarity):

* ``hash``     — same text once all whitespace is removed (``text.squeeze``; for prose —
  hits that are not code by path or look — Markdown markup and URLs too, so one
  document served as Markdown and as plain text matches), or the same uri for
  content-less hits; similarity 1.0. Hits naming a whole file (a path, no lines)
  must also name the same path: their text is *about* the file, and a task history
  gives every file one change touched the same text.
* ``fuzzy``    — Levenshtein similarity (rapidfuzz, normalised to 0..1) of those
  squeezed texts >= ``fuzzy_threshold`` (0.80). Only candidate pairs from
  ``blocking.candidate_pairs`` and a length bound are scored, in one C++ batch.
* ``semantic`` — cosine of embeddings >= ``semantic_threshold`` (0.90): vectors a source
  put in ``Hit.metadata["embedding"]``, else from an injected embedder
  ``embed(texts) -> (n, d) array`` (rows are normalised here); skipped without either.
* ``overlap``  — same path, overlapping line ranges; similarity is the overlapping
  lines over the shorter range.

Similar-looking hits are kept apart when there is evidence they are different results
(``distinct``: two different whole files, disjoint lines of one file, or different
defined names). A union-find
joins edges transitively. In each group the kept hit is the most relevant
by this rule: best (lowest) source rank, then higher MCP ``priority``, then longer
content (the more complete version), then source name and id for determinism. When
overlapping chunks of one file agree line by line, the kept hit becomes the union span
(a copy; inputs are never mutated); otherwise the best chunk is kept and the overlap is
still recorded in the group.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from engine.config.schema import DedupConfig
from engine.model import DedupGroup, DedupReason, GroupMember, Hit

from .blocking import candidate_pairs
from .text import is_code, squeeze, squeeze_prose
from .unionfind import UnionFind

Embedder = Callable[[list[str]], npt.NDArray[np.floating]]

MIN_FUZZY_CHARS = 40  # shorter texts (titles, one-liners) only fold on an exact match
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


def _hash_edges(hits: Sequence[Hit]) -> tuple[list[Edge], list[int], list[bytes]]:
    """Edges for identical texts (or uris); a representative per text and its squeezed form."""
    first: dict[bytes, int] = {}
    edges: list[Edge] = []
    reps: list[int] = []
    squeezed: list[bytes] = []
    for i, hit in enumerate(hits):
        prose = not is_code(hit.path, hit.content)
        key = squeeze_prose(hit.content) if prose else squeeze(hit.content)
        if not key:
            if not hit.uri:
                continue
            key = b"\x00uri:" + hit.uri.encode("utf-8", "surrogatepass")
        elif _is_file_reference(hit):
            # Text *about* a file (a task history's "why"): equal for every file one task
            # touched, yet each names a different result.
            key += b"\x00path:" + (hit.path or "").encode("utf-8", "surrogatepass")
        j = first.setdefault(key, i)
        if j != i:
            edges.append(Edge(j, i, DedupReason.HASH, 1.0))
        elif not key.startswith(b"\x00uri:"):
            reps.append(i)
            squeezed.append(key)
    return edges, reps, squeezed


_DEFINED_NAME = re.compile(
    r"^[ \t]*(?:export\s+|pub\s+|async\s+|public\s+|static\s+)*(?:def|class|function|func|fn)\s+([A-Za-z_]\w*)",
    re.M,
)


def defined_name(text: str) -> str | None:
    """The first function/class name a chunk defines, if any."""
    match = _DEFINED_NAME.search(text, 0, 4000)
    return match.group(1) if match else None


def _is_file_reference(hit: Hit) -> bool:
    """A hit that names a whole file (a path, no line range) rather than quoting code."""
    return bool(hit.path) and not _has_span(hit)


def distinct(a: Hit, b: Hit) -> bool:
    """Evidence that two similar-looking hits are different results, which vetoes fuzzy and
    semantic edges: they name two different whole files, sit at disjoint lines of one
    file, or define different names (``safe_load`` vs ``full_load`` share most characters
    but are not the same function)."""
    if _is_file_reference(a) and _is_file_reference(b) and a.path != b.path:
        return True
    same_file = bool(a.path) and a.path == b.path and _has_span(a) and _has_span(b)
    if same_file and ((a.end_line or 0) < (b.start_line or 0) or (b.end_line or 0) < (a.start_line or 0)):
        return True
    name_a, name_b = defined_name(a.content), defined_name(b.content)
    return name_a is not None and name_b is not None and name_a != name_b


def _fuzzy_edges(
    hits: Sequence[Hit], reps: list[int], squeezed: list[bytes], threshold: float, sets: UnionFind
) -> list[Edge]:
    keep = [k for k, s in enumerate(squeezed) if len(s) >= MIN_FUZZY_CHARS]
    if len(keep) < 2:
        return []
    texts = [squeezed[k] for k in keep]
    pairs = candidate_pairs(texts)
    # pairs already joined (by hash or overlap) need no scoring
    pairs = pairs[[sets.find(reps[keep[a]]) != sets.find(reps[keep[b]]) for a, b in pairs.tolist()]]
    if not pairs.size:
        return []
    lengths = np.fromiter((len(t) for t in texts), dtype=np.float64, count=len(texts))
    la, lb = lengths[pairs[:, 0]], lengths[pairs[:, 1]]
    # Levenshtein >= |la - lb|, so similarity <= min/max: skip pairs that cannot pass.
    pairs = pairs[np.minimum(la, lb) / np.maximum(la, lb) >= threshold]
    if not pairs.size:
        return []
    scores = process.cpdist(
        [texts[a] for a in pairs[:, 0]],
        [texts[b] for b in pairs[:, 1]],
        scorer=Levenshtein.normalized_similarity,
        score_cutoff=threshold,
        workers=1,
    )
    edges = []
    for p in np.nonzero(scores >= threshold)[0].tolist():
        a, b = reps[keep[int(pairs[p, 0])]], reps[keep[int(pairs[p, 1])]]
        if not distinct(hits[a], hits[b]):
            edges.append(Edge(a, b, DedupReason.FUZZY, float(scores[p])))
    return edges


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
    for i in reps:
        vector = hits[i].metadata.get(EMBEDDING_KEY)
        if isinstance(vector, list | tuple | np.ndarray) and len(vector) > 0:
            kinds[i] = (hits[i].metadata.get(MODEL_KEY), len(vector))
    common = Counter(kinds.values()).most_common(1)[0][0] if kinds else None  # ties: first seen
    known = [i for i in reps if kinds.get(i) == common and common is not None]
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
    hits: Sequence[Hit], reps: list[int], threshold: float, embed: Embedder | None, sets: UnionFind
) -> list[Edge]:
    which, vectors = _vectors(hits, reps, embed)
    if not which:
        return []
    sims = np.triu(vectors @ vectors.T, k=1)
    rows, cols = np.nonzero(sims >= threshold)
    return [
        Edge(which[r], which[c], DedupReason.SEMANTIC, min(1.0, float(sims[r, c])))
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True)
        if sets.find(which[r]) != sets.find(which[c]) and not distinct(hits[which[r]], hits[which[c]])
    ]


def _has_span(hit: Hit) -> bool:
    return bool(hit.path) and hit.start_line is not None and hit.end_line is not None


def _overlap_edges(hits: Sequence[Hit]) -> list[Edge]:
    spans = sorted(
        (i for i, h in enumerate(hits) if _has_span(h)),
        key=lambda i: (hits[i].path or "", hits[i].start_line or 0, hits[i].end_line or 0),
    )
    edges: list[Edge] = []
    reach = -1  # index of the hit reaching furthest in the current run of one path
    for i in spans:
        hit = hits[i]
        prev = hits[reach] if reach >= 0 else None
        if prev is not None and prev.path == hit.path and (hit.start_line or 0) <= (prev.end_line or 0):
            start, end = hit.start_line or 0, hit.end_line or 0
            shared = min(end, prev.end_line or 0) - start + 1
            shorter = min(end - start + 1, (prev.end_line or 0) - (prev.start_line or 0) + 1)
            edges.append(Edge(reach, i, DedupReason.OVERLAP, max(0.0, min(1.0, shared / max(1, shorter)))))
            if end > (prev.end_line or 0):
                reach = i
        else:
            reach = i
    return edges


def _file_edges(hits: Sequence[Hit]) -> list[Edge]:
    """A hit naming a whole file (a path, no line range: e.g. a task history's "files
    changed") joins the best chunk of that file, so sources that agree on a file are
    seen to agree. Only the best chunk: the file's other chunks stay separate results."""
    best_chunk: dict[str, int] = {}
    for i, hit in enumerate(hits):
        if _has_span(hit) and hit.path:
            j = best_chunk.get(hit.path)
            if j is None or relevance_key(hit) < relevance_key(hits[j]):
                best_chunk[hit.path] = i
    edges: list[Edge] = []
    first_whole: dict[str, int] = {}
    for i, hit in enumerate(hits):
        if not hit.path or _has_span(hit):
            continue
        target = best_chunk.get(hit.path, first_whole.get(hit.path))
        if target is None:
            first_whole[hit.path] = i
        else:
            edges.append(Edge(target, i, DedupReason.FILE, 1.0))
    return edges


def _content_lines(hit: Hit) -> list[str] | None:
    """The hit's lines when they match its declared range exactly, else None."""
    lines = hit.content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if hit.start_line is None or hit.end_line is None:
        return None
    return lines if len(lines) == hit.end_line - hit.start_line + 1 else None


def merge_span(kept: Hit, others: Sequence[Hit]) -> Hit | None:
    """The union of ``kept`` and overlapping chunks of its file, or None if they disagree.

    Walks the chunks by start line, checking that overlapping lines are equal (list
    slices compare in C) and appending what each chunk adds past the current end.
    """
    chain = sorted([kept, *others], key=lambda h: (h.start_line or 0, h.end_line or 0))
    merged: list[str] | None = None
    first = end = 0
    for hit in chain:
        lines = _content_lines(hit)
        if lines is None:
            return None
        start = hit.start_line or 0
        if merged is None:
            merged, first, end = list(lines), start, start + len(lines) - 1
            continue
        if start > end + 1:
            return None  # a gap: not one span
        shared = min(end, start + len(lines) - 1) - start + 1
        if merged[start - first : start - first + shared] != lines[:shared]:
            return None
        merged.extend(lines[shared:])
        end = max(end, start + len(lines) - 1)
    assert merged is not None
    return dataclasses.replace(
        kept,
        content="\n".join(merged),
        start_line=first,
        end_line=end,
        tokens=0,
        parts=dataclasses.replace(kept.parts, parts=dict(kept.parts.parts), raw=dict(kept.parts.raw)),
        metadata={**kept.metadata, "merged_span": [h.id for h in chain]},
    )


def _overlapping_same_file(kept: Hit, members: Sequence[Hit]) -> list[Hit]:
    """Members of the kept hit's file whose ranges chain-overlap the kept range."""
    if not _has_span(kept):
        return []
    lo, hi = kept.start_line or 0, kept.end_line or 0
    chain: list[Hit] = []
    pending = sorted((m for m in members if m.path == kept.path and _has_span(m)), key=lambda h: h.start_line or 0)
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


def _member_reason(node: int, kept: int, edges_of: dict[int, list[Edge]]) -> tuple[DedupReason, float]:
    """The edge that best explains why ``node`` is in the group: one to the kept hit if any."""
    best: Edge | None = None
    best_key = (2, 9, 0.0)
    for edge in edges_of[node]:
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
    edges, reps, squeezed = _hash_edges(hits)
    if config.merge_overlaps:
        edges += _overlap_edges(hits)
        edges += _file_edges(hits)
    for edge in edges:
        sets.union(edge.a, edge.b)
    fuzzy = _fuzzy_edges(hits, reps, squeezed, config.fuzzy_threshold, sets)
    for edge in fuzzy:
        sets.union(edge.a, edge.b)
    edges += fuzzy
    if config.semantic:
        semantic = _semantic_edges(hits, reps, config.semantic_threshold, embed, sets)
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
) -> DedupResult:
    """Group duplicate hits; return the kept version of each item and the visible groups.

    ``merge_spans=False`` leaves overlapping chunks unmerged, for callers that merge only
    the groups they will show (``merge_group_spans``), since merging costs per group.
    """
    config = config or DedupConfig()
    if not config.enabled or len(hits) < 2:
        return DedupResult(hits=list(hits), groups=[])
    sets = UnionFind(len(hits))
    edges = find_edges(hits, config, embed, sets)
    if not edges:
        return DedupResult(hits=list(hits), groups=[])
    edges_of: dict[int, list[Edge]] = {}
    for edge in edges:
        edges_of.setdefault(edge.a, []).append(edge)
        edges_of.setdefault(edge.b, []).append(edge)
    components: dict[int, list[int]] = {}
    for node in edges_of:  # only hits with an edge can share a group
        components.setdefault(sets.find(node), []).append(node)
    kept_at: dict[int, Hit] = {}
    folded: set[int] = set()
    groups: list[DedupGroup] = []
    for members in components.values():
        keys = {i: relevance_key(hits[i]) for i in members}
        order = sorted(members, key=keys.__getitem__)
        best = order[0]
        group = DedupGroup(kept=hits[best])
        for i in order[1:]:
            reason, similarity = _member_reason(i, best, edges_of)
            group.members.append(GroupMember(hit=hits[i], reason=reason, similarity=similarity))
            folded.add(i)
        if merge_spans and config.merge_overlaps:
            merge_group_span(group)
        kept_at[best] = group.kept
        groups.append(group)
    unique = [kept_at.get(i, hit) for i, hit in enumerate(hits) if i not in folded]
    groups.sort(key=lambda g: relevance_key(g.kept))
    return DedupResult(hits=unique, groups=groups, by_kept={g.kept.id: g for g in groups})


def merge_group_span(group: DedupGroup) -> Hit:
    """Make ``group.kept`` the union span of its file's overlapping chunks, when they agree."""
    if "merged_span" in group.kept.metadata:
        return group.kept
    chain = _overlapping_same_file(group.kept, [m.hit for m in group.members])
    merged = merge_span(group.kept, chain) if chain else None
    if merged is not None:
        group.kept = merged
    return group.kept
