"""Which functions past commits changed: read from git, stored on both backends,
weighed per file, served as the code of those functions, and read first in an issue's
likeliest file."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import IndexTarget
from tests.tasks.task_helpers import HashEmbedder, commit, git
from tributary.engine.index.store import StoredChunk
from tributary.engine.model import DedupGroup, DedupReason, GroupMember, Hit
from tributary.engine.pipeline.expand import (
    focus_functions,
    history_evidence,
    named_first,
)
from tributary.engine.servers.tasks import same_definition
from tributary.engine.tasks import import_git_history, task_stats
from tributary.engine.tasks.api import open_index
from tributary.engine.tasks.functions import changed_functions, defined_name, read_git_functions
from tributary.engine.tasks.model import Task, TaskHit
from tributary.engine.tasks.ranking import PathResolver, rank_files

PARSER = '''class Parser:
    def __init__(self, text):
        self.text = text

    def parse(self):
        return self.text.split()


def load(path):
    return open(path).read()
'''


@pytest.fixture
def history(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, {"src/parser.py": PARSER, "README.md": "# parser\n"}, "Add the parser", "2022-01-01T10:00:00+00:00")
    commit(repo, {"src/parser.py": PARSER.replace("split()", "split(',')")},
           "Split on commas when parsing", "2022-02-01T10:00:00+00:00")  # fmt: skip
    commit(repo, {"src/parser.py": PARSER.replace("split()", "split(',')").replace(".read()", ".read().strip()"),
                  "README.md": "# parser\n\nStrips.\n"},
           "Strip the loaded text", "2022-03-01T10:00:00+00:00")  # fmt: skip
    return repo


def test_each_commit_names_the_functions_its_hunks_fell_in(history: Path) -> None:
    head = git(history, "rev-parse", "HEAD").strip()
    found = read_git_functions(history, head).functions
    by_title = {git(history, "log", "-1", "--format=%s", sha).strip(): names for sha, names in found.items()}
    assert by_title["Split on commas when parsing"] == (("src/parser.py", "parse", "def parse(self):"),)
    assert by_title["Strip the loaded text"] == (("src/parser.py", "load", "def load(path):"),)  # README is no code
    assert "Add the parser" not in by_title  # a new file's hunk is in no definition


def test_only_the_commits_after_a_given_one_are_read(history: Path) -> None:
    head = git(history, "rev-parse", "HEAD").strip()
    since = git(history, "rev-parse", "HEAD~1").strip()
    assert list(read_git_functions(history, head, since=since).functions) == [head]


def test_a_clone_missing_old_contents_keeps_the_newer_commits_and_says_so(history: Path) -> None:
    head = git(history, "rev-parse", "HEAD").strip()
    oldest = git(history, "rev-parse", "HEAD~2:src/parser.py").strip()  # only the first commit's blob
    (history / ".git" / "objects" / oldest[:2] / oldest[2:]).unlink()
    read = read_git_functions(history, head)
    assert head in read.functions
    assert read.problem is not None and read.problem.startswith("functions of older commits not read")


def test_a_partial_clone_is_not_diffed(history: Path) -> None:
    git(history, "config", "extensions.partialClone", "origin")
    read = read_git_functions(history, git(history, "rev-parse", "HEAD").strip())
    assert read.functions == {} and "partial clone" in (read.problem or "")


def test_hunk_headers_of_several_languages_give_their_names() -> None:
    assert defined_name("    def eval(cls, n):") == "eval"
    assert defined_name("class LogCaptureFixture:") == "LogCaptureFixture"
    assert defined_name("func (r *Reader) Close() error {") == "Close"
    assert defined_name("pub fn parse_args<T>(input: &str) -> T {") == "parse_args"
    assert defined_name("static int compare_keys(const void *a, const void *b)") == "compare_keys"
    assert defined_name("## Installation") is None
    # JavaScript, which git has no driver for: its header is the last unindented line
    assert defined_name("res.redirect = function redirect(url) {") == "redirect"
    assert defined_name("exports.compileETag = function(val) {") == "compileETag"
    assert defined_name("const handler = async (req, res) => {") == "handler"
    assert defined_name("const Home: FC = () => {") == "Home"  # TypeScript: a type before the value
    assert defined_name("export const load = async (id: string): Promise<Row> => {") == "load"
    assert defined_name("  get: function () {") == "get"
    assert defined_name("module.exports = function(){") == "exports"
    assert defined_name("var send = require('send');") is None
    assert defined_name("if (process.env.NODE_ENV) {") is None


def test_the_diff_reader_skips_what_is_not_a_definition_and_bounds_a_sweep() -> None:
    lines = [b"\0" + b"a" * 40 + b"\n", b"\n", b"diff --git a/x.py b/x.py\n", b"--- a/x.py\n", b"+++ b/x.py\n",
             b"@@ -1 +1 @@ def one():\n", b"-@@ -9 +9 @@ def fake():\n", b"+++ b/y.py\n",
             b"@@ -5 +5 @@ def one():\n", b"diff --git a/gone.py b/gone.py\n", b"+++ /dev/null\n",
             b"@@ -1 +0,0 @@ def gone():\n", b"\0" + b"b" * 40 + b"\n", b"diff --git a/z.py b/z.py\n",
             b"+++ b/z.py\n", *(b"@@ -%d +%d @@ def f%d():\n" % (n, n, n) for n in range(40))]  # fmt: skip
    found = dict(changed_functions(lines))
    assert found["a" * 40] == (("x.py", "one", "def one():"),)  # a removed line like a header is content
    assert len(found["b" * 40]) == 16


def test_an_import_records_functions_and_the_next_one_adds_only_new_commits(
    at: IndexTarget, history: Path, embedder: HashEmbedder
) -> None:
    import_git_history(history, **at.tasks_kw, embedder=embedder)
    with open_index(history, **at.tasks_kw, embedder=embedder) as index:
        hits = index.search("split commas parse", 3)
        assert hits[0].task.functions == (("src/parser.py", "parse", "def parse(self):"),)
    now = (history / "src/parser.py").read_text()
    commit(history, {"src/parser.py": now.replace("self.text = text", "self.text = text or ''")},
           "Accept no text", "2022-04-01T10:00:00+00:00")  # fmt: skip
    import_git_history(history, **at.tasks_kw, embedder=embedder)
    with open_index(history, **at.tasks_kw, embedder=embedder) as index:
        found = {hit.task.title: hit.task.functions for hit in index.search("accept no text split commas", 5)}
    assert found["Accept no text"] == (("src/parser.py", "__init__", "def __init__(self, text):"),)
    assert found["Split on commas when parsing"] == (("src/parser.py", "parse", "def parse(self):"),)
    assert task_stats(history, **at.tasks_kw).with_functions == 3


def test_a_full_import_replaces_the_names_an_older_reader_got_wrong(
    at: IndexTarget, history: Path, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JavaScript's headers once gave ``function`` and ``require`` as names; a user's
    ``tasks import --full`` added the right names beside them and kept the wrong ones."""
    from tributary.engine.tasks import functions

    monkeypatch.setattr(functions, "defined_name", lambda header: "function")
    import_git_history(history, **at.tasks_kw, embedder=embedder)
    monkeypatch.undo()
    import_git_history(history, **at.tasks_kw, embedder=embedder, full=True)
    with open_index(history, **at.tasks_kw, embedder=embedder) as index:
        hits = index.search("split commas parse", 3)
    assert hits[0].task.functions == (("src/parser.py", "parse", "def parse(self):"),)


def _task(title: str, files: tuple[str, ...], functions: tuple[tuple[str, str], ...]) -> Task:
    changed = tuple((path, name, f"def {name}(self):") for path, name in functions)
    return Task(id=title, date=datetime(2022, 1, 1, tzinfo=UTC), title=title, files=files, functions=changed)


def test_a_file_ranks_its_functions_by_the_tasks_that_changed_them() -> None:
    hits = [
        TaskHit(_task("fix a", ("src/a.py",), (("src/a.py", "parse"),)), 1.0, 1),
        TaskHit(_task("fix b", ("src/a.py",), (("src/a.py", "parse"), ("src/a.py", "load"))), 0.9, 2),
        TaskHit(_task("sweep", ("src/a.py", "src/b.py"), tuple(("src/a.py", f"f{n}") for n in range(8))), 0.8, 3),
    ]
    files = rank_files(hits, query_time=datetime(2023, 1, 1, tzinfo=UTC).timestamp(), resolver=PathResolver())
    assert files[0].path == "src/a.py"
    assert files[0].likely_functions(2) == ["parse", "load"]
    assert files[0].functions["parse"].lines == ["def parse(self):"]


def _hit(hit_id: str, path: str, title: str, start: int, score: float, **metadata: object) -> Hit:
    return Hit(id=hit_id, source="files", tool="search", title=title, content="...", path=path,
               start_line=start, end_line=start + 5, score=score, metadata=dict(metadata))  # fmt: skip


def test_the_likeliest_files_functions_past_fixes_changed_follow_its_best_chunk() -> None:
    ranked = [
        _hit("a1", "src/a.py", "Parser.parse", 10, 1.0),
        _hit("b1", "src/b.py", "other", 1, 0.9),
        _hit("a2", "src/a.py", "Parser.render", 30, 0.8),
        _hit("a3", "src/a.py", "Reader.__init__", 50, 0.7),
        _hit("a4", "src/a.py", "Parser.__init__", 70, 0.6),
    ]
    task_file = Hit(id="t1", source="tasks", tool="files_for_task", title="src/a.py", content="why",
                    path="src/a.py", metadata={"kind": "file", "functions": ["__init__", "missing"]})  # fmt: skip
    groups = {"a1": DedupGroup(kept=ranked[0], members=[GroupMember(hit=task_file, reason=DedupReason.FILE, similarity=1.0)])}
    named = history_evidence(ranked, groups)
    assert named.names == {"src/a.py": ["__init__", "missing"]}
    out = [h.id for h in focus_functions(ranked, history=named)]
    assert out[:3] == ["a1", "a3", "a2"]  # the code search's best __init__ of the file is taken
    named.read = {"a4"}  # ... unless the history read one of them itself
    assert [h.id for h in focus_functions(ranked, history=named)][:3] == ["a1", "a4", "a2"]
    assert [h.id for h in focus_functions(ranked)][:3] == ["a1", "a2", "a3"]


def test_a_name_matches_a_functions_parts_but_not_a_module_chunk() -> None:
    hits = [_hit("m", "src/a.py", "src/a.py", 1, 1.0), _hit("p", "src/a.py", "Parser.parse (part 2 of 3)", 9, 0.9)]
    assert [h.id for h in named_first(hits, ["parse", "src/a.py"])] == ["p", "m"]


ISSUE = """Parsing splits on the wrong separator

When I parse a file whose fields are separated by commas and spaces, the parser keeps
the spaces in every field. Steps:

```python
parser = Parser("a, b, c")
parser.parse()
```

gives `['a', ' b', ' c']` where `['a', 'b', 'c']` was expected. The split should strip
each field, as the loader strips the text it reads.
"""


def test_the_tasks_server_reads_the_functions_past_fixes_changed_for_an_issue(
    at: IndexTarget, history: Path, embedder: HashEmbedder
) -> None:
    from tests.index.index_helpers import HashingEmbedder
    from tributary.engine.index.manager import index_repository
    from tributary.engine.servers.tasks import TaskBackend
    from tributary.engine.tasks.api import tasks_db_path

    index_repository(history, embedder=HashingEmbedder(), **at.kw)
    import_git_history(history, **at.tasks_kw, embedder=embedder)
    histories = [] if at.postgres else [tasks_db_path(history, at.tasks_kw["indexes_dir"])]
    backend = TaskBackend(histories, embed=False, backend=at.kw.get("backend"))
    backend.start()
    try:
        files, _, named = backend.answer(ISSUE, 10, 0)
        assert files[0][1].path == "src/parser.py"
        assert {(n.chunk.symbol, n.chunk.start_line) for n in named} == {("Parser.parse", 5), ("load", 9)}
        assert all(n.file.path == "src/parser.py" for n in named)
        assert {n.name: n.file.changed_by(n.name) for n in named} == {
            "parse": "Split on commas when parsing (2022-02-01)", "load": "Strip the loaded text (2022-03-01)"}
        assert backend.answer("parse commas", 10, 0)[2] == []  # a short question reads none
    finally:
        backend.close()


def _chunk(chunk_id: int, symbol: str, signature: str) -> StoredChunk:
    return StoredChunk(id=chunk_id, path="src/log.py", language="python", kind="function", symbol=symbol,
                       signature=signature, docstring=None, start_line=chunk_id, end_line=chunk_id + 3,
                       content=signature + ":\n    pass")  # fmt: skip


def test_of_two_methods_of_one_name_the_one_whose_signature_a_hunk_showed_is_read() -> None:
    fixture = _chunk(10, "LogCaptureFixture.__init__", "def __init__(self, item: nodes.Node, *, _ispytest: bool = False) -> None")
    plugin = _chunk(20, "LoggingPlugin.__init__", "def __init__(self, config: Config) -> None")
    assert same_definition([fixture, plugin], ["def __init__(self, item: nodes.Node) -> None:"]) is fixture
    assert same_definition([fixture, plugin], ["def __init__(self):"]) is None  # no clear one
    assert same_definition([plugin], []) is plugin
    # The first line that tells one namesake from the others decides, the best-supported first.
    lucas = _chunk(30, "lucas.eval", "def eval(cls, n)")
    fibonacci = _chunk(40, "fibonacci.eval", "def eval(cls, n)")
    bell = _chunk(50, "bell.eval", "def eval(cls, n, k_sym=None, symbols=None)")
    lines = ["def eval(cls, n):", "def eval(cls, n, k_sym=None, symbols=None):"]
    assert same_definition([lucas, fibonacci, bell], lines) is bell
    assert same_definition([lucas, fibonacci, bell], lines[:1]) is None
    assert same_definition([], ["def f():"]) is None


def test_the_hits_holding_a_function_the_history_read_are_known() -> None:
    kept = _hit("a1", "src/a.py", "Parser.parse", 10, 1.0)
    read = Hit(id="f1", source="tasks", tool="files_for_task", title="Parser.parse", content="...", path="src/a.py",
               start_line=10, end_line=15, metadata={"kind": "function"})  # fmt: skip
    alone = _hit("a2", "src/a.py", "Parser.render", 30, 0.9)
    groups = {"a1": DedupGroup(kept=kept, members=[GroupMember(hit=read, reason=DedupReason.HASH, similarity=1.0)])}
    assert history_evidence([kept, alone], groups).read == {"a1"}


@pytest.mark.asyncio
@pytest.mark.integration
async def test_the_functions_reach_a_client_of_the_tasks_server(tmp_path: Path, history: Path) -> None:
    import sys

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tests.index.index_helpers import HashingEmbedder
    from tributary.engine.index.manager import index_repository

    ix = tmp_path / "ix"
    index_repository(history, embedder=HashingEmbedder(), index_dir=ix)
    import_git_history(history, indexes_dir=ix, embed=False)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tributary.engine.servers.tasks", "--repo", str(history), "--index-dir", str(ix), "--no-embed"],
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        answer = await session.call_tool("files_for_task", {"query": ISSUE, "top_k": 5})
        assert not answer.is_error and answer.structured_content is not None
        items = answer.structured_content["results"]
        files = [item for item in items if item["kind"] == "file"]
        functions = [item for item in items if item["kind"] == "function"]
        assert files[0]["path"] == "src/parser.py" and files[0]["functions"][:2] == ["parse", "load"]
        assert functions[0]["title"] == "Parser.parse" and functions[0]["start_line"] == 5
        assert "def parse(self):" in functions[0]["content"]
        assert functions[0]["changed_by"] == "Split on commas when parsing (2022-02-01)"
        assert functions[0]["rank"] == len(items) - len(functions) + 1  # after the files and tasks
