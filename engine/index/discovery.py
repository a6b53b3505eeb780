"""Find the files of a repository worth indexing.

Honours every ``.gitignore`` in the tree (nested ones apply below their folder, the
deepest match wins, as in git), ``.git/info/exclude``, and the repo's include/exclude
globs; skips binaries (a NUL byte in the first 8 KiB), files over the size limit,
and generated files (lock files, minified bundles, vendored and build folders).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec

from engine.index.languages import detect_language

DEFAULT_MAX_BYTES = 1_000_000
SNIFF_BYTES = 8192

# Folders that hold other people's code or build output, never the repo's own.
SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "bower_components", "vendor", "third_party",
        "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
        ".ruff_cache", ".eggs", "site-packages", "dist", "build", "target", ".next",
        ".gradle", ".idea", ".vscode", ".cache", "coverage", "htmlcov",
    }
)  # fmt: skip
LOCK_FILES = frozenset(
    {
        "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "pipfile.lock",
        "cargo.lock", "composer.lock", "gemfile.lock", "go.sum", "uv.lock", "pdm.lock",
        "npm-shrinkwrap.json", "bun.lockb",
    }
)  # fmt: skip
MINIFIED_MARKERS = (".min.js", ".min.css", ".bundle.js", "-min.js")
MAX_AVERAGE_LINE = 300  # longer average lines mean minified or generated text


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # repo-relative, posix separators
    abspath: Path
    size: int
    mtime_ns: int
    language: str


def _read_ignore_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


class IgnoreRules:
    """Nested .gitignore semantics: each spec applies to paths below its folder."""

    def __init__(self) -> None:
        self._specs: dict[str, pathspec.GitIgnoreSpec] = {}

    def add(self, folder: str, lines: Sequence[str]) -> None:
        if any(line.strip() and not line.lstrip().startswith("#") for line in lines):
            self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        verdict: bool | None = None
        target = rel + "/" if is_dir else rel
        for folder, spec in self._specs.items():  # insertion order is root-first
            if folder and not target.startswith(folder + "/"):
                continue
            local = target[len(folder) + 1 :] if folder else target
            include = spec.check_file(local).include
            if include is not None:
                verdict = include
        return bool(verdict)


def _globs(patterns: Sequence[str]) -> pathspec.GitIgnoreSpec | None:
    return pathspec.GitIgnoreSpec.from_lines(patterns) if patterns else None


def is_binary(head: bytes) -> bool:
    return b"\x00" in head


def looks_generated(name: str, head: bytes) -> bool:
    lower = name.lower()
    if lower in LOCK_FILES or lower.endswith(MINIFIED_MARKERS):
        return True
    lines = head.count(b"\n") + 1
    return len(head) >= 2048 and len(head) / lines > MAX_AVERAGE_LINE


def discover(
    root: Path,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Iterator[SourceFile]:
    """Yield the indexable files under ``root`` in a stable (sorted) order."""
    root = root.resolve()
    rules = IgnoreRules()
    rules.add("", _read_ignore_lines(root / ".git" / "info" / "exclude"))
    include_spec = _globs(include)
    exclude_spec = _globs(exclude)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel_dir = "" if here == root else here.relative_to(root).as_posix()
        if ".gitignore" in filenames:
            rules.add(rel_dir, _read_ignore_lines(here / ".gitignore"))
        kept_dirs = []
        for name in sorted(dirnames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name in SKIPPED_DIRS or (here / name).is_symlink():
                continue
            if rules.ignored(rel, True) or (exclude_spec and exclude_spec.match_file(rel + "/")):
                continue
            kept_dirs.append(name)
        dirnames[:] = kept_dirs
        for name in sorted(filenames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            found = _check_file(here / name, rel, rules, include_spec, exclude_spec, max_bytes)
            if found is not None:
                yield found


def _check_file(
    path: Path,
    rel: str,
    rules: IgnoreRules,
    include_spec: pathspec.GitIgnoreSpec | None,
    exclude_spec: pathspec.GitIgnoreSpec | None,
    max_bytes: int,
) -> SourceFile | None:
    if path.is_symlink() or rules.ignored(rel, False):
        return None
    if exclude_spec and exclude_spec.match_file(rel):
        return None
    if include_spec and not include_spec.match_file(rel):
        return None
    language = detect_language(rel)
    if language is None:
        return None
    try:
        stat = path.stat()
        if stat.st_size > max_bytes or stat.st_size == 0:
            return None
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return None
    if is_binary(head) or looks_generated(path.name, head):
        return None
    return SourceFile(rel, path, stat.st_size, stat.st_mtime_ns, language)


def discover_paths(
    root: Path,
    rel_paths: Sequence[str],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Iterator[SourceFile]:
    """Like :func:`discover` for just ``rel_paths`` (a watcher's batch), without a walk.

    Only the .gitignore files on each path's own folder chain are read.
    """
    root = root.resolve()
    include_spec = _globs(include)
    exclude_spec = _globs(exclude)
    for rel in sorted(set(rel_paths)):
        parts = rel.split("/")
        if any(part in SKIPPED_DIRS for part in parts[:-1]):
            continue
        rules = IgnoreRules()
        rules.add("", _read_ignore_lines(root / ".git" / "info" / "exclude"))
        hidden = False
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            rules.add(folder, _read_ignore_lines(root / folder / ".gitignore"))
            if depth and rules.ignored(folder, True):
                hidden = True
                break
        if hidden:
            continue
        path = root / rel
        if path.parent.resolve() != root.joinpath(*parts[:-1]):
            continue  # reached through a symlinked folder
        if path.is_file():
            found = _check_file(path, rel, rules, include_spec, exclude_spec, max_bytes)
            if found is not None:
                yield found
