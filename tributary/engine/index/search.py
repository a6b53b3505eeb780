"""Hybrid search over one index: dense KNN and BM25, fused by reciprocal rank (RRF).

A lookup (``tributary.engine.query.kinds.lookup_names``: ``FixtureDef``, ``Config.getini``,
``where is getfixturemarker defined``) adds a third list: the chunks whose symbol is
the name (``IndexStore.symbol_search``), so a definition ranks first even where neither
its words nor its meaning stand out (a long class header, a one-line function). Only
for lookups: a query that mentions a name is not asking where it is defined (on the
pytest benchmark's commit messages the list cost files-only MRR). A question (how,
what, why …, or ending in "?") that writes a qualified name (``res.redirect``) gets
the chunks whose symbol is that whole name, at half the weight.

Each list is cut to a candidate pool larger than ``top_k`` so fusion can promote a
chunk that is good on both signals but top on neither. Filters (language, kind, path
glob) apply inside both retrievers, before ranking.
"""

from __future__ import annotations

import functools
import glob
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np
import numpy.typing as npt

from tributary.engine.index.file_names import named_ranks
from tributary.engine.index.members import member_lines, members_of
from tributary.engine.index.priors import (
    CODE,
    asked_roles,
    factor,
    role_among,
    superseded,
    task_asked_roles,
    translated,
)
from tributary.engine.index.store import (
    IndexStore,
    QueryVector,
    SearchFilter,
    StoredChunk,
    symbol_order,
    symbol_parts,
)
from tributary.engine.localsearch.embedder import Embedder, Vectors
from tributary.engine.localsearch.fts import fts_terms, identifier_terms, keyword_order
from tributary.engine.localsearch.fusion import RRF_K
from tributary.engine.localsearch.longquery import (
    Frame,
    TaskQuery,
    is_task_question,
    module_paths,
    path_suffixes,
    read_task,
)
from tributary.engine.model import LED_BY_ERROR, LED_BY_QUOTE, LED_BY_TRACEBACK
from tributary.engine.pipeline.expand import CHUNKS_PER_FILE, FOCUS_FILES, repeats_last
from tributary.engine.query.kinds import asked_qualified_names, joined_names, lookup_names

MIN_POOL = 800  # a deeper pool of chunks finds more right files (docs/benchmarks.md)
DENSE_WEIGHT = 1.0
KEYWORD_WEIGHT = 1.0
FILE_WEIGHT = 2.0  # files ranked by the summed BM25 of their pooled chunks
# Files ranked by the summed cosine of their pooled chunks: the same whole-file evidence
# in meaning. Not for an issue (its vector is its title, and the files it names and its
# traceback have lists of their own) nor a lookup (docs/benchmarks.md).
DENSE_FILE_WEIGHT = 0.5
SYMBOL_WEIGHT = 2.0  # chunks defining a name the query asks for (bench/identifier_queries.py)
SYMBOL_POOL = 50
LOOKUP_CHARS = 400  # a lookup is a few names: the head of the query holds them
NAME_WEIGHT = 0.25  # files whose name the question spells out (tributary.engine.index.file_names)
PRIOR_POOL = 10  # × top_k: the fused candidates whose file roles are weighed
PER_FILE = 2  # chunks of one file at full score; the next ones keep REPEAT_FACTOR of it
REPEAT_FACTOR = 0.3
# Past this many chunks of one file, each keeps REPEAT_FACTOR * CROWD_FACTOR: a file with
# seventy matching sections (a changelog) then leaves room for thirty other files.
CROWD_LIMIT = 3
CROWD_FACTOR = 0.1
# At least this share of the hits come from distinct files while the candidates hold
# enough of them: a 300-chunk file that matches every word would otherwise fill a
# hundred hits with its own chunks and leave fusion a dozen files to choose from.
FILE_SHARE = 0.3
# Files of roles a question does not ask for (tests, docs ...) listed at their role's
# score; each further one keeps ROLE_CROWD_FACTOR of it (``crowd_roles``).
ROLE_LIMIT = 2
ROLE_CROWD_FACTOR = 0.3
# An issue-length question (``tributary.engine.localsearch.longquery``) adds lists of its own:
# the definitions of the names it uses, the files it names (tracebacks, paths, dotted
# modules) and the words of its title, each a share of the keyword list's weight.
TASK_SYMBOL_SHARE = 0.75
# A question (not a lookup) that writes a qualified name (``res.redirect``): the
# chunks defining it, a share of the symbol list's weight (a lookup's is whole).
QUESTION_SYMBOL_SHARE = 0.5
TASK_PATH_SHARE = 1.0
TASK_TITLE_SHARE = 0.5
TASK_PHRASE_SHARE = 1.0
PHRASE_POOL = 400  # chunks of the phrases' words read for the phrases themselves
PHRASE_MIN_RUN = 3  # words of a message in a row that count as the message
PER_NAME = 5  # definitions taken per name the task uses
SPREAD_POOL = 50  # definitions of a name read to tell whether more than one file has one
TASK_LEAD_CHUNKS = 40  # a task: chunks of its first file returned, for the context to read
# A task's traceback: the file of its innermost frame in this repository leads when it is
# among the first files (``_lead_file``), by this much above the previous first.
FRAME_LEAD_FILES = 3
FRAME_LEAD_MARGIN = 0.02
# A frame's function whose name this share of the index's files use (and at least
# HELPER_MIN_FILES), HELPER_RATIO times as many as define it, is a helper the error
# passed through (``sympify``, a printer's ``_print``): the frame that called it is read
# instead. A name many classes define (``__new__``, ``eval``) is each class's own.
HELPER_SHARE = 0.05
HELPER_MIN_FILES = 20
HELPER_RATIO = 10
HELPER_POOL = 2000  # chunks read to count the files that use a name
REJECTING_LEAD_FILES = 10  # how far down the file of a function an error names can lead from
FRAMES_READ = 6  # frames in this repository looked at, innermost first
QUOTED_POOL = 100  # chunks of a quoted line's words read for the line itself
QUOTED_MAX_FILES = 2  # a quoted line in more files than this is anyone's (a common idiom)
MEMBER_POOL = 200  # definitions of a member's name searched for the class the task names
PER_PATH = 30  # chunks taken per file the task names
IN_FILE_K = 5  # RRF's k where a focused file's chunks are ranked among themselves
READ_WHOLE_LINES = 400  # a function the task names, up to this long, is read whole


@dataclass(frozen=True, slots=True)
class Weights:
    dense: float = DENSE_WEIGHT
    keyword: float = KEYWORD_WEIGHT
    file: float = FILE_WEIGHT
    symbol: float = SYMBOL_WEIGHT
    name: float = NAME_WEIGHT
    k: int = RRF_K
    dense_file: float = DENSE_FILE_WEIGHT


@dataclass(frozen=True, slots=True)
class SearchHit:
    path: str  # repo-relative
    repo: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    language: str
    score: float
    content: str
    signature: str | None = None
    # Each retriever's own view of the chunk, for confidence and the score breakdown:
    # cosine of query and chunk, FTS5 BM25 (higher is better), 1-based ranks, None where
    # the chunk was not in that retriever's pool; whether it defines a looked-up name.
    cosine: float | None = None
    bm25: float | None = None
    dense_rank: int | None = None
    keyword_rank: int | None = None
    symbol_match: bool = False
    role: str = "code"  # tributary.engine.index.priors: code, test, doc, example, vendored, ...
    fused: float | None = None  # the score before the role's prior
    name_match: bool = False  # the file's name is made of the query's words
    # why a task's answer begins with this chunk's file when its score did not put it
    # there: ``LED_BY_TRACEBACK``, ``LED_BY_ERROR`` or ``LED_BY_QUOTE`` ("" when nothing lifted it)
    led_by: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def make_filter(
    store: IndexStore,
    *,
    language: str | None = None,
    kinds: Sequence[str] | None = None,
    path_glob: str | None = None,
) -> SearchFilter:
    return SearchFilter(
        languages=(language.lower(),) if language else None,
        kinds=tuple(kinds) if kinds else None,
        path_ids=store.chunk_ids_matching(path_glob) if path_glob else None,
    )


def hybrid_search(
    store: IndexStore,
    query: str,
    query_vector: QueryVector,
    *,
    repo: str,
    top_k: int = 10,
    where: SearchFilter | None = None,
    pool: int | None = None,
    weights: Weights | None = None,
) -> list[SearchHit]:
    """The ``top_k`` chunks for ``query``; ``query_vector`` None means keyword only, and
    a function in its place embeds the query while the keyword search runs."""
    where = where or SearchFilter()
    weights = weights or Weights()
    size = max(pool or 0, MIN_POOL, top_k * 3)
    task = read_task(query) if is_task_question(query) else None
    keyword_query = " ".join(task.terms) if task is not None else query
    dense, keyword = store.candidates(keyword_query, query_vector, size, where)
    ranked_dense = _with_unembedded(store, dense, keyword) if query_vector is not None else dense
    lists: list[tuple[float, Sequence[int]]] = []
    if query_vector is not None:
        lists.append((weights.dense, [cid for cid, _ in ranked_dense]))
    lists.append((weights.keyword, [cid for cid, _ in keyword]))
    symbols: list[int] = []
    names: frozenset[str] = frozenset()
    if task is not None:
        lists.extend(_task_lists(store, task, keyword, size, where, weights))
        used = [name for name, _ in task.names]
        symbols = _task_definitions(store, task, used, where) if weights.symbol else []
        if symbols:
            lists.append((weights.symbol * TASK_SYMBOL_SHARE, symbols))
    else:
        names = lookup_names(query)
        if names and weights.symbol:
            written = frozenset(_WRITTEN_NAME.findall(query[:LOOKUP_CHARS]))
            symbols = store.symbol_search(names, SYMBOL_POOL, where, written)
            lists.append((weights.symbol, symbols))
            paired = _paired_members(store, symbols, written)
            if paired:
                lists.append((weights.symbol, paired))
        elif weights.symbol and (spelled := joined_names(query)):
            symbols = store.symbol_search(spelled, SYMBOL_POOL, where)
            if symbols:  # the phrase spells a name the index defines: a lookup after all
                names = spelled
                lists.append((weights.symbol, symbols))
        elif weights.symbol and (qualified := asked_qualified_names(query[:LOOKUP_CHARS])):
            symbols = _written_definitions(store, qualified, where)
            if symbols:
                lists.append((weights.symbol * QUESTION_SYMBOL_SHARE, symbols))
    whole_files = [(weights.file, keyword)]
    if task is None and not names:  # a lookup's answer is the definition, not a file
        whole_files.append((weights.dense_file, ranked_dense))
    ranked = _top_fused(store, lists, whole_files, weights.k, None)
    best = ranked[: top_k * PRIOR_POOL + 20]
    best += _other_files(store, best, ranked[len(best) :], math.ceil(FILE_SHARE * top_k))
    chunks = store.chunks_by_id([cid for cid, _ in best])
    asked = task_asked_roles(task.title) if task is not None else asked_roles(query)
    held = _indexed(store)
    older = superseded((chunk.path for chunk in chunks.values()), exists=held)
    copies = translated((chunk.path for chunk in chunks.values()), exists=held)
    seen_dense = {cid: (rank, score) for rank, (cid, score) in enumerate(dense, 1)}
    seen_keyword = {cid: (rank, score) for rank, (cid, score) in enumerate(keyword, 1)}
    defines = set(symbols)
    paths = (c.path for cid, _ in best if (c := chunks.get(cid)))
    named = named_ranks(paths, task.title if task is not None else query, names) if weights.name else {}
    hits: list[SearchHit] = []
    for cid, fused in best:
        chunk = chunks.get(cid)
        if chunk is None:  # deleted between the two reads
            continue
        role = role_among(chunk.path, chunk.language, older=older, copies=copies)
        name_rank = named.get(chunk.path)
        if name_rank is not None:
            fused += weights.name / (weights.k + name_rank)
        score = fused * factor(role, asked, task=task is not None)
        d_rank, cosine = seen_dense.get(cid, (None, None))
        k_rank, bm25 = seen_keyword.get(cid, (None, None))
        hits.append(
            SearchHit(
                chunk.path, repo, chunk.start_line, chunk.end_line, chunk.symbol, chunk.kind,
                chunk.language, round(score, 6), chunk.content, chunk.signature,
                _rounded(cosine), _rounded(bm25), d_rank, k_rank, cid in defines,
                role=role, fused=round(fused, 6), name_match=name_rank is not None,
            )
        )  # fmt: skip
    hits.sort(key=lambda hit: -hit.score)  # stable: equal scores keep the fused order
    if task is None:  # a task has its own, lower factors for these roles
        hits = crowd_roles(hits, asked)
    else:
        quoted = _quoting_chunks(store, task.quoted, where)
        rejecting = _rejecting_definition(store, task, where)
        frames = task.frames if rejecting is None else (rejecting, *task.frames)
        led = hits if rejecting is None else _lead_file(hits, rejecting.path, REJECTING_LEAD_FILES, LED_BY_ERROR)
        if rejecting is not None and led and led[0].path == rejecting.path:
            hits = led
        elif (raised := _innermost_file(store, task, where)) is not None:
            hits = _lead_file(hits, raised)
        else:
            hits = _lead_file(hits, _quoted_file(hits, quoted), led_by=LED_BY_QUOTE)
    listed = cover_files(spread_files(hits), top_k)
    if task is None:
        return _classes_outlined(store, listed) if names else listed
    leaders = _first_paths(listed, FOCUS_FILES)
    ordered = _in_file_order(
        store, leaders, _in_file_terms(task), hits, repo, where, frames, _named(task), task.phrases,
        task.constructed, frozenset(quoted),
    )
    return focus_files(listed, ordered, top_k, lead=TASK_LEAD_CHUNKS)


def _with_unembedded(
    store: IndexStore, dense: Sequence[tuple[int, float]], keyword: Sequence[tuple[int, float]]
) -> list[tuple[int, float]]:
    """The dense ranking, with each keyword match that has no vector yet (written moments
    ago, or while a new repository's vectors are being made) placed at its keyword rank,
    with the cosine of the chunk it displaces: for lack of a vector it would otherwise
    rank below every embedded chunk, so code just written would not be found by its own
    words. With every vector made, or none yet, the dense ranking as it is. (Only the
    ranking: a hit reports the cosine and dense rank of its own vector, none here.)"""
    waiting = store.unembedded([cid for cid, _ in keyword]) if keyword and dense else set()
    if not waiting:  # (no vector at all: nothing embedded to rank below)
        return list(dense)
    ranked = list(dense)
    for rank, (cid, _) in enumerate(keyword):
        if cid in waiting:
            at = min(rank, len(ranked))  # (never empty: it holds the dense ranking's chunks)
            ranked.insert(at, (cid, ranked[min(at, len(ranked) - 1)][1]))
    return ranked


PAIRED_MEMBERS = 5  # the symbol list's first chunks checked for a member named with its class


def _paired_members(store: IndexStore, symbols: Sequence[int], written: frozenset[str]) -> list[int]:
    """The members whose class the lookup also writes (``APIRouter include_router``:
    ``APIRouter.include_router``), as a list of their own: first in the symbol list
    (``symbol_order``), they still tied with a namesake whose chunk is shorter
    (``FastAPI.include_router``), which both names do not point at."""
    if len(written) < 2:  # (a class and its member are two names)
        return []
    chunks = store.chunks_by_id(list(symbols[:PAIRED_MEMBERS]))
    return [cid for cid in symbols[:PAIRED_MEMBERS]
            if (chunk := chunks.get(cid)) is not None and symbol_order(chunk.symbol or "", written)[0] < 0]


def _written_definitions(store: IndexStore, qualified: frozenset[str], where: SearchFilter) -> list[int]:
    """The chunks (ids) whose symbol is one of the ``qualified`` names a question writes
    (``res.redirect``), compared whole and case-folded: not every ``redirect``."""
    return [chunk.id for chunk in _written_chunks(store, qualified, where)]


def _written_chunks(store: IndexStore, qualified: frozenset[str], where: SearchFilter) -> list[StoredChunk]:
    """``_written_definitions``' chunks themselves, in the symbol search's order."""
    found = store.symbol_search({symbol_parts(name)[-1] for name in qualified}, SYMBOL_POOL, where, qualified)
    chunks = store.chunks_by_id(found)
    wanted = {name.casefold() for name in qualified}
    return [chunk for cid in found
            if (chunk := chunks.get(cid)) is not None and (chunk.symbol or "").casefold() in wanted]


def _rejecting_definition(store: IndexStore, task: TaskQuery, where: SearchFilter) -> Frame | None:
    """The function an error of the task says refused a keyword argument, as a frame
    innermost of all, when its written name (``RST.__init__``: a member of its class) is
    defined in one file here. Its call failed before it ran, so no frame of the traceback
    is in it, yet that is where the argument would be taken; a bare name (``__init__``,
    as Python before 3.10 printed it) says too little to find."""
    for written in task.rejecting:
        if "." not in written:
            continue
        found = _written_chunks(store, frozenset({written}), where)
        if len({chunk.path for chunk in found}) == 1:  # its line: that class's ``__init__``, not another's
            first = min(found, key=lambda chunk: chunk.start_line)
            return Frame(first.path, first.start_line, symbol_parts(written)[-1])
    return None


def _innermost_file(store: IndexStore, task: TaskQuery, where: SearchFilter) -> str | None:
    """The file of the innermost traceback frame that lies in this repository and does
    not run a widely used helper (``_widely_used``): the frame's path by its longest
    tail of two or more parts that is one file here (an installed copy's
    ``site-packages/pkg/mod.py`` is ``src/pkg/mod.py``). Frames in the reporter's own
    code or in other libraries match no file and are passed over."""
    read = 0
    for frame in task.frames:
        if not frame.function:  # a line the issue links to, not a frame
            continue
        path = _frame_path(store, frame.path, where)
        if path is None:
            continue
        if not _widely_used(store, frame.function, where):
            return path
        read += 1
        if read >= FRAMES_READ:
            break
    return None


def _frame_path(store: IndexStore, written: str, where: SearchFilter) -> str | None:
    """The file of this repository a traceback's path is, by its longest tail of two or
    more parts that one file here ends in (None when none does, or several do). A path
    written from the repository's root (``./mux.go``: Go's module cache and Rust's
    backtraces print them so) is that file, a bare name too."""
    tails = path_suffixes(written)
    rooted = written.startswith("./")
    for tail in tails if rooted else tails[:-1]:  # (a bare file name is anyone's)
        if any(c in tail for c in "*?["):
            return None
        ids = store.chunk_ids_matching(tail)
        if where.path_ids is not None:
            ids = ids & where.path_ids
        if not ids:
            continue
        by_file: dict[int, int] = {}
        for cid, file_id in store.file_ids(sorted(ids)).items():
            by_file.setdefault(file_id, cid)
        if len(by_file) > 1 and not (rooted and tail == tails[0]):
            return None  # several files end so: not this frame's to say
        paths = [chunk.path for chunk in store.chunks_by_id(sorted(by_file.values())).values()]
        if len(paths) > 1:  # written from the root: the one at that path, if any
            paths = [path for path in paths if path == tail]
        return paths[0] if len(paths) == 1 else None
    return None


def _widely_used(store: IndexStore, function: str, where: SearchFilter) -> bool:
    """Whether ``function`` is a helper the whole repository calls: its name used in
    ``HELPER_SHARE`` of the files (at least ``HELPER_MIN_FILES``) and in
    ``HELPER_RATIO`` times as many files as define it. A converter or a dispatcher that
    every module calls raises what its callers gave it."""
    terms = identifier_terms(function) or fts_terms(function)
    if not terms:
        return False
    files, _ = store.counts()
    found = store.keyword_search(terms[0], HELPER_POOL, where)
    using = len(set(store.file_ids([cid for cid, _ in found]).values()))
    if using < max(HELPER_MIN_FILES, math.ceil(HELPER_SHARE * files)):
        return False
    defining = store.symbol_search([function], HELPER_POOL, where)
    return using >= HELPER_RATIO * max(1, len(set(store.file_ids(defining).values())))


def _quoting_chunks(store: IndexStore, lines: Sequence[str], where: SearchFilter) -> dict[int, str]:
    """The chunks holding a line of code the task quotes (``TaskQuery.quoted``, compared
    with runs of whitespace as one space), each with its file's path, for the lines
    that at most ``QUOTED_MAX_FILES`` files hold. Lines of one issue share words, so a
    chunk pooled for several is read and flattened once."""
    held: dict[int, str] = {}
    flat: dict[int, tuple[str, str]] = {}  # chunk id -> (path, text with runs of whitespace as one space)
    for line in lines:
        terms = fts_terms(line)
        if not terms:
            continue
        pool = [cid for cid, _ in store.keyword_search(" ".join(terms), QUOTED_POOL, where)]
        for cid, chunk in store.chunks_by_id([cid for cid in pool if cid not in flat]).items():
            flat[cid] = (chunk.path, " ".join(chunk.content.split()))
        holding = {cid: flat[cid][0] for cid in pool if cid in flat and line in flat[cid][1]}
        if 0 < len(set(holding.values())) <= QUOTED_MAX_FILES:
            held.update(holding)
    return held


def _quoted_file(hits: Sequence[SearchHit], quoted: Mapping[int, str], files: int = FRAME_LEAD_FILES) -> str | None:
    """The first of the first ``files`` files of ``hits`` that holds a line of code the
    task quotes (None when the first file does, or none of them): a reporter who
    quotes the project's code quotes the lines at fault more often than the ones the
    issue's words lead to."""
    paths = set(quoted.values())
    leaders = _first_paths(hits, files)
    if not leaders or leaders[0] in paths:
        return None
    return next((path for path in leaders if path in paths), None)


def _lead_file(
    hits: Sequence[SearchHit], path: str | None, files: int = FRAME_LEAD_FILES, led_by: str = LED_BY_TRACEBACK
) -> list[SearchHit]:
    """``hits`` (best first) with the best hit of ``path``, the file a task points at
    (``led_by``: its traceback raised there, or it holds a line the task quotes), first
    when that file is code among the first ``files`` files, marked with why. An issue
    names the function it called (``identify_format``) and the module it used more often
    than the one that raised; the raising frame is where the fix usually is, but a frame
    in a file the issue's words do not otherwise point at is more often a helper on the
    way (a decorator, a cache), so it leads only from near the top."""
    if path is None or not hits or hits[0].path == path:
        return list(hits)
    leaders = _first_paths(hits, files)
    if path not in leaders:
        return list(hits)
    at = next(n for n, hit in enumerate(hits) if hit.path == path)
    if hits[at].role != CODE:
        return list(hits)
    lifted = replace(hits[at], score=round(hits[0].score * (1 + FRAME_LEAD_MARGIN) + 1e-6, 6), led_by=led_by)
    return [lifted, *hits[:at], *hits[at + 1 :]]


def focus_files(
    listed: Sequence[SearchHit],
    candidates: Sequence[SearchHit],
    top_k: int,
    files: int = FOCUS_FILES,
    per_file: int = CHUNKS_PER_FILE,
    lead: int | None = None,
) -> list[SearchHit]:
    """``listed`` (best first, ``top_k`` at most), its first ``files`` files' places held
    by each file's first chunks in ``candidates``' order (for a task, each file's own:
    ``_in_file_order``), and its tail given to those files' next chunks in that order,
    up to ``per_file`` chunks of each in all, and then the first file's next ones up to
    ``lead`` in all.

    A task is answered at function level, and the function to change is often not its
    file's best chunk, while the spread over files keeps a file's other chunks out of
    the list. They come last, scored below the rest, so the ranks of the listed files
    stay as they were; the engine puts them after their file's best chunk
    (``tributary.engine.pipeline.expand.focus_functions``), and its context reads
    ``CHUNKS_PER_FILE`` of the first files, then as much more of them as its budget
    holds. The room the first file's further chunks need comes from the end of the
    list, never from these files' own chunks."""
    leaders = _first_paths(listed, files)
    own: dict[str, list[SearchHit]] = {path: [] for path in leaders}  # each file's, in order
    for hit in candidates:
        if hit.path in own:
            own[hit.path].append(hit)
    listed = _in_own_order(listed, own)
    shown = {_place(hit) for hit in listed}
    followers: list[SearchHit] = []
    extra: list[SearchHit] = []
    for number, path in enumerate(leaders):
        had = sum(1 for hit in listed if hit.path == path)
        more = [h for h in own[path] if _place(h) not in shown]
        room = max(0, per_file - had)
        followers.extend(more[:room])
        if number == 0 and lead is not None:
            extra = more[room : room + max(0, lead - max(had, per_file))]
    if not followers and not extra:
        return list(listed[:top_k])
    kept = list(listed[: max(len(leaders), top_k - len(followers))])
    kept = _make_room(kept, max(len(leaders), top_k - len(followers) - len(extra)), set(leaders))
    floor = kept[-1].score
    tail = [replace(h, score=round(floor * (1 - 0.001 * n), 6)) for n, h in enumerate(followers + extra, 1)]
    return (kept + tail)[:top_k]


def _in_own_order(listed: Sequence[SearchHit], own: Mapping[str, Sequence[SearchHit]]) -> list[SearchHit]:
    """``listed`` with the places of the hits of each file in ``own`` taken by that file's
    first chunks in its ``own`` order, each at the score (and with the ``led_by``) of the
    place it takes. The list's order says which files come first; which of a file's
    functions comes first is its own order's to say (for a task, ``_in_file_order``),
    not the scores that ranked it among every file's."""
    taken = {path: 0 for path in own}
    out: list[SearchHit] = []
    for hit in listed:
        queue = own.get(hit.path)
        if not queue or taken[hit.path] >= len(queue):
            out.append(hit)
            continue
        chosen = queue[taken[hit.path]]
        taken[hit.path] += 1
        same = chosen.score == hit.score and chosen.led_by == hit.led_by
        out.append(chosen if same else replace(chosen, score=hit.score, led_by=hit.led_by))
    return out


def _make_room(listed: Sequence[SearchHit], size: int, keep: set[str]) -> list[SearchHit]:
    """``listed`` cut to ``size`` hits (where it can), its last hits of other files than
    ``keep``'s going first."""
    excess = len(listed) - size
    if excess <= 0:
        return list(listed)
    dropped: set[int] = set()
    for position in range(len(listed) - 1, -1, -1):
        if len(dropped) == excess:
            break
        if listed[position].path not in keep:
            dropped.add(position)
    return [hit for position, hit in enumerate(listed) if position not in dropped]


def _in_file_order(
    store: IndexStore,
    paths: Sequence[str],
    terms: Sequence[str],
    candidates: Sequence[SearchHit],
    repo: str,
    where: SearchFilter,
    frames: Sequence[Frame] = (),
    named: frozenset[str] = frozenset(),
    phrases: Sequence[str] = (),
    constructed: Sequence[str] = (),
    quoted: frozenset[int] = frozenset(),
) -> list[SearchHit]:
    """Every chunk of each of ``paths``, file by file, best first: the chunks' order in
    ``candidates`` (best first), their keyword order among the file's own chunks
    (``keyword_order``), the functions the task's tracebacks ran in this file
    (``_framed``), those writing its messages (``_phrased``) and those holding the lines
    of code it quotes (``quoted``, chunk ids), fused by reciprocal rank. A chunk no
    retriever pooled joins with no score of its own: the function a task changes often
    shares its words with much of the repository, and stands out only among its file's
    functions."""
    ordered: list[SearchHit] = []
    for path in paths:
        pooled = {_place(hit): hit for hit in candidates if hit.path == path}
        chunks = _file_chunks(store, path, where)
        if not pooled or not chunks:
            ordered.extend(pooled.values())
            continue
        by_words = _definitions_first(chunks, keyword_order([(c.symbol, c.content) for c in chunks], terms))
        fused = {n: 1 / (IN_FILE_K + rank) for rank, n in enumerate(by_words, 1)}
        position = {_place(chunk): n for n, chunk in enumerate(chunks)}
        for rank, place in enumerate(pooled, 1):
            if place in position:
                fused[position[place]] += 1 / (IN_FILE_K + rank)
        for rank, n in enumerate(_framed(chunks, [f for f in frames if _same_file(f.path, path)]), 1):
            fused[n] += 1 / (IN_FILE_K + rank)
        for rank, n in enumerate(_phrased(chunks, phrases), 1):
            fused[n] += 1 / (IN_FILE_K + rank)
        for rank, n in enumerate(_constructors(chunks, constructed), 1):
            fused[n] += 1 / (IN_FILE_K + rank)
        for rank, n in enumerate((n for n, chunk in enumerate(chunks) if chunk.id in quoted), 1):
            fused[n] += 1 / (IN_FILE_K + rank)
        sibling = next(iter(pooled.values()))
        order = _parts_last(sorted(fused, key=lambda n: (-fused[n], n)), chunks, named)
        for n in order:
            hit = pooled.get(_place(chunks[n]))
            ordered.append(hit if hit is not None else _unpooled(chunks[n], repo, sibling))
    return ordered


def _parts_last(order: Sequence[int], chunks: Sequence[StoredChunk], named: frozenset[str] = frozenset()) -> list[int]:
    """``order`` with each function's best chunk first and its further parts (a long
    function is cut into several chunks) after every other function's best: a task is
    answered by function, and three parts of one long docstring are one answer. A
    function the question ``named`` (up to ``READ_WHOLE_LINES`` long) is read whole: its
    other parts follow its best one, in line order."""
    unit = _units(chunks)
    runs: dict[int, list[int]] = {}
    for n in range(len(chunks)):
        runs.setdefault(unit[n], []).append(n)
    whole = {
        start for start, members in runs.items()
        if len(members) > 1 and _bare_name(chunks[start].symbol) in named
        and chunks[members[-1]].end_line - chunks[start].start_line < READ_WHOLE_LINES
    }  # fmt: skip
    placed: set[int] = set()
    out: list[int] = []
    for n in repeats_last(order, lambda n: str(unit[n]) if chunks[n].symbol else None):
        if unit[n] not in whole:
            out.append(n)
        elif unit[n] not in placed:
            out.extend([n, *(m for m in runs[unit[n]] if m != n)])
            placed.add(unit[n])
    return out


def _units(chunks: Sequence[StoredChunk]) -> list[int]:
    """For each of a file's chunks (in line order), the position of the first chunk of its
    unit: the parts of a long function follow each other line after line under one name;
    functions that share a name (overloads, a property's getter and setter) are apart."""
    unit: list[int] = []
    for n, chunk in enumerate(chunks):
        before = chunks[n - 1] if n else None
        same = (before is not None and chunk.symbol is not None and before.symbol == chunk.symbol
                and before.kind == chunk.kind and chunk.start_line == before.end_line + 1)
        unit.append(unit[n - 1] if same else n)
    return unit


def _bare_name(symbol: str | None) -> str:
    return symbol_parts(symbol)[-1] if symbol else ""


def _framed(chunks: Sequence[StoredChunk], frames: Sequence[Frame]) -> list[int]:
    """The chunks (by position) of the functions ``frames`` ran in, innermost frame
    first; of several functions by a frame's name (``preprocess`` of each class), the
    one whose lines hold or are nearest the frame's line first. A frame with no function
    (a line the issue links to) stands for the chunks holding its line, narrowest first."""
    found: dict[int, None] = {}
    for frame in frames:
        if not frame.function:
            holding = [n for n, c in enumerate(chunks) if c.start_line <= frame.line <= c.end_line]
            found.update(dict.fromkeys(sorted(holding, key=lambda n: chunks[n].end_line - chunks[n].start_line)))
            continue
        named = [n for n, c in enumerate(chunks) if c.symbol and symbol_parts(c.symbol)[-1] == frame.function]
        if frame.line:
            named.sort(key=lambda n: max(chunks[n].start_line - frame.line, frame.line - chunks[n].end_line, 0))
        found.update(dict.fromkeys(named))
    return list(found)


CONSTRUCTORS = ("__new__", "__init__")


def _constructors(chunks: Sequence[StoredChunk], constructed: Sequence[str]) -> list[int]:
    """The chunks (by position) of the constructors of the classes a task's code calls
    (``Intersection({1}, {x})`` runs ``Intersection.__new__``), most called class first."""
    wanted = {name: rank for rank, name in enumerate(constructed)}
    found = [(wanted[parts[-2]], n) for n, c in enumerate(chunks)
             if c.symbol and len(parts := symbol_parts(c.symbol)) >= 2
             and parts[-1] in CONSTRUCTORS and parts[-2] in wanted]
    return [n for _, n in sorted(found)]


# A name as a query writes it, qualified or not (``res.sendFile``, ``Config::get``).
_WRITTEN_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|#)[A-Za-z_$][A-Za-z0-9_$]*)*")


def _same_file(written: str, path: str) -> bool:
    """Whether a traceback's file (as written, often an installed copy such as
    ``/usr/lib/python3/site-packages/pkg/mod.py``) is the repository's ``path``: the
    same name in the same directory name."""
    written = written.replace("\\", "/")
    if written.startswith("./"):  # written from the repository's root (``_frame_path``)
        return path == written[2:]
    tail = written.split("/")[-2:]
    return path.split("/")[-len(tail):] == tail


def _definitions_first(chunks: Sequence[StoredChunk], order: Sequence[int]) -> list[int]:
    """``order`` with the file's module-level blocks after its definitions: an import
    block holds every name the file uses, so it matches an issue's names without being
    where anything is done."""
    return [n for n in order if chunks[n].kind != "block"] + [n for n in order if chunks[n].kind == "block"]


def _named(task: TaskQuery) -> frozenset[str]:
    """The functions a task names: the code names it uses and its members' own names."""
    return frozenset([name for name, _ in task.names] + [member.rpartition(".")[2] for member in task.members])


def _in_file_terms(task: TaskQuery) -> list[str]:
    """The terms a likely file's chunks are ranked by: the code names the issue uses,
    twice (BM25 sums over the query's terms, so a name listed twice weighs double), then
    the rest of its terms. Among one file's functions the names its example calls and
    its traceback shows tell them apart better than its prose."""
    names = [name for name, _ in task.names]
    return names + names + list(task.terms)


def _file_chunks(store: IndexStore, path: str, where: SearchFilter) -> list[StoredChunk]:
    """The chunks of the file at ``path`` (of ``where``'s kinds), in line order."""
    ids = store.chunk_ids_matching(glob.escape(path))
    chunks = [chunk for chunk in store.chunks_by_id(sorted(ids)).values() if chunk.path == path]
    if where.kinds is not None:
        chunks = [chunk for chunk in chunks if chunk.kind in where.kinds]
    return sorted(chunks, key=lambda chunk: (chunk.start_line, chunk.id))


def _unpooled(chunk: StoredChunk, repo: str, sibling: SearchHit) -> SearchHit:
    """A hit for a chunk no retriever pooled, with its file's role (from ``sibling``)."""
    return SearchHit(
        chunk.path, repo, chunk.start_line, chunk.end_line, chunk.symbol, chunk.kind,
        chunk.language, 0.0, chunk.content, chunk.signature, role=sibling.role, fused=0.0,
        name_match=sibling.name_match,
    )  # fmt: skip


def _first_paths(hits: Sequence[SearchHit], files: int) -> list[str]:
    """The paths of the first ``files`` distinct files of ``hits``."""
    return list(dict.fromkeys(hit.path for hit in hits))[:files]


def _place(chunk: SearchHit | StoredChunk) -> tuple[str, int, int]:
    return chunk.path, chunk.start_line, chunk.end_line


def crowd_roles(hits: Sequence[SearchHit], asked: frozenset[str]) -> list[SearchHit]:
    """Best first, but past the first ``ROLE_LIMIT`` files of roles the question does not
    ask for (tests, docs, examples ...), each further such file keeps ``ROLE_CROWD_FACTOR``
    of its score. A repository's tests and docs repeat the words of almost any question,
    and one by one, each scaled by its role, they still outnumber the code: the best of
    them stay beside it, the rest rank below it."""
    others: set[str] = set()
    crowded: list[SearchHit] = []
    for hit in hits:
        if hit.role == CODE or hit.role in asked:
            crowded.append(hit)
            continue
        if hit.path not in others and len(others) < ROLE_LIMIT:
            others.add(hit.path)
        if hit.path in others:
            crowded.append(hit)
        else:
            crowded.append(replace(hit, score=round(hit.score * ROLE_CROWD_FACTOR, 6)))
    crowded.sort(key=lambda hit: -hit.score)
    return crowded


def spread_files(hits: Sequence[SearchHit], per_file: int = PER_FILE) -> list[SearchHit]:
    """Best first, but a file's chunks past its first ``per_file`` keep ``REPEAT_FACTOR`` of
    their score, and past ``CROWD_LIMIT`` ``CROWD_FACTOR`` of that: ten chunks of one file
    would otherwise hide the next file entirely. The order stays the order of the scores,
    so lists from several indexes merge by score."""
    seen: dict[str, int] = {}
    spread: list[SearchHit] = []
    for hit in hits:
        count = seen.get(hit.path, 0)
        seen[hit.path] = count + 1
        if count < per_file:
            spread.append(hit)
            continue
        keep = REPEAT_FACTOR * (CROWD_FACTOR if count >= CROWD_LIMIT else 1.0)
        spread.append(replace(hit, score=round(hit.score * keep, 6)))
    spread.sort(key=lambda hit: -hit.score)
    return spread


def cover_files(hits: Sequence[SearchHit], top_k: int, share: float = FILE_SHARE) -> list[SearchHit]:
    """The first ``top_k`` of ``hits`` (best first), but holding chunks of at least
    ``share`` × ``top_k`` distinct files when ``hits`` has that many: the lowest repeats
    of an already listed file give way to the best chunk of each file not yet listed.
    Those come from below the cut, so the list stays in score order."""
    top = list(hits[:top_k])
    listed = {hit.path for hit in top}
    missing = math.ceil(share * top_k) - len(listed)
    if missing <= 0:
        return top
    extra: list[SearchHit] = []
    for hit in hits[top_k:]:
        if hit.path not in listed:
            listed.add(hit.path)
            extra.append(hit)
            if len(extra) == missing:
                break
    repeats: list[int] = []  # positions of a file's second and later chunks
    shown: set[str] = set()
    for position, hit in enumerate(top):
        if hit.path in shown:
            repeats.append(position)
        shown.add(hit.path)
    drop = set(repeats[len(repeats) - min(len(extra), len(repeats)) :])
    return [hit for i, hit in enumerate(top) if i not in drop] + extra[: len(drop)]


def _other_files(
    store: IndexStore, best: list[tuple[int, float]], rest: list[tuple[int, float]], files: int
) -> list[tuple[int, float]]:
    """The best of ``rest`` (fused, best first) for up to ``files`` files that no chunk of
    ``best`` is in: what ``cover_files`` may need when a few files fill ``best``."""
    listed = set(store.file_ids([cid for cid, _ in best]).values())
    if len(listed) >= files or not rest:
        return []
    file_of = store.file_ids([cid for cid, _ in rest])
    found: list[tuple[int, float]] = []
    for cid, score in rest:
        file_id = file_of.get(cid)
        if file_id is not None and file_id not in listed:
            listed.add(file_id)
            found.append((cid, score))
            if len(listed) >= files:
                break
    return found


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _top_fused(
    store: IndexStore,
    lists: Sequence[tuple[float, Sequence[int]]],
    pools: Sequence[tuple[float, Sequence[tuple[int, float]]]],
    k: int,
    top_k: int | None,
) -> list[tuple[int, float]]:
    """``tributary.engine.localsearch.fusion.rrf`` plus the whole-file signals, the best
    ``top_k`` (all when None) first, ties by id; in numpy: the pools hold 1,600 ids, and
    the dict loops cost ~3 ms a query on a 66k-chunk index.

    ``pools`` are (weight, scored chunks) lists whose chunks are among ``lists``' (the
    keyword and vector pools), each ranking files by its chunks (:func:`_file_bonus`).
    Sums run in the same order as ``rrf``'s (every list in turn, then each file bonus),
    so the scores are the same floats.
    """
    ids = np.fromiter((cid for _, ranked in lists for cid in ranked), dtype=np.int64)
    if not len(ids):
        return []
    parts = [weight / (k + np.arange(1, len(ranked) + 1)) for weight, ranked in lists]
    unique, inverse = np.unique(ids, return_inverse=True)
    scores = np.bincount(inverse, weights=np.concatenate(parts), minlength=len(unique)).astype(
        np.float64, copy=False
    )
    pools = [(weight, pool) for weight, pool in pools if weight and pool]
    if pools:
        chunk_ids = unique.tolist()
        file_of = store.file_ids(chunk_ids)
        for weight, pool in pools:
            scores += _file_bonus(file_of, chunk_ids, pool, weight, k)
    order = np.lexsort((unique, -scores))[:top_k]
    return [(int(unique[i]), float(scores[i])) for i in order]


def _file_bonus(
    file_of: Mapping[int, int], chunk_ids: list[int], pool: Sequence[tuple[int, float]], weight: float, k: int
) -> npt.NDArray[np.float64]:
    """Whole-file evidence: a file whose many chunks match the question ranks higher.

    Files are ranked by the summed scores of their chunks in ``pool`` (BM25, or cosine);
    every fused chunk of a file gets that file's reciprocal rank (weighted) added.
    """
    totals: dict[int, float] = {}
    for cid, score in pool:
        file_id = file_of.get(cid)
        if file_id is not None:
            totals[file_id] = totals.get(file_id, 0.0) + float(score)
    ranked = sorted(totals, key=lambda f: -totals[f])
    bonus = {file_id: weight / (k + rank) for rank, file_id in enumerate(ranked, 1)}
    return np.fromiter(
        (bonus.get(file_of.get(cid, -1), 0.0) for cid in chunk_ids),
        dtype=np.float64,
        count=len(chunk_ids),
    )


OUTLINED_CLASSES = 3  # looked-up classes given their members' signatures


def _classes_outlined(store: IndexStore, hits: list[SearchHit]) -> list[SearchHit]:
    """``hits``, the first few classes that define a looked-up name listing their
    members (``tributary.engine.index.members``): a class's own chunk stops at its first
    method, often a line or two."""
    shown: list[SearchHit] = []
    left = OUTLINED_CLASSES
    for hit in hits:
        if left and hit.symbol_match and hit.kind == "class" and hit.symbol:
            left -= 1
            members = members_of(_file_chunks(store, hit.path, SearchFilter()), hit.symbol, hit.end_line)
            lines = member_lines(members, hit.language)
            if lines:  # (its location stays its own lines: each member's line says where it is)
                hit = replace(hit, content=hit.content.rstrip("\n") + "\n" + lines)
        shown.append(hit)
    return shown


def _indexed(store: IndexStore) -> Callable[[str], bool]:
    """Whether the index holds a file at a path (asked of a few versioned paths a query)."""
    @functools.cache
    def holds(path: str) -> bool:
        return not any(c in path for c in "*?[") and bool(store.chunk_ids_matching(path))
    return holds


def _task_lists(
    store: IndexStore,
    task: TaskQuery,
    keyword: list[tuple[int, float]],
    size: int,
    where: SearchFilter,
    weights: Weights,
) -> list[tuple[float, Sequence[int]]]:
    """The extra ranked lists of an issue-length question: its title's words, its
    messages and the files it names (their chunks in keyword order)."""
    lists: list[tuple[float, Sequence[int]]] = []
    if task.title_terms and weights.keyword:
        title = store.keyword_search(" ".join(task.title_terms), size, where)
        lists.append((weights.keyword * TASK_TITLE_SHARE, [cid for cid, _ in title]))
    if task.phrases and weights.keyword:
        found = _phrase_chunks(store, task.phrases, where)
        if found:
            lists.append((weights.keyword * TASK_PHRASE_SHARE, found))
    named = _named_files(store, task, where)
    if named and weights.keyword:
        order = {cid: rank for rank, (cid, _) in enumerate(keyword)}
        ranked: list[int] = []
        for ids in named:
            ranked.extend(sorted(ids, key=lambda cid: (order.get(cid, len(order)), cid))[:PER_PATH])
        lists.append((weights.keyword * TASK_PATH_SHARE, list(dict.fromkeys(ranked))))
    return lists


def _phrase_chunks(store: IndexStore, phrases: Sequence[str], where: SearchFilter) -> list[int]:
    """The chunks that write out the task's messages, those holding the longest runs of
    their words (three or more, in order) first, then in keyword order. A message is
    matched around the values put into it: ``"%s contains %d more items, first extra
    item: %s"`` holds ``Right contains more items, first extra item: 52``."""
    split = [phrase.split() for phrase in phrases]
    words = dict.fromkeys(word for phrase in split for word in phrase)
    pool = store.keyword_search(" ".join(words), PHRASE_POOL, where)
    chunks = store.chunks_by_id([cid for cid, _ in pool])
    scored: list[tuple[int, int, int]] = []
    for rank, (cid, _) in enumerate(pool):
        chunk = chunks.get(cid)
        if chunk is None:
            continue
        held = _phrase_words_held(chunk.content, split)
        if held:
            scored.append((-held, rank, cid))
    return [cid for _, _, cid in sorted(scored)]


def _phrase_words_held(code: str, phrases: Sequence[Sequence[str]]) -> int:
    """How many words of ``phrases`` ``code`` holds in runs (``_longest_run``), around
    the values a message puts into it."""
    plain = _LETTERS.findall(_PLACEHOLDER.sub(" ", code).lower())
    text, present = f" {' '.join(plain)} ", set(plain)
    return sum(_longest_run(phrase, text, present) for phrase in phrases)


def _phrased(chunks: Sequence[StoredChunk], phrases: Sequence[str]) -> list[int]:
    """The chunks (by position) of a file that write out the task's messages: those
    holding the most of their words in runs. Three words of a message in a comment or
    a docstring are common among a file's functions; the whole message is written by one."""
    split = [phrase.split() for phrase in phrases]
    held = {n: _phrase_words_held(chunk.content, split) for n, chunk in enumerate(chunks)} if split else {}
    most = max(held.values(), default=0)
    return [n for n, count in held.items() if most and count == most]


def _longest_run(phrase: Sequence[str], text: str, present: set[str]) -> int:
    """The most words of ``phrase`` that ``text`` holds in a row (0 below three)."""
    best = 0
    for start in range(len(phrase) - PHRASE_MIN_RUN + 1):
        if not all(word in present for word in phrase[start : start + PHRASE_MIN_RUN]):
            continue
        end = start + PHRASE_MIN_RUN
        if f" {' '.join(phrase[start:end])} " not in text:
            continue
        while end < len(phrase) and f" {' '.join(phrase[start:end + 1])} " in text:
            end += 1
        best = max(best, end - start)
    return best


_LETTERS = re.compile(r"[a-z]+")
# The values a message is formatted with: %s, %(name)r, %-5d, {}, {0}, {name!r:>10}.
_PLACEHOLDER = re.compile(r"%(?:\([\w]{0,40}\))?[-#0 +]{0,4}\d{0,3}(?:\.\d{1,3})?[a-zA-Z]|\{[^{}\n]{0,60}\}")


def _named_files(store: IndexStore, task: TaskQuery, where: SearchFilter) -> list[frozenset[int]]:
    """The chunks of each file the task names, in the order it names them: a written
    path by its longest tail that is a file here (a file name alone only when at most
    two files bear it, and never for an absolute path), then dotted module names."""
    found: list[frozenset[int]] = []
    seen: set[frozenset[int]] = set()

    def add(ids: frozenset[int]) -> None:
        if where.path_ids is not None:
            ids = ids & where.path_ids
        if ids and ids not in seen:
            seen.add(ids)
            found.append(ids)

    for written in task.paths:
        tails = path_suffixes(written)
        for number, tail in enumerate(tails):
            if any(c in tail for c in "*?[") or tail.startswith("."):
                break
            bare = number == len(tails) - 1
            if bare and _absolute(written):
                break  # a file outside the checkout: its name alone is someone else's file
            ids = store.chunk_ids_matching(tail)
            if not ids:
                continue
            if bare and len(set(store.file_ids(list(ids)).values())) > 2:
                break  # a bare file name many files bear
            add(ids)
            break
    for dotted in task.modules:
        for candidate in module_paths(dotted):
            if any(c in candidate for c in "*?["):
                continue
            ids = store.chunk_ids_matching(candidate)
            if ids:
                add(ids)
                break
    return found


def _absolute(written: str) -> bool:
    """Whether a path an issue writes is absolute (``/home/u/…``, ``~/…``, ``C:\\…``)."""
    return written.startswith(("/", "~", "\\")) or (len(written) > 2 and written[1] == ":" and written[0].isalpha())


def _task_definitions(
    store: IndexStore, task: TaskQuery, names: Sequence[str], where: SearchFilter
) -> list[int]:
    """The chunks defining what the task names: each ``Class.member`` it spells out
    first (that member of that class, not the same name in another class), then the
    definitions of its code names."""
    members = _member_definitions(store, task.members, where)
    return list(dict.fromkeys([*members, *_named_definitions(store, names, where)]))


def _member_definitions(store: IndexStore, members: Sequence[str], where: SearchFilter) -> list[int]:
    """The chunks whose symbol ends in ``Class.member`` for each of ``members``: the
    member's definitions (up to ``MEMBER_POOL``), kept when their class is the one named."""
    ranked: list[int] = []
    for qualified in members:
        owner, member = qualified.rsplit(".", 1)
        found = store.symbol_search([member], MEMBER_POOL, where)
        chunks = store.chunks_by_id(found)
        ranked.extend(
            cid for cid in found
            if (chunk := chunks.get(cid)) and symbol_parts(chunk.symbol)[-2:] == [owner, member]
        )
    return ranked


def _named_definitions(store: IndexStore, names: Sequence[str], where: SearchFilter) -> list[int]:
    """The chunks defining each name: the names one file defines first, then those many
    files define (``_print_Float``, in every printer, says little of which file the task
    is about), each group most used first. Of a name's definitions, the member of a class
    the task also names leads (``MCodePrinter`` and ``_print_Float``: that printer's)."""
    written = frozenset(names)
    found = {name: store.symbol_search([name], SPREAD_POOL, where, written) for name in names}
    file_of = store.file_ids([cid for ids in found.values() for cid in ids])  # one read for all

    def shared(name: str) -> bool:
        return len({file_of[cid] for cid in found[name] if cid in file_of}) > 1

    ranked = sorted(found, key=shared)  # stable: each group keeps the order of use
    return list(dict.fromkeys(cid for name in ranked for cid in found[name][:PER_NAME]))


def encode_query(embedder: Embedder, query: str) -> Vectors:
    vector: Vectors = embedder.encode([query])[0]
    return vector
