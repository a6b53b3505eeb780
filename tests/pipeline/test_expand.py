"""The context reads more of the best files' code; the ranked list stays as it is."""

from __future__ import annotations

from tests.pipeline.helpers import hit
from tributary.engine.model import (
    ROLE_FACTOR,
    DedupGroup,
    DedupReason,
    GroupMember,
    Hints,
    Hit,
    SearchRequest,
)
from tributary.engine.pipeline.budget import plan_budget
from tributary.engine.pipeline.expand import (
    CHUNKS_PER_FILE,
    FILL_SLACK,
    FOCUS_CHUNKS,
    FOCUS_LEAD,
    LEAD_CHUNKS,
    code_leads,
    context_hits,
    focus_functions,
    further_reading,
)
from tributary.engine.pipeline.hints import HintScorer
from tributary.engine.pipeline.run import run_pipeline
from tributary.engine.pipeline.tokens import fill_tokens


def _chunk(path: str, rank: int, start: int) -> Hit:
    body = f"def part_{path.replace('/', '_').replace('.', '_')}_{start}(cache):\n    return cache[{start}]\n"
    return hit("files", rank, body, path=path, lines=(start, start + 1), metadata={"cosine": 0.6, "keyword_rank": rank})


def test_the_first_files_bring_their_next_chunks_and_the_tail_makes_room() -> None:
    a1, a2, a3 = _chunk("a.py", 1, 1), _chunk("a.py", 5, 20), _chunk("a.py", 6, 40)
    b1, c1, d1 = _chunk("b.py", 2, 1), _chunk("c.py", 3, 1), _chunk("d.py", 4, 1)
    top = [a1, b1, c1, d1]
    ranked = [*top, a2, a3]
    out = context_hits(top, ranked, files=1, per_file=3)
    assert [h.id for h in out] == [a1.id, a2.id, a3.id, b1.id]  # same count as the list


def test_the_pipeline_keeps_the_list_and_widens_the_context() -> None:
    hits = [_chunk("a.py", 1, 1), *(_chunk(f"f{i}.py", i + 1, 1) for i in range(1, 40)),
            *(_chunk("a.py", 41 + i, 10 * (i + 1)) for i in range(4))]
    done = run_pipeline({"files": hits}, SearchRequest(query="part cache", top_k=10))
    assert done.context is not None
    listed = [h.path for h in done.hits]
    in_context = [c.location.split(":")[0] for c in done.context.chunks]
    assert listed.count("a.py") == 1  # the list shows one chunk per file near the top
    assert in_context.count("a.py") == 5  # the context reads five of the best file's
    history = run_pipeline({"files": hits}, SearchRequest(query="when did part cache change", top_k=10))
    assert history.context is not None
    assert [c.location.split(":")[0] for c in history.context.chunks].count("a.py") == 1


def test_a_task_puts_the_first_files_next_chunks_after_their_best() -> None:
    a1, b1, c1, d1 = _chunk("a.py", 1, 1), _chunk("b.py", 2, 1), _chunk("c.py", 3, 1), _chunk("d.py", 4, 1)
    a2, b2, a3 = _chunk("a.py", 5, 20), _chunk("b.py", 6, 20), _chunk("a.py", 7, 40)
    ranked = [a1, b1, c1, d1, a2, b2, a3]
    for position, one in enumerate(ranked):
        one.score = 1.0 - position / 10
    out = focus_functions(ranked, files=2, per_file=2, lead=2)
    assert [h.id for h in out] == [a1.id, a2.id, b1.id, b2.id, c1.id, d1.id, a3.id]
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
    assert a2.parts.parts["focus"] > 0  # the lift is a part of the score, shown with the rest


def test_a_tasks_first_file_brings_more_of_its_chunks_than_the_next() -> None:
    a = [_chunk("a.py", 1 + n, 1 + 20 * n) for n in range(5)]
    b = [_chunk("b.py", 10 + n, 1 + 20 * n) for n in range(4)]
    c1, d1 = _chunk("c.py", 20, 1), _chunk("d.py", 21, 1)
    ranked = _scored(a[0], b[0], c1, d1, *a[1:], *b[1:])
    out = focus_functions(ranked, files=2, per_file=2, lead=4)
    assert [h.id for h in out] == [*(h.id for h in a[:4]), b[0].id, b[1].id, c1.id, d1.id, a[4].id, *(h.id for h in b[2:])]
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
    assert FOCUS_LEAD > FOCUS_CHUNKS  # the shipped shape: the likeliest file brings the most


def test_only_a_task_question_is_answered_by_function() -> None:
    hits = [_chunk("a.py", 1, 1), *(_chunk(f"f{i}.py", i + 1, 1) for i in range(1, 40)),
            *(_chunk("a.py", 41 + i, 10 * (i + 1)) for i in range(4))]
    short = run_pipeline({"files": hits}, SearchRequest(query="part cache", top_k=10))
    assert [h.path for h in short.hits].count("a.py") == 1
    issue = "The cache part breaks.\n\n" + "When the cache is read twice the part is lost. " * 20
    task = run_pipeline({"files": hits}, SearchRequest(query=issue, top_k=10))
    assert [h.path for h in task.hits][:3] == ["a.py"] * 3


def test_a_files_next_chunks_follow_its_run_of_hits_in_the_list() -> None:
    """A task's list keeps a file's best chunks together; the context reads them before
    the file's further chunks, and a later lone hit of the file stays where it was."""
    a = [_chunk("a.py", n + 1, 20 * n + 1) for n in range(6)]
    b1, c1 = _chunk("b.py", 10, 1), _chunk("c.py", 11, 1)
    top = [a[0], a[1], a[2], b1, c1, a[3]]
    out = context_hits(top, [*top, a[4], a[5]], files=1, per_file=5)
    assert [h.id for h in out] == [a[0].id, a[1].id, a[2].id, a[4].id, a[5].id, b1.id]


def test_a_task_reads_more_of_its_first_file_after_the_next_files_chunks() -> None:
    a = [_chunk("a.py", n + 1 if n == 0 else 40 + n, 20 * n + 1) for n in range(8)]
    b1, b2 = _chunk("b.py", 2, 1), _chunk("b.py", 30, 20)
    tail = [_chunk(f"f{n}.py", n + 3, 1) for n in range(10)]
    top = [a[0], b1, *tail]
    ranked = [*top, b2, *a[1:]]
    out = context_hits(top, ranked, files=2, per_file=2, lead=5, lead_after=2)
    # a.py's next one and b.py's next one as before, then a.py's next three: the tail gives way
    assert [h.id for h in out] == [a[0].id, a[1].id, b1.id, b2.id, a[2].id, a[3].id, a[4].id, *[h.id for h in tail[:5]]]
    assert context_hits(top, ranked, files=2, per_file=2) == [a[0], a[1], b1, b2, *tail[:8]]


def test_a_tasks_third_file_is_read_before_the_first_files_further_chunks() -> None:
    """A task's list brings its first three files together; the third one's best chunks
    are read before the first file's further ones, which only the tail gives way to."""
    a = [_chunk("a.py", n + 1, 20 * n + 1) for n in range(8)]
    b1, c1, c2 = _chunk("b.py", 10, 1), _chunk("c.py", 11, 1), _chunk("c.py", 12, 30)
    tail = [_chunk(f"f{n}.py", n + 20, 1) for n in range(8)]
    top = [a[0], a[1], b1, c1, c2, *tail]
    out = context_hits(top, [*top, *a[2:]], files=2, per_file=3, lead=6)
    # a.py's two listed, its next two; b.py; c.py's run; then a.py's further three
    assert [h.id for h in out][:10] == [*(h.id for h in a[:4]), b1.id, c1.id, c2.id, *(h.id for h in a[4:7])]
    assert [h.id for h in out][10:] == [h.id for h in tail[: len(top) - 10]]


def test_a_task_context_reads_further_into_its_first_file() -> None:
    hits = [_chunk("a.py", 1, 1), *(_chunk(f"f{i}.py", i + 1, 1) for i in range(1, 40)),
            *(_chunk("a.py", 41 + i, 10 * (i + 1)) for i in range(LEAD_CHUNKS + 5))]
    issue = "The cache part breaks.\n\n" + "When the cache is read twice the part is lost. " * 20
    done = run_pipeline({"files": hits}, SearchRequest(query=issue, top_k=30))
    assert done.context is not None
    in_context = [c.location.split(":")[0] for c in done.context.chunks]
    # its best chunks moved to the top of the list, then the next ones up to LEAD_CHUNKS,
    # and with room left in the budget the rest of its chunks, before the other files'
    listed = FOCUS_LEAD + LEAD_CHUNKS - 1
    assert in_context[:30].count("a.py") == listed
    assert in_context[30 : 30 + 21 - listed] == ["a.py"] * (21 - listed)  # all its 21, then the other files'
    assert in_context.count("a.py") == 21
    short = run_pipeline({"files": hits}, SearchRequest(query="part cache", top_k=30))
    assert short.context is not None
    assert [c.location.split(":")[0] for c in short.context.chunks].count("a.py") == CHUNKS_PER_FILE


def test_a_task_context_reads_its_first_files_further_chunks_first() -> None:
    a1, b1, c1 = _chunk("a.py", 1, 1), _chunk("b.py", 2, 1), _chunk("c.py", 3, 1)
    c2, a2, b2, a3 = _chunk("c.py", 4, 20), _chunk("a.py", 5, 20), _chunk("b.py", 6, 20), _chunk("a.py", 7, 40)
    ranked = [a1, b1, c1, c2, a2, b2, a3]
    more = further_reading([a1, b1], ranked, budget=10_000, files=2)
    # the first two files' further chunks come before the third file's
    assert [h.id for h in more] == [a2.id, b2.id, a3.id, c1.id, c2.id]
    each = a1.tokens
    assert each > 0 and all(h.tokens == each for h in more)
    assert FILL_SLACK < 2
    short = further_reading([a1], ranked, budget=each, files=1)
    assert [h.id for h in short] == [a2.id]  # until the hits' tokens pass the budget with slack


def test_further_reading_takes_only_the_room_the_list_leaves() -> None:
    big, small = _chunk("a.py", 1, 1), _chunk("b.py", 2, 1)
    big.content = "def big(cache):\n" + "    cache.append(1)\n" * 40
    extra = [_chunk(f"e{n}.py", n + 3, 1) for n in range(20)]
    for one in (big, small, *extra):
        one.tokens = 0
    fill_tokens([big, small, *extra])
    alone = plan_budget([big, small], budget=100_000)
    room = alone.used + 150
    plan = plan_budget([big, small], budget=room, then=extra)
    chosen = [item.hit.id for item in plan.selected]
    assert chosen[:2] == [big.id, small.id]  # the list first, whole, as without further reading
    assert 2 < len(chosen) < 22 and chosen[2] == extra[0].id  # then what the rest of the room holds
    assert plan.used <= room
    assert [h.id for h in plan.dropped] == []  # further reading left out is not dropped


def test_a_task_lifts_a_files_other_functions_before_a_long_functions_parts() -> None:
    a1, b1, c1 = _chunk("a.py", 1, 1), _chunk("b.py", 2, 1), _chunk("c.py", 3, 1)
    part2, part3 = _chunk("a.py", 4, 20), _chunk("a.py", 5, 40)
    other = _chunk("a.py", 6, 60)
    a1.title, part2.title, part3.title = "lambdify (part 1 of 3)", "lambdify (part 2 of 3)", "lambdify (part 3 of 3)"
    ranked = [a1, b1, c1, part2, part3, other]
    for position, one in enumerate(ranked):
        one.score = 1.0 - position / 10
    out = focus_functions(ranked, files=1, per_file=2)
    assert [h.id for h in out][:2] == [a1.id, other.id]  # one function, then the next function


def test_functions_sharing_a_name_apart_in_the_file_are_not_parts_of_one() -> None:
    """`@dispatch` overloads, or a property's getter and setter, share a title but are
    functions of their own; chunks of one name whose lines follow on are one function."""
    best, b1 = _chunk("a.py", 1, 1), _chunk("b.py", 2, 1)
    overload, part = _chunk("a.py", 3, 40), _chunk("a.py", 4, 3)
    best.title = overload.title = part.title = "intersection_sets"
    other = _chunk("a.py", 5, 80)
    ranked = [best, b1, overload, part, other]
    for position, one in enumerate(ranked):
        one.score = 1.0 - position / 10
    out = focus_functions(ranked, files=1, per_file=3)
    assert [h.id for h in out][:3] == [best.id, overload.id, other.id]  # the part of the best waits


def _scored(*hits: Hit) -> list[Hit]:
    for position, one in enumerate(hits):
        one.score = 1.0 - position / 10
    return list(hits)


def _suggestion(path: str, rank: int) -> Hit:
    """A history source's file: the path past fixes touched, no lines."""
    return hit("tasks", rank, f"Fixes that touched {path}", path=path)


def test_a_task_is_led_by_the_code_a_source_found_first() -> None:
    a1, b1, c1 = _chunk("a.py", 1, 1), _chunk("b.py", 2, 1), _chunk("c.py", 3, 1)
    voted = _suggestion("b.py", 1)
    ranked = _scored(b1, a1, c1)
    out = code_leads(ranked, {b1.id: DedupGroup(b1, [GroupMember(voted, DedupReason.FILE, 1.0)])})
    assert [h.id for h in out] == [a1.id, b1.id, c1.id]  # the history's vote orders the rest
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
    assert a1.parts.parts["lead"] > 0  # the lift is a part of the score, shown with the rest


def test_code_leads_leaves_a_list_whose_first_file_is_the_codes() -> None:
    a1, a2, b1 = _chunk("a.py", 1, 1), _chunk("a.py", 3, 20), _chunk("b.py", 2, 1)
    ranked = _scored(a2, b1, a1)  # another chunk of the same file first: nothing to lift
    assert code_leads(ranked, {}) == ranked
    only_history = _scored(_suggestion("b.py", 1), _suggestion("c.py", 2))
    assert code_leads(only_history, {}) == only_history  # no source read code: as fused
    assert "lead" not in a1.parts.parts
    c1, hinted = _chunk("c.py", 1, 1), _chunk("d.py", 2, 1)
    asked = _scored(hinted, c1)
    assert code_leads(asked, {}, HintScorer(Hints(related_files=["d.py"])).score) == asked  # the asker's file stays
    assert code_leads(asked, {}, HintScorer(Hints(language="python")).score)[0] is c1  # both hinted alike


def test_a_test_file_a_source_found_first_does_not_lead() -> None:
    """A grep tool's first file is often the test that repeats the issue's names, and
    the agreement of several sources puts it first: the code a source found first leads
    instead, whether the source that found the test marked its role (a third-party
    source, ``role_factor``) or scaled its score for it (a built-in server)."""
    code, test = _chunk("src/a.py", 1, 1), _chunk("tests/test_a.py", 4, 1)
    grep = hit("rg", 1, "def test_a(): assert part(1)", path="tests/test_a.py", lines=(1, 2),
               metadata={ROLE_FACTOR: 0.7})
    ranked = _scored(test, code)
    out = code_leads(ranked, {test.id: DedupGroup(test, [GroupMember(grep, DedupReason.OVERLAP, 1.0)])})
    assert [h.id for h in out] == [code.id, test.id]
    scaled = hit("files", 1, "def test_b(): assert part(2)", path="tests/test_b.py", lines=(1, 2),
                 metadata={"role": "test", "fused": 0.1}, score=0.07)
    ranked = _scored(scaled, code)
    assert [h.id for h in code_leads(ranked, {})] == [code.id, scaled.id]
    unscaled = hit("files", 1, "def part_c(): return 3", path="src/c.py", lines=(1, 2),
                   metadata={"role": "code", "fused": 0.1}, score=0.1)
    ranked = _scored(unscaled, code)
    assert code_leads(ranked, {}) == ranked  # its own first hit, not scaled: it stays


def test_a_path_the_issue_mentions_does_not_hold_the_first_place() -> None:
    """A traceback names many files; the code search weighs them already, so a first hit
    raised by such a path gives way to the code's first as any other would, while the
    same path given as the request's related file keeps it first."""
    issue = ('The part cache breaks.\n\nTraceback:\n  File "b.py", line 2, in part\n'
             + "When the cache is read twice the part is lost. " * 20)

    def ask(**hints: list[str]) -> list[str]:
        code = [_chunk("a.py", 1, 1), _chunk("b.py", 2, 1), _chunk("c.py", 3, 1)]
        history = [_suggestion("b.py", 1), _suggestion("c.py", 2)]
        done = run_pipeline({"files": code, "tasks": history}, SearchRequest(query=issue, top_k=10, hints=Hints(**hints)))
        return list(dict.fromkeys(h.path for h in done.hits))

    assert ask()[:2] == ["a.py", "b.py"]
    assert ask(related_files=["b.py"])[0] == "b.py"


def test_the_history_orders_a_tasks_files_after_the_first() -> None:
    """End to end: the history's agreement on b.py and c.py puts them first for a short
    question, while for an issue the file code search ranked first leads and the vote
    orders the files after it."""
    code = [_chunk("a.py", 1, 1), _chunk("b.py", 2, 1), _chunk("c.py", 3, 1), _chunk("d.py", 4, 1)]
    history = [_suggestion("b.py", 1), _suggestion("c.py", 2)]
    short = run_pipeline({"files": code, "tasks": history}, SearchRequest(query="part cache", top_k=10))
    assert [h.path for h in short.hits][:2] == ["b.py", "c.py"]
    issue = "The cache part breaks.\n\n" + "When the cache is read twice the part is lost. " * 20
    code = [_chunk("a.py", 1, 1), _chunk("b.py", 2, 1), _chunk("c.py", 3, 1), _chunk("d.py", 4, 1)]
    history = [_suggestion("b.py", 1), _suggestion("c.py", 2)]
    task = run_pipeline({"files": code, "tasks": history}, SearchRequest(query=issue, top_k=10))
    files = list(dict.fromkeys(h.path for h in task.hits))
    assert files[:3] == ["a.py", "b.py", "c.py"]
