"""A task's traceback: the file its innermost frame in this repository raised in leads."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import IndexTarget
from tests.index.index_helpers import indexed_files
from tributary.engine.index.priors import TEST
from tributary.engine.index.search import (
    SearchHit,
    _innermost_file,
    _lead_file,
    _rejecting_definition,
    hybrid_search,
)
from tributary.engine.index.store import IndexStore, SearchFilter
from tributary.engine.localsearch.longquery import Frame, read_task

# The reporter calls ``load_table`` (the registry) and the registry calls the reader,
# which raises: the issue's words and names are the registry's, the fix the reader's.
REGISTRY = '''
def load_table(source, format=None):
    """Load a table from a source, finding its format in the table registry."""
    table_format = format or identify_table_format(source)
    return read_table(source, table_format)


def identify_table_format(source):
    """The registered table format whose identifier accepts the source."""
    for table_format, identifier in TABLE_IDENTIFIERS.items():
        if identifier(source):
            return table_format
    raise ValueError("no table format identified")


def read_table(source, table_format):
    """Read a table in a registered format."""
    return TABLE_READERS[table_format](source)
'''
READER = '''
def is_fits_table(source):
    header = source.split(";")
    return header[3] == "FITS"
'''
ISSUE = """load_table fails with IndexError when identifying the table format

Loading a table through the table registry's load_table with a short source fails
while identifying the table format:

```
Traceback (most recent call last):
  File "/home/me/work/run.py", line 3, in <module>
    load_table("a;b")
  File "/venv/lib/python3.11/site-packages/tables/registry.py", line 4, in load_table
    table_format = format or identify_table_format(source)
  File "/venv/lib/python3.11/site-packages/tables/registry.py", line 10, in identify_table_format
    if identifier(source):
  File "/venv/lib/python3.11/site-packages/tables/fits.py", line 3, in is_fits_table
    return header[3] == "FITS"
IndexError: list index out of range
```

load_table should say the table format is unknown instead of failing in the registry.
"""


def test_the_file_a_traceback_raised_in_leads_the_files_the_issue_uses(
    tmp_path: Path, at: IndexTarget
) -> None:
    store = indexed_files(tmp_path, **at.kw, files={"tables/registry.py": REGISTRY, "tables/fits.py": READER,
                                "tables/__init__.py": "from tables.registry import load_table\n"})
    try:
        assert _innermost_file(store, read_task(ISSUE), SearchFilter()) == "tables/fits.py"
        hits = hybrid_search(store, ISSUE, None, repo="repo", top_k=10)
        assert hits[0].path == "tables/fits.py"
        assert (hits[0].symbol, hits[0].led_by) == ("is_fits_table", "traceback")
        assert "tables/registry.py" in {hit.path for hit in hits[1:]}
    finally:
        store.close()


def test_a_frame_names_a_file_only_by_a_tail_one_file_has(tmp_path: Path, at: IndexTarget) -> None:
    """Frames in the reporter's code and in other libraries match nothing and are passed
    over; a tail two files end in says nothing of which one raised."""
    store = indexed_files(tmp_path, **at.kw, files={"a/io/fits.py": READER, "b/io/fits.py": READER, "a/registry.py": REGISTRY})
    try:
        frames = ('Traceback (most recent call last):\n'
                  '  File "/venv/site-packages/numpy/core/fromnumeric.py", line 3, in take\n'
                  '  File "/venv/site-packages/pkg/io/fits.py", line 3, in is_fits_table\n')
        issue = "A title of several words here\n\n" + frames + "IndexError: list index out of range\n" * 20
        assert _innermost_file(store, read_task(issue), SearchFilter()) is None
        outer = issue.replace("pkg/io/fits.py", "pkg/a/registry.py")
        assert _innermost_file(store, read_task(outer), SearchFilter()) == "a/registry.py"
    finally:
        store.close()


def _raised_in(store: IndexStore, title: str, *frames: tuple[str, int, str]) -> str | None:
    """The file ``_innermost_file`` finds for an issue whose traceback runs ``frames``
    (installed path tail, line, function), outermost first."""
    lines = "".join(f'  File "/venv/site-packages/{path}", line {line}, in {function}\n'
                    for path, line, function in frames)
    issue = f"{title}\n\nTraceback (most recent call last):\n{lines}" + "ValueError: bad\n" * 30
    return _innermost_file(store, read_task(issue), SearchFilter())


def _hit(path: str, score: float, role: str = "code") -> SearchHit:
    return SearchHit(path, "r", 1, 2, None, "function", "python", score, "x", role=role)


def test_only_code_near_the_top_is_lifted() -> None:
    hits = [_hit("a.py", 0.9), _hit("a.py", 0.8), _hit("b.py", 0.7), _hit("c.py", 0.6), _hit("d.py", 0.5)]
    lifted = _lead_file(hits, "c.py")
    assert [h.path for h in lifted] == ["c.py", "a.py", "a.py", "b.py", "d.py"]
    assert lifted[0].score > hits[0].score
    assert _lead_file(hits, "d.py") == hits  # the fourth file: a helper on the way
    assert _lead_file(hits, None) == hits
    tests = [_hit("a.py", 0.9), _hit("test_a.py", 0.8, TEST)]
    assert _lead_file(tests, "test_a.py") == tests


def test_a_helper_every_module_calls_passes_the_lead_to_its_caller(
    tmp_path: Path, at: IndexTarget
) -> None:
    """An error raised in a converter that most modules use was given its input by the
    frame that called it: that frame's file leads."""
    helper = "def to_table_value(value):\n    return float(value)\n"
    files = {"tables/convert.py": helper, "tables/fits.py": READER.replace(
        'return header[3] == "FITS"', 'return to_table_value(header[3])')}
    files |= {f"tables/mod{n}.py": f"def use{n}(v):\n    return to_table_value(v)\n" for n in range(24)}
    store = indexed_files(tmp_path, **at.kw, files=files)
    try:
        title = "Identifying a FITS table fails with a short header"
        fits = ("tables/fits.py", 3, "is_fits_table")
        assert _raised_in(store, title, fits, ("tables/convert.py", 2, "to_table_value")) == "tables/fits.py"
        assert _raised_in(store, title, fits, ("tables/mod3.py", 2, "use3")) == "tables/mod3.py"
    finally:
        store.close()


def test_a_name_many_modules_define_is_their_own_not_a_helper(
    tmp_path: Path, at: IndexTarget
) -> None:
    """``__new__`` or ``eval`` in every class is each class's own code: the innermost
    frame running one still leads."""
    files = {f"shapes/shape{n}.py": f"class Shape{n}:\n    def parse_shape(self, v):\n        return v\n"
             for n in range(24)}
    files["shapes/caller.py"] = "def draw(shape):\n    return shape.parse_shape(1)\n"
    store = indexed_files(tmp_path, **at.kw, files=files)
    try:
        found = _raised_in(store, "Drawing the seventh shape fails with a value",
                           ("shapes/caller.py", 2, "draw"), ("shapes/shape7.py", 3, "parse_shape"))
        assert found == "shapes/shape7.py"
    finally:
        store.close()


MUX = '''package chi

// Mux is the router: its routes and their middlewares.
type Mux struct {
	handlers map[string]Handler
}

// Handle adds a route for the pattern.
func (mx *Mux) Handle(pattern string, handler Handler) {
	mx.handlers[pattern] = handler
}

// Mount attaches another router under the pattern.
func (mx *Mux) Mount(pattern string, handler Handler) {
	if mx.handlers[pattern+"*"] != nil {
		panic("attempting to mount a handler on an existing path")
	}
	mx.handlers[pattern+"*"] = handler
}
'''
TREE = '''package chi

// Route is one pattern of the routing tree, mounted or handled.
type Route struct {
	Pattern string
}

// FindRoute finds the mounted handler for a path in the routing tree.
func FindRoute(routes []Route, path string) *Route {
	for i := range routes {
		if routes[i].Pattern == path {
			return &routes[i]
		}
	}
	return nil
}
'''
GO_ISSUE = """Registering a router twice on a path panics instead of saying which route is taken

```
panic: a handler exists on this path

goroutine 1 [running]:
github.com/go-chi/chi/v5.(*Mux).Mount.func1(...)
\t/go/pkg/mod/github.com/go-chi/chi/v5@v5.0.10/mux.go:16 +0x1a
github.com/go-chi/chi/v5.(*Mux).Mount(0xc000120000, {0x6f2c3a, 0x5}, {0x74a1e0, 0xc000122000})
\t/go/pkg/mod/github.com/go-chi/chi/v5@v5.0.10/mux.go:15 +0x4c5
main.main()
\t/home/me/app/main.go:22 +0x1a5
```

The routing tree should tell me which route holds the path already: FindRoute finds
the route for a path in the routing tree, and its Route pattern should be in the panic.
"""


def test_a_go_panic_leads_with_the_file_and_function_it_ran_in(tmp_path: Path, at: IndexTarget) -> None:
    """Go prints the innermost frame first and a module's files by their path in the
    module cache (``chi/v5@v5.0.10/mux.go``): that is the repository's own ``mux.go``,
    not ``middleware/mux.go``, and ``Mount`` leads though the issue's words are the
    routing tree's."""
    store = indexed_files(tmp_path, **at.kw, files={"mux.go": MUX, "tree.go": TREE, "middleware/mux.go": MUX})
    try:
        assert _innermost_file(store, read_task(GO_ISSUE), SearchFilter()) == "mux.go"
        hits = hybrid_search(store, GO_ISSUE, None, repo="repo", top_k=10)
        assert (hits[0].path, hits[0].symbol) == ("mux.go", "Mux.Mount")  # (the words lead to tree.go's FindRoute)
        assert "tree.go" in {hit.path for hit in hits[1:]}
    finally:
        store.close()


WRITERS = '''
def get_writer(writer_class, **options):
    """Make the table writer of a format with the writer options given."""
    writer_options = dict(options)
    return writer_class(**writer_options)


def write_table(table, format, **options):
    """Write a table in a format with its writer: the writer options and header rows."""
    writer = get_writer(WRITERS[format], **options)
    return writer.write(table)
'''
RST_WRITER = '''
class SimpleRSTHeader:
    """The header line of a reStructuredText simple table."""

    def __init__(self, position_char="="):
        self.position_char = position_char


class RST:
    """reStructuredText simple tables."""

    def __init__(self):
        self.delimiter = " "

    def write(self, table):
        return [self.delimiter.join(row) for row in table]
'''
FIXED_WIDTH_WRITER = '''
class FixedWidth:
    """Fixed width tables, with header rows of names and units."""

    def __init__(self, header_rows=None):
        self.header_rows = header_rows or ["name"]

    def write(self, table):
        return ["|" + "|".join(row) + "|" for row in table]
'''
REJECTED_ISSUE = """Please support header rows in the reStructuredText table writer

Writing a table with header rows works for fixed width tables but the table writer
for reStructuredText fails when the writer options have header rows:

```
>>> write_table(table, "fixed_width", header_rows=["name", "unit"])
>>> write_table(table, "rst", header_rows=["name", "unit"])
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File "/venv/lib/python3.11/site-packages/tables/writers.py", line 10, in write_table
    writer = get_writer(WRITERS[format], **options)
  File "/venv/lib/python3.11/site-packages/tables/writers.py", line 5, in get_writer
    return writer_class(**writer_options)
TypeError: RST.__init__() got an unexpected keyword argument 'header_rows'
```

Header rows for the table writer would make the written table much more useful.
"""


def test_the_function_that_refused_a_keyword_argument_leads(tmp_path: Path, at: IndexTarget) -> None:
    """``RST.__init__() got an unexpected keyword argument``: the call failed before the
    function ran, so the innermost frame is the caller (``get_writer``, which the issue's
    words point at too), but the function the error names is where the argument would
    be taken."""
    store = indexed_files(tmp_path, **at.kw, files={"tables/writers.py": WRITERS, "tables/rst.py": RST_WRITER,
                                                     "tables/fixed_width.py": FIXED_WIDTH_WRITER})
    try:
        assert read_task(REJECTED_ISSUE).rejecting == ("RST.__init__",)
        # At its own line: of the file's two ``__init__``s, the one of the class named.
        assert _rejecting_definition(store, read_task(REJECTED_ISSUE), SearchFilter()) == Frame("tables/rst.py", 12, "__init__")
        assert _innermost_file(store, read_task(REJECTED_ISSUE), SearchFilter()) == "tables/writers.py"
        hits = hybrid_search(store, REJECTED_ISSUE, None, repo="repo", top_k=10)
        assert (hits[0].path, hits[0].symbol, hits[0].led_by) == ("tables/rst.py", "RST.__init__", "error")
        assert "tables/writers.py" in {hit.path for hit in hits[1:]}
        # Before Python 3.10 the error named ``__init__`` alone: any class's, so nothing leads on it.
        bare = REJECTED_ISSUE.replace("RST.__init__()", "__init__()")
        assert hybrid_search(store, bare, None, repo="repo", top_k=10)[0].path == "tables/writers.py"
    finally:
        store.close()
