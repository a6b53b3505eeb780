"""Evaluation datasets: the JSONL format of the shared benchmarks, read and written.

A dataset is a folder::

    corpus.json    what to index — one of
                   {"pypi": "pytest==8.0.0", "sdist_root": "pytest-8.0.0", ...}  a PyPI sdist
                   {"git": "/path/to/repo", "snapshot_commit": "<sha>", ...}     a repo at a commit
                   {"path": "corpus", ...}                       a folder (relative to the dataset)
    tasks.jsonl    task history: {"id", "date", "title", "body", "files"} a line (may be empty)
    queries.jsonl  {"id", "date", "query", "relevant"} a line; ``relevant`` is a list of
                   paths or a mapping path → grade; optional ``spans`` (function ranges)
                   and ``hints`` (``tributary.engine.model.Hints`` fields)

Paths are relative to the corpus root. ``corpus_root`` materialises the corpus in a
cache folder once (a ``pip download`` of the sdist, or ``git archive`` of the commit)
and reuses it afterwards.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from tributary.engine.errors import TributaryError
from tributary.engine.paths import data_dir


class DatasetError(TributaryError, RuntimeError):
    """A dataset folder is missing a file, has a bad line, or its corpus cannot be had."""


def parse_date(text: str) -> datetime:
    """ISO 8601 (a trailing ``Z`` allowed); a naive date is taken as UTC."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class EvalTask:
    id: str
    date: datetime
    title: str
    body: str = ""
    files: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "date": self.date.isoformat(), "title": self.title,
                "body": self.body, "files": list(self.files)}


@dataclass(frozen=True, slots=True)
class Span:
    """A function (or other unit) that a query is about, inside a relevant file."""

    path: str
    start_line: int
    end_line: int
    name: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line,
                "name": self.name}


@dataclass(frozen=True, slots=True)
class EvalQuery:
    id: str
    query: str
    relevant: Mapping[str, float]  # path → grade (1.0 for a plain list)
    date: datetime | None = None
    spans: tuple[Span, ...] = ()
    hints: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        graded = any(g != 1.0 for g in self.relevant.values())
        out: dict[str, Any] = {
            "id": self.id,
            "date": self.date.isoformat() if self.date else None,
            "query": self.query,
            "relevant": dict(self.relevant) if graded else list(self.relevant),
        }
        if self.spans:
            out["spans"] = [s.to_json() for s in self.spans]
        if self.hints:
            out["hints"] = dict(self.hints)
        return out


@dataclass(slots=True)
class Dataset:
    """A loaded dataset; tasks are read lazily (they can be many)."""

    name: str
    folder: Path
    corpus: dict[str, Any]
    queries: list[EvalQuery]

    @property
    def tasks_path(self) -> Path:
        return self.folder / "tasks.jsonl"

    def tasks(self) -> Iterator[EvalTask]:
        if self.tasks_path.is_file():
            yield from read_tasks(self.tasks_path)

    def candidate_suffixes(self) -> frozenset[str] | None:
        """The file kinds a query's relevant set is drawn from; ``None``: every file.

        Rankings keep only these before scoring, as the relevance was defined: the
        shared benchmarks count only the ``.py`` files a commit changed, so a ranked
        ``.rst`` file the same commit also changed could only ever score as a miss.
        ``corpus.json``'s ``extensions`` (what ``eval build`` writes) says it outright;
        otherwise it is the suffixes the relevant files have, when all of them have one.
        """
        declared = self.corpus.get("extensions")
        if isinstance(declared, list) and declared:
            return frozenset(str(e).lower() for e in declared)
        suffixes = {PurePosixPath(path).suffix.lower()
                    for query in self.queries for path in query.relevant}
        if not suffixes or "" in suffixes:
            return None
        return frozenset(suffixes)

    def fingerprint(self) -> str:
        """Changes when the corpus spec or the task history changes (the index key)."""
        digest = hashlib.blake2b(digest_size=8)
        digest.update(json.dumps(self.corpus, sort_keys=True).encode())
        if self.tasks_path.is_file():
            stat = self.tasks_path.stat()
            digest.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
        return digest.hexdigest()


# --------------------------------------------------------------------------- reading


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{number}: not JSON: {exc.msg}") from exc
            if not isinstance(value, dict):
                raise DatasetError(f"{path}:{number}: expected an object")
            yield number, value


def read_tasks(path: Path) -> Iterator[EvalTask]:
    for number, row in _jsonl(path):
        try:
            yield EvalTask(
                id=str(row["id"]),
                date=parse_date(str(row["date"])),
                title=str(row.get("title") or ""),
                body=str(row.get("body") or ""),
                files=tuple(str(f) for f in row.get("files") or ()),
            )
        except (KeyError, ValueError) as exc:
            raise DatasetError(f"{path}:{number}: bad task: {exc}") from exc


def _relevance(value: Any) -> dict[str, float]:
    if isinstance(value, Mapping):
        return {str(p): float(g) for p, g in value.items()}
    if isinstance(value, list):
        return {str(p): 1.0 for p in value}
    raise ValueError("relevant must be a list or an object")


def read_queries(path: Path) -> list[EvalQuery]:
    queries: list[EvalQuery] = []
    for number, row in _jsonl(path):
        try:
            date = row.get("date")
            queries.append(EvalQuery(
                id=str(row["id"]),
                query=str(row["query"]),
                relevant=_relevance(row["relevant"]),
                date=parse_date(str(date)) if date else None,
                spans=tuple(
                    Span(str(s["path"]), int(s["start_line"]), int(s["end_line"]), str(s.get("name", "")))
                    for s in row.get("spans") or ()
                ),
                hints=dict(row.get("hints") or {}),
            ))
        except (KeyError, ValueError, TypeError) as exc:
            raise DatasetError(f"{path}:{number}: bad query: {exc}") from exc
    return queries


def load_dataset(folder: Path | str) -> Dataset:
    root = Path(folder).expanduser().resolve()
    corpus_file = root / "corpus.json"
    queries_file = root / "queries.jsonl"
    for needed in (corpus_file, queries_file):
        if not needed.is_file():
            raise DatasetError(f"{root}: no {needed.name} (not a dataset folder)")
    try:
        corpus = json.loads(corpus_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{corpus_file}: not JSON: {exc.msg}") from exc
    if not isinstance(corpus, dict) or not ({"pypi", "git", "path"} & corpus.keys()):
        raise DatasetError(f"{corpus_file}: needs one of 'pypi', 'git' or 'path'")
    return Dataset(name=root.name, folder=root, corpus=corpus, queries=read_queries(queries_file))


# --------------------------------------------------------------------------- writing


def write_dataset(
    out: Path,
    corpus: Mapping[str, Any],
    tasks: Iterable[EvalTask],
    queries: Iterable[EvalQuery],
) -> Path:
    """Write the three files (tasks newest first, as ``git log`` lists them)."""
    out.mkdir(parents=True, exist_ok=True)
    task_list = sorted(tasks, key=lambda t: t.date, reverse=True)
    query_list = list(queries)
    spec = {**corpus, "tasks": len(task_list), "queries": len(query_list)}
    (out / "corpus.json").write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
    with (out / "tasks.jsonl").open("w", encoding="utf-8") as handle:
        for task in task_list:
            handle.write(json.dumps(task.to_json(), ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for query in query_list:
            handle.write(json.dumps(query.to_json(), ensure_ascii=False) + "\n")
    return out


# --------------------------------------------------------------------------- time


def visible_tasks(tasks: Iterable[EvalTask], before: datetime) -> list[EvalTask]:
    """The tasks a query dated ``before`` may see: strictly older ones."""
    return [t for t in tasks if t.date < before]


def earliest_query_date(queries: Iterable[EvalQuery]) -> datetime | None:
    dates = [q.date for q in queries if q.date is not None]
    return min(dates) if dates else None


def latest_query_date(queries: Iterable[EvalQuery]) -> datetime | None:
    dates = [q.date for q in queries if q.date is not None]
    return max(dates) if dates else None


# --------------------------------------------------------------------------- corpus


def default_cache_dir() -> Path:
    return data_dir() / "eval" / "corpora"


def corpus_root(dataset: Dataset, cache_dir: Path | None = None) -> Path:
    """The folder to index, materialised in ``cache_dir`` on first use and reused after."""
    cache = (cache_dir or default_cache_dir()).expanduser()
    spec = dataset.corpus
    if "path" in spec:
        root = Path(str(spec["path"])).expanduser()
        root = root if root.is_absolute() else dataset.folder / root
        if not root.is_dir():
            raise DatasetError(f"{dataset.folder}/corpus.json: corpus folder {root} does not exist")
        return root.resolve()
    if "pypi" in spec:
        return fetch_sdist(str(spec["pypi"]), spec.get("sdist_root"), cache)
    return export_git_commit(Path(str(spec["git"])), str(spec["snapshot_commit"]), cache)


def _sdist_archive(folder: Path) -> Path | None:
    for pattern in ("*.tar.gz", "*.tgz", "*.zip", "*.tar.bz2"):
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
    return None


def fetch_sdist(requirement: str, sdist_root: str | None, cache: Path) -> Path:
    """``pip download --no-deps --no-binary :all: REQ`` into the cache, unpacked; reused."""
    key = requirement.replace("==", "-").replace("/", "_")
    if sdist_root and (cache / sdist_root).is_dir():
        return (cache / sdist_root).resolve()
    downloads = cache / "downloads" / key
    archive = _sdist_archive(downloads) if downloads.is_dir() else None
    if archive is None:
        downloads.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             "--disable-pip-version-check", "-q", "-d", str(downloads), requirement],
            capture_output=True, text=True, check=False,
        )
        archive = _sdist_archive(downloads)
        if done.returncode != 0 or archive is None:
            raise DatasetError(f"cannot download {requirement}: {done.stderr.strip()[-500:]}")
    top = _unpack(archive, cache)
    root = cache / (sdist_root or top)
    if not root.is_dir():
        raise DatasetError(f"{archive.name} has no folder {sdist_root}")
    return root.resolve()


def _unpack(archive: Path, into: Path) -> str:
    """Extract safely (no absolute paths or ``..``); returns the archive's top folder."""
    into.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            names = zf.namelist()
            for name in names:
                if name.startswith("/") or ".." in Path(name).parts:
                    raise DatasetError(f"{archive.name}: unsafe member {name}")
            zf.extractall(into)
    else:
        with tarfile.open(archive) as tf:
            names = tf.getnames()
            tf.extractall(into, filter="data")
    tops = {Path(n).parts[0] for n in names if n and Path(n).parts}
    return sorted(tops)[0] if tops else ""


def export_git_commit(repo: Path, commit: str, cache: Path) -> Path:
    """The repository's tree at ``commit`` as a plain folder (``git archive``), cached.

    The repository itself is left untouched (no worktree entry outlives the call).
    """
    target = cache / f"git-{repo.name}-{commit[:12]}"
    marker = cache / f"git-{repo.name}-{commit[:12]}.complete"  # beside it: never indexed
    if target.is_dir() and marker.is_file():
        return target.resolve()
    if target.exists():
        shutil.rmtree(target)
    done = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit],
        capture_output=True, check=False,
    )
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise DatasetError(f"git archive {commit} failed in {repo}: {message}")
    target.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tf:
        tf.extractall(target, filter="data")
    marker.write_text(commit + "\n", encoding="utf-8")
    return target.resolve()
