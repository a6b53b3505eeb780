"""Evaluate retrieval on the shared benchmarks and print the figures.

    .venv/bin/python bench/eval_benchmarks.py [click pytest] [--work-dir DIR] [--out DIR]

For each benchmark folder under ``../shared/bench``: the whole ``tributary eval run``
(corpus download or cache, indexing, task import, one call per query per built-in
server, every variant re-fused, report written), timed end to end. Prints the
held-out table (recall@10 and MRR with 95 % bootstrap intervals) and where the
report is. Indexes are kept in the work dir, so a second run measures querying
and scoring only; pass a fresh ``--work-dir`` to time indexing too.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._avx2 import add_option, run_as_avx2
from bench._machine import load, machine
from tributary.engine.eval.run import CONTENT_KEY, evaluate

BENCH = Path(__file__).resolve().parent.parent.parent / "shared" / "bench"
TARGETS = {"pytest": (0.86, 0.75)}  # acceptance: default config, held-out half


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", default=["click", "pytest"])
    parser.add_argument("--bench", default=str(BENCH))
    parser.add_argument("--work-dir", default=None, help="indexes and corpora (default: <data dir>/eval)")
    parser.add_argument("--out", default="out/eval", help="reports go to OUT/<name>")
    add_option(parser)
    args = parser.parse_args()
    if args.avx2:
        run_as_avx2(sys.argv)
    print(f"machine: {machine()}; {load()}")
    for name in args.names:
        started = time.perf_counter()
        done = asyncio.run(evaluate(
            Path(args.bench) / name, out=Path(args.out) / name,
            work_dir=Path(args.work_dir) if args.work_dir else None,
            publish=name == args.names[-1],
            log=lambda text: print(f"  {text}", file=sys.stderr),
        ))
        elapsed = time.perf_counter() - started
        result = done.result
        print(f"\n== {name}: {len(result.queries)} queries, {elapsed:.0f} s end to end "
              f"({', '.join(f'{k} {v}' for k, v in result.meta.items() if '(s)' in k)})")
        print(f"{'variant':<28} {'held-out recall@10':<24} {'held-out MRR':<24} {'all recall@10':<14} all MRR")
        for variant in result.variants:
            if variant.variant.group == "grid":
                continue
            v = variant.variant.name
            print(f"{v:<28} {result.estimate(v, 'recall@10', 'test').text():<24} "
                  f"{result.estimate(v, 'mrr', 'test').text():<24} "
                  f"{result.estimate(v, 'recall@10').mean:<14.3f} {result.estimate(v, 'mrr').mean:.3f}")
        if result.best:
            b = result.best
            print(f"grid best on tune half: {b['name']} -> held-out recall@10 "
                  f"{b['test']['recall@10']['mean']:.3f}, MRR {b['test']['mrr']['mean']:.3f}")
        if result.adaptive:
            a = result.adaptive
            picks = ", ".join(f"{k}: {v}" for k, v in a["picks"].items())
            vs = a["vs_default_test"]
            print(f"query-adaptive ({picks}) vs default, held-out: recall@10 "
                  f"{vs['recall@10']['mean_diff']:+.3f} (p={vs['recall@10']['p_value']:.3f}), "
                  f"MRR {vs['mrr']['mean_diff']:+.3f} (p={vs['mrr']['p_value']:.3f})")
            for c in a["classes"]:
                print(f"  {c['class']:<11} {c['setting']:<24} tune/test {c['tune_queries']}/{c['test_queries']}: "
                      f"recall@10 {c['default']['recall@10']:.3f} -> {c['adaptive']['recall@10']:.3f}, "
                      f"MRR {c['default']['mrr']:.3f} -> {c['adaptive']['mrr']:.3f}")
        for key, value in result.meta.items():  # content-level figures beside the file-level ones
            if key.startswith(CONTENT_KEY):
                print(f"{key}: {value}")
        target = TARGETS.get(name)
        if target:
            r = result.estimate("default", "recall@10", "test").mean
            m = result.estimate("default", "mrr", "test").mean
            print(f"acceptance (default, held-out): recall@10 {r:.3f} (target {target[0]}), "
                  f"MRR {m:.3f} (target {target[1]}), time {elapsed:.0f} s (target < 600)")
        print(f"report: {done.paths['md']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
