"""Ranking over task history: fusing BM25 and dense task lists, and files from tasks.

Pure functions over plain data, so every variant can be measured offline
(bench/tasks_pytest.py). A file's score is the sum over the top similar tasks that
touched it of

    1 / (k + rank(task)) / files(task) ** alpha * exp(-recency * age_in_years)

divided by ``touched(file) ** popularity``. ``rank`` is the task's place in the fused
BM25 + dense list; ``files`` the number of files the task touched (a commit touching
300 files says little about any one of them); ``age`` how long before the query the
task happened; ``touched`` how many tasks ever touched the file up to the query (an
IDF-like prior: files that every change touches are weak evidence for any one).
Paths are first followed through recorded renames and, when the caller knows which
files exist now, mapped by unique path suffix (``_pytest/main.py`` →
``src/_pytest/main.py`` after a move to a ``src`` layout); files that still do not
exist are dropped or flagged. Tools' state and build output a commit recorded
(``__pycache__/*.pyc`` committed by mistake) never count: the index never reads them.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from tributary.engine.repo_files import never_indexed
from tributary.engine.tasks.model import ChangedFunction, FileScore, Rename, TaskHit

SECONDS_PER_YEAR = 365.25 * 86400

# Extensions counted as code by the "prefer code files" option.
CODE_EXTENSIONS = frozenset(
    [
        ".py",
        ".pyi",
        ".pyx",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".cxx",
        ".hpp",
        ".hh",
        ".cs",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".go",
        ".rs",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".rb",
        ".php",
        ".swift",
        ".m",
        ".mm",
        ".lua",
        ".pl",
        ".pm",
        ".r",
        ".jl",
        ".ex",
        ".exs",
        ".erl",
        ".hs",
        ".ml",
        ".clj",
        ".dart",
        ".sh",
        ".bash",
        ".zsh",
        ".ps1",
        ".sql",
        ".vue",
        ".svelte",
        ".zig",
        ".nim",
        ".f90",
        ".cu",
    ]
)


@dataclass(frozen=True, slots=True)
class FileRankParams:
    """The knobs of :func:`rank_files` (defaults chosen on bench/tasks_pytest.py)."""

    top_tasks: int = 300  # how many similar tasks vote
    rank_k: float = 20.0  # task weight 1/(k + rank) ...
    use_similarity: bool = False  # ... or the cosine similarity instead
    alpha: float = 0.3  # normalisation by the task's size: files(task) ** alpha
    recency: float = 0.2  # per year of age before the query
    popularity: float = 0.3  # normalisation by how many tasks touched the file
    non_code_weight: float = 1.0  # < 1 prefers code files ("prefer code files"); 0 drops others
    missing: str = "drop"  # files absent from the snapshot: "drop" or "flag"
    max_supporting: int = 5


DEFAULT_FILE_RANK = FileRankParams()


@lru_cache(maxsize=65536)
def is_code_file(path: str) -> bool:
    # (cached: ranking asks it for every file of every similar task, ~500 a query, and
    # PurePosixPath costs more than the rest of ranking a file)
    return PurePosixPath(path).suffix.lower() in CODE_EXTENSIONS


class PathResolver:
    """Maps a path recorded by an old task to the path of that file today."""

    def __init__(self, renames: Iterable[Rename] = (), existing: Collection[str] | None = None):
        # Later renames win; a chain a→b→c resolves to c.
        self._moves: dict[str, str] = {}
        for rename in sorted(renames, key=lambda r: r.timestamp):
            if rename.old_path != rename.new_path:
                self._moves[rename.old_path] = rename.new_path
        self.existing = set(existing) if existing is not None else None
        self._by_suffix: dict[str, list[str]] = defaultdict(list)
        if self.existing:
            for path in self.existing:
                parts = path.split("/")
                for start in range(1, len(parts)):  # proper suffixes only
                    self._by_suffix["/".join(parts[start:])].append(path)
        self._cache: dict[str, tuple[str, bool | None]] = {}

    def resolve(self, path: str) -> tuple[str, bool | None]:
        """``(path today, exists)``; ``exists`` is None when nobody said what exists."""
        hit = self._cache.get(path)
        if hit is not None:
            return hit
        current, hops = path, 0
        while current in self._moves and hops < 20:
            current, hops = self._moves[current], hops + 1
        if self.existing is None:
            result: tuple[str, bool | None] = (current, None)
        elif current in self.existing:
            result = (current, True)
        else:
            result = (self._by_unique_suffix(current) or current, None)
            result = (result[0], result[0] in self.existing)
        self._cache[path] = result
        return result

    def _by_unique_suffix(self, path: str) -> str | None:
        parts = path.split("/")
        for start in range(len(parts)):
            candidates = self._by_suffix.get("/".join(parts[start:]))
            if candidates:
                return candidates[0] if len(candidates) == 1 else None
            if start == len(parts) - 1:
                break
        return None


def rank_files(
    hits: Sequence[TaskHit],
    *,
    query_time: float,
    params: FileRankParams = DEFAULT_FILE_RANK,
    resolver: PathResolver | None = None,
    touched: Callable[[str], int] | None = None,
) -> list[FileScore]:
    """Files ranked by the similar tasks that touched them (see the module docstring)."""
    resolver = resolver or PathResolver()
    scores: dict[str, FileScore] = {}
    for hit in hits[: params.top_tasks]:
        weight = (
            max(hit.similarity or 0.0, 0.0)
            if params.use_similarity
            else 1.0 / (params.rank_k + hit.rank)
        )
        if weight <= 0.0:
            continue
        age_years = max(0.0, (query_time - hit.task.date.timestamp()) / SECONDS_PER_YEAR)
        weight *= math.exp(-params.recency * age_years)
        files = _files_of(hit, resolver, params)
        if not files:
            continue
        share = weight / len(files) ** params.alpha
        for path, original, exists in files:
            factor = 1.0 if is_code_file(path) else params.non_code_weight
            if factor <= 0.0:
                continue
            entry = scores.get(path)
            if entry is None:
                entry = scores[path] = FileScore(
                    path=path,
                    score=0.0,
                    exists=exists,
                    original_path=original if original != path else None,
                )
            entry.score += share * factor
            if len(entry.tasks) < params.max_supporting:
                entry.tasks.append(hit)
        _add_functions(scores, hit, resolver, weight)
    if touched is not None and params.popularity:
        for entry in scores.values():
            entry.score /= max(touched(entry.path), 1) ** params.popularity
    return sorted(scores.values(), key=lambda f: (-f.score, f.path))


MAX_LINES_KEPT = 3  # a function's definition lines (its signature as it changed) and tasks kept per file


def _add_functions(scores: dict[str, FileScore], hit: TaskHit, resolver: PathResolver, weight: float) -> None:
    """Give each function the task changed in a ranked file its share of ``weight``: the
    whole of it when the task changed that one function of the file, a part when several."""
    named: dict[str, list[tuple[str, str]]] = {}
    for recorded, name, line in hit.task.functions:
        named.setdefault(recorded, []).append((name, line))
    for recorded, names in named.items():
        entry = scores.get(resolver.resolve(recorded)[0])
        if entry is None:
            continue
        for name, line in names:
            changed = entry.functions.setdefault(name, ChangedFunction())
            changed.weight += weight / len(names)
            if line and line not in changed.lines and len(changed.lines) < MAX_LINES_KEPT:
                changed.lines.append(line)
            if len(changed.tasks) < MAX_LINES_KEPT:
                changed.tasks.append(hit)


class TouchCounts:
    """How many tasks touched each (resolved) path up to a moment: the popularity prior."""

    def __init__(self, rows: Iterable[tuple[str, int]], resolver: PathResolver) -> None:
        stamps: dict[str, list[int]] = defaultdict(list)
        for recorded, timestamp in rows:
            stamps[resolver.resolve(recorded)[0]].append(timestamp)
        self._stamps = {path: sorted(values) for path, values in stamps.items()}

    def counter(self, as_of: float | None = None) -> Callable[[str], int]:
        def count(path: str) -> int:
            values = self._stamps.get(path)
            if not values:
                return 0
            return len(values) if as_of is None else bisect.bisect_right(values, as_of)

        return count


def _files_of(
    hit: TaskHit, resolver: PathResolver, params: FileRankParams
) -> list[tuple[str, str, bool | None]]:
    """The task's files as (path today, recorded path, exists), missing ones per policy."""
    out: dict[str, tuple[str, str, bool | None]] = {}
    for recorded in hit.task.files:
        if never_indexed(recorded):
            continue
        path, exists = resolver.resolve(recorded)
        if exists is False and params.missing == "drop":
            continue
        out.setdefault(path, (path, recorded, exists))
    return list(out.values())
