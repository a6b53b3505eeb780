"""Bug localisation on SWE-bench-style instances: a whole issue in, the files and
functions its fix changed out.

An instances file is JSONL, one object a line: ``instance_id``, ``repo`` (owner/name),
``base_commit``, ``gold_files``, ``problem_statement`` (the query, whole) and
``golden_patch``; ``splits`` (``lite``, ``verified``) is optional. For each repository
the instances run in the order of their base commits' dates, in one working copy
checked out at each ``base_commit`` in turn and indexed incrementally (code, and as
history the commits that commit's ``git log`` holds, so never the fix). The engine
answers each issue with the built-in sources, as ``tributary search`` would.

Scores: file Acc@k (every gold file in the top k distinct files) and the MRR of the
first gold file; function Acc@k (every function or class enclosing a hunk of the patch,
at ``base_commit``, overlapped by one of the top k hits); context recall (every gold
function inside the default ``get_context`` answer); and in the same run the
SWE-bench BM25 baseline (one document per non-test ``.py`` file, path and contents).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tributary.engine.errors import TributaryError

if TYPE_CHECKING:
    from tributary.engine.config.schema import Config
    from tributary.engine.index.chunking import Chunk
    from tributary.engine.model import SearchResponse

KS = (1, 3, 5, 10)
FUNCTION_KS = (5, 10)
UNIT_KINDS = frozenset({"function", "method", "class"})
HITS_KEPT = 20  # located hits kept per instance in the JSON, to see where gold functions fell
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_WORD = re.compile(r"\w+")
_MISSING_BLOB = re.compile(r"invalid object \d+ [0-9a-f]+ for '([^'\n]+)'")
_TEST_PATH = re.compile(r"(^|[/_.-])(test|tests|testing)([/_.-]|$)")
Progress = Callable[[str, int, int], None]


class InstanceError(TributaryError):
    """A run that cannot start: an instances file that cannot be read (which file and
    which line), a clone that is missing, a work dir holding another checkout's index."""


@dataclass(frozen=True, slots=True)
class Instance:
    instance_id: str
    repo: str
    base_commit: str
    gold_files: tuple[str, ...]
    problem_statement: str
    golden_patch: str = ""
    splits: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Span:
    path: str
    start: int
    end: int
    symbol: str | None = None
    # A function too long for one chunk is cut into parts; the span is the part holding
    # the change, and these are the whole function's lines (None: the span is whole).
    whole_start: int | None = None
    whole_end: int | None = None

    def overlaps(self, path: str, start: int | None, end: int | None) -> bool:
        if path != self.path:
            return False
        if start is None or end is None:
            return False
        return start <= self.end and end >= self.start

    def names_function(self, path: str, start: int | None, end: int | None) -> bool:
        """Whether a hit at ``path`` ``start``-``end`` is this unit's function: any part
        of it (a hit on the first part of a 300-line function names that function)."""
        if path != self.path or start is None or end is None:
            return False
        return start <= (self.whole_end or self.end) and end >= (self.whole_start or self.start)

    def label(self) -> str:
        """``path:start-end``, then the unit's name when it has one, then the whole
        function's lines when the span is one part of it."""
        where = f"{self.path}:{self.start}-{self.end}"
        named = f"{where} {self.symbol}" if self.symbol else where
        if self.whole_start is None:
            return named
        return f"{named} (part of {self.whole_start}-{self.whole_end})"


@dataclass(slots=True)
class Outcome:
    """One instance: the ranked files, where the gold ones landed, and the costs."""

    instance_id: str
    repo: str
    splits: tuple[str, ...]
    files: list[str]
    gold_files: tuple[str, ...]
    gold_functions: list[Span]
    function_rank: int | None  # the rank by which every gold function was overlapped
    in_context: bool | None  # every gold function inside the context (None: no functions)
    bm25_files: list[str]
    query_cpu_s: float
    query_s: float
    notes: list[str] = field(default_factory=list)
    hits: list[str] = field(default_factory=list)  # the first located hits, path:start-end (or path)


@dataclass(slots=True)
class Figures:
    instances: int
    acc: dict[int, float]
    mrr: float
    function_acc: dict[int, float]
    function_instances: int
    context_recall: float | None
    bm25_acc: dict[int, float]
    bm25_mrr: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "instances": self.instances,
            "acc": {str(k): v for k, v in self.acc.items()},
            "mrr": self.mrr,
            "function_acc": {str(k): v for k, v in self.function_acc.items()},
            "function_instances": self.function_instances,
            "context_recall": self.context_recall,
            "bm25_acc": {str(k): v for k, v in self.bm25_acc.items()},
            "bm25_mrr": self.bm25_mrr,
        }


@dataclass(slots=True)
class Report:
    outcomes: list[Outcome]
    index_cpu_s: dict[str, float]
    groups: dict[str, Figures]
    machine: str
    # The same instances asked of fewer sources in the same run ("files" -> outcomes).
    also: dict[str, list[Outcome]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "index_cpu_s": self.index_cpu_s,
            "groups": {name: figures.as_dict() for name, figures in self.groups.items()},
            "instances": [_instance_dict(o) for o in self.outcomes],
            "also": {
                asked: {"groups": {name: f.as_dict() for name, f in grouped(found).items()},
                        "instances": [_instance_dict(o) for o in found]}
                for asked, found in self.also.items()
            },
        }


def _instance_dict(o: Outcome) -> dict[str, Any]:
    return {"id": o.instance_id, "files": o.files[:10], "gold": list(o.gold_files),
            "file_rank": first_rank(o.files, o.gold_files), "function_rank": o.function_rank,
            "in_context": o.in_context, "bm25_rank": first_rank(o.bm25_files, o.gold_files),
            "query_cpu_s": round(o.query_cpu_s, 3), "query_s": round(o.query_s, 3),
            "notes": o.notes, "gold_functions": [span.label() for span in o.gold_functions],
            "hits": o.hits}


# ------------------------------------------------------------------ reading


def load_instances(path: Path) -> list[Instance]:
    """Every instance of a JSONL file; a bad line raises, naming the file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InstanceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    found: list[Instance] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            found.append(Instance(
                instance_id=str(raw["instance_id"]), repo=str(raw["repo"]),
                base_commit=str(raw["base_commit"]),
                gold_files=tuple(str(p) for p in raw["gold_files"]),
                problem_statement=str(raw["problem_statement"]),
                golden_patch=str(raw.get("golden_patch") or ""),
                splits=tuple(str(s) for s in raw.get("splits") or ()),
            ))
        except (ValueError, KeyError, TypeError) as exc:
            what = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
            raise InstanceError(f"{path}:{number}: not an instance: {what}") from None
    return found


def hunk_lines(patch: str) -> dict[str, list[int]]:
    """The lines of each file (as at the base commit) that a unified diff changes: its
    removed lines, and for an insertion the line it follows (or precedes, at the top)."""
    changed: dict[str, list[int]] = {}
    path: str | None = None
    old = 0
    for line in patch.splitlines():
        if line.startswith("--- "):
            path = None
            continue
        if line.startswith("+++ "):
            target = line[4:].strip()
            path = target[2:] if target.startswith("b/") else (None if target == "/dev/null" else target)
            continue
        match = _HUNK.match(line)
        if match:
            old = int(match.group(1))
            continue
        if path is None:
            continue
        marker = line[0] if line else " "  # (a blank context line stripped of its space)
        if marker == "-":
            changed.setdefault(path, []).append(old)
            old += 1
        elif marker == "+":
            changed.setdefault(path, []).append(max(1, old - 1))
        elif marker == " ":
            old += 1
    return {path: sorted(set(lines)) for path, lines in changed.items()}


def enclosing_units(path: str, text: str, lines: Iterable[int]) -> list[Span]:
    """The innermost function, method or class chunk around each line (none for a line
    outside every unit: module-level code); for a part of a function cut into several
    chunks, with the whole function's lines."""
    from tributary.engine.index.chunking import chunk_text
    from tributary.engine.query.languages import detect_language

    language = detect_language(path)
    if language is None:
        return []
    units = [c for c in chunk_text(path, language, text) if c.kind in UNIT_KINDS]
    found: dict[tuple[int, int], Span] = {}
    for line in lines:
        around = [u for u in units if u.start_line <= line <= u.end_line]
        if not around:
            continue
        best = min(around, key=lambda u: u.end_line - u.start_line)
        first, last = _whole_unit(units, best)
        whole = (first, last) != (best.start_line, best.end_line)
        found[(best.start_line, best.end_line)] = Span(
            path, best.start_line, best.end_line, best.symbol,
            first if whole else None, last if whole else None,
        )
    return sorted(found.values(), key=lambda s: (s.start, s.end))


def _whole_unit(units: Sequence[Chunk], part: Chunk) -> tuple[int, int]:
    """The lines of the function ``part`` belongs to: the chunks of one name and kind
    that follow each other line after line (a long function's parts)."""
    first, last = part.start_line, part.end_line
    same = sorted((u for u in units if u.symbol == part.symbol and u.kind == part.kind), key=lambda u: u.start_line)
    for unit in reversed([u for u in same if u.end_line < first]):
        if unit.end_line + 1 != first:
            break
        first = unit.start_line
    for unit in (u for u in same if u.start_line > last):
        if unit.start_line != last + 1:
            break
        last = unit.end_line
    return first, last


# ------------------------------------------------------------------ scoring


def distinct_files(paths: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for path in paths:
        seen.setdefault(path, None)
    return list(seen)


def first_rank(files: Sequence[str], gold: Sequence[str]) -> int | None:
    for rank, path in enumerate(files, 1):
        if path in gold:
            return rank
    return None


def all_within(files: Sequence[str], gold: Sequence[str], k: int) -> bool:
    return bool(gold) and set(gold) <= set(files[:k])


def function_rank(located: Sequence[tuple[str, int | None, int | None]], gold: Sequence[Span]) -> int | None:
    """The number of hits it takes until every gold function is named by one: a hit on
    any part of it (None: never)."""
    if not gold:
        return None
    missing = set(range(len(gold)))
    for rank, (path, start, end) in enumerate(located, 1):
        missing -= {i for i in missing if gold[i].names_function(path, start, end)}
        if not missing:
            return rank
    return None


def figures(outcomes: Sequence[Outcome]) -> Figures:
    n = len(outcomes)

    def share(flags: Iterable[bool], of: int) -> float:
        return round(sum(flags) / of, 3) if of else 0.0

    def mrr(ranks: Iterable[int | None]) -> float:
        return round(sum(1 / r for r in ranks if r) / n, 3) if n else 0.0

    with_functions = [o for o in outcomes if o.gold_functions]
    in_context = [o.in_context for o in with_functions if o.in_context is not None]
    return Figures(
        instances=n,
        acc={k: share((all_within(o.files, o.gold_files, k) for o in outcomes), n) for k in KS},
        mrr=mrr(first_rank(o.files, o.gold_files) for o in outcomes),
        function_acc={
            k: share((o.function_rank is not None and o.function_rank <= k for o in with_functions),
                     len(with_functions))
            for k in FUNCTION_KS
        },
        function_instances=len(with_functions),
        context_recall=share(in_context, len(in_context)) if in_context else None,
        bm25_acc={k: share((all_within(o.bm25_files, o.gold_files, k) for o in outcomes), n) for k in KS},
        bm25_mrr=mrr(first_rank(o.bm25_files, o.gold_files) for o in outcomes),
    )


def grouped(outcomes: Sequence[Outcome]) -> dict[str, Figures]:
    """Figures for all instances, each split and each repository."""
    groups: dict[str, list[Outcome]] = {"all": list(outcomes)}
    for outcome in outcomes:
        for split in outcome.splits:
            groups.setdefault(f"split:{split}", []).append(outcome)
        groups.setdefault(f"repo:{outcome.repo}", []).append(outcome)
    return {name: figures(chosen) for name, chosen in groups.items()}


# ------------------------------------------------------------------ BM25 baseline


class Bm25Baseline:
    """SWE-bench's BM25 retrieval baseline: one document per non-test ``.py`` file (its
    path, then its contents), Okapi BM25 with k1 0.9 and b 0.4 over lower-cased word
    tokens. Documents are cached by blob, so each commit re-reads only what changed."""

    K1 = 0.9
    B = 0.4

    def __init__(self) -> None:
        self._cache: dict[str, Counter[str]] = {}

    def rank(self, root: Path, blobs: dict[str, str], query: str, top: int = 50) -> list[str]:
        docs: dict[str, Counter[str]] = {}
        for path, blob in blobs.items():
            if not path.endswith(".py") or _TEST_PATH.search(path.lower()):
                continue
            counts = self._cache.get(blob)
            if counts is None:
                try:
                    text = (root / path).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                counts = Counter(_WORD.findall(f"{path}\n{text}".lower()))
                self._cache[blob] = counts
            docs[path] = counts
        if not docs:
            return []
        lengths = {path: sum(c.values()) for path, c in docs.items()}
        average = sum(lengths.values()) / len(lengths)
        terms = Counter(_WORD.findall(query.lower()))
        frequency = Counter(term for c in docs.values() for term in terms if term in c)
        n = len(docs)
        scores: dict[str, float] = {}
        for term, weight in terms.items():
            df = frequency.get(term, 0)
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for path, counts in docs.items():
                tf = counts.get(term)
                if tf:
                    norm = tf * (self.K1 + 1) / (tf + self.K1 * (1 - self.B + self.B * lengths[path] / average))
                    scores[path] = scores.get(path, 0.0) + weight * idf * norm
        return sorted(scores, key=lambda p: (-scores[p], p))[:top]


# ------------------------------------------------------------------ running


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True, encoding="utf-8", errors="replace").stdout


def blobs_at(root: Path) -> dict[str, str]:
    """Each tracked file of the checkout and its blob id."""
    found: dict[str, str] = {}
    for line in git(root, "ls-tree", "-r", "-z", "HEAD").split("\0"):
        if not line:
            continue
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            found[path] = parts[2]
    return found


def checkout(clone: Path, work: Path, commit: str) -> None:
    """``work`` (a shared clone of ``clone``) at ``commit``, with nothing else in it."""
    if not (work / ".git").exists():
        work.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(clone), str(work)],
                       check=True, capture_output=True)
    for _ in range(5):
        try:
            git(work, "checkout", "-q", "-f", "--detach", commit)
            break
        except subprocess.CalledProcessError as exc:
            missing = _MISSING_BLOB.findall(exc.stderr or "")
            if not missing:
                raise
            _leave_out(work, missing)
    git(work, "clean", "-q", "-f", "-d", "-x")


def _leave_out(work: Path, paths: Sequence[str]) -> None:
    """Leave files whose contents the clone lacks out of the checkout (a partial clone or
    a snapshot without its largest data files): sparse checkout of everything else."""
    sparse = work / ".git" / "info" / "sparse-checkout"
    lines = sparse.read_text(encoding="utf-8").splitlines() if sparse.exists() else ["/*"]
    lines.extend(f"!/{path}" for path in paths if f"!/{path}" not in lines)
    sparse.parent.mkdir(parents=True, exist_ok=True)
    sparse.write_text("\n".join(lines) + "\n", encoding="utf-8")
    git(work, "config", "core.sparseCheckout", "true")


def ordered(instances: Sequence[Instance], clone: Path) -> list[Instance]:
    """Instances by their base commit's date (then id), so history only grows."""
    def when(instance: Instance) -> tuple[int, str]:
        try:
            return int(git(clone, "show", "-s", "--format=%ct", instance.base_commit).strip() or 0), instance.instance_id
        except subprocess.CalledProcessError:
            return 0, instance.instance_id
    return sorted(instances, key=when)


def located_hits(response: SearchResponse, mapper: Callable[[str], str | None]) -> list[tuple[str, int | None, int | None]]:
    return [(path, hit.start_line, hit.end_line)
            for hit in response.hits if hit.path and (path := mapper(hit.path)) is not None]


def context_holds(
    response: SearchResponse,
    mapper: Callable[[str], str | None],
    gold: Sequence[Span],
    lines_of: Callable[[str], Sequence[str]] | None = None,
) -> bool | None:
    """Whether every gold unit is overlapped by a piece of the assembled context. Pieces
    are read from their locations: the context also reads chunks of the best files from
    below the listed hits. A piece shrunk to fit (truncated, outlined, summarised) holds
    only the lines it shows, found in the file by ``lines_of`` (its lines by path)."""
    if not gold or response.context is None:
        return None if not gold else False
    pieces: list[tuple[str, int | None, int | None]] = []
    for chunk in response.context.chunks:
        place = span_of(chunk.location)
        if place is None or (path := mapper(place[0])) is None:
            continue
        if chunk.treatment == "full" or lines_of is None:
            pieces.append((path, place[1], place[2]))
        else:
            shown = shown_lines(chunk.content, lines_of(path), place[1], place[2])
            pieces.extend((path, line, line) for line in shown)
    return all(any(span.overlaps(*piece) for piece in pieces) for span in gold)


def shown_lines(content: str, file_lines: Sequence[str], start: int, end: int) -> list[int]:
    """The lines of ``start``-``end`` (1-based) that a shrunk piece's ``content`` shows,
    matched in order; its own marks (``…``, an outline's ``...``) match nothing."""
    shown: list[int] = []
    at = start
    last = min(end, len(file_lines))
    for raw in content.splitlines():
        text = raw.strip()
        if not text:
            continue
        line = at
        while line <= last and file_lines[line - 1].strip() != text:
            line += 1
        if line <= last:
            shown.append(line)
            at = line + 1
    return shown


_SPAN = re.compile(r"(\d{1,9})-(\d{1,9})")


def span_of(location: str) -> tuple[str, int, int] | None:
    """``(path, start, end)`` of a ``path:start-end`` location (None for any other)."""
    path, colon, lines = location.rpartition(":")
    found = _SPAN.fullmatch(lines) if colon and path else None
    return (path, int(found[1]), int(found[2])) if found else None


def _children_cpu(pids: Iterable[int | None]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        if pid is None:
            continue
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


async def run_repository(
    instances: Sequence[Instance],
    clone: Path,
    work: Path,
    index_dir: Path,
    *,
    sources: Sequence[str],
    also: Sequence[Sequence[str]] = (),
    embed: bool = True,
    config: Config | None = None,
    on_progress: Progress | None = None,
) -> tuple[list[Outcome], float, dict[str, list[Outcome]]]:
    """Every instance of one repository, in date order; the outcomes, the indexing's
    CPU-seconds (this process: chunking, keyword index, embeddings, history) and, for
    each subset of ``sources`` in ``also``, the outcomes of asking only those: the same
    indexes at the same moment, so what a source adds is measured without a second run."""
    from tributary.engine.config.schema import Config as DefaultConfig
    from tributary.engine.engine import Engine
    from tributary.engine.eval.retrieval import PathMapper, corpus_files, eval_config
    from tributary.engine.index.manager import index_repository, remove_sqlite_files
    from tributary.engine.model import SearchRequest
    from tributary.engine.tasks.api import import_git_history, tasks_db_path

    # History only grows within a run (instances in date order); one kept from an earlier
    # run could hold commits after this run's first base commit, so it starts afresh.
    remove_sqlite_files(tasks_db_path(work, index_dir))
    baseline = Bm25Baseline()
    outcomes: list[Outcome] = []
    fewer: dict[str, list[Outcome]] = {",".join(subset): [] for subset in also}
    index_cpu = 0.0
    engine: Engine | None = None
    chosen = ordered(instances, clone)
    try:
        for number, instance in enumerate(chosen, 1):
            checkout(clone, work, instance.base_commit)
            cpu = time.process_time()
            index_repository(work, index_dir=index_dir, embed=embed)
            if "tasks" in sources:
                import_git_history(work, indexes_dir=index_dir, embed=embed)
            index_cpu += time.process_time() - cpu
            if engine is None:
                engine = Engine(eval_config(config or DefaultConfig(), index_dir, sources))
                await engine.pool.start(list(sources))
            mapper = PathMapper(work, corpus_files(work))
            pids = [engine.pool.state(name).pid for name in sources]
            before = _children_cpu(pids) + time.process_time()
            started = time.perf_counter()
            request = SearchRequest(instance.problem_statement, sources=list(sources), use_cache=False)
            response = await engine.search(request)
            query_s = time.perf_counter() - started
            pids = [engine.pool.state(name).pid for name in sources]
            query_cpu = _children_cpu(pids) + time.process_time() - before
            gold_functions = _gold_functions(work, instance)
            bm25_files = baseline.rank(work, blobs_at(work), instance.problem_statement)

            judge = functools.partial(_judged, instance, mapper, _file_lines(work), gold_functions, bm25_files)
            outcomes.append(judge(response, query_cpu, query_s))
            for subset in also:
                started = time.perf_counter()
                fewer_answer = await engine.search(
                    SearchRequest(instance.problem_statement, sources=list(subset), use_cache=False))
                fewer[",".join(subset)].append(judge(fewer_answer, 0.0, time.perf_counter() - started))
            if on_progress is not None:
                on_progress(instance.repo, number, len(chosen))
    finally:
        if engine is not None:
            await engine.aclose()
    return outcomes, index_cpu, fewer


def _judged(
    instance: Instance,
    mapper: Callable[[str], str | None],
    lines_of: Callable[[str], Sequence[str]],
    gold_functions: list[Span],
    bm25_files: list[str],
    answer: SearchResponse,
    cpu_s: float,
    wall_s: float,
) -> Outcome:
    """One instance's outcome from one answer: where its files and functions landed."""
    located = located_hits(answer, mapper)
    return Outcome(
        instance_id=instance.instance_id, repo=instance.repo, splits=instance.splits,
        files=distinct_files(path for path, _, _ in located),
        gold_files=instance.gold_files, gold_functions=gold_functions,
        function_rank=function_rank(located, gold_functions),
        in_context=context_holds(answer, mapper, gold_functions, lines_of),
        bm25_files=bm25_files, query_cpu_s=max(0.0, cpu_s), query_s=wall_s, notes=list(answer.notes),
        hits=[f"{path}:{start}-{end}" if start is not None and end is not None else path
              for path, start, end in located[:HITS_KEPT]],
    )


def applied_lines(work: Path, patch: str) -> dict[str, list[int]]:
    """``hunk_lines`` of ``patch`` as it applies to the files under ``work``: a hunk may
    apply some lines away from where the patch says (the fix was written against a
    later version of the file), as ``git apply`` allows. Git applies it to copies of the
    files and diffs them against the originals; a file that cannot be compared that way
    keeps the patch's own numbers."""
    written = hunk_lines(patch)
    env = _git_outside_repositories()
    with tempfile.TemporaryDirectory(prefix="tributary-gold-") as tmp:
        before, after = Path(tmp, "a"), Path(tmp, "b")
        for path in written:
            source = work / path
            if source.is_file():
                for root in (before, after):
                    (root / path).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, root / path)
        patch_file = Path(tmp, "fix.diff")
        patch_file.write_text(patch, encoding="utf-8")
        applied = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", str(patch_file)],
            cwd=after, capture_output=True, check=False, env=env,
        )
        if applied.returncode != 0:
            return written
        found: dict[str, list[int]] = {}
        for path, lines in written.items():
            if not (before / path).is_file() or not (after / path).is_file():
                found[path] = lines
                continue
            diff = subprocess.run(
                ["git", "diff", "--no-index", "--no-color", "--", f"a/{path}", f"b/{path}"],
                cwd=tmp, capture_output=True, text=True, check=False, env=env,
            )
            found[path] = [line for changed in hunk_lines(diff.stdout).values() for line in changed]
        return found


def _git_outside_repositories() -> dict[str, str]:
    """The environment for git run on loose files: no repository above them is used."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env["GIT_CEILING_DIRECTORIES"] = tempfile.gettempdir()
    return env


def _file_lines(work: Path) -> Callable[[str], Sequence[str]]:
    """The lines of a file of the checkout under ``work``, by its relative path."""
    @functools.lru_cache(maxsize=64)
    def lines_of(path: str) -> Sequence[str]:
        try:
            return (work / path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ()

    return lines_of


def _gold_functions(work: Path, instance: Instance) -> list[Span]:
    spans: list[Span] = []
    for path, lines in applied_lines(work, instance.golden_patch).items():
        try:
            text = (work / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # a file the fix creates
        spans.extend(enclosing_units(path, text, lines))
    return spans


def find_clone(clones: Path, repo: str) -> Path:
    """The clone of ``owner/name`` under ``clones``: ``owner__name``, ``owner+name``
    (either may hold a bare ``repo`` folder) or ``owner/name``."""
    owner, _, name = repo.partition("/")
    for candidate in (clones / f"{owner}__{name}", clones / f"{owner}+{name}", clones / owner / name):
        for folder in (candidate, candidate / "repo"):
            if (folder / "HEAD").is_file() or (folder / ".git").exists():
                return folder
    raise InstanceError(f"no clone of {repo} under {clones} (looked for {owner}__{name}, {owner}+{name}, {owner}/{name})")


def other_checkouts(index_dir: Path, checkout: Path) -> list[Path]:
    """The roots of code indexes in ``index_dir`` made from another checkout of the same
    repository (a folder of the same name elsewhere: the work dir was copied or moved).
    The engine searches every index there, so such an index would answer beside this
    run's with another commit's files; another repository's index put there on purpose
    (to measure a neighbour's effect) has another name and is kept."""
    from tributary.engine.index.manager import list_indexes

    own = checkout.expanduser().resolve()
    return [info.root for info in list_indexes(index_dir) if info.root.name == own.name and info.root.resolve() != own]


def _repository_dirs(work: Path, repo: str) -> tuple[Path, Path]:
    """Where a run keeps ``owner/name``'s checkout and its indexes under ``work``."""
    slug = repo.replace("/", "__")
    return work / "checkouts" / slug, work / "indexes" / slug


async def run_instances(
    instances: Sequence[Instance],
    clones: Path,
    work: Path,
    *,
    sources: Sequence[str] = ("files", "tasks"),
    also: Sequence[Sequence[str]] = (),
    embed: bool = True,
    config: Config | None = None,
    on_progress: Progress | None = None,
) -> Report:
    """Run every instance, repository by repository, under ``work`` (checkouts and
    indexes); each subset of ``sources`` in ``also`` is asked too and reported beside."""
    for subset in also:
        if not subset or not set(subset) < set(sources):
            raise InstanceError(f"sources to ask also ({','.join(subset) or 'none'}): name some, not all, "
                                f"of the sources asked ({','.join(sources)})")
    by_repo: dict[str, list[Instance]] = {}
    for instance in instances:
        by_repo.setdefault(instance.repo, []).append(instance)
    for repo in by_repo:
        checkout, index_dir = _repository_dirs(work, repo)
        strays = other_checkouts(index_dir, checkout)
        if strays:
            raise InstanceError(
                f"{index_dir} holds an index of another checkout of {repo} "
                f"({', '.join(str(root) for root in strays)}, a work dir copied or moved?), which every "
                "query would search beside this run's own: remove it, or use a fresh --work-dir")
    outcomes: list[Outcome] = []
    fewer: dict[str, list[Outcome]] = {",".join(subset): [] for subset in also}
    index_cpu: dict[str, float] = {}
    for repo, chosen in by_repo.items():
        clone = find_clone(clones, repo)
        found, cpu, found_fewer = await run_repository(
            chosen, clone, *_repository_dirs(work, repo),
            sources=sources, also=also, embed=embed, config=config, on_progress=on_progress,
        )
        outcomes.extend(found)
        for asked, more in found_fewer.items():
            fewer[asked].extend(more)
        index_cpu[repo] = round(cpu, 1)
    return Report(outcomes, index_cpu, grouped(outcomes), machine_line(), fewer)


def render(report: Report) -> str:
    """The report as a table: file Acc@k and MRR, BM25's beside them, function level;
    then a table for each smaller set of sources asked."""
    lines = [f"machine: {report.machine}", *_table(report.groups)]
    for asked, found in report.also.items():
        lines += ["", f"asking {asked} alone:", *_table(grouped(found))]
    queries = [o.query_cpu_s for o in report.outcomes]
    if queries:
        ordered_cpu = sorted(queries)
        lines.append(f"query CPU-seconds: median {ordered_cpu[len(ordered_cpu) // 2]:.2f}, "
                     f"max {ordered_cpu[-1]:.2f}; indexing CPU-seconds: "
                     + ", ".join(f"{repo} {cpu:.0f}" for repo, cpu in report.index_cpu_s.items()))
    return "\n".join(lines)


def _table(groups: dict[str, Figures]) -> list[str]:
    lines = ["group                     n   Acc@1 Acc@3 Acc@5 Acc@10  MRR  | BM25 Acc@1 Acc@5  MRR | "
             "fn Acc@5 Acc@10 | ctx recall"]
    for name, f in groups.items():
        ctx = "  -  " if f.context_recall is None else f"{f.context_recall:.3f}"
        lines.append(
            f"{name[:24]:<24} {f.instances:>4}   {f.acc[1]:.3f} {f.acc[3]:.3f} {f.acc[5]:.3f} {f.acc[10]:.3f} "
            f"{f.mrr:.3f} |      {f.bm25_acc[1]:.3f} {f.bm25_acc[5]:.3f} {f.bm25_mrr:.3f} | "
            f"   {f.function_acc[5]:.3f}  {f.function_acc[10]:.3f} | {ctx}"
        )
    return lines


def machine_line() -> str:
    """The CPU model, its widest vector unit, the CPUs and the load: a figure's context."""
    import platform

    model, isa = platform.processor() or "?", "?"
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        model = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("model name")), model)
        flags = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
        isa = "AMX" if "amx_tile" in flags else "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "?"
    except OSError:
        pass
    try:
        load = f"load {os.getloadavg()[0]:.1f}"
    except OSError:
        load = "load ?"
    return f"{model} ({isa}), {os.cpu_count()} CPUs, {load}"


def default_work_dir() -> Path:
    return Path(os.environ.get("TMPDIR", "/tmp")) / "tributary-swebench"
