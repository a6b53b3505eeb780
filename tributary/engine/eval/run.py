"""``tributary eval run``: prepare, retrieve once, score every variant, write the report.

    result, paths = await evaluate(Path("bench/pytest"), out=Path("out"))

The steps and their wall times go into the report's run table, so a report says how
it was made: the dataset, the index, the sources, and how long each stage took.
"""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tributary.engine.config.schema import Config
from tributary.engine.engine import Engine
from tributary.engine.eval.adaptive import add_adaptive
from tributary.engine.eval.content import evaluate_content, summarise
from tributary.engine.eval.datasets import load_dataset
from tributary.engine.eval.experiment import (
    ExperimentResult,
    QueryRun,
    Ranker,
    Variant,
    run_experiment,
    score_variant,
)
from tributary.engine.eval.report import publish_latest, write_report
from tributary.engine.eval.retrieval import (
    RAW_TOP_K,
    PathMapper,
    Progress,
    collect,
    eval_config,
    load_runs,
    prepare,
    raw_runs_path,
    save_runs,
)

CONTENT_KEY = "content, default context"


@dataclass(slots=True)
class EvalRun:
    result: ExperimentResult
    paths: dict[str, Path]
    latest: Path | None


async def evaluate(
    dataset_dir: Path,
    *,
    out: Path,
    config: Config | None = None,
    work_dir: Path | None = None,
    cache_dir: Path | None = None,
    max_queries: int | None = None,
    publish: bool = True,
    reuse_raw: bool = True,
    on_progress: Progress | None = None,
    log: Callable[[str], None] | None = None,
) -> EvalRun:
    """Run the whole evaluation of one dataset folder and write its report to ``out``."""
    say = log or (lambda _text: None)
    started = time.perf_counter()
    dataset = load_dataset(dataset_dir)
    queries = dataset.queries[:max_queries] if max_queries else dataset.queries
    base = config or Config()

    say(f"preparing {dataset.name}: corpus, index, task history")
    prepared = prepare(dataset, work_dir=work_dir, cache_dir=cache_dir, on_progress=on_progress)
    t0 = time.perf_counter()
    config = eval_config(base, prepared.index_dir, prepared.sources)
    raw_path = raw_runs_path(prepared, config, queries, RAW_TOP_K)
    runs = load_runs(raw_path, queries) if reuse_raw else None
    reused = runs is not None
    if runs is not None:
        say(f"reusing the raw hits of an earlier run ({raw_path.name})")
    else:
        say(f"asking {', '.join(prepared.sources)} for {len(queries)} queries")
        engine = Engine(config)
        try:
            runs = await collect(engine, queries, prepared.sources, on_progress=on_progress)
        finally:
            await engine.aclose()
        save_runs(raw_path, runs)
    retrieval_s = time.perf_counter() - t0

    say("scoring variants")
    t0 = time.perf_counter()
    candidates = dataset.candidate_suffixes()
    ranker = Ranker(fusion=base.fusion, dedup=base.dedup,
                    path_of=PathMapper(prepared.corpus, prepared.corpus_files, candidates))
    result = run_experiment(runs, ranker, dataset=dataset.name)
    add_adaptive(result, runs, ranker)
    every_kind = (
        _every_kind_ranked(runs, ranker.with_paths(PathMapper(prepared.corpus, prepared.corpus_files)),
                           result.splits)
        if candidates is not None else {}
    )
    content = _content_figures(runs, prepared.index_dir, PathMapper(prepared.corpus, prepared.corpus_files),
                               result.splits)
    scoring_s = time.perf_counter() - t0
    result.meta = {
        "dataset": str(dataset.folder),
        "corpus": str(prepared.corpus),
        "sources": ", ".join(prepared.sources),
        "ranked files": ("only " + ", ".join(sorted(candidates)) + " (the kinds the relevance "
                         "covers; other files are left out before scoring)"
                         if candidates is not None else "every file"),
        **every_kind,
        **content,
        "default strategy": base.fusion.strategy + (f" (k={base.fusion.rrf_k})" if base.fusion.strategy == "rrf" else ""),
        **{k.replace("_s", " (s)"): f"{v:.1f}" for k, v in prepared.timings_s.items()},
        "retrieval (s)": f"{retrieval_s:.1f}" + (" (raw hits reused)" if reused else ""),
        "scoring (s)": f"{scoring_s:.1f}",
        "total (s)": f"{time.perf_counter() - started:.1f}",
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        **{f"note {i + 1}": note for i, note in enumerate(prepared.notes)},
    }
    paths = write_report(result, out)
    latest = publish_latest(out) if publish else None
    return EvalRun(result=result, paths=paths, latest=latest)


def _content_figures(
    runs: list[QueryRun], index_dir: Path, path_of: PathMapper, splits: dict[str, list[str]]
) -> dict[str, str]:
    """The default context's content-level figures (``tributary.engine.eval.content``), per split."""
    scores = evaluate_content(runs, sorted(index_dir.glob("*.files.sqlite")), path_of)
    out: dict[str, str] = {}
    for label, split in (("held-out", "test"), ("all", "all")):
        if chosen := splits.get(split):
            out[f"{CONTENT_KEY} ({label})"] = summarise([scores[i] for i in chosen if i in scores]).text()
    return out


def _every_kind_ranked(
    runs: list[QueryRun], ranker: Ranker, splits: dict[str, list[str]]
) -> dict[str, str]:
    """The default's headline figures when files of every kind stay in the ranking."""
    scored = score_variant(ranker, runs, Variant("default", "default"))
    out: dict[str, str] = {}
    for label, split in (("held-out", "test"), ("all", "all")):
        if chosen := splits.get(split):
            recall = statistics.fmean(scored.values("recall@10", chosen))
            mrr = statistics.fmean(scored.values("mrr", chosen))
            out[f"default, every file kind ranked ({label})"] = (
                f"recall@10 {recall:.3f}, MRR {mrr:.3f}")
    return out
