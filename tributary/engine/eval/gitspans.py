"""The lines a commit changed, as line ranges of the snapshot a benchmark indexes.

A commit-localisation query (a commit after the snapshot) names the files it changed;
the content-level evaluation needs the *lines*. ``changed_spans`` reads them from git:
the commit's own diff gives the lines of its parent it replaced (or, for an insertion,
the two lines around it), and a diff from the snapshot to that parent carries each
line back to where it sits in the snapshot (lines inside a hunk changed since then go
to that hunk's start in the snapshot). Used by ``gitbuild`` when it builds a dataset,
and by ``bench/derive_spans.py`` for the shared benchmarks, whose repositories are not
part of the dataset.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tributary.engine.eval.datasets import Span

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_FILE = re.compile(r"^diff --git a/(.+?) b/(.+)$", re.MULTILINE)


class SpanError(RuntimeError):
    """git could not diff the commits."""


@dataclass(frozen=True, slots=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int


def parse_hunks(diff: str) -> dict[str, list[Hunk]]:
    """``git diff -U0`` output as hunks per (new-side) path."""
    out: dict[str, list[Hunk]] = {}
    files = list(_FILE.finditer(diff))
    for i, match in enumerate(files):
        end = files[i + 1].start() if i + 1 < len(files) else len(diff)
        hunks = out.setdefault(match.group(2), [])
        for h in _HUNK.finditer(diff, match.end(), end):
            hunks.append(Hunk(int(h.group(1)), int(h.group(2) or "1"), int(h.group(3)), int(h.group(4) or "1")))
    return out


def replaced_lines(hunks: Sequence[Hunk]) -> list[tuple[int, int]]:
    """The old-side lines each hunk replaced; an insertion, the lines either side of it."""
    ranges: list[tuple[int, int]] = []
    for h in hunks:
        if h.old_count > 0:
            ranges.append((h.old_start, h.old_start + h.old_count - 1))
        else:  # inserted after line old_start
            ranges.append((max(1, h.old_start), h.old_start + 1))
    return ranges


def to_old_side(line: int, hunks: Sequence[Hunk]) -> int:
    """Where new-side ``line`` was on the old side of ``hunks`` (sorted, ``-U0``)."""
    offset = 0
    for h in hunks:
        new_end = h.new_start + h.new_count - 1
        if h.new_count and h.new_start <= line <= new_end:
            return max(1, h.old_start)
        if (h.new_count and new_end < line) or (not h.new_count and h.new_start < line):
            offset += h.old_count - h.new_count
        else:
            break
    return max(1, line + offset)


def merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _diff(repo: Path, old: str, new: str, paths: Sequence[str]) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "diff", "-U0", "--no-color", "--no-ext-diff", old, new, "--", *paths],
        capture_output=True, text=True, errors="replace", check=False,
    )
    if done.returncode != 0:
        raise SpanError(f"git diff {old} {new}: {done.stderr.strip()[:300]}")
    return done.stdout


def changed_spans(repo: Path, snapshot: str, commit: str, paths: Sequence[str]) -> tuple[Span, ...]:
    """The snapshot's line ranges of ``paths`` that ``commit`` changed (merged per file)."""
    own = parse_hunks(_diff(repo, f"{commit}^", commit, paths))
    since = parse_hunks(_diff(repo, snapshot, f"{commit}^", paths))
    spans: list[Span] = []
    for path in paths:
        hunks = own.get(path)
        if not hunks:
            continue
        back = since.get(path, [])
        mapped = [(to_old_side(a, back), to_old_side(b, back)) for a, b in replaced_lines(hunks)]
        spans.extend(Span(path, a, max(a, b)) for a, b in merge(mapped))
    return tuple(spans)
