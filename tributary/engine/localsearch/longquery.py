"""Issue-length questions read as what they are: a title, prose, code and tracebacks.

An LLM client asks with the task itself: a bug report of thousands of characters. Its
first forty-odd words are a poor query (a greeting, the first lines of a code block);
what pins the code to change is spread through it: the title, the names the code and
the tracebacks call (``separability_matrix``, ``CompoundModel``), the files and modules
they name (``astropy/modeling/separable.py``, ``astropy.modeling.separable``).
``read_task`` finds those parts, each with how often the issue uses it, and the local
searches rank by them as separate lists, so one paragraph of noise cannot drown them.

Every pattern here is linear in the text (no nested or overlapping repeats) and the
text is bounded by the engine before it gets here.
"""

from __future__ import annotations

import bisect
import builtins
import keyword
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from tributary.engine.localsearch.fts import fts_terms

# A question this long, or this long over several lines, is a task, not a search phrase.
TASK_MIN_CHARS = 600
TASK_MIN_CHARS_MULTILINE = 300
TASK_MIN_LINES = 4
# ... and so is a shorter one of several lines holding code a reader would run: a fenced
# block, an interactive session or a traceback (a short bug report: a title and a repro).
TASK_MIN_CHARS_WITH_CODE = 120
_HOLDS_CODE = re.compile(
    r"^[ \t]*(?:```|>>> |In \[\d{1,5}\]: )|Traceback \(most recent call last\)"
    r"|^goroutine \d{1,9} \[|^thread '[^'\n]{0,100}' panicked at "  # Go's panic, Rust's
    r"|^[ \t]{1,12}at [\w$.<> ]{1,200}\([^()\n]{1,400}:\d{1,7}\)",  # V8's and the JVM's frames
    re.M,
)
# ... or whose body, below its title, names code: inline code (``_INLINE_CODE``) or a
# call (`nthroot_mod`, Rational('0.5', '100')): a title and a few lines of report.
_CALL = re.compile(r"(?<![\w.])[A-Za-z_][\w.]{0,80}\(")
# ... and so is a paragraph on one line that names code that way, or a member of a class
# (``Option.get_help_record``): typed into a search box, a report has no title line.
TASK_MIN_CHARS_ONE_LINE = 200
_MEMBER = re.compile(r"(?<![\w.])[A-Z]\w{0,80}\.[a-z_]\w{0,80}")
# A class called to make an instance: ``Intersection({1}, {x})`` runs ``Intersection.__new__``.
_CONSTRUCTED = re.compile(r"(?<![\w.])([A-Z]\w{0,120})\(")  # one bounded run: linear
MEANING_CHARS = 600  # the prose the embedding model is given (it reads ~128 tokens)
TITLE_MIN_WORDS = 3  # a shorter title says too little to embed alone
MAX_NAMES = 24
TASK_NOTE_OPENING = "read as a task"  # how the note on a task's reading begins
MAX_PATHS = 12
MAX_TERMS = 48
MAX_PHRASES = 16
PHRASE_MIN_WORDS = 3  # a run of plain words this long in output is likely a message the code writes
MAX_QUOTED = 12  # lines of code quoted from the repository looked for, in the order written
QUOTED_MIN_CHARS = 16
QUOTED_MAX_CHARS = 200  # longer is data or output, not a line of code (as inline code is cut)
QUOTED_MIN_WORDS = 3  # identifiers a quoted line holds: ``x = f(y)`` is anyone's

_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_INLINE_CODE = re.compile(r"`([^`\n]{1,200})`")
_FRAME = re.compile(r'File "([^"\n]{1,400})", line (\d{1,7}), in ([\w<>.]{1,200})')
# A frame as pytest reports it: ``src/pkg/mod.py:69: in show``, and where it raised,
# ``src/pkg/mod.py:71: ValueError`` (a drive letter allowed: ``C:\\venv\\pkg\\mod.py``).
_REPORTED_FRAME = re.compile(
    r"^[ \t>*]{0,8}((?:[A-Za-z]:)?[^\s:\"'()*]{1,400}\.py):(\d{1,7}): "
    r"(?:in ([\w<>.]{1,200})|[A-Z]\w{0,80}(?:Error|Exception|Warning)\b)",
    re.M,
)
# A frame as IPython prints it: ``/site-packages/pkg/mod.py in show(self, x)`` with the
# line it ran marked below (``--> 482``), or since IPython 8 ``File ~/pkg/mod.py:482, in
# Class.show(self)``.
_IPYTHON_FRAME = re.compile(r"^[ \t]{0,8}((?:[A-Za-z]:)?[^\s:\"'()*]{1,400}\.py) in ([\w<>.]{1,200})\(", re.M)
_IPYTHON_FILE = re.compile(
    r"^[ \t]{0,8}File [ \t]{0,4}((?:[A-Za-z]:)?[^\s:\"'()*,]{1,400}\.py):(\d{1,7}),? in ([\w<>.]{1,200})", re.M
)
_IPYTHON_ARROW = re.compile(r"^-{1,8}> ?(\d{1,7})", re.M)
# The error a call's arguments raised before the function called ran: the function it
# names (Python 3.10 on prints its class: ``RST.__init__() got an unexpected keyword
# argument 'header_rows'``) is where that argument would be taken, and no frame is in it.
_REJECTED_ARGUMENT = re.compile(
    r"(?<![\w.])([A-Za-z_]\w{0,80}(?:\.[A-Za-z_]\w{0,80}){0,4})\(\) got an unexpected keyword argument "
)
_TRACED = re.compile(r"Traceback \(most recent call last\)|^[ \t]{0,8}E {2,}")
# Stack traces of other languages, printed innermost frame first. Each pattern reads one
# frame as (path, line, function as written); every repeat is bounded and anchored.
# Go: a function line, then its file on the next (``\t/go/pkg/mod/…/mux.go:300 +0x4c5``).
_GO_FRAME = re.compile(
    r"^([^\s()][^\n]{0,300})\([^\n()]{0,400}\)[ \t]*\n\t((?:[A-Za-z]:)?[^\s:]{1,400}\.go):(\d{1,7})\b", re.M
)
# JavaScript and TypeScript as V8 prints them: ``at Layer.handle [as h] (/app/lib/layer.js:95:5)``.
_V8_FRAME = re.compile(
    r"^[ \t]{1,12}at (?:async )?(?:new )?([\w$.<>]{1,200})(?: \[as [\w$]{1,100}\])? "
    r"\((?:file://)?((?:[A-Za-z]:)?[^\s():]{1,400}\.(?:[cm]?js|jsx|[cm]?ts|tsx)):(\d{1,7}):\d{1,7}\)",
    re.M,
)
# The JVM (Java, Kotlin, Scala): ``at org.jetbrains.exposed.sql.Transaction.exec(Transaction.kt:139)``.
_JVM_FRAME = re.compile(
    r"^[ \t]{0,12}at (?:[\w.$-]{1,100}/)?([\w$]{1,100}(?:\.[\w$<>]{1,100}){1,30})"
    r"\(([\w$-]{1,200}\.(?:java|kt|kts|scala|groovy)):(\d{1,7})\)",
    re.M,
)
# Rust's backtrace: ``  3: serde_json::de::from_str`` then ``      at ./src/de.rs:2345:5``.
_RUST_FRAME = re.compile(
    r"^[ \t]{0,8}\d{1,4}: ([^\n]{1,300})\n[ \t]{1,24}at ((?:[A-Za-z]:)?[^\s:]{1,400}\.rs):(\d{1,7}):\d{1,7}", re.M
)
# Ruby: ``/app/lib/sinatra/base.rb:1234:in `block in route!'`` (or ``'Sinatra::Base#route!'``).
_RUBY_FRAME = re.compile(
    r"^[ \t]{0,12}(?:from )?((?:[A-Za-z]:)?[^\s:]{1,400}\.rb):(\d{1,7}):in [`']([^'`\n]{1,300})'", re.M
)
# Elixir: ``(phoenix 1.7.0) lib/phoenix/router.ex:354: Phoenix.Router.__call__/5``.
_ELIXIR_FRAME = re.compile(
    r"^[ \t]{0,12}(?:\([\w.\- ]{1,100}\) )?((?:[A-Za-z]:)?[^\s:()]{1,400}\.exs?):(\d{1,7}): "
    r"([\w.!?]{1,300})/\d{1,3}",
    re.M,
)
# The reporter's own code rather than the project's: an import, a prompt, a decorator,
# a test, an assertion or a print, a comment.
_OWN_CODE_STARTS = (">>>", "...", "In [", "Out[", "$", "#", "//", "import ", "from ", "@", "def test",
                    "class Test", "assert ", "print(", "print ")
_STATEMENT = re.compile(r"[=(\[.]")
_WORD = re.compile(r"[A-Za-z_]\w{0,80}")
_CODE_FILE = r"(?:[\w.-]{1,100}/){0,12}[\w-]{1,100}\.(?:py|pyx|pyi|c|h|cc|cpp|hpp|js|jsx|ts|tsx|go|rs|java|kt|rb|php|cs|swift|scala|ex|exs|lua|sh)"
_PATH = re.compile(rf"(?<![\w./-])((?:/|~/)?{_CODE_FILE})\b")
# A link to a file in a code host's view of a repository, and the line it marks:
# ``https://github.com/o/r/blob/<ref>/src/pkg/mod.py#L68-L73``, GitLab's ``…/-/blob/<ref>/…#L68``,
# Bitbucket's ``…/src/<ref>/…#lines-68``. A branch name with a slash leaves its tail in
# the path, which ``path_suffixes`` drops.
_LINKED_FILE = re.compile(
    rf"https?://[\w.-]{{1,100}}/(?:[\w.-]{{1,100}}/){{1,6}}?(?:-/)?(?:blob|raw|edit|src)/[\w.-]{{1,100}}/"
    rf"({_CODE_FILE})\b(?:(?:#L|#lines-)(\d{{1,7}}))?"
)
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w{0,80}(?:\.[A-Za-z_]\w{0,80}){1,8})")
_IDENTIFIER = re.compile(r"(?<![\w.])([A-Za-z_]\w{2,80})(\()?")
# A method or attribute of the instance a traceback's line or a snippet is inside:
# ``stream = self._redirect_stream(request, method)`` names ``_redirect_stream``.
_OWN_MEMBER = re.compile(r"(?<![\w.])(?:self|cls|this)\.([A-Za-z_]\w{2,80})(\()?")
_PROMPT = re.compile(r"^\s*(>>>|\.\.\.|\$|In \[\d+\]:|Out\[\d+\]:)")
# Words of code that name nothing of the repository's own.
_COMMON_CODE = frozenset(["self", "cls", "def", "class", "return", "import", "from", "none", "true", "false", "print", "assert", "raise", "lambda", "yield", "pass", "elif", "else", "while", "with", "for", "try", "except", "finally", "async", "await", "global", "nonlocal", "and", "not", "str", "int", "float", "bool", "list", "dict", "set", "tuple", "object", "type", "len", "range", "isinstance", "getattr", "setattr", "hasattr", "super", "open", "repr", "format", "sorted", "enumerate", "zip", "map", "filter", "min", "max", "sum", "abs", "any", "all", "append", "extend", "items", "keys", "values", "get", "kwargs", "args", "np", "numpy", "pd", "os", "sys", "re", "json", "path", "value", "result", "error", "exception", "traceback", "warning", "warnings", "most", "recent", "call", "last", "line"]) | frozenset(
    w.lower() for w in [*keyword.kwlist, *dir(builtins)] if not w.startswith("_")
)


@dataclass(frozen=True, slots=True)
class Frame:
    """One traceback frame: the file as written, the line it ran (0 when not shown) and
    the function's own name (``show`` for ``Class.show``); or a line the issue links to,
    with no function ("")."""

    path: str
    line: int
    function: str


@dataclass(frozen=True, slots=True)
class TaskQuery:
    """What an issue-length question is made of, each part with how often it appears."""

    title: str
    meaning: str  # the prose, code and tracebacks left out: what gets embedded
    names: tuple[tuple[str, int], ...] = ()  # code names, most used first
    paths: tuple[str, ...] = ()  # files named (tracebacks first), as written
    modules: tuple[str, ...] = ()  # dotted names that may be modules
    members: tuple[str, ...] = ()  # ``Class.member`` names: that member of that class
    title_terms: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()  # the whole text's terms, rarest-looking first
    phrases: tuple[str, ...] = ()  # runs of plain words in its output: messages, lowercased
    # its tracebacks' frames that name a function, innermost first, then the lines it links
    # to (``_linked_lines``: no function)
    frames: tuple[Frame, ...] = ()
    # classes its code calls to make instances, most called first
    constructed: tuple[str, ...] = ()
    # lines of code it quotes that may be the project's own (``_quoted_lines``), as written
    quoted: tuple[str, ...] = ()
    # functions an error says refused a keyword argument (``_REJECTED_ARGUMENT``), as written
    rejecting: tuple[str, ...] = ()


def is_task_question(query: str) -> bool:
    """Whether ``query`` is an issue-length task rather than a search phrase."""
    if len(query) >= TASK_MIN_CHARS:
        return True
    lines = query.strip().count("\n") + 1  # a pasted line's newline makes no second line
    if len(query) >= TASK_MIN_CHARS_MULTILINE and lines >= TASK_MIN_LINES:
        return True
    if lines < 2 and len(query) >= TASK_MIN_CHARS_ONE_LINE:
        return any(p.search(query) is not None for p in (_INLINE_CODE, _CALL, _MEMBER))
    if len(query) < TASK_MIN_CHARS_WITH_CODE or lines < 2:
        return False
    if _HOLDS_CODE.search(query) is not None:
        return True
    body = query.partition("\n")[2]
    return _INLINE_CODE.search(body) is not None or _CALL.search(body) is not None


def split_code(text: str) -> tuple[list[str], list[str]]:
    """The lines of prose and the lines of code (fenced blocks, interpreter prompts,
    traceback frames and indented lines)."""
    prose: list[str] = []
    code: list[str] = []
    fenced = False
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if (fenced or _PROMPT.match(line) or line.startswith(("    ", "\t")) or _FRAME.search(line)
                or _go_frame_at(lines, number)):
            code.append(line)
        else:
            prose.append(line)
    return prose, code


def _go_frame_at(lines: list[str], number: int) -> bool:
    """Whether ``lines[number]`` is a Go frame's function line: its file line, indented,
    follows it (``_GO_FRAME``), so it is code though it is not indented itself."""
    following = lines[number + 1] if number + 1 < len(lines) else ""
    return following.startswith("\t") and _GO_FRAME.match(f"{lines[number]}\n{following}") is not None


def _title(prose: list[str]) -> str:
    for line in prose:
        stripped = line.strip().lstrip("#").strip()
        if stripped:
            return stripped[:300]
    return ""


def _code_like(word: str, called: bool, quoted: frozenset[str]) -> bool:
    """A word that names code: called, quoted, snake_case, or with inner capitals."""
    if word.lower() in _COMMON_CODE or (word.isupper() and len(word) < 4):
        return False
    inner = word.strip("_")
    return (called or word in quoted or "_" in inner
            or (any(c.isupper() for c in inner[1:]) and any(c.islower() for c in inner)))


def visible_text(text: str) -> str:
    """The issue as its reader sees it, less the lines about the reporter's setup: HTML
    comments outside code blocks (an issue template's instructions, hidden once
    rendered) and the lines that only say what was installed, an interpreter's banner
    (``Python 3.9.10 (main, …)``, ``Type "help", "copyright"…``) and versions
    (``numpy 1.22.3``). Their words (``copyright``, ``interactive``, ``matplotlib``)
    otherwise match the code that prints a banner or checks a version."""
    kept: list[str] = []
    fenced = in_comment = False
    for line in text.splitlines():
        if not in_comment and _FENCE.match(line):
            fenced = not fenced
            kept.append(line)
            continue
        if not fenced:
            line, in_comment = _without_comments(line, in_comment)
        if not _setup_line(line.strip()):
            kept.append(line)
    return "\n".join(kept)


def _without_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """``line`` less its ``<!-- … -->`` parts, and whether a comment is still open."""
    out: list[str] = []
    pos = 0
    while True:
        if in_comment:
            end = line.find("-->", pos)
            if end < 0:
                return "".join(out), True
            pos, in_comment = end + 3, False
        start = line.find("<!--", pos)
        if start < 0:
            out.append(line[pos:])
            return "".join(out), False
        out.append(line[pos:start])
        pos, in_comment = start + 4, True


_BANNER_STARTS = ("[GCC ", "[Clang ", "[MSC ", "%quickref ->", "help      ->", "object?   ->", "?         ->")


def _setup_line(line: str) -> bool:
    """Whether a (stripped) line only describes the setup: a banner line or a version."""
    if line.startswith(_BANNER_STARTS) or "\"credits\" or \"license\"" in line or "'credits' or 'license'" in line:
        return True
    if line.startswith(("Python ", "IPython ")):
        rest = line.split(" ", 1)[1]
        return rest[:1].isdigit() and any(mark in rest for mark in ("(", "|", " -- "))
    words = line.split("==") if "==" in line else line.replace(":", " ").split()
    return len(words) == 2 and words[0][:1].isalpha() and _is_version(words[1].strip())


def _is_version(word: str) -> bool:
    parts = word.lstrip("vV").split(".")
    return len(parts) >= 2 and parts[0].isdigit() and parts[1][:1].isdigit()


@lru_cache(maxsize=16)
def read_task(text: str) -> TaskQuery:
    """The parts of an issue-length question (see the module's docstring). Kept for the
    last few questions: one search reads the same issue for its keyword query, its
    embedding, each index searched and its confidence, and it is read in linear time but
    over up to the whole query."""
    text = visible_text(text)
    prose, code = split_code(text)
    title = _title(prose)
    quoted = frozenset(m.group(1).strip() for m in _INLINE_CODE.finditer(text))
    frames = _frames(text)
    linked = _linked_lines(text)
    paths = list(dict.fromkeys([
        *(path for path, _line, _name in reversed(frames)),  # the innermost frame is the last one
        *(path for path, _at in linked),
        *(match.group(1) for match in _PATH.finditer(text)),
    ]))
    names: Counter[str] = Counter()
    for _path, _line, name in frames:
        if name.isidentifier() and name.lower() not in _COMMON_CODE:
            names[name] += 2
    for pattern in (_IDENTIFIER, _OWN_MEMBER):
        for match in pattern.finditer(text):
            word = match.group(1)
            if _code_like(word, match.group(2) is not None, quoted):
                names[word] += 1
    modules = list(dict.fromkeys(
        m.group(1) for m in _DOTTED.finditer(text)
        if m.group(1).split(".")[0].lower() not in _COMMON_CODE and "/" not in m.group(1)
    ))
    for dotted in modules:  # the last part of a dotted name is a name too
        last = dotted.rsplit(".", 1)[-1]
        if _code_like(last, False, quoted):
            names[last] += 1
    members = [".".join(dotted.split(".")[-2:]) for dotted in modules if _class_member(dotted)]
    meaning = " ".join(" ".join(prose).split())[:MEANING_CHARS]
    constructed = Counter(name for m in _CONSTRUCTED.finditer(text)
                          if not (name := m.group(1)).isupper() and name.isidentifier())
    return TaskQuery(
        title=title,
        meaning=meaning or title,
        names=tuple(names.most_common(MAX_NAMES)),
        paths=tuple(paths[:MAX_PATHS]),
        modules=tuple(modules[: MAX_PATHS * 2]),
        members=tuple(dict.fromkeys(members))[:MAX_NAMES],
        title_terms=tuple(fts_terms(title)),
        terms=tuple(_ranked_terms(text, names)),
        phrases=tuple(message_phrases([*code, *quoted])),
        frames=(
            *(Frame(path, int(line or 0), name) for path, line, name in reversed(frames) if _function_name(name)),
            *(Frame(path, line, "") for path, line in linked if line),
        ),
        constructed=tuple(name for name, _ in constructed.most_common(MAX_NAMES)),
        quoted=tuple(_quoted_lines(text)[:MAX_QUOTED]),
        rejecting=tuple(dict.fromkeys(m.group(1) for m in _REJECTED_ARGUMENT.finditer(text)))[:MAX_NAMES],
    )


def _quoted_lines(text: str) -> list[str]:
    """The lines of code ``text`` quotes that may be lines of the project's own code, in
    the order written: inline code and the lines of fenced blocks that hold no
    traceback, each a statement (``return s.replace(".[", "[")``) of at least
    ``QUOTED_MIN_WORDS`` names, and not the reporter's session, imports or tests. A
    traceback's lines are its frames' (``frames``); a reporter who quotes a line of the
    project usually quotes the one at fault. A block left open is not read: its prose
    cannot be told from its code."""
    found: list[str] = [m.group(1) for m in _INLINE_CODE.finditer(text)]
    block: list[str] | None = None
    for line in text.splitlines():
        if _FENCE.match(line):
            if block is not None and not _traced(block):
                found.extend(block)
            block = None if block is not None else []
        elif block is not None:
            block.append(line)
    kept = (" ".join(line.split()) for line in found)
    return list(dict.fromkeys(line for line in kept if _may_be_the_projects(line)))


def _traced(block: list[str]) -> bool:
    return any(_TRACED.search(line) or _FRAME.search(line) or _REPORTED_FRAME.search(line)
               or _IPYTHON_FRAME.search(line) for line in block) or bool(_top_down_frames("\n".join(block)))


def _may_be_the_projects(line: str) -> bool:
    return (QUOTED_MIN_CHARS <= len(line) <= QUOTED_MAX_CHARS and not line.startswith(_OWN_CODE_STARTS)
            and _STATEMENT.search(line) is not None and len(_WORD.findall(line)) >= QUOTED_MIN_WORDS)


def _linked_lines(text: str) -> list[tuple[str, int]]:
    """The files ``text`` links to in a code host's view of the repository, as
    ``(path, line)`` in the order linked (line 0 where the link marks none): the
    reporter pointing at the code, often at the lines that misbehave."""
    return list(dict.fromkeys((m.group(1), int(m.group(2) or 0)) for m in _LINKED_FILE.finditer(text)))


def _frames(text: str) -> list[tuple[str, str, str]]:
    """The traceback frames ``text`` shows as ``(path, line, function)``, outermost
    first, whether Python, pytest or IPython printed them (a raising line pytest reports
    has no function; a method's frame keeps its own name)."""
    found = [(m.start(), m.group(1), m.group(2), m.group(3)) for m in _FRAME.finditer(text)]
    found += [(m.start(), m.group(1), m.group(2), m.group(3) or "") for m in _REPORTED_FRAME.finditer(text)]
    found += [(m.start(), m.group(1), m.group(2), m.group(3)) for m in _IPYTHON_FILE.finditer(text)]
    found += _ipython_frames(text)
    return [(path, line, name.rsplit(".", 1)[-1]) for _, path, line, name in sorted(found)] + _top_down_frames(text)


def _function_name(name: str) -> bool:
    """Whether a frame names a function: an identifier, or Ruby's ``route!``, ``empty?``."""
    return name.rstrip("!?").isidentifier()


def _top_down_frames(text: str) -> list[tuple[str, str, str]]:
    """The frames of Go, JavaScript, JVM, Rust, Ruby and Elixir traces ``text`` shows, as
    ``(path, line, function)`` outermost first as Python's are (those languages print
    the innermost first). A function is its own name (``(*Mux).Mount`` -> ``Mount``), and
    none for a program's entry point (``main.main``);
    a path in Go's module cache is its repository's (``…/chi/v5@v5.0.10/mux.go`` ->
    ``./mux.go``), as Rust's ``./src/de.rs`` already is."""
    found: list[tuple[int, str, str, str]] = []
    for m in _GO_FRAME.finditer(text):
        found.append((m.start(), _module_relative(m.group(2), m.group(1)), m.group(3), _go_function(m.group(1))))
    for m in _V8_FRAME.finditer(text):
        found.append((m.start(), m.group(2), m.group(3), m.group(1).rsplit(".", 1)[-1]))
    for m in _JVM_FRAME.finditer(text):
        parts = m.group(1).split(".")
        package = [part for part in parts[:-2] if part.isidentifier()]
        found.append((m.start(), "/".join([*package, m.group(2)]), m.group(3), parts[-1]))
    for m in _RUST_FRAME.finditer(text):
        function = _RUST_HASH.sub("", m.group(1).strip()).rsplit("::", 1)[-1]
        found.append((m.start(), m.group(2), m.group(3), function))
    for m in _RUBY_FRAME.finditer(text):
        function = re.split(r"[#. ]|::", m.group(3))[-1]
        found.append((m.start(), m.group(1), m.group(2), function))
    for m in _ELIXIR_FRAME.finditer(text):
        found.append((m.start(), m.group(1), m.group(2), m.group(3).rsplit(".", 1)[-1]))
    return [(path, line, "" if name in _ENTRY_POINTS else name) for _, path, line, name in sorted(found, reverse=True)]


# A program's entry point (Go's and Rust's ``main.main``, a JVM's ``main``): the reporter's
# own program far more often than the project's, and a name many examples define.
_ENTRY_POINTS = frozenset({"main", "init"})


_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")  # a symbol's hash suffix: ``…::from_str::h1a2b…``
_GO_CLOSURE = re.compile(r"(?:\.(?:func|gowrap)\d{1,4})+$")  # ``Mux.Mount.func1``: inside Mount
_GO_VERSIONED = re.compile(r"^.*?/[^/@\s]{1,100}@v[^/\s]{1,100}/")  # ``…/chi/v5@v5.0.10/``
# ... and a package's folder in a GOPATH or a vendor folder, by its import path: a host
# with a dot, then two parts (``/go/src/github.com/go-chi/chi/``, ``vendor/golang.org/x/net/``)
_GO_IMPORTED = re.compile(r"^(?:.*?/)?(src|vendor)/[\w-]{1,100}(?:\.[\w-]{1,100}){1,4}/[^/\s]{1,100}/[^/@\s]{1,100}/")


def _go_function(written: str) -> str:
    """A Go frame's function by its own name: ``github.com/go-chi/chi/v5.(*Mux).Mount`` ->
    ``Mount``, a closure by the function it is in, generics' brackets left out."""
    name = _GO_CLOSURE.sub("", re.sub(r"\[[^\]]{0,200}\]", "", written.strip()))
    return name.rsplit(".", 1)[-1]


def _module_relative(path: str, function: str = "") -> str:
    """A file in Go's module cache, a GOPATH or a vendor folder as its repository holds it
    (``./mux.go``); other paths as written. A GOPATH holds the reporter's own program too:
    a frame there counts only when its ``function`` is written with its import path
    (``github.com/go-chi/chi.(*Mux).Mount``, not ``main.setupRoutes``)."""
    written = path.replace("\\", "/")
    relative, found = _GO_VERSIONED.subn("./", written, count=1)
    if found:
        return relative
    imported = _GO_IMPORTED.match(written)
    if imported and (imported.group(1) == "vendor" or "/" in function.split("(", 1)[0]):
        return "./" + written[imported.end():]
    return path


def _ipython_frames(text: str) -> list[tuple[int, str, str, str]]:
    """IPython's older frames, each with the line its arrow marks before the next frame
    (``""`` when none does), as ``(offset, path, line, function)``."""
    frames = [(m.start(), m.group(1), m.group(2)) for m in _IPYTHON_FRAME.finditer(text)]
    if not frames:
        return []
    arrows = [(m.start(), m.group(1)) for m in _IPYTHON_ARROW.finditer(text)]
    found: list[tuple[int, str, str, str]] = []
    for number, (start, path, name) in enumerate(frames):
        end = frames[number + 1][0] if number + 1 < len(frames) else len(text)
        at = bisect.bisect_left(arrows, (start, ""))
        line = arrows[at][1] if at < len(arrows) and arrows[at][0] < end else ""
        found.append((start, path, line, name))
    return found


def _class_member(dotted: str) -> bool:
    """Whether a dotted name ends in a member of a class: ``Function._eval_evalf``,
    ``fits.Card.fromstring``, ``RST.__init__`` (a class named in CapWords, then an
    identifier), the way an issue points at the method it means."""
    parts = dotted.split(".")
    owner, member = parts[-2], parts[-1]
    bare = owner.lstrip("_")
    class_like = len(bare) > 1 and bare[0].isupper() and (not bare.isupper() or len(bare) <= 5)
    return class_like and member.isidentifier() and len(member.strip("_")) > 1


_EDGE_PUNCTUATION = ",.:;!?'\"()[]{}<>`"
_MESSAGE_ENDS = (".", "!", "?", ":")  # a sentence or a label ends: so does the message


def message_phrases(lines: list[str]) -> list[str]:
    """Runs of at least ``PHRASE_MIN_WORDS`` plain words in the issue's code, output and
    quoted text (``Right contains more items, first extra item``): error and log
    messages are written out in the code that emits them, where a bag of words
    cannot find them among thousands of chunks. Lowercased, longest first; traceback
    frame lines are left out (``most recent call last`` is Python's, not the code's)."""
    found: dict[str, None] = {}
    for line in lines:
        if _FRAME.search(line) or line.lstrip().startswith("Traceback"):
            continue
        run: list[str] = []
        for token in [*line.split(), ""]:  # "" ends the last run
            word = token.strip(_EDGE_PUNCTUATION)
            if word.isascii() and word.isalpha() and 2 <= len(word) <= 30:
                run.append(word.lower())
                if token.endswith(_MESSAGE_ENDS):
                    _keep(run, found)
                    run = []
                continue
            _keep(run, found)
            run = []
    return sorted(found, key=lambda phrase: -phrase.count(" "))[:MAX_PHRASES]


def _keep(run: list[str], found: dict[str, None]) -> None:
    if len(run) >= PHRASE_MIN_WORDS and sum(len(w) >= 4 for w in run) >= 2:
        found.setdefault(" ".join(run), None)


def _ranked_terms(text: str, names: Counter[str]) -> list[str]:
    """The text's terms, the ones from its code names first, then by how often the
    text uses them (repeats say what the issue is about), at most ``MAX_TERMS``."""
    counts = Counter(_all_terms(text))
    named = {term for name, _ in names.most_common(MAX_NAMES) for term in fts_terms(name)}
    ordered = sorted(counts, key=lambda t: (t not in named, -counts[t]))
    return ordered[:MAX_TERMS]


def _all_terms(text: str) -> list[str]:
    """Every term occurrence (repeats kept), as ``fts_terms`` would find them."""
    found: list[str] = []
    for line in text.splitlines():
        found.extend(fts_terms(line, limit=10_000))
    return found


def task_note(query: str) -> str | None:
    """What was taken from an issue-length question, for the answer's notes (None for a
    search phrase): no part of a long question is left out without saying so."""
    if not is_task_question(query):
        return None
    task = read_task(query)

    def count(found: int, most: int, what: str) -> str:
        return f"{found} {what}{'' if found == 1 else 's'}" + (" (the most used)" if found >= most else "")

    parts = [
        "its title" if task.title else "",
        count(len(task.names), MAX_NAMES, "code name"),
        count(len(task.paths), MAX_PATHS, "file path"),
        count(len(task.phrases), MAX_PHRASES, "quoted message"),
        count(len(task.terms), MAX_TERMS, "word"),
    ]
    prose = f"the first {len(task.meaning):,} characters of its prose"
    embedded = (f"its title embedded to search code and {prose} to search past tasks"
                if _title_embedded(task) else f"{prose} embedded")
    return (f"{TASK_NOTE_OPENING} ({len(query):,} characters): "
            + ", ".join(p for p in parts if p and not p.startswith("0 ")) + f"; {embedded}")


def embedding_text(query: str) -> str:
    """What the embedding model should read of a query asked of past tasks: an issue's
    prose (they are prose too), else all of it."""
    return read_task(query).meaning if is_task_question(query) else query


def code_embedding_text(query: str) -> str:
    """What the embedding model should read of a query asked of code: an issue's title,
    its author's summary of what is wrong, where the prose around it (versions, steps,
    what was expected) draws the vector away from the code that must change."""
    if not is_task_question(query):
        return query
    task = read_task(query)
    return task.title if _title_embedded(task) else task.meaning


def _title_embedded(task: TaskQuery) -> bool:
    return len(task.title.split()) >= TITLE_MIN_WORDS


def path_suffixes(written: str) -> list[str]:
    """The repository-relative forms a path written in an issue may take: a traceback's
    ``/home/u/venv/lib/python3.9/site-packages/pkg/mod.py`` is ``pkg/mod.py`` in the
    checkout, so every tail of two or more parts is a candidate (the file name alone
    last)."""
    parts = [p for p in written.replace("\\", "/").split("/") if p and p != "."]
    tails = ["/".join(parts[i:]) for i in range(len(parts) - 1)]
    return [*tails, *parts[-1:]]


def module_paths(dotted: str) -> list[str]:
    """The files a dotted module name may be: ``a.b.c`` -> ``a/b/c.py``, ``a/b/c/__init__.py``
    and, for ``a.b.func``, ``a/b.py``."""
    parts = dotted.split(".")
    found = [f"{'/'.join(parts)}.py", f"{'/'.join(parts)}/__init__.py"]
    if len(parts) > 2:
        found.append(f"{'/'.join(parts[:-1])}.py")
    return found
