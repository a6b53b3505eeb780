"""Plain data of the task history: tasks, search results, file rankings, import stats."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

Changed = tuple[str, str, str]  # a function a task changed: (path, name, its definition's line)


@dataclass(frozen=True, slots=True)
class Task:
    """One unit of past work: a commit, or an issue from a tracker export.

    ``date`` is timezone-aware; ``files`` are repository-relative paths the task touched,
    ``functions`` the (path, name, header line) of each definition its changes fell in
    (a commit's, from its diff; recorded apart from the task, so not part of its hash).
    """

    id: str
    date: datetime
    title: str
    body: str = ""
    files: tuple[str, ...] = ()
    source: str = "jsonl"
    author: str = ""
    functions: tuple[Changed, ...] = ()

    @property
    def text(self) -> str:
        """What gets embedded and shown: the title, a blank line, the body."""
        return f"{self.title}\n\n{self.body}".strip()

    @property
    def timestamp(self) -> int:
        return int(self.date.timestamp())

    def content_hash(self) -> str:
        """Changes whenever anything a search could see changes (re-import skips equal ones)."""
        digest = hashlib.blake2b(digest_size=16)
        # The author joins the hash only when known, so tasks imported without one keep theirs.
        extra = (f"author:{self.author}",) if self.author else ()
        for part in (self.date.isoformat(), self.title, self.body, *self.files, *extra):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\x1f")
        return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Rename:
    """A path moved in a commit (from ``git log -M``): lets old tasks point at today's file."""

    old_path: str
    new_path: str
    timestamp: int


@dataclass(slots=True)
class TaskHit:
    """A task found similar to a query, with its fused score and the signals behind it."""

    task: Task
    score: float
    rank: int
    bm25_rank: int | None = None
    dense_rank: int | None = None
    similarity: float | None = None  # cosine of query and task embeddings


@dataclass(slots=True)
class ChangedFunction:
    """A function of a ranked file that similar past tasks changed."""

    weight: float = 0.0  # the tasks' weight it was given
    lines: list[str] = field(default_factory=list)  # its definition lines they showed, best-supported first
    tasks: list[TaskHit] = field(default_factory=list)  # the best of those tasks


@dataclass(slots=True)
class FileScore:
    """A file ranked by the similar tasks that touched it."""

    path: str
    score: float
    tasks: list[TaskHit] = field(default_factory=list)  # supporting tasks, best first
    exists: bool | None = None  # None when the caller did not say which files exist
    original_path: str | None = None  # the path the tasks used, when it was remapped
    functions: dict[str, ChangedFunction] = field(default_factory=dict)  # by name: those the tasks changed

    def changed_by(self, name: str, limit: int = 3) -> str:
        """The titles of the best tasks that changed the file's function ``name``."""
        changed = self.functions.get(name)
        return "; ".join(f"{hit.task.title} ({hit.task.date.date().isoformat()})"
                         for hit in (changed.tasks if changed else [])[:limit])  # fmt: skip

    def likely_functions(self, limit: int = 5) -> list[str]:
        """The names of the file's functions the supporting tasks changed most, best first."""
        ranked = sorted(self.functions.items(), key=lambda item: (-item[1].weight, item[0]))
        return [name for name, _ in ranked[:limit]]

    def why(self, limit: int = 3) -> str:
        """A short explanation: the titles of the tasks that support this file."""
        titles = [
            f"{hit.task.title} ({hit.task.date.date().isoformat()})" for hit in self.tasks[:limit]
        ]
        more = len(self.tasks) - limit
        text = "; ".join(titles)
        if more > 0:
            text += f"; and {more} more task{'s' if more > 1 else ''}"
        if self.original_path:
            text += f" [recorded as {self.original_path}]"
        if self.exists is False:
            text += " [no longer in the repository]"
        return text


@dataclass(slots=True)
class ImportStats:
    """What one import did."""

    source: str
    read: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0  # lines or commits that could not be used
    errors: list[str] = field(default_factory=list)  # the first few problems, "file:line: why"
    embedded: int = 0
    seconds: float = 0.0

    @property
    def changed(self) -> int:
        return self.added + self.updated


@dataclass(slots=True)
class TaskStats:
    """What a repository's task history holds."""

    db_path: str
    tasks: int = 0
    files: int = 0
    by_source: dict[str, int] = field(default_factory=dict)
    first: datetime | None = None
    last: datetime | None = None
    embedder: str | None = None
    last_git_commit: str | None = None
    with_functions: int = 0  # commits whose changed functions are recorded


def parse_date(value: str) -> datetime:
    """An ISO-8601 date; naive values are taken as UTC so every date compares."""
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
