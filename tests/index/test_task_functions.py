"""A task question ranks its likeliest files' functions among themselves: the words that
set one function of the file apart count, the words the whole file uses do not."""

from __future__ import annotations

from pathlib import Path

from tributary.engine.index.search import (
    _definitions_first,
    _framed,
    _in_file_order,
    _in_file_terms,
    _parts_last,
    _same_file,
    hybrid_search,
)
from tributary.engine.index.store import IndexStore, SearchFilter, StoredChunk
from tributary.engine.localsearch.fts import keyword_order
from tributary.engine.localsearch.longquery import Frame, read_task


def test_a_word_the_whole_file_uses_weighs_less_than_one_unit_alone_has() -> None:
    units = [
        ("CaptureIO.read", "def read(self):\n    return self.capture.read()  # capture capture"),
        ("CaptureIO.write", "def write(self, data):\n    self.capture.write(data)"),
        ("FDCapture.__init__", "def __init__(self, fd):\n    self.tmpfile = open(fd, newline='')"),
        ("unrelated", "def unrelated():\n    return 1"),
    ]
    order = keyword_order(units, ["capture", "newline", "converted"])
    assert order[0] == 2  # the only unit with "newline"
    assert order[-1] == 3  # no word of the task: last, in its own place
    assert sorted(order) == [0, 1, 2, 3]


def test_no_terms_or_no_units_keep_the_order() -> None:
    units = [("a", "def a(): pass"), ("b", "def b(): pass")]
    assert keyword_order(units, []) == [0, 1]
    assert keyword_order([], ["word"]) == []


def capture_repo(tmp_path: Path) -> tuple[Path, str]:
    """A file whose every function says "capture", one of them alone "newline"; an issue
    about both."""
    repo = tmp_path / "app"
    (repo / "app").mkdir(parents=True)
    capture = ['"""Capturing of output."""\n']
    for n in range(8):  # the file's own words, in every function
        capture.append(f"def capture_stream_{n}(stream):\n    \"\"\"Capture the stream {n}.\"\"\"\n"
                       f"    return stream.capture({n})  # capture output\n")
    capture.append("def open_temporary(fd):\n    return open(fd, mode='wb+', newline='')\n")
    (repo / "app" / "capture.py").write_text("\n\n".join(capture), encoding="utf-8")
    issue = ("capfd capture converts carriage returns to newlines\n\nSince 6.0 the captured output of "
             "capfd has \\n where the program wrote \\r:\n\n```python\ndef test_cr(capfd):\n"
             "    print('Greetings', end='\\r')\n    out, err = capfd.readouterr()\n"
             "    assert out.endswith('\\r')\n```\n\n" + "The capture of the output changes the newline. " * 8)
    return repo, issue


def check_in_file_order(store: IndexStore, issue: str) -> None:
    """Every chunk of the file comes back; of those the pool missed, ``open_temporary``
    first, with no retriever's score; the pooled ones keep their hits and places."""
    hits = hybrid_search(store, issue, None, repo="app", top_k=10)
    pooled = [hit for hit in hits if hit.symbol != "open_temporary"][:3]  # a pool that missed it
    order = _in_file_order(store, ["app/capture.py"], read_task(issue).terms, pooled, "app", SearchFilter())
    assert len(order) == 9  # every chunk of the file
    assert order[: len(pooled)] == pooled  # the pool's best stay first, as they were
    unpooled = order[len(pooled) :]
    assert unpooled[0].symbol == "open_temporary"  # before the file's other functions
    assert unpooled[0].score == 0.0 and unpooled[0].keyword_rank is None


def test_a_focused_file_brings_the_function_no_retriever_pooled(tmp_path: Path) -> None:
    """Every chunk of a likely file is ranked among the file's own: of the chunks the
    repository's pools missed, the one function holding the task's rarest words in that
    file comes first (the shared PostgreSQL index: ``tests/index/test_postgres.py``)."""
    from tests.index.index_helpers import HashingEmbedder
    from tributary.engine.index.manager import index_path_for, index_repository
    from tributary.engine.index.store import SqliteStore

    repo, issue = capture_repo(tmp_path)
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")
    store = SqliteStore(index_path_for(repo, directory=tmp_path / "idx"), readonly=True)
    try:
        check_in_file_order(store, issue)
    finally:
        store.close()


def test_the_names_an_issue_calls_weigh_double_among_a_files_functions() -> None:
    """Among one file's functions, the one named by the code an issue runs comes before
    one that shares more of its prose."""
    units = [
        ("Printer._print_Mul", "def _print_Mul(self, expr):\n    # brackets around the output\n"
                               "    return self.parenthesize(expr, 'brackets')"),
        ("Printer._print_Subs", "def _print_Subs(self, subs):\n    expr, old, new = subs.args\n"
                                "    return self._print(expr)"),
        ("Printer._print_Add", "def _print_Add(self, expr):\n    return ' + '.join(expr.args)"),
    ]
    issue = ("Wrong brackets in the output of Subs\n\nThe output puts wrong brackets around terms, "
             "the brackets are wrong in the output:\n\n```python\n>>> print_latex(3*Subs(-x + y, (x,), (1,)))\n"
             "3 \\left. - x + y \\right|_{x=1}\n```\n\n" + "The output brackets are wrong. " * 6)
    task = read_task(issue)
    assert "Subs" in [name for name, _ in task.names]
    assert keyword_order(units, list(task.terms))[0] == 0  # by the prose alone: the wrong one
    assert keyword_order(units, _in_file_terms(task))[0] == 1


def test_a_files_import_block_follows_its_definitions() -> None:
    """The import block names everything the file uses, so it matches an issue's names;
    the file's functions come first, each kind keeping its keyword order."""
    def chunk(n: int, kind: str, symbol: str | None, content: str) -> StoredChunk:
        return StoredChunk(n, "pkg/convert.py", "python", kind, symbol, None, None, n * 10 + 1, n * 10 + 9, content)

    chunks = [
        chunk(0, "block", None, "from pkg.units import Quantity, Unit, to_value, from_value"),
        chunk(1, "function", "to_value", "def to_value(quantity):\n    return quantity.value"),
        chunk(2, "function", "from_value", "def from_value(value, unit):\n    return Quantity(value, unit)"),
        chunk(3, "block", None, "REGISTRY = {}"),
    ]
    issue = ("to_value of a Quantity in another Unit is wrong\n\n```python\n>>> to_value(Quantity(1, Unit('km')))\n"
             "1\n```\n\nIt should be 1000. " + "Converting a Quantity with to_value ignores its Unit. " * 6)
    by_words = keyword_order([(c.symbol, c.content) for c in chunks], _in_file_terms(read_task(issue)))
    assert by_words[0] == 0  # the import block holds every name the issue uses
    assert _definitions_first(chunks, by_words) == [n for n in by_words if n in (1, 2)] + [
        n for n in by_words if n in (0, 3)
    ]
    assert _definitions_first(chunks, by_words)[0] == 1



def test_the_function_a_traceback_ran_in_leads_its_file() -> None:
    """Of a likely file's functions, the one its traceback ran in comes first; of several
    by that name (each option's ``preprocess``), the one holding the frame's line."""
    def chunk(n: int, symbol: str, start: int, end: int, content: str) -> StoredChunk:
        return StoredChunk(n, "pkg/options.py", "python", "function", symbol, None, None, start, end, content)

    chunks = [
        chunk(0, "Options.__init__", 10, 40, "def __init__(self, gens, args):\n    self.gens = gens  # domain options"),
        chunk(1, "Gens.preprocess", 50, 60, "def preprocess(cls, gens):\n    return tuple(gens)"),
        chunk(2, "Domain.preprocess", 70, 90, "def preprocess(cls, domain):\n    raise OptionError(domain)"),
        chunk(3, "Order.preprocess", 95, 99, "def preprocess(cls, order):\n    return order"),
    ]
    frames = [Frame("/home/me/site-packages/pkg/options.py", 88, "preprocess"),
              Frame("/home/me/site-packages/pkg/options.py", 20, "__init__"),
              Frame("/home/me/site-packages/other/options.py", 5, "other")]
    assert _framed(chunks, [f for f in frames if _same_file(f.path, "src/pkg/options.py")]) == [2, 3, 1, 0]
    no_lines = [Frame("options.py", 0, "preprocess")]
    assert _framed(chunks, no_lines) == [1, 2, 3]  # in the file's order
    linked = [Frame("pkg/options.py", 75, ""), Frame("pkg/options.py", 300, "")]
    assert _framed(chunks, linked) == [2]  # the chunk holding the linked line; none past the end
    assert not _same_file("/home/me/site-packages/other/options.py", "src/pkg/options.py")
    assert _same_file("C:\\venv\\pkg\\options.py", "pkg/options.py")


def test_a_likely_files_traceback_function_comes_before_its_keyword_best(tmp_path: Path) -> None:
    """Indexed and asked: the pool and the issue's words favour another function of the
    file; its traceback ran in ``capture_stream_5``, which then leads the file's chunks."""
    from tests.index.index_helpers import HashingEmbedder
    from tributary.engine.index.manager import index_path_for, index_repository
    from tributary.engine.index.store import SqliteStore

    repo, issue = capture_repo(tmp_path)
    issue += ('\n\nTraceback (most recent call last):\n  File "/venv/lib/site-packages/app/capture.py", '
              'line 30, in capture_stream_5\n    return stream.capture(5)\nValueError: bad stream\n')
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")
    store = SqliteStore(index_path_for(repo, directory=tmp_path / "idx"), readonly=True)
    try:
        task = read_task(issue)
        assert [f.function for f in task.frames] == ["capture_stream_5"]
        pooled = [h for h in hybrid_search(store, issue, None, repo="app", top_k=10) if h.symbol == "open_temporary"]
        terms = _in_file_terms(task)
        order = _in_file_order(store, ["app/capture.py"], terms, pooled, "app", SearchFilter())
        framed = _in_file_order(store, ["app/capture.py"], terms, pooled, "app", SearchFilter(), task.frames)
        assert [h.symbol for h in order[:2]] == ["open_temporary", "capture_stream_5"]
        assert [h.symbol for h in framed[:2]] == ["capture_stream_5", "open_temporary"]
    finally:
        store.close()


def _chunk(n: int, symbol: str | None, kind: str = "function", lines: int = 10) -> StoredChunk:
    """The ``n``-th chunk of a file whose chunks are ``lines`` long, back to back."""
    return StoredChunk(n, "pkg/lambdify.py", "python", kind, symbol, None, None, lines * n + 1, lines * (n + 1), "x")


def test_a_long_functions_further_parts_follow_the_files_other_functions() -> None:
    """A function cut into several chunks answers a task once: its best part keeps its
    place, its other parts go after the best part of every other function."""
    chunks = [_chunk(0, "lambdify"), _chunk(1, "lambdify"), _chunk(2, "lambdify"),
              _chunk(3, "_recursive_to_string"), _chunk(4, None, "block"), _chunk(5, None, "block")]
    assert _parts_last([0, 1, 3, 2, 4, 5], chunks) == [0, 3, 4, 5, 1, 2]


def test_functions_that_share_a_name_are_not_parts_of_one() -> None:
    """Overloads registered under one name (``@dispatch``), or a property's getter and
    setter, are functions of their own: none waits behind the others."""
    chunks = [_chunk(0, "intersection_sets"), _chunk(2, "intersection_sets"), _chunk(4, "intersection_sets"),
              _chunk(6, "helper")]
    assert _parts_last([2, 0, 1, 3], chunks) == [2, 0, 1, 3]


def test_a_function_the_task_names_is_read_whole() -> None:
    """The parts of a function the question names follow its best one, in line order;
    one longer than the question could want stays spread."""
    chunks = [_chunk(0, "kahane_simplify"), _chunk(1, "kahane_simplify"), _chunk(2, "kahane_simplify"),
              _chunk(3, "gamma_trace")]
    assert _parts_last([1, 3, 2, 0], chunks, frozenset({"kahane_simplify"})) == [1, 0, 2, 3]
    assert _parts_last([1, 3, 2, 0], chunks, frozenset({"other"})) == [1, 3, 2, 0]
    long = [_chunk(n, "lambdify", lines=40) for n in range(12)] + [_chunk(12, "helper", lines=40)]
    assert _parts_last([0, 12, *range(1, 12)], long, frozenset({"lambdify"})) == [0, 12, *range(1, 12)]


def test_the_constructor_of_a_class_the_issue_makes_leads_its_file() -> None:
    """``Intersection({1}, {1}, {x})`` runs ``Intersection.__new__``: where the fix goes
    when instantiation is wrong, though the issue never names ``__new__``."""
    from tributary.engine.index.search import _constructors

    def chunk(n: int, symbol: str) -> StoredChunk:
        return StoredChunk(n, "sets/sets.py", "python", "method", symbol, None, None, n * 10 + 1, n * 10 + 9, "")

    chunks = [chunk(0, "Union.__new__"), chunk(1, "Intersection.is_iterable"), chunk(2, "Intersection.__new__"),
              chunk(3, "EmptySet.__init__"), chunk(4, "Complement.__new__")]
    issue = ("Intersection should remove duplicates\n\n```python\n>>> Intersection({1},{1},{x})\nEmptySet()\n"
             ">>> Intersection({1},{x})\n{1}\n>>> MAX_SIZE(2)\n```\n\nThe routine should give the same answer "
             "if duplicates are present; they should be removed at the outset of instantiation.")
    task = read_task(issue)
    assert task.constructed == ("Intersection", "EmptySet")  # most called first; not a constant
    assert _constructors(chunks, task.constructed) == [2, 3]
    assert _constructors(chunks, ()) == []
