"""Realistic hits for the pipeline benchmarks, built from real source files.

Chunks of the Python files installed in this venv (pytest, click, rapidfuzz, …) are
spread over ten "sources" the way real servers overlap: the same chunk from two
servers (exact), re-indented or re-wrapped copies (reformatted), windows of one file
that overlap by a few lines, lightly edited copies, and distinct chunks. Seeded, so
every run builds the same hits.
"""

from __future__ import annotations

import random
import site
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tributary.engine.model import Hit, make_hit_id

SOURCES = ["files", "tasks", "serena", "context7", "docs-web", "memory", "grep", "github", "notes", "search"]
PACKAGES = ["_pytest", "click", "rapidfuzz", "pluggy", "yaml", "jinja2", "markdown_it", "anyio", "httpx2", "rich"]


@dataclass(slots=True)
class Chunk:
    path: str
    start: int  # 1-based
    lines: list[str]

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def site_packages() -> Path:
    for entry in site.getsitepackages():
        if (Path(entry) / "_pytest").is_dir():
            return Path(entry)
    raise RuntimeError("site-packages with _pytest not found")


def source_files(limit: int = 400) -> list[tuple[str, list[str]]]:
    root = site_packages()
    out: list[tuple[str, list[str]]] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            lines = path.read_text("utf-8", errors="replace").split("\n")
            if len(lines) >= 60:
                out.append((str(path.relative_to(root)), lines))
    return out[:limit]


def reformat(text: str, rng: random.Random) -> str:
    """A copy a different server might return: re-indented, trailing spaces, CRLF-free."""
    lines = text.split("\n")
    choice = rng.randrange(3)
    if choice == 0:
        return "\n".join(line.replace("    ", "  ") for line in lines)
    if choice == 1:
        return "\n".join(line.rstrip() + ("  " if i % 3 == 0 else "") for i, line in enumerate(lines))
    return "\n".join(line for line in lines if line.strip())


def edit(text: str, rng: random.Random) -> str:
    """A lightly edited copy: a few identifiers renamed, a comment line added."""
    lines = text.split("\n")
    for _ in range(2):
        i = rng.randrange(len(lines))
        lines[i] = lines[i].replace("self", "this").replace("value", "val")
    lines.insert(rng.randrange(len(lines) + 1), "# note: copied from upstream")
    return "\n".join(lines)


def make_hits(total: int, seed: int = 7, window: int = 40) -> dict[str, list[Hit]]:
    """About ``total`` hits from ten sources with a realistic duplicate structure."""
    rng = random.Random(seed)
    files = source_files()
    per_source = max(1, total // len(SOURCES))
    by_source: dict[str, list[Hit]] = {s: [] for s in SOURCES}
    now = datetime(2026, 11, 1, tzinfo=UTC)
    pool: list[Chunk] = []
    while len(pool) < total:
        path, lines = rng.choice(files)
        start = rng.randrange(0, max(1, len(lines) - window))
        pool.append(Chunk(path, start + 1, lines[start : start + window]))

    def add(source: str, chunk: Chunk, content: str, *, shifted: bool = False) -> None:
        hits = by_source[source]
        rank = len(hits) + 1
        hits.append(
            Hit(
                id=make_hit_id(source, "search", chunk.path, chunk.start, rank),
                source=source,
                tool="search",
                title=chunk.path.rsplit("/", 1)[-1],
                content=content,
                path=chunk.path,
                start_line=chunk.start,
                end_line=chunk.end,
                uri=f"https://github.com/example/{chunk.path}" if source in ("github", "search") else None,
                timestamp=now - timedelta(days=rng.randrange(1, 700)) if source in ("tasks", "github") else None,
                source_score=round(1.0 - rank / (per_source * 1.5), 4) if source in ("files", "serena", "grep") else None,
                source_rank=rank,
                metadata={"shifted": shifted},
            )
        )

    index = 0
    while sum(len(v) for v in by_source.values()) < total:
        chunk = pool[index % len(pool)]
        index += 1
        home = rng.choice(SOURCES)
        add(home, chunk, chunk.text)
        roll = rng.random()
        others = [s for s in SOURCES if s != home]
        if roll < 0.25:  # the same chunk from another server
            add(rng.choice(others), chunk, chunk.text)
        elif roll < 0.40:  # reformatted by another server
            add(rng.choice(others), chunk, reformat(chunk.text, rng))
        elif roll < 0.50:  # an overlapping window of the same file
            path, lines = next((p, ls) for p, ls in files if p == chunk.path)
            start = min(len(lines) - window, chunk.start - 1 + window // 4)
            add(rng.choice(others), Chunk(path, start + 1, lines[start : start + window]),
                "\n".join(lines[start : start + window]), shifted=True)
        elif roll < 0.55:  # lightly edited copy
            add(rng.choice(others), chunk, edit(chunk.text, rng))
    return by_source
