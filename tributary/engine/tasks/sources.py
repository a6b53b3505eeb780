"""Where tasks come from: a repository's ``git log``, and JSONL issue-tracker exports.

Both readers are tolerant: a bad JSONL line or an unparsable commit is counted and
reported (``file:line: why``), never fatal. Git output is read as bytes and decoded
leniently, because commit messages and paths in old histories are not always UTF-8.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tributary.engine.errors import TributaryError
from tributary.engine.tasks.model import Rename, Task, parse_date

MAX_ERRORS_KEPT = 20
_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"}


class GitError(TributaryError, RuntimeError):
    """``git`` failed or is not available."""


@dataclass(slots=True)
class GitHistory:
    """Commits read from git, newest first, and the path moves among them."""

    tasks: list[Task] = field(default_factory=list)
    renames: list[Rename] = field(default_factory=list)
    head: str | None = None
    skipped: int = 0
    errors: list[str] = field(default_factory=list)


def git_environment() -> dict[str, str]:
    """The environment git runs in here: never prompting, messages untranslated."""
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def _git(repo: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "-c", "core.quotepath=false", *args],
            capture_output=True,
            check=False,
            env=git_environment(),
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {args[0]} failed in {repo}: {message}")
    return done.stdout


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def is_git_repo(repo: Path) -> bool:
    try:
        return _text(_git(repo, "rev-parse", "--is-inside-work-tree")).strip() == "true"
    except GitError:
        return False


def head_commit(repo: Path) -> str | None:
    try:
        return _text(_git(repo, "rev-parse", "--verify", "-q", "HEAD")).strip() or None
    except GitError:
        return None  # an empty repository has no HEAD yet


def is_partial_clone(repo: Path) -> bool:
    """Whether ``repo`` is a partial clone (its missing objects come from a remote)."""
    try:
        found = _git(repo, "config", "--get-regexp", r"^(extensions\.partialclone|remote\..*\.promisor)$")
    except GitError:
        return False  # (no such setting: git says so by failing)
    return bool(found.strip())


def is_ancestor(repo: Path, commit: str, head: str) -> bool:
    try:
        _git(repo, "merge-base", "--is-ancestor", commit, head)
    except GitError:
        return False
    return True


_RECORD = b"\x1e"
_FIELD = b"\x1f"
_FORMAT = "--format=%x1e%H%x1f%aI%x1f%an%x1f%B%x1f"


def read_git_history(repo: Path, since: str | None = None) -> GitHistory:
    """Non-merge commits reachable from HEAD (only those after ``since`` when given).

    A commit becomes a task: its id is the full hash, its title the message's first
    line, its body the rest, its date and author the author's, its files the paths it
    changed (the new path of a rename; renames are also returned so older tasks can follow).
    In a folder inside a work tree, only the commits that changed something in it, with
    paths relative to it (``scope_arguments``), as its files are indexed.
    """
    history = GitHistory(head=head_commit(repo))
    if history.head is None:
        return history
    revision = f"{since}..{history.head}" if since else history.head
    scope = scope_arguments(repo)
    try:
        raw = _git(repo, "log", "--no-merges", "--name-status", "-M", "-z", _FORMAT, revision, *scope)
    except GitError as exc:
        if "unable to read" not in str(exc):
            raise
        # Rename detection reads file contents, which a partial clone or a snapshot
        # without its largest files lacks: the history without renames is still history.
        raw = _git(repo, "log", "--no-merges", "--name-status", "--no-renames", "-z", _FORMAT, revision, *scope)
        if len(history.errors) < MAX_ERRORS_KEPT:
            history.errors.append("renames not followed: the clone lacks some file contents")
    for number, record in enumerate(raw.split(_RECORD)[1:], start=1):
        try:
            task, renames = _parse_commit(record)
        except (ValueError, IndexError) as exc:
            history.skipped += 1
            if len(history.errors) < MAX_ERRORS_KEPT:
                history.errors.append(f"git log record {number}: {exc}")
            continue
        history.tasks.append(task)
        history.renames.extend(renames)
    return history


def scope_arguments(repo: Path) -> tuple[str, ...]:
    """The ``git log`` arguments that keep to ``repo``: all of history at a work tree's
    top; in a folder below it, the commits that changed the folder (every one of them:
    ``--full-history`` skips git's pruning of merged branches) and their paths relative
    to it, so a task's files are the indexed files' paths and another folder's commits
    are not this folder's tasks."""
    if not _text(_git(repo, "rev-parse", "--show-prefix")).strip():
        return ("--",)
    return ("--relative", "--full-history", "--", ".")


def _parse_commit(record: bytes) -> tuple[Task, list[Rename]]:
    parts = record.split(_FIELD, 4)
    if len(parts) < 5:
        raise ValueError("truncated record")
    sha, date_raw, author_raw, message_raw, changes = parts
    date = parse_date(_text(date_raw))
    message = _text(message_raw).strip()
    title, _, body = message.partition("\n")
    files: list[str] = []
    renames: list[Rename] = []
    items = [_text(x) for x in changes.split(b"\0")]
    i = 0
    while i < len(items):
        status = items[i].strip()
        if not status:
            i += 1
            continue
        if status[0] in "RC":  # rename/copy: score, then old and new paths
            old, new = items[i + 1], items[i + 2]
            if status[0] == "R":
                renames.append(Rename(old, new, int(date.timestamp())))
            files.append(new)
            i += 3
        else:
            files.append(items[i + 1])
            i += 2
    task = Task(
        id=_text(sha).strip(),
        date=date,
        title=title.strip() or "(no message)",
        body=body.strip(),
        files=tuple(dict.fromkeys(files)),
        source="git",
        author=_text(author_raw).strip(),
    )
    return task, renames


def list_repo_files(repo: Path, limit: int = 500_000) -> list[str]:
    """The files in the repository now, relative to ``repo``.

    In a git work tree: tracked plus untracked-but-not-ignored files (``git ls-files``);
    a folder git ignores, or one outside any work tree, is walked instead.
    """
    if is_git_repo(repo):
        raw = _git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        listed = list(dict.fromkeys(_text(p) for p in raw.split(b"\0") if p))
        if listed:
            return listed[:limit]
    out: list[str] = []
    for folder, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        for name in names:
            out.append(Path(folder, name).relative_to(repo).as_posix())
            if len(out) >= limit:
                return out
    return out


# -- JSONL ------------------------------------------------------------------------


@dataclass(slots=True)
class JsonlRead:
    tasks: list[Task] = field(default_factory=list)
    lines: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)


def _validate(obj: Any) -> Task:
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    for key in ("id", "date", "title"):
        if key not in obj:
            raise ValueError(f"missing {key!r}")
    task_id, title, body = obj["id"], obj["title"], obj.get("body", "")
    if (
        not isinstance(task_id, str | int)
        or isinstance(task_id, bool)
        or str(task_id).strip() == ""
    ):
        raise ValueError("'id' must be a non-empty string or integer")
    if not isinstance(title, str):
        raise ValueError("'title' must be a string")
    if not isinstance(body, str):
        raise ValueError("'body' must be a string")
    if not isinstance(obj["date"], str):
        raise ValueError("'date' must be an ISO-8601 string")
    try:
        date = parse_date(obj["date"])
    except ValueError as exc:
        raise ValueError(f"'date' is not ISO-8601: {obj['date']!r}") from exc
    files = obj.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ValueError("'files' must be a list of strings")
    author = obj.get("author") or ""
    if not isinstance(author, str):
        raise ValueError("'author' must be a string")
    if not title.strip() and not body.strip():
        raise ValueError("empty 'title' and 'body'")
    return Task(
        id=str(task_id).strip(),
        date=date,
        title=title.strip(),
        body=body.strip(),
        files=tuple(dict.fromkeys(f.strip().removeprefix("./") for f in files if f.strip())),
        source="jsonl",
        author=author.strip(),
    )


def iter_jsonl(path: Path) -> Iterator[tuple[int, Task | str]]:
    """``(line number, Task)`` for good lines, ``(line number, error)`` for bad ones."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
                yield number, _validate(obj)
            except UnicodeDecodeError:
                yield number, "not UTF-8"
            except json.JSONDecodeError as exc:
                yield number, f"invalid JSON: {exc.msg} (column {exc.colno})"
            except ValueError as exc:
                yield number, str(exc)


def read_jsonl(path: Path) -> JsonlRead:
    """Every valid task in a JSONL export; bad lines counted with ``file:line: why``."""
    result = JsonlRead()
    for number, item in iter_jsonl(path):
        result.lines += 1
        if isinstance(item, Task):
            result.tasks.append(item)
            continue
        result.skipped += 1
        if len(result.errors) < MAX_ERRORS_KEPT:
            result.errors.append(f"{path}:{number}: {item}")
    return result
