"""Dedup: every reason with its similarity, transitive groups, keep rule, span merges."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from tests.pipeline.helpers import FUNC_A, FUNC_B, hit
from tributary.engine.config.schema import DedupConfig
from tributary.engine.model import DedupReason, Hit
from tributary.engine.pipeline.blocking import candidate_pairs
from tributary.engine.pipeline.dedup import deduplicate
from tributary.engine.pipeline.text import squeeze, squeeze_prose


def _members(result_groups: list, kept_id: str) -> dict[str, tuple[DedupReason, float]]:
    group = next(g for g in result_groups if g.kept.id == kept_id)
    return {m.hit.id: (m.reason, m.similarity) for m in group.members}


def test_reformatted_copy_is_a_hash_duplicate() -> None:
    a = hit("files", 1, FUNC_A)
    b = hit("serena", 3, FUNC_A.replace("    ", "  ").replace("\n", "\n\n"))
    result = deduplicate([a, b])
    assert [h.id for h in result.hits] == [a.id]
    assert _members(result.groups, a.id) == {b.id: (DedupReason.HASH, 1.0)}
    assert result.groups[0].sources == ["files", "serena"]
    assert result.groups[0].agreement == 2


def test_edited_copy_is_a_fuzzy_duplicate_with_its_similarity() -> None:
    a = hit("files", 1, FUNC_A)
    b = hit("grep", 2, FUNC_A.replace("strict", "strict_mode").replace("path", "filename"))
    result = deduplicate([a, b])
    reason, similarity = _members(result.groups, a.id)[b.id]
    assert reason is DedupReason.FUZZY
    expected = Levenshtein.normalized_similarity(squeeze(a.content), squeeze(b.content))
    assert 0.8 <= similarity < 1.0
    assert abs(similarity - expected) < 1e-3


def test_fuzzy_threshold_is_configurable() -> None:
    a = hit("files", 1, FUNC_A)
    b = hit("grep", 2, FUNC_A.replace("strict", "strict_mode").replace("path", "filename"))
    assert deduplicate([a, b], DedupConfig(fuzzy_threshold=0.99)).groups == []


def test_similar_but_different_functions_stay_apart() -> None:
    other = FUNC_A.replace("parse_config", "parse_routes").replace("servers", "routes").replace(
        "validate_server", "compile_rule"
    ).replace("Read a YAML config file and validate every server entry", "Load routing rules and compile each pattern")
    result = deduplicate([hit("a", 1, FUNC_A), hit("b", 1, other), hit("c", 1, FUNC_B)])
    assert result.groups == []
    assert len(result.hits) == 3


def test_short_texts_only_fold_when_identical() -> None:
    result = deduplicate([hit("a", 1, "x = compute(1)"), hit("b", 1, "y = compute(2)")])
    assert result.groups == []


def _fake_embedder(vectors: dict[str, list[float]]):  # type: ignore[no-untyped-def]
    def embed(texts: list[str]) -> npt.NDArray[np.float32]:
        rows = np.array([vectors[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    return embed


def test_semantic_duplicates_use_the_injected_embedder() -> None:
    a = hit("docs", 1, "Install the package with pip and run the setup command once.")
    b = hit("web", 2, "To set things up, pip-install it, then execute the setup step one time.")
    c = hit("web", 1, "The cache keeps entries for five minutes by default.")
    embed = _fake_embedder({a.content: [1, 0.1, 0], b.content: [1, 0.2, 0], c.content: [0, 0, 1]})
    result = deduplicate([a, b, c], DedupConfig(semantic_threshold=0.9), embed=embed)
    reason, similarity = _members(result.groups, a.id)[b.id]
    assert reason is DedupReason.SEMANTIC
    assert 0.9 <= similarity <= 1.0
    # without an embedder (or with semantic off) they stay apart
    assert deduplicate([a, b, c]).groups == []
    assert deduplicate([a, b, c], DedupConfig(semantic=False), embed=embed).groups == []


def test_transitive_duplicates_land_in_one_group() -> None:
    words = [f"token{i:03d}" for i in range(100)]
    base = " ".join(words)
    other = ["VWXYZ" + "".join("ABCDEFGHIJ"[int(d)] for d in f"{i:03d}") for i in range(100)]
    step1 = " ".join([other[i] if i < 14 else w for i, w in enumerate(words)])
    step2 = " ".join([other[i] if i < 14 or i >= 86 else w for i, w in enumerate(words)])

    def sim(x: str, y: str) -> float:
        return float(Levenshtein.normalized_similarity(squeeze(x), squeeze(y)))

    assert sim(base, step1) >= 0.8 and sim(step1, step2) >= 0.8 and sim(base, step2) < 0.8
    a, b, c = hit("s1", 1, base), hit("s2", 2, step1), hit("s3", 3, step2)
    result = deduplicate([c, b, a])
    assert len(result.groups) == 1
    group = result.groups[0]
    assert group.kept.id == a.id
    assert {m.hit.id for m in group.members} == {b.id, c.id}
    assert all(m.reason is DedupReason.FUZZY for m in group.members)
    assert group.sources == ["s1", "s2", "s3"]


def test_transitive_chain_without_direct_link() -> None:
    # A~B by hash, B~C by overlap of lines, A and C share nothing directly
    lines = [f"line number {i} of the module with some text" for i in range(1, 41)]
    a = hit("s1", 2, "\n".join(lines[0:20]), path="m.py", lines=(1, 20))
    b = hit("s2", 1, "\n".join(lines[0:20]), path="m.py", lines=(1, 20))
    c = hit("s3", 1, "\n".join(lines[15:40]), path="m.py", lines=(16, 40))
    result = deduplicate([a, b, c])
    assert len(result.groups) == 1
    assert len(result.hits) == 1


def test_keeps_the_best_ranked_version() -> None:
    worse = hit("tasks", 5, FUNC_A)
    better = hit("files", 1, FUNC_A.replace("    ", "\t"))
    result = deduplicate([worse, better])
    assert result.hits[0].id == better.id
    assert result.groups[0].kept.id == better.id
    assert [m.hit.id for m in result.groups[0].members] == [worse.id]


def test_keep_rule_ties_broken_by_priority_then_length() -> None:
    short = hit("a", 1, FUNC_A, priority=0.2)
    high = hit("b", 1, FUNC_A.replace("    ", "  "), priority=0.9)
    assert deduplicate([short, high]).hits[0].id == high.id
    x = hit("a", 1, FUNC_A)
    y = hit("b", 1, FUNC_A + "\n\n")
    assert deduplicate([y, x]).hits[0].id == y.id  # longer content: the more complete copy


def test_overlapping_chunks_merge_into_one_span() -> None:
    lines = [f"    step_{i}(value)  # does step {i}" for i in range(1, 61)]
    first = hit("files", 1, "\n".join(lines[0:30]), path="src/run.py", lines=(1, 30))
    second = hit("files", 2, "\n".join(lines[20:50]), path="src/run.py", lines=(21, 50))
    third = hit("serena", 1, "\n".join(lines[45:60]), path="src/run.py", lines=(46, 60))
    elsewhere = hit("files", 3, "\n".join(lines[0:30]), path="src/other.py", lines=(100, 129))
    result = deduplicate([first, second, third, elsewhere])
    group = next(g for g in result.groups if g.kept.path == "src/run.py")
    assert (group.kept.start_line, group.kept.end_line) == (1, 60)
    assert group.kept.content == "\n".join(lines)
    assert group.kept.id == first.id  # the kept hit's identity survives the merge
    reasons = {m.hit.id: m.reason for m in group.members}
    assert reasons[second.id] is DedupReason.OVERLAP
    overlap = next(m for m in group.members if m.hit.id == second.id)
    assert overlap.similarity == round(10 / 30, 4)
    assert first.content == "\n".join(lines[0:30])  # inputs are not mutated


def test_a_grep_line_merged_with_its_function_takes_the_functions_name() -> None:
    """code-index-mcp's hit for the line ``def help_option(`` ranks first in its source
    and is kept, named only by its path: the merged span shows the function's name."""
    body = "def help_option(*decls):\n    return option(*decls)\n"
    line = hit("ci", 1, "def help_option(*decls):", path="src/click/decorators.py", lines=(603, 603))
    chunk = hit("files", 3, body, path="src/click/decorators.py", lines=(603, 604), title="help_option")
    group = deduplicate([line, chunk]).groups[0]
    assert (group.kept.id, group.kept.title, group.kept.end_line) == (line.id, "help_option", 604)
    # a kept hit with a name of its own keeps it
    named = hit("ci", 1, "def help_option(*decls):", path="src/click/decorators.py", lines=(603, 603),
                title="match")
    assert deduplicate([named, chunk]).groups[0].kept.title == "match"


def test_overlap_with_disagreeing_text_keeps_best_and_records_it() -> None:
    a = hit("files", 1, "a = 1\nb = 2\nc = 3", path="x.py", lines=(1, 3))
    b = hit("other", 2, "B = 20\nc = 3\nd = 4", path="x.py", lines=(2, 4))  # line 2 differs
    result = deduplicate([a, b])
    assert len(result.groups) == 1
    group = result.groups[0]
    assert group.kept is a
    assert group.members[0].reason is DedupReason.OVERLAP


def test_adjacent_ranges_do_not_merge() -> None:
    a = hit("files", 1, "a = 1\nb = 2", path="x.py", lines=(1, 2))
    b = hit("files", 2, "c = 3\nd = 4", path="x.py", lines=(3, 4))
    assert deduplicate([a, b]).groups == []


def test_contentless_hits_group_by_uri() -> None:
    a = hit("web", 1, "", uri="https://docs.python.org/3/library/re.html")
    b = hit("docs", 2, "", uri="https://docs.python.org/3/library/re.html")
    c = hit("docs", 3, "")
    result = deduplicate([a, b, c])
    assert len(result.groups) == 1 and result.groups[0].members[0].hit is b
    assert len(result.hits) == 2


def test_disabled_dedup_returns_input() -> None:
    a, b = hit("a", 1, FUNC_A), hit("b", 1, FUNC_A)
    result = deduplicate([a, b], DedupConfig(enabled=False))
    assert result.groups == [] and result.hits == [a, b]


def test_groups_partition_the_input() -> None:
    hits: list[Hit] = []
    for i in range(30):
        text = (FUNC_A if i % 3 == 0 else FUNC_B if i % 3 == 1 else f"unique text number {i} " * 5)
        hits.append(hit(f"s{i % 5}", i + 1, text.replace("    ", " " * (i % 4 + 1))))
    result = deduplicate(hits)
    ids = [h.id for h in result.hits] + [m.hit.id for g in result.groups for m in g.members]
    assert sorted(ids) == sorted(h.id for h in hits)


def test_blocking_finds_what_exhaustive_scoring_finds() -> None:
    texts = [FUNC_A, FUNC_B, FUNC_A.replace("strict", "strict_mode"), FUNC_B.replace("width", "cols"),
             "completely different text about caching and ttl values " * 3]
    squeezed = [squeeze(t) for t in texts]
    full = process.cdist(squeezed, squeezed, scorer=Levenshtein.normalized_similarity)
    exhaustive = {(i, j) for i in range(5) for j in range(i + 1, 5) if full[i, j] >= 0.8}
    candidates = {tuple(p) for p in candidate_pairs(squeezed).tolist()}
    assert exhaustive <= candidates


def test_different_defined_names_are_not_fuzzy_duplicates() -> None:
    full = 'def full_load(stream):\n    """Parse the first YAML document in a stream\n    and produce the object.\n    Resolve all tags."""\n    return load(stream, FullLoader)\n'
    safe = full.replace("full_load", "safe_load").replace("FullLoader", "SafeLoader")
    assert deduplicate([hit("a", 1, full), hit("b", 1, safe)]).groups == []


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # a Go method after its receiver
        ("func (s *Server) StartListening(ctx context.Context) error {\n", "func (s *Server) StopListening(ctx context.Context) error {\n"),
        # a JS arrow function held in a constant
        ("export const loadUserProfile = async (id) => {\n", "export const saveUserProfile = async (id) => {\n"),
    ],
)
def test_definition_forms_beyond_def_and_class_keep_functions_apart(first: str, second: str) -> None:
    body = "    if s.closed {\n        return errClosed\n    }\n    s.mu.Lock()\n    defer s.mu.Unlock()\n    return s.listener.Toggle(ctx)\n}\n"
    a, b = hit("a", 1, first + body), hit("b", 1, second + body)
    assert deduplicate([a, b]).groups == []
    renamed = hit("b", 1, first + body.replace("Toggle", "Switch"))  # the same function, edited
    assert len(deduplicate([a, renamed]).groups) == 1


def test_disjoint_lines_of_one_file_are_not_duplicates() -> None:
    body = "    value = compute(item)\n    store[item.key] = value\n    log.debug('stored %s', item)\n"
    a = hit("files", 1, body, path="m.py", lines=(10, 12))
    b = hit("files", 2, body.replace("debug", "info"), path="m.py", lines=(40, 42))
    assert deduplicate([a, b]).groups == []
    c = hit("serena", 1, body.replace("debug", "info"), path="other.py", lines=(40, 42))
    assert len(deduplicate([a, c]).groups) == 1  # elsewhere, the same text is a copy


def test_one_document_from_two_servers_despite_markup() -> None:
    markdown = (
        "## Installation\n\nInstall **tributary** with `pip install tributary`, then run "
        "[the setup guide](https://example.org/docs/setup) once.\n\nThe *cache* keeps answers "
        "for five minutes; see <https://example.org/cache> for the details of invalidation."
    )
    plain = (
        "Installation\n\nInstall tributary with pip install tributary, then run the setup guide once.\n\n"
        "The cache keeps answers for five minutes; see for the details of invalidation."
    )
    result = deduplicate([hit("context7", 1, markdown), hit("web", 1, plain, uri="https://example.org/x")])
    assert len(result.groups) == 1
    assert result.groups[0].members[0].reason in (DedupReason.HASH, DedupReason.FUZZY)


def test_semantic_uses_vectors_sources_already_sent() -> None:
    a = hit("files", 1, "Open the index database and apply pending migrations.", metadata={"embedding": [3.0, 0.1]})
    b = hit("tasks", 1, "Run schema upgrades when the index DB is opened.", metadata={"embedding": [1.0, 0.05]})
    c = hit("web", 1, "Unrelated text about the tray icon menu entries.")
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> npt.NDArray[np.float32]:
        calls.append(texts)
        return np.array([[0.0, 1.0]] * len(texts), dtype=np.float32)

    result = deduplicate([a, b, c], embed=embed)
    assert calls == [[c.content]]  # only the hit without a vector is embedded
    assert _members(result.groups, a.id)[b.id][0] is DedupReason.SEMANTIC
    assert len(deduplicate([a, b, c]).groups) == 1  # metadata vectors suffice without an embedder


def test_whole_file_hits_with_the_same_text_about_different_files_stay_apart() -> None:
    # A task history explains each file by the tasks that touched it: one commit that
    # touched two files gives both the same text, but they are two different results.
    why = "Fix the routing of fallback servers (2024-05-01); Add query classes (2024-06-02)"
    a = hit("tasks", 1, why, path="tributary/engine/routing.py")
    b = hit("tasks", 2, why, path="tributary/engine/config/schema.py")
    near = hit("tasks", 3, why + " and more", path="tributary/engine/query_class.py")
    same_file = hit("history", 2, why, path="tributary/engine/routing.py")
    result = deduplicate([a, b, near, same_file], DedupConfig(semantic=False))
    assert [h.path for h in result.hits] == ["tributary/engine/routing.py", "tributary/engine/config/schema.py",
                                            "tributary/engine/query_class.py"]
    (group,) = result.groups
    assert group.kept is a and [m.hit for m in group.members] == [same_file]


def test_a_file_reference_joins_the_best_chunk_of_its_file() -> None:
    chunk_best = hit("files", 1, FUNC_A, path="tributary/engine/routing.py", lines=(10, 20))
    chunk_other = hit("files", 4, FUNC_B, path="tributary/engine/routing.py", lines=(40, 52))
    why = hit("tasks", 2, "Fix the routing of fallback servers (2024-05-01)", path="tributary/engine/routing.py")
    result = deduplicate([chunk_best, chunk_other, why], DedupConfig(semantic=False))
    assert _members(result.groups, chunk_best.id) == {why.id: (DedupReason.FILE, 1.0)}
    assert chunk_other in result.hits  # the file's other chunks stay separate results


def test_one_path_in_two_indexed_repositories_is_two_files() -> None:
    # Two repositories indexed: another repository's history voting for its own
    # pyproject.toml joined this one's pyproject.toml chunk, and two overlapping chunks
    # of one path in two repositories were one result.
    ours = hit("files", 1, FUNC_A, path="pyproject.toml", lines=(1, 12), metadata={"repo": "pytest"})
    theirs = hit("files", 2, FUNC_B, path="pyproject.toml", lines=(5, 20), metadata={"repo": "click"})
    vote = hit("tasks", 1, "Bump the build backend (2024-05-01)", path="pyproject.toml", metadata={"repo": "click"})
    again = hit("history", 3, "Bump the build backend (2024-05-01)", path="pyproject.toml",
                metadata={"repo": "pytest"})
    result = deduplicate([ours, theirs, vote, again], DedupConfig(semantic=False))
    groups = {frozenset([g.kept.id, *(m.hit.id for m in g.members)]) for g in result.groups}
    assert groups == {frozenset([theirs.id, vote.id]), frozenset([ours.id, again.id])}
    assert len(result.hits) == 2
    # A hit that does not say its repository (one history, another server) joins either.
    unsaid = hit("tasks", 2, "Bump the build backend (2024-05-01)", path="pyproject.toml")
    result = deduplicate([ours, unsaid], DedupConfig(semantic=False))
    assert _members(result.groups, ours.id) == {unsaid.id: (DedupReason.FILE, 1.0)}


def test_a_lookup_keeps_the_chunk_of_a_file_group_even_when_the_history_ranks_higher() -> None:
    # The history's hit is ranked first by its source, but for a lookup the group stands
    # for the file: the chunk that quotes it is what is shown (and what the boost sees).
    why = hit("tasks", 1, "Fix the routing of fallback servers (2024-05-01)", path="tributary/engine/routing.py")
    older = hit("history", 1, "Fix the routing of fallback servers (2024-05-01)", path="tributary/engine/routing.py")
    chunk = hit("files", 3, FUNC_A, path="tributary/engine/routing.py", lines=(10, 20))
    result = deduplicate([why, older, chunk], DedupConfig(semantic=False), quote_files=True)
    (group,) = result.groups
    assert group.kept is chunk
    assert [m.hit for m in group.members] == [older, why]  # the rest in relevance order
    assert _members(result.groups, chunk.id)[why.id] == (DedupReason.FILE, 1.0)
    assert result.hits == [chunk]
    # without a chunk, or for other queries, the best-ranked hit is kept
    alone = deduplicate([why, older], DedupConfig(semantic=False), quote_files=True)
    assert alone.groups[0].kept is older  # (ranks tie: by source name)
    assert deduplicate([why, older, chunk], DedupConfig(semantic=False)).groups[0].kept is older


def test_code_sent_without_lines_is_a_snippet_not_the_file() -> None:
    # A symbol server sends each function of a file without line numbers: different
    # functions of one file are different results, and none is "the file".
    chunk = hit("files", 1, FUNC_A, path="tributary/engine/routing.py", lines=(10, 20))
    snippet_b = hit("serena", 1, FUNC_B, path="tributary/engine/routing.py")
    snippet_c = hit("serena", 2, "def route_all(query):\n    return [route(q) for q in query.split()]\n",
                    path="tributary/engine/routing.py")
    result = deduplicate([chunk, snippet_b, snippet_c], DedupConfig(semantic=False))
    assert result.groups == [] and len(result.hits) == 3
    # the same function from two servers with different path roots is still one result
    copy = hit("serena", 3, FUNC_A.replace("    ", "  "), path="src/engine/routing.py")
    result = deduplicate([chunk, copy], DedupConfig(semantic=False))
    assert _members(result.groups, chunk.id) == {copy.id: (DedupReason.HASH, 1.0)}


@pytest.mark.parametrize(
    ("marked", "plain"),
    [
        ("See [the guide](docs/guide.md) first.", "See the guide first."),
        ("Run [`tools`](tools/README.md) once.", "Run tools once."),  # a link around code
        ("Details: <https://example.org/cache>.", "Details: ."),
        ("Details: https://example.org/cache?x=1 today", "Details: today"),
        ("## Title\n\n**bold** _em_ `code` > quote | cell |", "Title bold em code quote cell"),
        ("[a](http://x.org/a) and [b](<https://y.org/b>)", "a and b"),
    ],
)
def test_prose_keys_drop_markup_link_targets_and_urls(marked: str, plain: str) -> None:
    assert squeeze_prose(marked) == squeeze(plain)


def test_prose_keys_leave_text_without_markup_as_squeezed() -> None:
    text = "Plain words, (parenthesised) and 3.5 numbers: nothing to strip; ok?"
    assert squeeze_prose(text) == squeeze(text)


def test_a_grep_answers_scattered_lines_stand_for_the_file_not_one_range() -> None:
    # mcp-ripgrep's matches in core.py, lines 274 to 3763 with gaps, read as one range,
    # folded every chunk of the file between them into one result.
    grep = hit("ripgrep", 1, "    def get_help_record(self, ctx):\n…\n        show_default = False",
               path="src/click/core.py", lines=(274, 3763),
               metadata={"line_numbers": [274, None, 3338, None, 3410]})
    best = hit("files", 1, FUNC_A, path="src/click/core.py", lines=(3338, 3381))
    other = hit("files", 2, FUNC_B, path="src/click/core.py", lines=(3383, 3465))
    result = deduplicate([grep, best, other], DedupConfig(semantic=False), quote_files=True)
    assert [h.id for h in result.hits] == [best.id, other.id]
    assert _members(result.groups, best.id) == {grep.id: (DedupReason.FILE, 1.0)}
    from tributary.engine.pipeline.dedup import fold_label

    assert fold_label(result.groups[0].members[0]) == "evidence: same file"
    # It joins the best chunk holding one of its lines: here the file's second.
    elsewhere = hit("ripgrep", 1, "        show_default = False\n…\n    show_default: bool",
                    path="src/click/core.py", lines=(274, 3410), metadata={"line_numbers": [274, None, 3410]})
    result = deduplicate([elsewhere, best, other], DedupConfig(semantic=False), quote_files=True)
    assert _members(result.groups, other.id) == {elsewhere.id: (DedupReason.FILE, 1.0)}
    assert best in result.hits
    # A grep answer that is one passage (no gap) is a range like any chunk.
    passage = hit("ripgrep", 1, FUNC_A, path="src/click/core.py", lines=(3338, 3381),
                  metadata={"line_numbers": list(range(3338, 3382))})
    result = deduplicate([passage, best, other], DedupConfig(semantic=False), quote_files=True)
    assert _members(result.groups, best.id)[passage.id][0] in (DedupReason.HASH, DedupReason.OVERLAP)
    assert other in result.hits
