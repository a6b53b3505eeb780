"""Code search on semble's annotated benchmark, beside the figures its authors published.

    .venv/bin/python bench/semble.py --checkouts DIR [--annotations DIR] [NAME ...]

``DIR/NAME`` is a checkout of each repository at its pinned commit (the table below; the
annotations' README says where they come from). Each one's folder is indexed and every
question asked of the default engine with the files source alone; NDCG@10, recall@10
and MRR are printed under the chunk protocol (how semble and CodeRankEmbed are scored)
and the file protocol (how ck is scored), with the published NDCG@10 beside them, then
the mean over the repositories that have published figures, by category too. With
``--grep-server COMMAND`` (mcp-ripgrep's) a grep server searching the same folder is
asked beside the files source, at ``--grep-weight``: what adding one costs or brings.
With ``--whole`` each whole checkout is indexed instead of its folder, tests, docs and
examples included, as a user adds a repository: the same questions and targets.
With ``--history`` (each checkout a git clone at its pinned commit) the whole checkout
and its history are indexed, and the tasks source is asked beside the files source, as
the app asks both by default.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._avx2 import add_option, run_as_avx2
from bench._machine import load, machine
from tributary.engine.config.schema import ServerConfig
from tributary.engine.eval.codesearch import CodeRun, Scores, load_annotations, run_code_dataset

ANNOTATIONS = Path(__file__).resolve().parents[2] / "shared" / "bench" / "semble" / "annotations"


@dataclass(frozen=True)
class Repo:
    name: str
    language: str
    commit: str
    folder: str
    semble: float | None = None  # published NDCG@10, chunk protocol
    coderank: float | None = None  # CodeRankEmbed hybrid, chunk protocol
    ck: float | None = None  # file protocol


REPOS = [
    Repo("fastapi", "python", "c3c9dd6b1a08", "fastapi", 0.784, 0.837, 0.648),
    Repo("gin", "go", "d3ffc9985281", ".", 0.890, 0.839, 0.481),
    Repo("zod", "typescript", "c7805073fef5", "packages/zod/src", 0.643, 0.558, 0.287),
    Repo("serde", "rust", "fa7da4a93567", ".", 0.725, 0.718, 0.345),
    Repo("fmtlib", "cpp", "382609a920d2", "include/fmt", 0.916, 0.888, 0.784),
    Repo("exposed", "kotlin", "7c80ed943b52", "exposed-core/src/main/kotlin", 0.648, 0.698, 0.483),
    Repo("chi", "go", "a54874f0e2f1", "."),
    Repo("trpc", "typescript", "c188dab0822c", "packages/server/src"),
    Repo("express", "javascript", "8e022edc9185", "lib"),
    Repo("sinatra", "ruby", "f891dd2b6f49", "lib"),
    Repo("phoenix", "elixir", "c88da921ef80", "lib"),
]


def _fmt(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "  -  "


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="only these repositories")
    parser.add_argument("--checkouts", required=True, type=Path, help="folder holding NAME/ checkouts")
    parser.add_argument("--annotations", type=Path, default=ANNOTATIONS)
    parser.add_argument("--work-dir", type=Path, help="where indexes are kept (default: a temporary folder, removed at the end)")
    parser.add_argument("--grep-server", metavar="COMMAND",
                        help="a grep MCP server (mcp-ripgrep's command) asked beside the files source, "
                             "its search tool given the checkout's folder as `path`")
    parser.add_argument("--grep-weight", type=float, default=1.0, metavar="W", help="its weight (default 1)")
    parser.add_argument("--whole", action="store_true",
                        help="index each whole checkout, tests, docs and examples included, as a user "
                             "adds a repository; the questions and their targets stay the same")
    parser.add_argument("--history", action="store_true",
                        help="each checkout a git clone at its pinned commit: the whole checkout and its "
                             "history are indexed and the tasks source asked beside the files source, as "
                             "the app asks both by default")
    add_option(parser)
    args = parser.parse_args()
    if args.avx2:
        run_as_avx2(sys.argv)
    if args.work_dir is not None:
        return _run(args, args.work_dir)
    with tempfile.TemporaryDirectory(prefix="semble-") as scratch:
        return _run(args, Path(scratch))


def _run(args: argparse.Namespace, work: Path) -> int:
    """Index and ask every chosen repository under ``work``, then print the tables."""
    chosen = [r for r in REPOS if not args.names or r.name in args.names]
    runs: dict[str, CodeRun] = {}
    print(f"machine: {machine()}; {load()}")
    print(f"{'repo':<9} {'lang':<11} {'chunks':>6} {'index s':>8}  {'NDCG chunk':>10} {'file':>6} "
          f"{'R@10':>6} {'MRR':>6}   {'semble':>6} {'CRE-h':>6} {'ck':>6}")
    for repo in chosen:
        if args.whole or args.history:
            repo = replace(repo, folder=".")
        checkout = args.checkouts / repo.name
        annotations = args.annotations / f"{repo.name}.json"
        if not (checkout / repo.folder).is_dir() or not annotations.is_file():
            print(f"{repo.name:<9} (no checkout at {checkout / repo.folder} or no annotations: skipped)")
            continue
        beside = [] if args.grep_server is None else [ServerConfig(
            name="grep", command=args.grep_server, tool="search", weight=args.grep_weight, timeout=30.0,
            arguments={"path": str((checkout / repo.folder).resolve())})]
        run = asyncio.run(run_code_dataset(load_annotations(annotations), checkout, folder=repo.folder,
                                           index_dir=work / repo.name, beside=beside,
                                           history=args.history))
        runs[repo.name] = run
        chunk, file = run.summary.overall["chunk"], run.summary.overall["file"]
        print(f"{repo.name:<9} {repo.language:<11} {run.chunks:>6} {run.index_s:>8.1f}  {chunk.ndcg:>10.3f} "
              f"{file.ndcg:>6.3f} {chunk.recall:>6.3f} {chunk.mrr:>6.3f}   {_fmt(repo.semble):>6} "
              f"{_fmt(repo.coderank):>6} {_fmt(repo.ck):>6}", flush=True)
    published = [r for r in chosen if r.semble is not None and r.name in runs]
    if published:
        names = ", ".join(r.name for r in published)
        ours = _mean([runs[r.name].summary.overall["chunk"].ndcg for r in published])
        ours_file = _mean([runs[r.name].summary.overall["file"].ndcg for r in published])
        print(f"\nmean over the repositories with published figures ({names}):")
        print(f"  Tributary NDCG@10 {ours:.3f} (chunk), {ours_file:.3f} (file);"
              f" semble {_mean([r.semble or 0 for r in published]):.3f},"
              f" CodeRankEmbed hybrid {_mean([r.coderank or 0 for r in published]):.3f},"
              f" ck {_mean([r.ck or 0 for r in published]):.3f} (file)")
        below = [r.name for r in published if r.ck is not None and runs[r.name].summary.overall["file"].ndcg < r.ck]
        print(f"  below ck's figure: {', '.join(below) or 'none'}")
    categories = sorted({c for run in runs.values() for c in run.summary.by_category})
    if runs:
        print("\nby category (mean over every repository run, chunk protocol NDCG@10):")
        for category in categories:
            scores: list[Scores] = [run.summary.by_category[category]["chunk"] for run in runs.values()
                                    if category in run.summary.by_category]
            print(f"  {category:<13} {_mean([s.ndcg for s in scores]):.3f} over {len(scores)} repositories")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
