"""Progress events of an indexing run, for the CLI's bar and the GUI's index manager."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class IndexProgress:
    # "scan" | "chunk" (keyword tier) | "keyword" (that tier is written: searchable)
    # | "embed" (vectors) | "done"
    phase: str
    files_done: int
    files_total: int  # files that need (re)indexing in this run
    chunks_done: int  # chunks written in this run
    chunks_embedded: int  # of those, how many needed the model (the rest came from cache)
    rate: float  # chunks written per second so far
    eta_s: float | None  # seconds left, estimated from the bytes still to do
    path: str | None = None  # the file just finished
    vectors_done: int = 0  # chunks of the index that have their vector ("embed" phase)
    vectors_total: int = 0  # chunks of the index

    @property
    def fraction(self) -> float:
        if self.phase == "embed":
            return self.vectors_done / self.vectors_total if self.vectors_total else 1.0
        return self.files_done / self.files_total if self.files_total else 1.0


ProgressCallback = Callable[[IndexProgress], None]


@dataclass(slots=True)
class IndexStats:
    root: Path
    index_path: Path
    files_seen: int = 0
    files_indexed: int = 0  # new or changed, re-chunked in this run
    files_unchanged: int = 0
    files_deleted: int = 0
    chunks_written: int = 0
    chunks_embedded: int = 0  # encoded by the model (cache misses)
    chunks_total: int = 0  # in the index after the run
    files_total: int = 0
    seconds: float = 0.0
    model_reset: bool = False  # the embedding model changed: everything was re-embedded
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. ignore-file lines skipped

    @property
    def rate(self) -> float:
        return self.chunks_written / self.seconds if self.seconds > 0 else 0.0
