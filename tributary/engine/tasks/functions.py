"""Which functions each commit changed: the names git's hunk headers give.

A past fix says which files it touched, and its diff says where in them: each hunk's
header is the nearest definition above the change, as git's built-in diff drivers find
it (``def``/``class`` for Python, ``fn`` for Rust, ``func`` for Go...). Read once per
import from ``git log -U0`` (streamed: a long history's diff is large), these let the
history point at functions as well as files. The name and the header's line are kept,
not line numbers: a definition's lines move with every later commit, its name and
signature rarely do, and the line tells apart two methods of one name in a file.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tributary.engine.tasks.model import Changed
from tributary.engine.tasks.ranking import CODE_EXTENSIONS, is_code_file
from tributary.engine.tasks.sources import (
    GitError,
    git_environment,
    is_partial_clone,
    scope_arguments,
)

# A commit's functions are evidence while they say where a change is: a sweeping
# refactor's hundredth function says little, and its rows would be most of the table.
MAX_FUNCTIONS_PER_FILE = 16
MAX_FILES_PER_COMMIT = 32
_HEADER_CHARS = 200  # git cuts a hunk header's text to about 80 bytes; this is a bound

# File name endings and the git diff driver that finds their definitions.
DRIVERS: dict[str, tuple[str, ...]] = {
    "python": ("py", "pyi", "pyx"),
    "ruby": ("rb",),
    "golang": ("go",),
    "rust": ("rs",),
    "java": ("java",),
    "kotlin": ("kt", "kts"),
    "csharp": ("cs",),
    "php": ("php",),
    "cpp": ("c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx"),
    "objc": ("m", "mm"),
    "perl": ("pl", "pm"),
    "elixir": ("ex", "exs"),
    "bash": ("sh", "bash"),
}

_KEYWORD = re.compile(
    r"\b(?:def|class|fn|func|function|struct|enum|trait|interface|module|impl|sub|object|defp?|defmodule)"
    r"\s+(?:\([^()]{0,80}\)\s*)?([A-Za-z_$][\w$]*)"
)
# JavaScript and TypeScript have no driver of git's: git's default header is the last
# unindented line, so a function is often a value assigned to a name
# (``exports.compileETag = function(val) {``, ``const handler = async (req) => {``).
_ASSIGNED = re.compile(  # with TypeScript's type between name and value (``Home: FC = () =>``)
    r"([A-Za-z_$][\w$]*)\s*(?::[^=;{}()]{1,80})?[:=]\s*(?:async\s+)?"
    r"(?:function\b|\([^()]{0,80}\)\s*(?::[^=;{}]{1,80})?=>|[A-Za-z_$][\w$]*\s*=>)"
)
_CALL = re.compile(r"([A-Za-z_$][\w$]*)\s*\(")
# Words followed by "(" that name no definition (``if (``, ``function(``, ``switch (``).
_NOT_NAMES = frozenset(("if", "for", "while", "switch", "catch", "return", "function", "typeof",
                        "await", "new", "sizeof", "elif", "with", "super"))

Functions = dict[str, tuple[Changed, ...]]  # commit hash → its (path, name, header line)s


def defined_name(header: str) -> str | None:
    """The name a hunk header's definition line gives (``def eval(cls, n):`` → ``eval``;
    ``func (r *T) Close() error`` → ``Close``; ``int main(void)`` → ``main``;
    ``exports.wetag = function(body) {`` → ``wetag``), or None: not a keyword
    (``module.exports = function(){``), nor a call whose value is assigned
    (``var send = require('send')``)."""
    text = header[:_HEADER_CHARS]
    found = _KEYWORD.search(text) or _ASSIGNED.search(text)
    if found:
        return found.group(1)
    for call in _CALL.finditer(text):
        if "=" in text[: call.start()]:
            return None  # a call's value assigned: a statement, not a definition
        if call.group(1) not in _NOT_NAMES:
            return call.group(1)
    return None


def attributes_text() -> str:
    """A gitattributes file that gives each known kind of source file its diff driver."""
    return "".join(
        f"*.{ending} diff={driver}\n" for driver, endings in DRIVERS.items() for ending in endings
    )


@dataclass(slots=True)
class FunctionsRead:
    """What one read of the history's diffs found, and why it stopped early if it did."""

    functions: Functions = field(default_factory=dict)
    problem: str | None = None


def read_git_functions(repo: Path, head: str, since: str | None = None) -> FunctionsRead:
    """The functions every non-merge commit reachable from ``head`` (after ``since``)
    changed in code files, by commit hash; a commit that changed no named definition is
    left out. A clone that lacks some contents (a snapshot without its largest files)
    stops git part-way: what was read by then is kept (the newer commits) and the
    problem said. A partial clone is not read at all: git would fetch every old file's
    contents from its remote to diff them."""
    if is_partial_clone(repo):
        return FunctionsRead(problem="functions not read: a partial clone would fetch every past file")
    revision = f"{since}..{head}" if since else head
    scope = scope_arguments(repo)
    paths = (*scope[: scope.index("--") + 1], *(f"*{suffix}" for suffix in sorted(CODE_EXTENSIONS)))
    with tempfile.TemporaryDirectory(prefix="tributary-attrs-") as folder:
        attributes = Path(folder, "attributes")
        attributes.write_text(attributes_text(), encoding="utf-8")
        command = [
            "git", "-C", str(repo), "-c", "core.quotepath=false", "-c", f"core.attributesFile={attributes}",
            "log", "--no-merges", "--no-renames", "--no-color", "--no-ext-diff", "-U0", "--format=%x00%H",
            revision, *paths,
        ]  # fmt: skip
        with tempfile.TemporaryFile() as errors:
            try:
                process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, env=git_environment())
            except OSError as exc:
                raise GitError(f"cannot run git: {exc}") from exc
            assert process.stdout is not None
            with process:
                found = FunctionsRead(dict(changed_functions(process.stdout)))
            if process.returncode != 0:
                errors.seek(0)
                message = errors.read().decode("utf-8", "replace").strip().splitlines()
                found.problem = f"functions of older commits not read: {message[-1] if message else 'git log failed'}"
    return found


def changed_functions(lines: Iterable[bytes]) -> Iterator[tuple[str, tuple[Changed, ...]]]:
    """(commit, its (path, name, header line)s) from ``git log -U0 --format=%x00%H`` output."""
    commit: str | None = None
    names: dict[tuple[str, str], str] = {}
    per_file: dict[str, int] = {}
    path: str | None = None
    in_header = False
    for raw in lines:
        if raw.startswith(b"\0"):
            if commit is not None and names:
                yield commit, _listed(names)
            commit, names, per_file, path, in_header = raw[1:].strip().decode("ascii", "replace"), {}, {}, None, False
        elif raw.startswith(b"diff --git "):
            in_header, path = True, None
        elif in_header and raw.startswith(b"+++ "):
            target = raw[4:].rstrip(b"\r\n")
            named = target[2:].decode("utf-8", "replace") if target.startswith(b"b/") else None
            path = named if named is not None and is_code_file(named) else None
        elif raw.startswith(b"@@"):
            in_header = False
            parts = raw.split(b"@@", 2)
            if path is None or len(parts) < 3:
                continue
            header = " ".join(parts[2][:_HEADER_CHARS].decode("utf-8", "replace").split())
            name = defined_name(header)
            if name is None or (path, name) in names:
                continue
            count = per_file.get(path)
            if count is None and len(per_file) >= MAX_FILES_PER_COMMIT:
                continue
            if (count or 0) < MAX_FUNCTIONS_PER_FILE:
                per_file[path] = (count or 0) + 1
                names[(path, name)] = header
    if commit is not None and names:
        yield commit, _listed(names)


def _listed(names: dict[tuple[str, str], str]) -> tuple[Changed, ...]:
    return tuple((path, name, header) for (path, name), header in names.items())
