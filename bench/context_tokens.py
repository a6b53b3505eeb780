"""Tokens of the budgeted context versus a naive top-30 concatenation.

    .venv/bin/python bench/context_tokens.py [pytest] [--work-dir DIR] [--top N]

Reads the raw hits ``bench/eval_benchmarks.py`` stored (every built-in source's answer
to every benchmark query; run that first) and, per query, builds two contexts:

- **budgeted**: what ``tributary context`` gives an LLM — the pipeline's dedup, fusion,
  top 30, token budget (8,000 − 1,000 reserved) and Markdown assembly;
- **naive**: the sources' own top hits interleaved by rank (files #1, tasks #1,
  files #2, …), the first 30 concatenated whole — what pasting every server's answer
  into a prompt gives.

For each it prints mean tokens (MiniLM WordPiece, the pipeline's counter) and mean
file recall (relevant files whose content made it into the text); for the budgeted
context also the content-level figures (``tributary.engine.eval.content``: context recall and
precision, chunk MRR/NDCG@10; recall and the chunk figures need a dataset whose
queries carry the changed lines, ``bench/derive_spans.py``). "At equal recall"
finds the smallest N for which the naive top-N (one N for every query, as a fixed
setting would be) reaches the budgeted context's mean recall, and prints its tokens.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tributary.engine.config.schema import Config
from tributary.engine.eval.content import evaluate_content, summarise
from tributary.engine.eval.datasets import load_dataset
from tributary.engine.eval.experiment import QueryRun
from tributary.engine.eval.retrieval import (
    PathMapper,
    eval_config,
    load_runs,
    prepare,
    raw_runs_path,
)
from tributary.engine.eval.run import RAW_TOP_K
from tributary.engine.model import Hit, ScoreParts, SearchRequest
from tributary.engine.pipeline import run_pipeline
from tributary.engine.pipeline.tokens import count_tokens

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"


@dataclass(slots=True)
class Outcome:
    tokens: int
    found: int  # relevant files in the text
    relevant: int

    @property
    def recall(self) -> float:
        return self.found / self.relevant if self.relevant else 0.0


def load(name: str, work_dir: Path | None, bench: Path = BENCH) -> tuple[list[QueryRun], PathMapper, Path]:
    dataset = load_dataset(bench / name)
    prepared = prepare(dataset, work_dir=work_dir)
    config = eval_config(Config(), prepared.index_dir, prepared.sources)
    raw = raw_runs_path(prepared, config, dataset.queries, RAW_TOP_K)
    runs = load_runs(raw, dataset.queries)
    if runs is None:
        sys.exit(f"no raw hits at {raw}: run bench/eval_benchmarks.py {name} first (same --work-dir)")
    return runs, PathMapper(prepared.corpus, prepared.corpus_files), prepared.index_dir


def fresh(hits: Iterable[Hit]) -> list[Hit]:
    return [replace(h, parts=ScoreParts(), metadata=dict(h.metadata)) for h in hits]


def interleaved(run: QueryRun) -> list[Hit]:
    """The sources' hits by rank, taking turns: what concatenating their answers gives."""
    lists = [run.hits[s] for s in sorted(run.hits)]
    out: list[Hit] = []
    for rank in range(max((len(x) for x in lists), default=0)):
        out.extend(x[rank] for x in lists if rank < len(x))
    return out


def relevant_in(paths: Iterable[str | None], relevant: set[str], path_of: PathMapper) -> int:
    return len({p for p in (path_of(x) for x in paths if x) if p in relevant})


def budgeted(run: QueryRun, path_of: PathMapper, top: int) -> Outcome:
    request = SearchRequest(query=run.query.query, top_k=top, use_cache=False)
    result = run_pipeline({s: fresh(h) for s, h in run.hits.items()}, request,
                          weights=run.weights)
    context = result.context
    assert context is not None
    by_id = {h.id: h for h in result.ranked}
    paths = [by_id[c.hit_id].path for c in context.chunks if c.hit_id in by_id]
    relevant = set(run.query.relevant)
    return Outcome(context.token_count, relevant_in(paths, relevant, path_of), len(relevant))


def naive(hits: Sequence[Hit], relevant: set[str], path_of: PathMapper) -> Outcome:
    text = "\n\n".join(h.content for h in hits)
    return Outcome(count_tokens(text), relevant_in((h.path for h in hits), relevant, path_of), len(relevant))


def naive_at_equal_recall(orders: Sequence[Sequence[Hit]], relevant: Sequence[set[str]],
                          path_of: PathMapper, target: float) -> tuple[int, list[Outcome]] | None:
    """The smallest N whose naive top-N reaches mean recall ``target``, and its outcomes."""
    longest = max((len(o) for o in orders), default=0)
    for n in range(1, longest + 1):
        outs = [naive(order[:n], rel, path_of) for order, rel in zip(orders, relevant, strict=True)]
        if statistics.mean(o.recall for o in outs) >= target:
            return n, outs
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", default="pytest")
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--bench", default=str(BENCH), help="the benchmarks folder (e.g. one with spans)")
    args = parser.parse_args()
    runs, path_of, index_dir = load(args.name, Path(args.work_dir) if args.work_dir else None, Path(args.bench))

    ours = [budgeted(run, path_of, args.top) for run in runs]
    orders = [interleaved(run) for run in runs]
    relevant = [set(run.query.relevant) for run in runs]
    theirs = [naive(o[: args.top], rel, path_of) for o, rel in zip(orders, relevant, strict=True)]

    def row(label: str, outs: Sequence[Outcome]) -> str:
        tokens = [o.tokens for o in outs]
        return (f"{label:<40} tokens mean {statistics.mean(tokens):>7.0f}  p50 {statistics.median(tokens):>7.0f}"
                f"  max {max(tokens):>7}   file recall {statistics.mean(o.recall for o in outs):.3f}")

    print(f"{args.name}: {len(runs)} queries, top {args.top}, budget 7,000 tokens (8,000 − 1,000 reserved)")
    print(row("budgeted context (dedup+fuse+fit)", ours))
    content = summarise(list(evaluate_content(runs, sorted(index_dir.glob("*.files.sqlite")), path_of).values()))
    print(f"{'':<40} {content.text()}")
    print(row(f"naive top-{args.top} concatenation", theirs))
    target = statistics.mean(o.recall for o in ours)
    found = naive_at_equal_recall(orders, relevant, path_of, target)
    if found is None:
        print(f"the naive order never reaches recall {target:.3f}, at any N")
    else:
        n, outs = found
        print(row(f"naive top-{n} (first N at equal recall)", outs))
        ratio = statistics.mean(o.tokens for o in outs) / statistics.mean(o.tokens for o in ours)
        print(f"at equal recall the naive concatenation needs {ratio:.2f}x the budgeted context's tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
