"""Issue-length questions: what is read out of them, and that short ones stay phrases."""

from __future__ import annotations

import pytest

from tributary.engine.localsearch.longquery import (
    code_embedding_text,
    embedding_text,
    is_task_question,
    module_paths,
    path_suffixes,
    read_task,
    task_note,
)

ISSUE = '''Modeling's `separability_matrix` does not compute separability for nested CompoundModels

Consider the following model:

```python
from astropy.modeling import models as m
from astropy.modeling.separable import separability_matrix
cm = m.Linear1D(10) & m.Linear1D(5)
```

Nesting it gives a wrong answer:

```
Traceback (most recent call last):
  File "/home/me/venv/lib/python3.9/site-packages/astropy/modeling/core.py", line 12, in evaluate
    return self._evaluate(x)
  File "/home/me/venv/lib/python3.9/site-packages/astropy/modeling/separable.py", line 99, in _cstack
    raise ValueError("bad")
ValueError: bad
```
''' + "The separability matrix should stay diagonal for nested compound models. " * 8


def test_short_questions_stay_phrases_and_issues_are_tasks() -> None:
    assert not is_task_question("where are fixtures cached")
    assert not is_task_question("Fix the routing of fallback servers\n\nSee #12.")
    assert is_task_question(ISSUE)
    assert embedding_text("where are fixtures cached") == "where are fixtures cached"
    assert code_embedding_text("where are fixtures cached") == "where are fixtures cached"


def test_a_short_bug_report_with_code_is_a_task() -> None:
    """A title and a repro: a fenced block, an interactive session or a traceback."""
    for repro in ("```python\n>>> Point(2, 0).distance(Point(1, 0, 2))\n1\n```",
                  ">>> Point(2, 0).distance(Point(1, 0, 2))\n1",
                  "In [1]: Point(2, 0).distance(Point(1, 0, 2))\nOut[1]: 1",
                  "Traceback (most recent call last):\n  File \"point.py\", line 3, in distance",
                  "goroutine 1 [running]:\nmain.distance(...)",
                  "thread 'main' panicked at src/point.rs:3:5:",
                  "    at Point.distance (/app/src/point.js:3:11)",
                  "\tat com.example.Point.distance(Point.java:3)"):
        report = f"distance calculation wrong\nThe third dimension of the second point is ignored:\n{repro}\n"
        assert is_task_question(report), repro
    # code words in a commit message, or a fence too short to be a report, are not enough
    assert not is_task_question("Use >>> in the docs\n\nThe prompts were missing from the examples of the guide.")
    assert not is_task_question("Fix it\n```x```")


def test_a_short_bug_report_naming_code_below_its_title_is_a_task() -> None:
    """A title and a few lines that call or quote code, as a short report is written."""
    for body in ("when calc Rational('0.5', '100') the value is 1/100100, but Rational(0.5, 100) is 1/200, as in 1.8",
                 "Right now `Min()` and `Max()` with no arguments raise a ValueError; oo and -oo would be nicer",
                 "Inside the InheritDocstrings metaclass it uses `inspect.isfunction`, which is False for properties"):
        assert is_task_question(f"Rational calc value error\n{body}\n"), body
    # code in the title alone, a one-line question, or a body too short to be a report
    assert not is_task_question("Fix `Rational('0.5', '100')` giving 1/100100 instead of 1/200 in sympy 1.11")
    assert not is_task_question("Rational('0.5', '100') gives 1/100100 but Rational(0.5, 100) gives 1/200 there")
    assert not is_task_question("Fix `Rational`\nSee `numbers`.")


def test_a_paragraph_on_one_line_naming_code_is_a_task() -> None:
    """Typed into a search box, a report is one paragraph with no title line: read as a
    task when it names code (a call, inline code, a class's member), as a phrase if not."""
    said = ("The help text says [default: False] for a --shout/--no-shout flag whose default is True; "
            "the flag value is resolved after the default string is made, so show_default prints the "
            "wrong value for boolean flag pairs. ")
    for naming in ("Option.get_help_record reads it too early.", "Is `get_help_extra` the place?",
                   "See click.option('--shout/--no-shout')."):
        assert is_task_question(said + naming), naming
        assert is_task_question(f"{said}{naming}\n"), "piped with its newline"
    assert not is_task_question(said + "It is wrong everywhere.")
    assert not is_task_question("Option.get_help_record prints [default: False] for a flag pair")


def test_an_issue_is_read_as_title_names_files_and_prose() -> None:
    task = read_task(ISSUE)
    assert task.title.startswith("Modeling's `separability_matrix` does not compute")
    names = [name for name, _ in task.names]
    assert "separability_matrix" in names[:3]  # the most used names first (frames count twice)
    assert "_cstack" in names and "evaluate" in names and "CompoundModels" in names
    assert "ValueError" not in names and "self" not in names  # builtins name nothing here
    # The innermost frame first, then the paths written elsewhere.
    assert task.paths[:2] == (
        "/home/me/venv/lib/python3.9/site-packages/astropy/modeling/separable.py",
        "/home/me/venv/lib/python3.9/site-packages/astropy/modeling/core.py",
    )
    assert "astropy.modeling.separable" in task.modules
    assert "separability" in task.terms and "matrix" in task.terms
    assert "Traceback" not in task.meaning and "import" not in task.meaning
    assert embedding_text(ISSUE) == task.meaning


def test_a_method_a_traceback_line_calls_on_self_is_a_name() -> None:
    """``stream = self._redirect_stream(request, method)`` in the innermost frame names the
    method that raised; the ``self.`` before it had kept it out of the names."""
    issue = ("Redirect with a streaming body raises StreamConsumed\n\nPosting a generator:\n\n```\n"
             "Traceback (most recent call last):\n"
             '  File "/venv/lib/python3.11/site-packages/httpx/_client.py", line 503, in _build_redirect_request\n'
             "    stream = self._redirect_stream(request, method)\n"
             "httpx.StreamConsumed: the content has already been streamed.\n```\n\n"
             "It should say that a generator body cannot be sent again. " * 4)
    names = dict(read_task(issue).names)
    assert "_redirect_stream" in names and "_build_redirect_request" in names
    assert "self" not in names


def test_code_is_searched_by_an_issues_title_and_past_tasks_by_its_prose() -> None:
    """The title says what is wrong in a few words; the prose around it (steps, versions,
    what was expected) is what past reports share with it."""
    assert code_embedding_text(ISSUE) == read_task(ISSUE).title
    assert embedding_text(ISSUE) == read_task(ISSUE).meaning
    # a title of one or two words says too little: the prose then
    terse = "Crash\n\n" + ISSUE.split("\n", 1)[1]
    assert is_task_question(terse) and code_embedding_text(terse) == read_task(terse).meaning


PYTEST_REPORT = """Collection fails with an array patch

Since the upgrade collecting this module fails:

```
 /usr/local/lib/python3.6/dist-packages/_pytest/python.py:197: in pytest_pycollect_makeitem
     res = list(collector._genfunctions(name, obj))
 /usr/local/lib/python3.6/dist-packages/_pytest/compat.py:134: in getfuncargnames
     arg_names = arg_names[num_mock_patch_args(function):]
**/usr/local/lib/python3.6/dist-packages/_pytest/compat.py:94: in <listcomp>
     if not p.attribute_name and p.new in sentinels]
E   ValueError: The truth value of an array with more than one element is ambiguous.
C:\\venv\\lib\\site-packages\\_pytest\\outcomes.py:71: ValueError
```

It worked with the release before, see /home/me/project/conftest.py for the setup.
"""


def test_frames_as_pytest_reports_them_are_frames() -> None:
    """``path:line: in name`` lines, and the ``path:line: Error`` where it raised,
    innermost first like Python's own frames; absolute paths in prose are paths too."""
    task = read_task(PYTEST_REPORT)
    assert task.paths[:3] == (
        "C:\\venv\\lib\\site-packages\\_pytest\\outcomes.py",
        "/usr/local/lib/python3.6/dist-packages/_pytest/compat.py",
        "/usr/local/lib/python3.6/dist-packages/_pytest/python.py",
    )
    assert "/home/me/project/conftest.py" in task.paths
    names = dict(task.names)
    assert names["getfuncargnames"] >= 2 and names["pytest_pycollect_makeitem"] >= 2
    assert "<listcomp>" not in names


IPYTHON_REPORT = """Poly(domain='RR[y,z]') doesn't work

```
OptionError                               Traceback (most recent call last)
<ipython-input-15-d83389519ae1> in <module>()
----> 1 Poly(1.2*x*y*z, x, domain='RR[y,z]')

/Users/me/sympy/sympy/polys/polytools.py in __new__(cls, rep, *gens, **args)
     70         \"\"\"Create a new polynomial instance out of something useful. \"\"\"
---> 71         opt = options.build_options(gens, args)

/Users/me/sympy/sympy/polys/polyoptions.py in preprocess(cls, domain)
    481
--> 482         raise OptionError('expected a valid domain specification, got %s' % domain)

OptionError: expected a valid domain specification, got RR[y,z]
```

Since IPython 8 the same frame reads:

```
File ~/envs/py310/lib/python3.10/site-packages/astropy/io/fits/connect.py:72, in is_fits(origin, filepath, fileobj, *args, **kwargs)
File ~/envs/py310/lib/python3.10/site-packages/astropy/io/registry/base.py:313, in _UnifiedIORegistryBase.identify_format(self, origin)
```
"""


def test_frames_as_ipython_prints_them_are_frames() -> None:
    """IPython's ``path in function(args)`` frames take the line their arrow marks, and
    its newer ``File path:line, in Class.function`` frames their own; every frame's
    function is its own name, innermost first within each traceback."""
    frames = read_task(IPYTHON_REPORT).frames
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.function) for f in frames] == [
        ("base.py", 313, "identify_format"),
        ("connect.py", 72, "is_fits"),
        ("polyoptions.py", 482, "preprocess"),
        ("polytools.py", 71, "__new__"),
    ]
    names = dict(read_task(IPYTHON_REPORT).names)
    assert names["preprocess"] >= 2 and names["identify_format"] >= 2


STACK_TRACES = {
    "go": """goroutine 1 [running]:
github.com/go-chi/chi/v5.(*Mux).Mount.func1(...)
\t/go/pkg/mod/github.com/go-chi/chi/v5@v5.0.10/mux.go:310 +0x1a
github.com/go-chi/chi/v5.(*Mux).Mount(0xc000120000, {0x6f2c3a, 0x5})
\t/go/pkg/mod/github.com/go-chi/chi/v5@v5.0.10/mux.go:300 +0x4c5
main.main()
\t/app/main.go:22 +0x1a5""",
    "javascript": """TypeError: Cannot read properties of undefined (reading 'length')
    at Layer.match [as match_path] (/app/node_modules/express/lib/router/layer.js:110:20)
    at next (C:\\app\\node_modules\\express\\lib\\router\\index.js:226:15)
    at Object.<anonymous> (/app/index.js:10:3)
    at /app/index.js:12:1""",
    "jvm": """java.lang.IllegalStateException: No transaction in context.
\tat org.jetbrains.exposed.sql.transactions.TransactionManagerKt.getTransaction(TransactionManager.kt:141)
\tat org.jetbrains.exposed.sql.Query.iterator(Query.kt:308)
\tat com.example.App$Inner.lambda$run$0(App.java:42)""",
    "rust": """thread 'main' panicked at src/de.rs:2345:5:
stack backtrace:
   1: serde_json::de::from_str::h0123456789abcdef
             at ./src/de.rs:2345:5
   2: app::main
             at ./src/main.rs:10:5""",
    "ruby": """NoMethodError: undefined method `each' for nil
/app/gems/sinatra-4.0.0/lib/sinatra/base.rb:1234:in `block in route!'
/app/gems/sinatra-4.0.0/lib/sinatra/base.rb:1100:in 'Sinatra::Base#dispatch!'
\tfrom app.rb:5:in `<main>'""",
    "elixir": """** (FunctionClauseError) no function clause matching in Phoenix.Router.match/4
    (phoenix 1.7.0) lib/phoenix/router.ex:354: Phoenix.Router.__call__/5
    (my_app 0.1.0) lib/my_app_web/endpoint.ex:1: MyAppWeb.Endpoint.plug_builder_call/2""",
}


@pytest.mark.parametrize(("language", "expected"), [
    ("go", [("./mux.go", 310, "Mount"), ("./mux.go", 300, "Mount")]),
    ("javascript", [("/app/node_modules/express/lib/router/layer.js", 110, "match"),
                    ("C:\\app\\node_modules\\express\\lib\\router\\index.js", 226, "next")]),
    ("jvm", [("org/jetbrains/exposed/sql/transactions/TransactionManager.kt", 141, "getTransaction"),
             ("org/jetbrains/exposed/sql/Query.kt", 308, "iterator")]),
    ("rust", [("./src/de.rs", 2345, "from_str")]),
    ("ruby", [("/app/gems/sinatra-4.0.0/lib/sinatra/base.rb", 1234, "route!"),
              ("/app/gems/sinatra-4.0.0/lib/sinatra/base.rb", 1100, "dispatch!")]),
    ("elixir", [("lib/phoenix/router.ex", 354, "__call__"), ("lib/my_app_web/endpoint.ex", 1, "plug_builder_call")]),
])
def test_other_languages_stack_traces_are_frames_innermost_first(language: str, expected: list[tuple[str, int, str]]) -> None:
    """Go, JavaScript, the JVM, Rust, Ruby and Elixir print the innermost frame first;
    each frame is read with its file, line and function's own name (closures, lambdas
    and anonymous functions name none, nor does the program's ``main``), innermost
    first as Python's are, and their files are the issue's paths."""
    task = read_task(f"A crash in the router\n\n```\n{STACK_TRACES[language]}\n```\n" + "It fails. " * 40)
    assert [(f.path, f.line, f.function) for f in task.frames] == expected
    assert task.paths[0] == expected[0][0]
    assert not task.quoted  # a trace's lines are its frames, not lines of the project's code
    assert "main" not in dict(task.names)  # the reporter's program's entry point


@pytest.mark.parametrize(("written", "relative"), [
    ("/go/src/github.com/go-chi/chi/mux.go", "./mux.go"),  # GOPATH
    ("/home/me/app/vendor/github.com/go-chi/chi/middleware/compress.go", "./middleware/compress.go"),
    ("/root/go/src/golang.org/x/net/http2/server.go", "./http2/server.go"),
    ("/go/pkg/mod/github.com/go-chi/chi/v5@v5.0.10/mux.go", "./mux.go"),  # the module cache
    ("/home/me/app/handlers/mux.go", "/home/me/app/handlers/mux.go"),  # the reporter's own
])
def test_a_go_file_under_its_import_path_is_its_repositorys_own(written: str, relative: str) -> None:
    """Go prints a dependency's file under its import path: in the module cache, a GOPATH
    (``src/github.com/go-chi/chi/mux.go``) or a vendor folder. What follows the import
    path is the file's path from the repository's root, so a root file such as
    ``mux.go`` is named exactly, not by its bare name, which any folder may have."""
    trace = f"goroutine 1 [running]:\ngithub.com/go-chi/chi.(*Mux).Mount(0xc0)\n\t{written}:300 +0x4c5\n"
    task = read_task(f"A crash in the router\n\n```\n{trace}```\n" + "It fails. " * 40)
    assert [(f.path, f.function) for f in task.frames] == [(relative, "Mount")]
    # The reporter's program in a GOPATH names its functions without an import path.
    own = trace.replace("github.com/go-chi/chi.(*Mux).Mount", "main.setupRoutes")
    task = read_task(f"A crash in the router\n\n```\n{own}```\n" + "It fails. " * 40)
    assert task.frames[0].path == (relative if "/vendor/" in written or "@v" in written else written)


def test_a_go_frame_line_is_read_in_linear_time() -> None:
    """A long line that almost looks like a Go or JVM frame does not make the reading slow."""
    line = "a." * 5000 + "b(" + "x" * 5000 + "\n\t" + "c/" * 5000 + "\n at " + "d." * 5000 + "(e.kt)\n"
    task = read_task("Title of a long report\n\n" + line * 10)
    assert task.title == "Title of a long report" and task.frames == ()


def test_a_function_that_refused_a_keyword_argument_is_read_as_written() -> None:
    """Python names the function whose call failed on its arguments, with its class since
    3.10; no frame of the traceback is in it."""
    issue = ("Header rows for the rst writer\n\n```\nTraceback (most recent call last):\n"
             '  File "/venv/astropy/io/ascii/core.py", line 1719, in _get_writer\n'
             "TypeError: RST.__init__() got an unexpected keyword argument 'header_rows'\n```\n" + "It fails. " * 40)
    assert read_task(issue).rejecting == ("RST.__init__",)
    assert read_task(issue.replace("RST.__init__", "__init__")).rejecting == ("__init__",)
    assert read_task(issue.replace("got an unexpected", "got a surprising")).rejecting == ()
    long = "Title of a long report\n\n" + ("a." * 3000 + "b() got an unexpected keyword argument 'x'\n") * 10
    assert read_task(long).rejecting == ()  # more parts than a written name has, read in linear time


def test_an_ipython_frame_without_an_arrow_has_no_line() -> None:
    task = read_task("Plotting fails\n\n```\n/usr/lib/python3/site-packages/pkg/plot.py in draw(self)\n```\n" + "It fails. " * 70)
    assert [(f.line, f.function) for f in task.frames] == [(0, "draw")]


def test_a_reported_frame_is_read_in_linear_time() -> None:
    """A long line that almost looks like a frame does not make the reading slow."""
    line = " " + "a/" * 5000 + "b.py:1 in x\n"
    task = read_task("Title of a long report\n\n" + line * 20)
    assert task.title == "Title of a long report"


def test_a_link_to_a_file_on_a_code_host_names_the_file_and_its_line() -> None:
    """The reporter pointing at the code: GitHub's, GitLab's and Bitbucket's file links
    name a repository path (a ref with a slash leaves a tail ``path_suffixes`` drops)
    and, where the link marks one, the line, as a frame with no function."""
    task = read_task(
        "Lexer in the pastebin feature causes HTTP errors\n\n"
        "The option submits the output using `lexer=python3`: "
        "https://github.com/o/r/blob/d47b9d04/src/pkg/pastebin.py#L68-L73\n"
        "Same here (https://gitlab.com/g/sub/r/-/blob/release/1.0/pkg/mod.py#L12) and "
        "https://bitbucket.org/o/r/src/abc123/lib/x.rb#lines-7, see also "
        "https://github.com/o/r/blob/main/pkg/util.py and https://github.com/o/r/blob/main/README.md\n"
        + "It fails for some contents. " * 30
    )
    assert task.paths == ("src/pkg/pastebin.py", "1.0/pkg/mod.py", "lib/x.rb", "pkg/util.py")
    assert [(f.path, f.line, f.function) for f in task.frames] == [
        ("src/pkg/pastebin.py", 68, ""), ("1.0/pkg/mod.py", 12, ""), ("lib/x.rb", 7, ""),
    ]
    assert "pkg/mod.py" in path_suffixes(task.paths[1])
    assert "4 file paths" in (task_note("Lexer in the pastebin feature causes HTTP errors\n\n"
                                        "https://github.com/o/r/blob/main/src/pkg/pastebin.py#L68 "
                                        "https://github.com/o/r/blob/main/pkg/a.py https://github.com/o/r/blob/main/pkg/b.py "
                                        "https://github.com/o/r/blob/main/pkg/c.py " + "It fails. " * 70) or "")


def test_a_traceback_frame_comes_before_a_linked_line() -> None:
    task = read_task(
        "Plotting fails on a log axis\n\n```\nTraceback (most recent call last):\n"
        '  File "/venv/site-packages/pkg/plot.py", line 9, in draw\n    boom()\nValueError: x\n```\n'
        "It goes wrong here: https://github.com/o/r/blob/main/pkg/axis.py#L40\n" + "It fails. " * 70
    )
    assert task.paths == ("/venv/site-packages/pkg/plot.py", "pkg/axis.py")
    assert [(f.line, f.function) for f in task.frames] == [(9, "draw"), (40, "")]


def test_written_paths_and_modules_become_repository_paths() -> None:
    assert path_suffixes("/venv/site-packages/astropy/modeling/separable.py") == [
        "venv/site-packages/astropy/modeling/separable.py",
        "site-packages/astropy/modeling/separable.py",
        "astropy/modeling/separable.py",
        "modeling/separable.py",
        "separable.py",
    ]
    assert module_paths("astropy.modeling.separable") == [
        "astropy/modeling/separable.py", "astropy/modeling/separable/__init__.py", "astropy/modeling.py",
    ]


def test_hostile_text_is_read_whole() -> None:
    """Long runs that would make a backtracking pattern quadratic are read like any text."""
    for text in ("-" * 20_000 + ">", " " * 8 + "File " + "~" * 20_000, "a.py in " * 5_000, "\n" * 20_000 + "x.py in f(", "<!--" * 10_000, "1." * 20_000 + " x", "Python 1" + "(" * 20_000, "a." * 20_000, 'File "' * 5_000, "`" * 30_000, "x/" * 20_000 + ".py", "_(" * 20_000,
                 "https://h/" + "a/" * 20_000 + "blob/x/y.py", "https://h/a/blob/" + "b/" * 20_000 + "#L1"):
        task = read_task(text)
        assert len(task.title) <= 300


def test_messages_in_the_output_become_phrases() -> None:
    """Runs of plain words in output are messages the code writes; labels and sentence
    ends split them, values and traceback boilerplate are left out."""
    from tributary.engine.localsearch.longquery import message_phrases

    output = [
        "E       AssertionError: assert b'' == b'42'",
        "E         Right contains more items, first extra item: 52",
        "Traceback (most recent call last):",
        '  File "x.py", line 3, in compute',
        "ValueError: could not convert string to float: 'abc'",
        "ok",
    ]
    assert message_phrases(output) == ["right contains more items first extra item",
                                       "could not convert string to float"]
    issue = "Crash on nested models\n\n```\n" + "\n".join(output) + "\n```\n" + "Please look. " * 60
    assert "could not convert string to float" in read_task(issue).phrases


def test_phrases_are_read_in_linear_time() -> None:
    from tributary.engine.localsearch.longquery import message_phrases

    assert len(message_phrases(["word " * 50_000, "a, " * 50_000, ":" * 100_000])) <= 16


def test_the_answer_says_what_was_read_of_a_task() -> None:
    note = task_note(ISSUE)
    assert note is not None and note.startswith(f"read as a task ({len(ISSUE):,} characters): its title")
    assert "code names" in note and "2 file paths" in note
    assert (f"its title embedded to search code and the first {len(read_task(ISSUE).meaning):,} "
            "characters of its prose to search past tasks") in note
    assert task_note("where are fixtures cached") is None
    one = task_note("Pasting fails for some contents\n\nSee https://github.com/o/r/blob/main/pkg/paste.py#L3. "
                    + "The upload fails with an HTTP error for some contents. " * 12)
    assert one is not None and "1 file path," in one  # one of a kind is said in the singular


def test_what_the_reader_does_not_see_or_need_is_left_out() -> None:
    from tributary.engine.localsearch.longquery import visible_text

    issue = (
        "Wrong result with apart\n"
        "<!-- This comment is hidden when you submit the issue: please read CONTRIBUTING.md\n"
        "and search the existing issues first. -->\n"
        "The result of `apart` is wrong <!-- keep it short --> for a real symbol.\n"
        "```\n"
        "Python 3.6.0 |Continuum Analytics, Inc.| (default, Dec 23 2016, 12:22:00)\n"
        'Type "copyright", "credits" or "license" for more information.\n'
        "IPython 5.1.0 -- An enhanced Interactive Python.\n"
        "%quickref -> Quick reference.\n"
        ">>> html = '<!-- kept: this is code -->'\n"
        ">>> tolerance = 1.5\n"
        "```\n"
        "### Versions\n"
        "Linux-5.10.0-x86_64\n"
        "numpy 1.22.3\n"
        "astropy==5.0.3\n"
        "Scipy: 1.8.0\n"
    )
    seen = visible_text(issue)
    assert "CONTRIBUTING" not in seen and "existing issues" not in seen and "keep it short" not in seen
    assert "The result of `apart` is wrong  for a real symbol." in seen
    assert "<!-- kept: this is code -->" in seen and "tolerance = 1.5" in seen
    for setup in ("Continuum", "credits", "Interactive Python", "quickref", "numpy", "astropy==", "Scipy"):
        assert setup not in seen, setup
    assert "Linux-5.10.0-x86_64" in seen and "### Versions" in seen
    terms = read_task(issue + "Apart should keep the real symbol's sign. " * 10).terms
    assert "copyright" not in terms and "interactive" not in terms and "apart" in terms
