"""Pipeline cost: dedup + fuse + limit + tokens + budget + assemble over realistic hits.

    .venv/bin/python bench/pipeline_cost.py [--repeat N] [--semantic] [--stream-only] [--profile N [--cold]]

Hits are 40-line chunks of real files from this venv's site-packages spread over ten
sources with the duplicate structure servers produce (``bench/_hits.py``): exact copies,
reformatted copies, overlapping windows, edited copies. Each configuration runs on
fresh copies of the hits; figures are wall-clock p50/p95 in ms, and CPU time p50 of the
calling thread (``time.thread_time``) and of the whole process (``proc``: helper threads
too, e.g. the second thread of a large fuzzy batch). Waiting for a CPU held by other
processes counts in neither, though cache and core sharing still inflate both on a busy
machine.

Per-text caches are reported five ways: "cold" (empty caches, the token counter's word
memo included: every top-k hit is counted and dedup squeezes and samples every text
inside the pipeline), "new text, known words" (the same, but the word memo holds the
words of 1,000 other chunks of these packages, as it does once earlier queries went
over a code base: what a query whose hits are all new text costs in steady use),
"warm" (token counts, dedup keys, sampled 5-grams and near-duplicate pair scores
cached, as they are when the same chunks came back in an earlier query in the same
order), "warm texts, new ranks" (the same caches, but each run gets each source's hits
in a new order: new scores, so new chunk headers, and other hits at the budget's edge;
what the same chunks cost in another query) and "warm token counts only" (dedup keys
and samples computed afresh: what each text costs dedup the first time it is seen).

Last, the real query stream (``--stream-only``: nothing else): the 195 queries of the
shared pytest benchmark in their order, each on the hits Tributary's own servers
(files, tasks) returned for it — as ``bench/eval_benchmarks.py pytest`` recorded them;
without that record the stream is skipped — run through the pipeline from empty caches
(the tokenizer's vocabulary only), so each query's texts are new unless an earlier
query returned them, as in a running engine. Real chunks are shorter than the synthetic
ones (code ~25 lines, task lines ~190 characters) and duplicate less.

``--profile N`` prints where the time goes instead: cProfile of N warm runs (``--cold``:
cold runs) on the 150- and 1,000-hit inputs, the top functions by own time. cProfile
does not see into compiled functions: set ``TRIBUTARY_PURE_PYTHON=1`` to profile the
Python pipeline (the first line of output says which one runs), or count the compiled
one's instructions by function with ``valgrind --tool=callgrind``.
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._embed import minilm_lookup
from bench._hits import make_hits
from tributary import engine
from tributary.engine._compiled import describe
from tributary.engine.config.schema import BudgetConfig, DedupConfig, FusionConfig
from tributary.engine.eval.datasets import load_dataset
from tributary.engine.eval.experiment import QueryRun
from tributary.engine.eval.retrieval import default_work_dir, load_runs
from tributary.engine.model import Hit, SearchRequest
from tributary.engine.pipeline import run_pipeline
from tributary.engine.pipeline.blocking import clear_features
from tributary.engine.pipeline.dedup import clear_pair_scores
from tributary.engine.pipeline.run import PipelineResult
from tributary.engine.pipeline.text import clear_squeezed
from tributary.engine.pipeline.tokens import clear_cache, count_tokens_batch, get_tokenizer

QUERY = "how does pytest collect fixtures and parametrize test functions"


@dataclass(slots=True)
class Timings:
    """Wall, thread-CPU and process-CPU time of pipeline runs, and each stage's time."""

    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    procs: list[float] = field(default_factory=list)
    stages: dict[str, list[float]] = field(default_factory=dict)

    def run(self, hits: dict[str, list[Hit]], request: SearchRequest, **options: Any) -> PipelineResult:
        wall, cpu, proc = time.perf_counter(), time.thread_time(), time.process_time()
        result = run_pipeline(hits, request, fusion=FusionConfig(), budget=BudgetConfig(), **options)
        self.cpus.append((time.thread_time() - cpu) * 1000)
        self.procs.append((time.process_time() - proc) * 1000)
        self.walls.append((time.perf_counter() - wall) * 1000)
        for stage, ms in result.stage_ms.items():
            self.stages.setdefault(stage, []).append(ms)
        return result

    def summary(self) -> dict[str, float]:
        walls = sorted(self.walls)
        return {
            "p50": statistics.median(walls),
            "p95": walls[min(len(walls) - 1, int(0.95 * len(walls)))],
            "cpu_p50": statistics.median(self.cpus),
            "proc_p50": statistics.median(self.procs),
            **{f"stage:{k}": statistics.median(v) for k, v in self.stages.items()},
        }


def measure(
    hits: dict[str, list[Hit]], repeat: int, *, cold: bool, embed: Callable[[list[str]], npt.NDArray[np.float32]]
    | None = None, strategy: str = "rrf", cold_keys: bool = False, known_words: bool = False,
    reranked: bool = False,
) -> dict[str, float]:
    timings = Timings()
    result = None
    shuffles = random.Random(1)
    for _ in range(repeat):
        fresh = copy.deepcopy(hits)
        if reranked:
            rerank(fresh, shuffles)
        if cold:
            clear_cache(words=not known_words)
        if cold or cold_keys:
            clear_squeezed()
            clear_features()
            clear_pair_scores()
        request = SearchRequest(query=QUERY, strategy=strategy)
        result = timings.run(fresh, request, dedup=DedupConfig(semantic=embed is not None), embed=embed)
    assert result is not None and result.context is not None
    return {
        **timings.summary(),
        "raw": result.raw_hits,
        "unique": result.unique_hits,
        "groups": len(result.groups),
        "tokens": result.context.token_count,
        "budget": result.context.budget,
    }


def show(label: str, row: dict[str, float]) -> None:
    stages = " ".join(f"{k[6:]}={v:.2f}" for k, v in row.items() if k.startswith("stage:"))
    print(f"{label:<34} p50 {row['p50']:7.2f}  p95 {row['p95']:7.2f}  cpu {row['cpu_p50']:7.2f}  "
          f"proc {row['proc_p50']:7.2f} ms | "
          f"{row['raw']:.0f} raw -> {row['unique']:.0f} unique ({row['groups']:.0f} groups), "
          f"{row['tokens']:.0f}/{row['budget']:.0f} tokens | {stages}")


def profile(runs: int, *, cold: bool = False) -> None:
    """Own time per function over ``runs`` warm (or cold) runs (cProfile: calls cost more
    than usual; timed by thread CPU time, so waiting for a busy machine's CPU is left out)."""
    import cProfile
    import pstats

    for n in (150, 1000):
        hits = make_hits(n)
        measure(hits, 2, cold=False)
        copies = [copy.deepcopy(hits) for _ in range(runs)]
        profiler = cProfile.Profile(time.thread_time)
        for fresh in copies:
            if cold:
                clear_cache()
                clear_squeezed()
                clear_features()
                clear_pair_scores()
            profiler.enable()
            run_pipeline(fresh, SearchRequest(query=QUERY), fusion=FusionConfig(), dedup=DedupConfig(semantic=False),
                         budget=BudgetConfig())
            profiler.disable()
        print(f"\n## {n} hits, {runs} {'cold' if cold else 'warm'} runs")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


def rerank(hits: dict[str, list[Hit]], rng: random.Random) -> None:
    """Each source's hits in a new order: the same texts, new ranks and so new scores."""
    for items in hits.values():
        rng.shuffle(items)
        for rank, hit in enumerate(items, start=1):
            hit.source_rank = rank


SHARED_BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"


def recorded_stream(name: str = "pytest") -> list[QueryRun] | None:
    """The hits Tributary's own servers returned for each query of a shared benchmark,
    as ``bench/eval_benchmarks.py`` saved them (the newest such file), or None."""
    dataset = load_dataset(SHARED_BENCH / name)
    saved = sorted((default_work_dir() / "runs").glob(f"{dataset.name}-*/raw/*.jsonl"), key=lambda p: p.stat().st_mtime)
    for path in reversed(saved):
        runs = load_runs(path, dataset.queries)
        if runs is not None:
            return runs
    return None


def measure_stream(runs: list[QueryRun], depth: int, passes: int) -> dict[str, float]:
    """Each query's first ``depth`` hits per source through the pipeline, queries in their
    order, starting from empty caches (the tokenizer's vocabulary only), as a running
    engine meets them: a query's texts are new unless an earlier query returned them.
    The figures of the median pass (by p50) of ``passes``, each from empty caches;
    hits, groups and tokens are averages over the queries."""
    rows: list[dict[str, float]] = []
    for _ in range(passes):
        clear_cache()
        clear_squeezed()
        clear_features()
        clear_pair_scores()
        timings = Timings()
        sizes: list[tuple[int, int, int, int, int]] = []
        seen: set[str] = set()
        new_share: list[float] = []
        for run in runs:
            fresh = {source: copy.deepcopy(hits[:depth]) for source, hits in run.hits.items()}
            texts = [hit.content for hits in fresh.values() for hit in hits]
            new_share.append(sum(text not in seen for text in texts) / max(1, len(texts)))
            seen.update(texts)
            request = SearchRequest(query=run.query.query, strategy=run.strategy)
            result = timings.run(fresh, request, dedup=DedupConfig(semantic=False), weights=run.weights)
            assert result.context is not None
            context = result.context
            sizes.append((result.raw_hits, result.unique_hits, len(result.groups), context.token_count, context.budget))
        rows.append({
            **timings.summary(),
            **{key: statistics.fmean(size[i] for size in sizes)
               for i, key in enumerate(("raw", "unique", "groups", "tokens", "budget"))},
            "new": statistics.fmean(new_share),
        })
    rows.sort(key=lambda row: row["p50"])
    return rows[len(rows) // 2]


REFERENCE_LOOP = 3_000_000


def reference_loop_ms() -> float:
    """Best of three timings of a plain Python loop: this machine's speed drifts by half
    from hour to hour, so figures from different runs compare through this one."""
    best = float("inf")
    for _ in range(3):
        start, total = time.perf_counter(), 0
        for i in range(REFERENCE_LOOP):
            total += i
        best = min(best, (time.perf_counter() - start) * 1000)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--semantic", action="store_true", help="also run with precomputed MiniLM embeddings")
    parser.add_argument("--profile", type=int, metavar="N", help="cProfile N warm runs per size instead")
    parser.add_argument("--cold", action="store_true", help="with --profile: cold runs (caches emptied first)")
    parser.add_argument("--stream-passes", type=int, default=3, help="passes over the real query stream")
    parser.add_argument("--stream-only", action="store_true", help="only the real query stream")
    args = parser.parse_args()
    get_tokenizer()  # load once, outside the timings (the engine loads it at start)
    print(f"pipeline: {describe(engine.COMPILED)}")
    if args.profile:
        profile(args.profile, cold=args.cold)
        return
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {args.repeat} runs each; "
          f"machine speed: {reference_loop_ms():.0f} ms for a {REFERENCE_LOOP:,}-step Python loop\n")
    try:
        if args.stream_only:
            stream(args)
        else:
            run(args)
    finally:
        print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


def run(args: argparse.Namespace) -> None:
    for n in (150, 1000):
        hits = make_hits(n)
        measure(hits, 2, cold=False)  # warm-up: imports, first-call costs
        print(f"machine speed before the {n}-hit runs: {reference_loop_ms():.0f} ms")
        show(f"{n} hits, warm caches", measure(hits, args.repeat, cold=False))
        show(f"{n} hits, warm texts, new ranks", measure(hits, args.repeat, cold=False, reranked=True))
        show(f"{n} hits, warm token counts only", measure(hits, args.repeat, cold=False, cold_keys=True))
        show(f"{n} hits, cold caches", measure(hits, max(5, args.repeat // 3), cold=True))
        count_tokens_batch([h.content for items in make_hits(1000, seed=99).values() for h in items])
        show(f"{n} hits, new text, known words", measure(hits, max(5, args.repeat // 3), cold=True, known_words=True))
        for strategy in ("weighted", "composite", "cascade", "vote"):
            show(f"{n} hits, warm, {strategy}", measure(hits, max(5, args.repeat // 3), cold=False, strategy=strategy))
        if args.semantic:
            embed = minilm_lookup([h.content for items in hits.values() for h in items], max_seq_length=128)
            show(f"{n} hits, warm, semantic (precomputed)", measure(hits, args.repeat, cold=False, embed=embed))

    print("\ngrowth (warm caches):")
    for n in (100, 250, 500, 1000, 2000, 5000):
        hits = make_hits(n)
        measure(hits, 1, cold=False)
        show(f"{n} hits", measure(hits, 5 if n >= 2000 else 11, cold=False))

    stream(args)  # last: its thousands of texts fill the per-text memos


def stream(args: argparse.Namespace) -> None:
    runs = recorded_stream()
    if runs is None:
        print("\nno recorded hits of the pytest benchmark here: run `bench/eval_benchmarks.py pytest` once "
              "for the real query stream")
        return
    sources = sorted({source for run in runs for source in run.hits})
    print(f"\nreal query stream: the pytest benchmark's {len(runs)} queries in order, on the hits "
          f"Tributary's own servers ({', '.join(sources)}) returned, from empty caches "
          f"(median of {args.stream_passes} passes):")
    for depth in (75, 100):
        row = measure_stream(runs, depth, args.stream_passes)
        show(f"{row['raw']:.0f} hits ({len(sources)} x {depth}), {row['new']:.0%} new", row)
    print("(averages over the queries: hits, unique, groups and tokens; 'new': the share of a query's hits "
          "whose text no earlier query returned)")


if __name__ == "__main__":
    main()
