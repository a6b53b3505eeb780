"""Which hits the context is built from: the ranked list, with more of its best files.

The list a person reads shows one chunk per file near the top (``fusion.diversify``
pushes a file's further chunks down), which is right for choosing *files*. The
context is read to answer the question, and there the best files' other chunks are
worth more than the tail of the list: they hold the code that changes with the
question more often (the content figures of ``bench/eval_benchmarks.py``).
The context keeps as many hits as the list, and for an issue-length task reads on
while its budget has room (``further_reading``); the list is untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from tributary.engine.model import FUNCTION_KIND, DedupGroup, Hit, is_task

from .fusion import appearances, role_demoted
from .tokens import fill_tokens

T = TypeVar("T")

CONTEXT_FILES = 2  # the first files of the list that bring more of their chunks
CHUNKS_PER_FILE = 5  # chunks of each such file in the context, its best one included
FOCUS_FILES = 3  # an issue-length task: the first files whose next chunks follow their best
FOCUS_CHUNKS = 2  # chunks of each such file together at the top of the list
FOCUS_LEAD = 6  # chunks of the first of them: the likeliest file's functions come first
LEAD_CHUNKS = 15  # an issue-length task: chunks of its first file read in place of the list's tail
HISTORY_FUNCTIONS = 2  # the first file's functions past fixes changed most: next after its best chunk
HISTORY_KEY = "functions"  # a hit's metadata: names of its file's functions past changes touched
# How far above the previous first a task's leading code is lifted: room for its file's
# next chunks (``focus_functions``) to show scores of their own between the two.
LEAD_MARGIN = 0.02


def context_hits(
    top: Sequence[Hit],
    ranked: Sequence[Hit],
    *,
    files: int = CONTEXT_FILES,
    per_file: int = CHUNKS_PER_FILE,
    lead: int | None = None,
    lead_after: int = FOCUS_FILES,
) -> list[Hit]:
    """``top`` with each of its first ``files`` files followed by that file's next-best
    chunks from ``ranked`` (up to ``per_file`` in all), cut to ``len(top)`` hits. They
    follow the file's first run of hits in ``top`` (a task's list keeps a file's best
    chunks together), so the list's own order of them stays ahead.

    With ``lead`` (an issue-length task), the first file's next chunks up to ``lead`` in
    all follow those files' groups and the runs of the list's first ``lead_after`` files
    (those a task's list brought together): the function a task changes is often further
    down its file than ``per_file``, and reading more of the likeliest file gives way
    only to the tail of the list, not to the next files' best chunks."""
    chosen = _first_files(top, files)
    if not chosen or per_file <= 1:
        return list(top)
    more: dict[str, list[Hit]] = {path: [] for path in chosen}
    room = {path: per_file - 1 for path in chosen}
    if lead is not None:
        room[chosen[0]] = max(room[chosen[0]], lead - 1)
    shown = {h.id for h in top}
    for hit in ranked:
        wanted = hit.path in more and hit.id not in shown and hit.start_line is not None and not is_task(hit)
        if wanted and len(more[hit.path or ""]) < room[hit.path or ""]:
            more[hit.path or ""].append(hit)
    extra = more[chosen[0]][per_file - 1 :]
    del more[chosen[0]][per_file - 1 :]
    out: list[Hit] = []
    seen: set[str | None] = set()  # the files of ``top`` so far
    lined: set[str | None] = set()  # ... of them, those with a hit of lines (every chosen one has)

    def end_run(path: str | None) -> None:
        """After a run of ``path``'s hits: its group, then (once due) the lead's further chunks."""
        nonlocal extra
        if path in more and path in lined:
            out.extend(more.pop(path or ""))
        if extra and not more and len(seen) >= lead_after:
            out.extend(extra)
            extra = []

    for position, hit in enumerate(top):
        if position and hit.path != top[position - 1].path:
            end_run(top[position - 1].path)
        seen.add(hit.path)
        if hit.start_line is not None:
            lined.add(hit.path)
        out.append(hit)
    end_run(top[-1].path)  # ``top`` holds the chosen files' hits, so it is not empty
    return [*out, *extra][: len(top)]


def further_reading(readable: Sequence[Hit], ranked: Sequence[Hit], budget: int, files: int = FOCUS_FILES) -> list[Hit]:
    """The hits of ``ranked`` an issue-length task's context reads after ``readable``,
    until all their tokens pass ``budget`` (by ``FILL_SLACK``, for the frames and for
    hits that will not fit): first the further chunks of its first ``files`` files, then
    the rest in order. ``Hit.tokens`` is filled on all of them.

    A task's context is read to change code; the likeliest files' other functions are
    worth the room a list of ``top_k`` hits would leave empty, more than the tail of the
    list is. The budget places them after ``readable`` (``plan_budget``'s ``then``)."""
    fill_tokens(readable)
    used = sum(h.tokens for h in readable)
    seen = {h.id for h in readable}
    first = set(_first_files(readable, files))
    rest = [h for h in ranked if h.id not in seen]
    leading = [h for h in rest if _is_code(h) and h.path in first]
    rest = leading + [h for h in rest if not (_is_code(h) and h.path in first)]
    goal = budget * FILL_SLACK
    out: list[Hit] = []
    for start in range(0, len(rest), _FILL_BATCH):
        if used >= goal:
            break
        batch = rest[start : start + _FILL_BATCH]
        fill_tokens(batch)
        for hit in batch:
            if used >= goal:
                break
            out.append(hit)
            used += hit.tokens
    return out


FILL_SLACK = 1.5  # hit tokens read per budget token when filling a task's context
_FILL_BATCH = 16


def _first_files(top: Sequence[Hit], files: int) -> list[str]:
    chosen: list[str] = []
    for hit in top:
        if len(chosen) >= files:
            break
        if _is_code(hit) and hit.path not in chosen:
            chosen.append(hit.path or "")
    return chosen


def code_leads(
    ranked: Sequence[Hit], groups: Mapping[str, DedupGroup], asked: Callable[[Hit], float] | None = None
) -> list[Hit]:
    """For an issue-length task, ``ranked`` with the code a source found first leading:
    the best-placed hit that some source ranked first and that holds lines of code goes
    to the top when a hit of another file is there.

    Fusion puts another file above it by other sources' votes or a definition's boost,
    and for a task the history's vote (the files similar past fixes touched) names a
    package's broad, often-changed modules as readily as this fix's: it places the files
    after the first well and the first one badly. The code the issue's own words and
    names found leads; the rest keeps the fused order. A first hit that the request's
    own hints (``asked``: its related files, folders and issues, not the paths the issue
    mentions, which the code search weighs already) prefer to the lead stays first. The
    lifted hit gains a ``lead`` part that puts its score ``LEAD_MARGIN`` above the
    previous first's, so the list stays in score order."""
    out = list(ranked)
    lead = next((n for n, hit in enumerate(out) if _read_first(hit, groups)), None)
    if not lead or out[0].path == out[lead].path or (asked is not None and asked(out[0]) > asked(out[lead])):
        return out
    hit = out.pop(lead)
    lifted = out[0].score + max(abs(out[0].score) * LEAD_MARGIN, 1e-6)
    hit.parts.add("lead", lifted - hit.score)
    hit.score = lifted
    return [hit, *out]


def _read_first(hit: Hit, groups: Mapping[str, DedupGroup]) -> bool:
    """Whether a source ranked this item (or a member of its dedup group) first as lines
    of a file, and not in a file whose role it is scaled down for (a test, a doc): a
    grep tool's first file is often the test that repeats the issue's names."""
    return not is_task(hit) and any(
        seen.source_rank == 1 and _is_code(seen) and not role_demoted(seen)
        for seen in appearances(hit, groups).values()
    )


def focus_functions(
    ranked: Sequence[Hit],
    *,
    files: int = FOCUS_FILES,
    per_file: int = FOCUS_CHUNKS,
    lead: int = FOCUS_LEAD,
    history: HistoryEvidence | None = None,
) -> list[Hit]:
    """For an issue-length task, ``ranked`` with each of its first ``files`` files'
    next-best chunks (up to ``per_file`` in all, ``lead`` for the first file) right after
    its best one.

    A task is answered at function level: the change is in a function of one of the
    likeliest files, not in the best chunk of the tenth. The first file is right far more
    often than the next ones, and its function to change is often not its best chunk, so
    it brings the most. In the first file, the functions similar past fixes changed most
    (``history``, from ``history_evidence``) come next, up to ``HISTORY_FUNCTIONS``,
    each the hit the history read for it where it read one: the code search ranks a
    file's functions by the issue's words, which name the symptom; the history knows
    where such symptoms were fixed. The same-file decay that spreads a list over files is undone for
    these: each moved hit gains a ``focus`` part that puts its score between its file's
    best chunk and the next hit, so the list stays in score order."""
    groups: dict[str, list[Hit]] = {path: [] for path in _first_files(ranked, files)}
    for hit in ranked:
        group = groups.get(hit.path or "") if _is_code(hit) else None
        if group is not None:
            group.append(hit)
    for number, (path, group) in enumerate(groups.items()):
        unit = functools.partial(_unit_of, _function_units(group))
        room = max(per_file, lead) if number == 0 else per_file
        rest = group[1:]
        if number == 0 and history is not None:
            rest = named_first(rest, history.names.get(path, [])[:HISTORY_FUNCTIONS], history.read)
        groups[path] = group[:1] + repeats_last(rest, unit, {unit(group[0])})[: room - 1]
    moved = {h.id for group in groups.values() for h in group[1:]}
    segments: list[list[Hit]] = []
    for hit in ranked:
        if hit.id in moved:
            continue
        group = groups.pop(hit.path or "", None) if _is_code(hit) else None
        segments.append(group if group else [hit])
    out: list[Hit] = []
    for number, (first, *followers) in enumerate(segments):
        out.append(first)
        below = segments[number + 1][0].score if number + 1 < len(segments) else 0.0
        step = (first.score - below) / (len(followers) + 1)
        for n, hit in enumerate(followers, 1):
            lifted = first.score - step * n
            if lifted > hit.score:
                hit.parts.add("focus", lifted - hit.score)
                hit.score = lifted
            out.append(hit)
    return out


def named_first(hits: Sequence[Hit], names: Sequence[str], preferred: Collection[str] = ()) -> list[Hit]:
    """``hits`` with the best-placed hit of each function in ``names`` first, in the
    order of ``names`` (of several hits of one name, one whose id is ``preferred`` if
    any); the rest keep their order. A hit is a function's when its title, part number
    aside, ends with the name (``bell.eval`` is ``eval``'s)."""
    chosen: dict[str, Hit] = {}
    for name in names:
        named = [h for h in hits if h.id not in chosen and _defined_name(h) == name]
        found = next((h for h in named if h.id in preferred), named[0] if named else None)
        if found is not None:
            chosen[found.id] = found
    return [*chosen.values(), *(h for h in hits if h.id not in chosen)]


@dataclass(slots=True)
class HistoryEvidence:
    """What the sources said past changes touched, as ``focus_functions`` reads it:
    ``names``, for each file, the names of its functions they changed, most first (the
    tasks server's files' ``functions``); ``read``, the ids of the hits that are (or hold
    in their group) a function read for that reason (an item of ``kind`` "function")."""

    names: dict[str, list[str]] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)


def history_evidence(ranked: Sequence[Hit], groups: Mapping[str, DedupGroup]) -> HistoryEvidence:
    """The ``HistoryEvidence`` of ``ranked``: each hit's own and its group's sources, read once."""
    found = HistoryEvidence()
    for hit in ranked:
        for seen in appearances(hit, groups).values():
            if seen.metadata.get("kind") == FUNCTION_KIND:
                found.read.add(hit.id)
            names = _names_of(seen)
            if names and hit.path and hit.path not in found.names:
                found.names[hit.path] = names
    return found


def _names_of(hit: Hit) -> list[str]:
    """The function names a hit's source said past changes touched in its file (none: [])."""
    names = hit.metadata.get(HISTORY_KEY)
    return [str(n) for n in names] if isinstance(names, list) and all(isinstance(n, str) for n in names) else []


def _defined_name(hit: Hit) -> str | None:
    """The last name of a code hit's function (``LatexPrinter._print_Mul`` → ``_print_Mul``)."""
    function = _function_of(hit)
    if function == hit.id:
        return None
    return function.rsplit(".", 1)[-1].strip() or None


def repeats_last(items: Sequence[T], key: Callable[[T], str | None], seen: set[str] | None = None) -> list[T]:
    """``items`` with each one whose key came before (earlier in ``items``, or in
    ``seen``) after the rest, both in order; an item keyed None is never a repeat. A long
    function comes in several chunks, and a task is answered by function."""
    known = set(seen or ())
    firsts: list[T] = []
    repeats: list[T] = []
    for item in items:
        name = key(item)
        (repeats if name is not None and name in known else firsts).append(item)
        if name is not None:
            known.add(name)
    return firsts + repeats


def _function_of(hit: Hit) -> str:
    """The function a code hit is (or is a part of): its title without a part number. A
    chunk of module-level code, titled by its path, is one of its own."""
    title = hit.title
    if not title or title == hit.path:
        return hit.id
    if title.endswith(")") and " (part " in title:
        title = title[: title.rindex(" (part ")]
    return title


def _unit_of(units: dict[str, str], hit: Hit) -> str:
    return units[hit.id]


def _function_units(hits: Sequence[Hit]) -> dict[str, str]:
    """For one file's code hits, each hit's unit by id: the parts of one function share
    it. A hit titled as a part (``name (part 2 of 3)``) belongs to its name's unit; hits
    that share a plain title are parts of one function only when their lines follow on
    (the chunker's parts of a long function), so overloads (``@dispatch``, a property's
    getter and setter) stay functions of their own."""
    units: dict[str, str] = {}
    by_title: dict[str, list[Hit]] = {}
    for hit in hits:
        name = _function_of(hit)
        if name == hit.id or name != hit.title or hit.start_line is None or hit.end_line is None:
            units[hit.id] = name
        else:
            by_title.setdefault(name, []).append(hit)
    for name, same in by_title.items():
        same = sorted(same, key=lambda h: (h.start_line or 0, h.end_line or 0))
        first, end = same[0], same[0].end_line or 0
        for hit in same:
            if (hit.start_line or 0) > end + 1:
                first = hit
            end = max(end, hit.end_line or 0)
            units[hit.id] = f"{name}@{first.start_line}"
    return units


def _is_code(hit: Hit) -> bool:
    return bool(hit.path) and hit.start_line is not None and not is_task(hit)
