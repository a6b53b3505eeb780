"""Build a commit-localisation dataset from any git repository's own history.

``build_from_git(repo, split_at, out)`` makes a dataset like the pytest and click
benchmarks from any repository: the corpus is the repository at ``split_at`` (checked
out in a temporary ``git worktree`` to see what exists there), tasks are the non-merge commits up to
``split_at``, queries the non-merge commits after it whose message is not
boilerplate and which changed 1–6 source files that exist at the split, each with
the lines it changed as line ranges of the split (``spans``, ``gitspans``).

No query may see a task dated after itself: the split's author date is the cut —
tasks dated after it (clock skew, rebases) are dropped, and so are queries dated
at or before it — so every task predates every query.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from tributary.engine.errors import TributaryError
from tributary.engine.eval.datasets import EvalQuery, EvalTask, parse_date, write_dataset
from tributary.engine.eval.gitspans import SpanError, changed_spans

# Source files a query's relevant set is drawn from (the bench used only .py).
DEFAULT_EXTENSIONS: tuple[str, ...] = (
    ".py", ".js", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java", ".c", ".h", ".cc", ".cpp",
    ".hpp", ".cs", ".rb", ".php", ".kt", ".swift", ".scala",
)
MIN_FILES, MAX_FILES = 1, 6
MIN_WORDS = 3

# Commit messages that say nothing about the code (releases, bots, formatting).
BOILERPLATE = re.compile(
    r"""^(
        merge\b | revert\b | bump\b | release\b | prepare\s+release | version\s+bump
      | \[?pre-commit | \[bot\] | dependabot | update\s+(changelog|authors|copyright|readme)
      | (fix(ed)?\s+)?typos?\b | formatting\b | reformat | (run\s+|apply\s+)?(black|isort|ruff|prettier)\b
      | whitespace\b | lint(ing)?\b | wip\b | changelog\b | docs?:\s*typo
    )""",
    re.IGNORECASE | re.VERBOSE,
)

_RECORD, _FIELD = "\x1e", "\x1f"
_FORMAT = "--format=%x1e%H%x1f%aI%x1f%B%x1f"


class GitBuildError(TributaryError, RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    date: datetime
    message: str
    files: tuple[str, ...]

    @property
    def title(self) -> str:
        return self.message.partition("\n")[0].strip()

    @property
    def body(self) -> str:
        return self.message.partition("\n")[2].strip()


@dataclass(slots=True)
class BuildReport:
    out: Path
    commit: str
    split_date: datetime
    tasks: int = 0
    queries: int = 0
    dropped: dict[str, int] = field(default_factory=dict)

    def drop(self, why: str) -> None:
        self.dropped[why] = self.dropped.get(why, 0) + 1


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "core.quotepath=false", *args],
        capture_output=True, check=False, env=env,
    )
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise GitBuildError(f"git {args[0]} failed in {repo}: {message}")
    return done.stdout.decode("utf-8", "replace")


def read_commits(repo: Path, revision: str) -> list[Commit]:
    """Non-merge commits of ``revision`` (a rev or range), newest first, with changed files."""
    raw = _git(repo, "log", "--no-merges", "--name-only", "-z", _FORMAT, revision, "--")
    commits: list[Commit] = []
    for record in raw.split(_RECORD)[1:]:
        parts = record.split(_FIELD, 3)
        if len(parts) < 4:
            continue
        sha, date, message, names = parts
        files = tuple(dict.fromkeys(n.strip("\n") for n in names.split("\0") if n.strip("\n")))
        commits.append(Commit(sha=sha.strip(), date=parse_date(date.strip()),
                              message=message.strip(), files=files))
    return commits


def is_boilerplate(message: str) -> bool:
    """Releases, merges, bots, typo and formatting commits, and messages under 3 words."""
    title = message.strip().partition("\n")[0].strip()
    return not title or bool(BOILERPLATE.match(title)) or len(message.split()) < MIN_WORDS


def files_at(repo: Path, commit: str) -> set[str]:
    """The files that exist at ``commit``, read from a temporary worktree checked out there."""
    with tempfile.TemporaryDirectory(prefix="tributary-split-") as tmp:
        tree = Path(tmp) / "tree"
        _git(repo, "worktree", "add", "--detach", "--quiet", str(tree), commit)
        try:
            found: set[str] = set()
            for folder, dirs, names in os.walk(tree):
                dirs[:] = [d for d in dirs if d != ".git"]
                for name in names:
                    found.add(Path(folder, name).relative_to(tree).as_posix())
            return found
        finally:
            _git(repo, "worktree", "remove", "--force", str(tree))


def query_from_commit(
    commit: Commit, existing: set[str], extensions: Sequence[str]
) -> tuple[EvalQuery | None, str | None]:
    """The query a commit makes, or why it makes none."""
    if is_boilerplate(commit.message):
        return None, "boilerplate message"
    relevant = [f for f in commit.files if f.endswith(tuple(extensions)) and f in existing]
    if not MIN_FILES <= len(relevant) <= MAX_FILES:
        return None, f"not {MIN_FILES}-{MAX_FILES} source files existing at the split"
    text = commit.title + ("\n\n" + commit.body if commit.body else "")
    return EvalQuery(id=commit.sha[:12], query=text, relevant=dict.fromkeys(relevant, 1.0),
                     date=commit.date), None


def build_from_git(
    repo: Path,
    split_at: str,
    out: Path,
    *,
    head: str = "HEAD",
    extensions: Iterable[str] = DEFAULT_EXTENSIONS,
    max_queries: int | None = None,
) -> BuildReport:
    """Write a dataset (corpus.json, tasks.jsonl, queries.jsonl) to ``out``; see the module doc."""
    repo = repo.expanduser().resolve()
    exts = tuple(extensions)
    sha = _git(repo, "rev-parse", "--verify", f"{split_at}^{{commit}}").strip()
    split_date = parse_date(_git(repo, "log", "-1", "--format=%aI", sha).strip())
    report = BuildReport(out=out, commit=sha, split_date=split_date)
    existing = files_at(repo, sha)

    tasks: list[EvalTask] = []
    for commit in read_commits(repo, sha):
        if commit.date > split_date:
            report.drop("task dated after the split")
            continue
        tasks.append(EvalTask(id=commit.sha[:12], date=commit.date, title=commit.title,
                              body=commit.body, files=commit.files))

    queries: list[EvalQuery] = []
    shas: dict[str, str] = {}
    for commit in read_commits(repo, f"{sha}..{head}"):
        shas[commit.sha[:12]] = commit.sha
        if commit.date <= split_date:
            report.drop("query dated before the split")
            continue
        query, why = query_from_commit(commit, existing, exts)
        if query is None:
            report.drop(why or "rejected")
            continue
        queries.append(query)
    if max_queries is not None and len(queries) > max_queries:
        # A deterministic sample that does not favour recent or old commits.
        queries = sorted(queries, key=lambda q: hashlib.sha1(q.id.encode()).hexdigest())[:max_queries]
        queries.sort(key=lambda q: q.date or split_date, reverse=True)
    queries = [_with_spans(repo, sha, query, shas) for query in queries]

    corpus = {"git": str(repo), "snapshot": split_at, "snapshot_commit": sha,
              "split_date": split_date.isoformat(), "extensions": list(exts)}
    write_dataset(out, corpus, tasks, queries)
    report.tasks, report.queries = len(tasks), len(queries)
    return report


def _with_spans(repo: Path, snapshot: str, query: EvalQuery, shas: dict[str, str]) -> EvalQuery:
    """The query with the snapshot's lines its commit changed (``gitspans``), for the
    content-level evaluation; unchanged when git cannot say."""
    try:
        spans = changed_spans(repo, snapshot, shas.get(query.id, query.id), list(query.relevant))
    except SpanError:
        return query
    return replace(query, spans=spans)
