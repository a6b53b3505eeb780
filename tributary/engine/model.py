"""The engine's data model: plain data passed between pipeline stages and to the UI.

Every stage of the pipeline (normalise, dedup, fuse, budget, assemble) is a function
over these objects; the UI, the CLI and the MCP face only ever render them.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

# Why a search had no source to ask, when nothing is set up: no server, no index.
NOTHING_CONFIGURED = "no server is configured and no repository is indexed"


class EngineKind(StrEnum):
    """What runs an engine that answers the command line over the local socket; only a
    background engine may be stopped by a client (``tributary.engine.attach``)."""

    APP = "app"
    SERVE = "serve"
    BACKGROUND = "background"


class SourceStatus(StrEnum):
    """What happened to one source during one search."""

    PENDING = "pending"
    OK = "ok"
    TIMEOUT = "timeout"
    ERROR = "error"
    SKIPPED = "skipped"  # not asked: routing, disabled, or not selected
    CACHED = "cached"
    CIRCUIT_OPEN = "circuit_open"


# Sources that were not asked this time, so no answer of theirs was timed.
NOT_ASKED: frozenset[SourceStatus] = frozenset({SourceStatus.SKIPPED, SourceStatus.CIRCUIT_OPEN})
# Sources whose hits this answer holds: asked now, or answered from the cache.
ANSWERED: frozenset[SourceStatus] = frozenset({SourceStatus.OK, SourceStatus.CACHED})
# How the error of a source whose server keeps failing its start begins (waiting to
# start again, or starting again): it was not waited on, so the search took no time over it.
START_FAILED = "failed to start; "
STARTING_AGAIN = "starting again (restart #"
NOT_STARTING = (START_FAILED, STARTING_AGAIN)


class TaskType(StrEnum):
    """The kind of work the context is for; selects the budget's priorities by source role."""

    ANALYSIS = "analysis"
    PLANNING = "planning"
    IMPLEMENTATION = "implementation"
    REVIEW = "review"
    TESTING = "testing"
    DOCUMENTATION = "documentation"


class DedupReason(StrEnum):
    HASH = "hash"
    FUZZY = "fuzzy"
    SEMANTIC = "semantic"
    OVERLAP = "overlap"
    FILE = "file"  # a reference to a whole file, folded into that file's best chunk


class ContextFormat(StrEnum):
    XML = "xml"
    MARKDOWN = "markdown"
    PLAIN = "plain"


# The names a setting may take, written out only here: config validation, the CLI,
# the app's choices and the config reference all import them. The pipeline owns the
# behaviour (``pipeline.fusion.STRATEGIES``, ``pipeline.overflow``); these names sit in
# the model so that reading a config never imports the pipeline.
FUSION_STRATEGIES: tuple[str, ...] = ("rrf", "weighted", "composite", "cascade", "vote")
RRF_K_STRATEGIES: tuple[str, ...] = ("rrf", "vote")  # the strategies whose scores read ``rrf_k``
OVERFLOW_STRATEGIES: tuple[str, ...] = ("drop", "truncate", "compress", "summarise")
CONTEXT_FORMATS: tuple[str, ...] = tuple(f.value for f in ContextFormat)


@dataclass(slots=True)
class ScoreParts:
    """The named parts of a hit's fused score and how they combine.

    ``parts`` holds each part's *contribution* (already weighted), so the total is
    their sum unless ``combine`` says otherwise; ``raw`` may keep the unweighted
    signal values for display.
    """

    parts: dict[str, float] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)
    combine: str = "sum"
    total: float = 0.0

    def add(self, name: str, contribution: float, raw: float | None = None) -> None:
        self.parts[name] = self.parts.get(name, 0.0) + contribution
        if raw is not None:
            self.raw[name] = raw
        self.total = sum(self.parts.values())


@dataclass(slots=True)
class Hit:
    """One result item from one source, normalised."""

    id: str
    source: str
    tool: str
    title: str
    content: str
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    uri: str | None = None
    timestamp: datetime | None = None
    source_score: float | None = None
    source_rank: int = 0  # 1-based position in its source's answer
    priority: float | None = None  # MCP annotations.priority, 0..1
    tokens: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    score: float = 0.0
    parts: ScoreParts = field(default_factory=ScoreParts)
    confidence: float = 0.0  # how likely the hit is relevant at all, 0..1 (pipeline.confidence)

    @property
    def location(self) -> str:
        """``path:start-end`` (or the uri, or the title) for display and attribution."""
        if self.path:
            if self.start_line is not None:
                end = self.end_line if self.end_line is not None else self.start_line
                return f"{self.path}:{self.start_line}-{end}"
            return self.path
        return self.uri or self.title

    @property
    def has_own_name(self) -> bool:
        """Whether the title names the hit (a function, a page) rather than repeating its
        path (a window of module code, a file a file server found)."""
        return bool(self.title) and self.title not in (self.path, self.location)

    @property
    def headline(self) -> str:
        """What the hit is, in a line: its title, or, where the title only repeats its
        path (a window of module code, a file a file server found), the first line of
        its text that says something (code before comments and directives), so a list
        of hits does not show the path twice."""
        if self.has_own_name:
            return self.title
        tasks = self.metadata.get("tasks")
        if self.metadata.get("kind") == FILE_KIND and isinstance(tasks, list) and tasks:
            return _changed_by(len(tasks), self.metadata.get("functions"))
        lines = [line.strip() for line in self.content[:HEADLINE_SCAN].splitlines()]
        saying = [line for line in lines if sum(ch.isalnum() for ch in line) >= 3]
        code = [line for line in saying if not line.startswith(_NOT_CODE)]
        doc = _module_doc(saying[: saying.index(code[0])] if code else saying) or _package_doc(lines)
        titled = next((line for line in code if _TITLED_BLOCK.match(line)), None)
        statement = next((line for line in code if not line.startswith(_IMPORT + _CONTINUES)
                          and not _names_a_module(line)), None)
        return doc or titled or statement or (code[0] if code else saying[0] if saying else self.title)


HEADLINE_SCAN = 4000  # characters of a hit's text searched for its headline
_NOT_CODE = ("#", "//", "/*", "*", "--", "<!--", ";", '"""', "'''", "'use strict'", '"use strict"')
# What opens a module's own documentation (Rust's ``//!``, a Python docstring, Go's
# ``// Package x ...``), as against a licence header or a commented-out line.
_DOC_OPENERS = ("//!", "/*!", '"""', "'''", 'r"""', "// Package ")
# Lines that only bring names in: a module's code says more after them.
_IMPORT = ("use ", "pub use ", "import ", "from ", "#include", "require ", "require(", "using ", "package ",
           "mod ", "pub mod ", "extern crate ")


# Lines that go on with a statement begun above the window (``.expect(200, done);``).
_CONTINUES = (".", ")", "]", "}", "?", ":", "&&", "||", "=>", "+ ")
# A test block titled by its first argument (mocha, jest, vitest, jasmine, RSpec-style):
# ``it('should encode the url', function (done) {`` says more than ``request(app)``.
_TITLED_BLOCK = re.compile(r"(?:it|test|describe|context|specify|suite)(?:\.\w+)?(?:\(\s*|\s+)['\"`]")


def _names_a_module(line: str) -> bool:
    """A line that only names something inside a list: a quoted name, as in Go's
    ``import (`` block, or a name and a comma, as in the rest of a Python import's
    parenthesised names when a window of module code begins inside it."""
    bare = line.rstrip(",;")
    if len(bare) > 1 and bare[0] in "\"'`" and bare[-1] == bare[0]:
        return True
    return line.endswith(",") and _DOTTED_NAME.fullmatch(bare.strip()) is not None


_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]{0,200}(?:\.[A-Za-z_$][\w$]{0,200}){0,20}")


def _changed_by(count: int, functions: object) -> str:
    """A history's file hit in a line: how many past tasks changed it, and where."""
    said = f"changed by {count} past task{'s' if count != 1 else ''}"
    names = [name for name in functions if isinstance(name, str)][:2] if isinstance(functions, list) else []
    return f"{said} ({', '.join(names)})" if names else said


def _package_doc(lines: list[str]) -> str | None:
    """Go's package documentation: the ``//`` comment right above ``package x`` (a
    licence is kept apart by a blank line), its first line."""
    at = next((i for i, line in enumerate(lines) if line.startswith("package ")), 0)
    first = at
    while first > 0 and lines[first - 1].startswith("//"):
        first -= 1
    text = lines[first][2:].strip() if first < at else ""
    return text if sum(ch.isalnum() for ch in text) >= 3 else None


def _module_doc(comments: list[str]) -> str | None:
    """The first line of a module's documentation among the comment lines that open a
    chunk, without its markers (``Deserialization for untagged enums:``), or None."""
    for line in comments:
        opener = next((o for o in _DOC_OPENERS if line.startswith(o)), None)
        if opener is None:
            continue
        text = line[len(opener) :] if opener != "// Package " else line[3:]
        text = text.strip().strip("\"'").strip()
        if sum(ch.isalnum() for ch in text) >= 3:
            return text
    return None


TASK_KIND = "task"
FILE_KIND = "file"  # a file that past tasks changed, its text the tasks (not the file's)
FUNCTION_KIND = "function"  # a function's code a source read because past changes touched it
# A hit's metadata key: what its file's role keeps of its fused score (a test, a
# changelog, a lock file from a source that does not weigh roles itself).
ROLE_FACTOR = "role_factor"
# A hit's metadata key: its source matched only the file's name (a file-name search such
# as server-filesystem's ``search_files``), not what the file says.
NAME_ONLY = "name_only"
# What a name-only match counts for in fusion, against a match of the content: the
# share the built-in code search gives a file the question names.
NAME_ONLY_SHARE = 0.25
# Why the code index begins a task's answer with a file its score did not put first (a
# hit's ``led_by``): the file the task's traceback raised in, one defining the function
# its error says refused an argument, or one holding a line of code the task quotes.
LED_BY_TRACEBACK = "traceback"
LED_BY_ERROR = "error"
LED_BY_QUOTE = "quote"


def evidence_share(hit: Hit) -> float:
    """What ``hit``'s rank counts for in fusion: all of it, or ``NAME_ONLY_SHARE`` when
    its source matched only its file's name."""
    return NAME_ONLY_SHARE if hit.metadata.get(NAME_ONLY) is True else 1.0


def repository_of(hit: Hit) -> str | None:
    """The indexed repository a built-in server's hit comes from (its index name), or None."""
    repo = hit.metadata.get("repo")
    return repo if isinstance(repo, str) and repo else None


def several_repositories(hits: Iterable[Hit]) -> bool:
    """Whether ``hits`` come from more than one indexed repository: then a path alone
    (``tests/test_basic.py``) does not say whose, and what shows them names it."""
    return len({repo for hit in hits if (repo := repository_of(hit)) is not None}) > 1


def is_task(hit: Hit) -> bool:
    """A past task (a commit, an issue) returned as an answer of its own (the tasks
    server's items of ``kind`` "task"), not code and not a file."""
    return hit.metadata.get("kind") == TASK_KIND


def make_hit_id(source: str, tool: str, *keys: object) -> str:
    """A stable id: the same item from the same source gets the same id every time."""
    digest = hashlib.blake2b(digest_size=8)
    for part in (source, tool, *keys):
        digest.update(str(part).encode("utf-8", "surrogatepass"))
        digest.update(b"\x1f")
    return digest.hexdigest()


@dataclass(slots=True)
class GroupMember:
    hit: Hit
    reason: DedupReason
    similarity: float  # 1.0 for hash duplicates; ratio/cosine/overlap fraction otherwise


@dataclass(slots=True)
class DedupGroup:
    """The kept (highest-relevance) hit and the hits folded into it."""

    kept: Hit
    members: list[GroupMember] = field(default_factory=list)

    @property
    def sources(self) -> list[str]:
        """Distinct sources that agree on this item, the kept hit's first."""
        seen: dict[str, None] = {self.kept.source: None}
        for member in self.members:
            seen.setdefault(member.hit.source, None)
        return list(seen)

    @property
    def agreement(self) -> int:
        return len(self.sources)


@dataclass(slots=True)
class SourceReport:
    """Per source, per search: what happened."""

    name: str
    status: SourceStatus = SourceStatus.PENDING
    latency_ms: float | None = None
    hits: int = 0
    tokens: int = 0
    error: str | None = None
    tool: str | None = None
    detail: str | None = None  # e.g. why routing skipped it, "restarted", "output capped"
    weight: float = 1.0
    # What the server said it could not do this time (its own words, e.g. "embedding
    # model still loading: keyword search only for now"), and whether it called the
    # answer weaker than usual: such an answer is shown as such and never cached.
    warnings: list[str] = field(default_factory=list)
    degraded: bool = False
    # Of ``latency_ms``, the wait for the server to start (the first search after
    # launch): a start-up, not how fast the source answers, so latency figures leave it out.
    startup_ms: float | None = None


def vectors_ready(percent: int) -> str:
    """How a built-in server says an index's vectors are partly made (``24 % ready``):
    meaning-based search covers that share, keywords the rest. ``semantic_ready`` reads
    it back."""
    return f"{percent} % ready"


_READY = re.compile(r"\b(\d{1,3}) % ready\b")


def semantic_ready(warnings: Iterable[str]) -> int | None:
    """The least share of vectors that ``warnings`` say is ready, when every one of them
    is of that kind (an index still embedding); None when one says something else (the
    model is not there: keywords alone) or there are none."""
    shares = [int(found.group(1)) if (found := _READY.search(warning)) else None for warning in warnings]
    if not shares or None in shares:
        return None
    return min(share for share in shares if share is not None)


def hits_said(count: int) -> str:
    """A source's count of hits as a line says it: ``1 hit``, ``24 hits``."""
    return "1 hit" if count == 1 else f"{count} hits"


@dataclass(frozen=True, slots=True)
class ReputationRow:
    """One source's standing with the time of its latest feedback (the insights page's row)."""

    source: str
    reputation: float
    useful: int
    not_useful: int
    last_feedback: datetime | None = None


@dataclass(slots=True)
class Hints:
    """What a caller already knows: used to filter or boost hits."""

    related_files: list[str] = field(default_factory=list)
    related_issues: list[str] = field(default_factory=list)
    language: str | None = None
    framework: str | None = None

    def is_empty(self) -> bool:
        return not (self.related_files or self.related_issues or self.language or self.framework)


@dataclass(slots=True)
class SearchFilters:
    """Hard filters (not boosts): which sources are asked and which hits are kept.

    Written as query syntax (``lang:go path:src/ -path:tests/ source:files``, see
    ``tributary.engine.query.syntax``) or set directly; empty lists filter nothing."""

    sources: list[str] = field(default_factory=list)
    exclude_sources: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    exclude_languages: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # include globs: a hit's path matches one
    exclude_paths: list[str] = field(default_factory=list)
    # Repositories (index names such as ``owner/name``, or folders) the built-in servers
    # search: they limit the search itself, not only the hits kept.
    repos: list[str] = field(default_factory=list)
    exclude_repos: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.sources or self.exclude_sources or self.languages
                    or self.exclude_languages or self.paths or self.exclude_paths
                    or self.repos or self.exclude_repos)


@dataclass(slots=True)
class SearchRequest:
    query: str
    task_type: TaskType = TaskType.IMPLEMENTATION
    top_k: int = 30
    max_tokens: int = 8000
    reserved_tokens: int = 1000
    sources: list[str] | None = None  # None: let routing decide
    strategy: str | None = None  # None: the configured default
    strategy_params: dict[str, Any] = field(default_factory=dict)
    source_weights: dict[str, float] = field(default_factory=dict)
    dedup: bool = True
    format: ContextFormat = ContextFormat.MARKDOWN
    assemble: bool = True
    use_cache: bool = True
    hints: Hints = field(default_factory=Hints)
    filters: SearchFilters = field(default_factory=SearchFilters)
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    @property
    def effective_budget(self) -> int:
        return max(0, self.max_tokens - self.reserved_tokens)


@dataclass(slots=True)
class RouteDecision:
    """Which rule matched, who is asked, who is skipped and why."""

    matched_rules: list[str] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # server -> reason
    weights: dict[str, float] = field(default_factory=dict)
    strategy: str | None = None
    query_class: str | None = None
    fallback: bool = False


@dataclass(slots=True)
class ContextChunk:
    hit_id: str
    source: str
    location: str
    score: float
    content: str
    tokens: int
    treatment: str = "full"  # full | truncated | compressed | summarised


@dataclass(slots=True)
class AssembledContext:
    text: str
    chunks: list[ContextChunk]
    token_count: int
    format: ContextFormat
    budget: int
    dropped: int = 0

    @property
    def utilisation(self) -> float:
        return self.token_count / self.budget if self.budget else 0.0


@dataclass(slots=True)
class Metrics:
    total_ms: float = 0.0
    stage_ms: dict[str, float] = field(default_factory=dict)
    raw_hits: int = 0
    unique_hits: int = 0
    tokens_total: int = 0
    tokens_per_source: dict[str, int] = field(default_factory=dict)
    budget_utilisation: float = 0.0
    cache_hits: int = 0
    cache_lookups: int = 0

    @property
    def dedup_rate(self) -> float:
        return 1.0 - self.unique_hits / self.raw_hits if self.raw_hits else 0.0

    @property
    def cache_hit_rate(self) -> float:
        return self.cache_hits / self.cache_lookups if self.cache_lookups else 0.0


@dataclass(slots=True)
class SearchResponse:
    request: SearchRequest
    hits: list[Hit] = field(default_factory=list)
    groups: list[DedupGroup] = field(default_factory=list)
    sources: list[SourceReport] = field(default_factory=list)
    route: RouteDecision = field(default_factory=RouteDecision)
    context: AssembledContext | None = None
    metrics: Metrics = field(default_factory=Metrics)
    strategy: str = "rrf"
    error: str | None = None  # set only when every asked source failed
    confidence: float = 0.0  # the best hit's confidence (pipeline.confidence)
    confident: bool = False  # whether any hit clears the confidence bar
    # What was done to the request (a cut query) and what a source said it could not
    # do this time ("files: embedding model still loading: …").
    notes: list[str] = field(default_factory=list)

    @property
    def request_id(self) -> str:
        return self.request.request_id

    def group_of(self, hit_id: str) -> DedupGroup | None:
        for group in self.groups:
            if group.kept.id == hit_id:
                return group
        return None


@dataclass(slots=True)
class SearchUpdate:
    """One step of a streamed search: a source answered (``final`` False), or the end."""

    response: SearchResponse  # fused over the sources that have answered so far
    source: SourceReport | None = None
    final: bool = False
