"""``tributary eval``: measure retrieval quality on a repository's own history.

    tributary eval run DATASET_DIR [--out DIR]            index, query, score, report
    tributary eval build --repo PATH --split-at REV --out DIR
    tributary eval docstrings (--corpus PATH | --dataset DIR) --out DIR
    tributary eval latest                                  where the latest report is
    tributary eval code ANNOTATIONS.json --code PATH       an annotated code-search set

``run`` uses the product's default configuration unless ``--config`` names a file,
so the figures it prints are reproducible on any machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tributary.engine.cli.common import config_path, fail, run_async
from tributary.engine.paths import data_dir

if TYPE_CHECKING:
    from tributary.engine.config.schema import Config
    from tributary.engine.eval.codesearch import CodeQuery


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "eval", help="measure retrieval quality (datasets, A/B variants, ablation, report)",
        description="Evaluate retrieval on a dataset: recall@k, MRR, NDCG per fusion variant, "
        "with confidence intervals and significance tests.",
    )
    commands = parser.add_subparsers(dest="eval_command", metavar="COMMAND")

    run = commands.add_parser("run", help="index a dataset, run its queries, write the report")
    run.add_argument("dataset", help="dataset folder (corpus.json, tasks.jsonl, queries.jsonl)")
    run.add_argument("--out", help="report folder (default: <data dir>/eval/reports/<dataset>-<time>)")
    run.add_argument("--work-dir", help="where indexes and corpora are kept (default: <data dir>/eval)")
    run.add_argument("--max-queries", type=int, metavar="N", help="only the first N queries")
    run.add_argument("--no-publish", action="store_true",
                     help="do not copy the report to <data dir>/eval/latest")
    run.set_defaults(func=_run)

    build = commands.add_parser("build", help="make a dataset from a git repository's history")
    build.add_argument("--repo", required=True, help="the git repository")
    build.add_argument("--split-at", required=True, metavar="REV",
                       help="tasks from history up to REV, queries from the commits after it")
    build.add_argument("--out", required=True, help="dataset folder to write")
    build.add_argument("--head", default="HEAD", help="last commit to take queries from")
    build.add_argument("--ext", action="append", metavar=".py",
                       help="source file extensions that count as relevant (repeatable)")
    build.add_argument("--max-queries", type=int, metavar="N")
    build.set_defaults(func=_build)

    docs = commands.add_parser("docstrings", help="make docstring→function queries from a corpus")
    source = docs.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", help="a folder of Python code")
    source.add_argument("--dataset", help="use this dataset's corpus")
    docs.add_argument("--out", required=True, help="dataset folder to write")
    docs.add_argument("--max-queries", type=int, metavar="N")
    docs.set_defaults(func=_docstrings)

    code = commands.add_parser(
        "code", help="score code search on an annotated set (questions -> files or spans)",
        description="Index PATH, ask every question of ANNOTATIONS with the files source, and "
        "print NDCG@10, recall@10 and MRR under the chunk and file protocols, by category.",
    )
    code.add_argument("annotations", help="a JSON list of {query, relevant, secondary, category}")
    code.add_argument("--code", required=True, metavar="PATH", help="the checkout the targets are relative to")
    code.add_argument("--folder", default=".", metavar="SUB",
                      help="index only this folder of the checkout (default: all of it)")
    code.add_argument("--work-dir", help="where the index is kept (default: <data dir>/eval/code)")
    code.add_argument("--json", action="store_true", help="print the figures as JSON")
    code.set_defaults(func=_code)

    swe = commands.add_parser(
        "swebench", help="bug localisation: whole issues -> the files and functions their fix changed",
        description="For each instance (SWE-bench JSONL: instance_id, repo, base_commit, gold_files, "
        "problem_statement, golden_patch), check the repository out at base_commit, index it and its "
        "history up to that commit, ask the whole issue, and print file Acc@1/3/5/10 and MRR, function "
        "Acc@5/10, context recall and the BM25 baseline, per repository and split.",
    )
    swe.add_argument("instances", help="a JSONL file of instances")
    swe.add_argument("--clones", required=True, metavar="DIR",
                     help="folder holding a git clone of each repository as owner__name (or owner/name)")
    swe.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME",
                     help="only this repository's instances (repeatable)")
    swe.add_argument("--split", help="only instances of this split (lite, verified)")
    swe.add_argument("--limit", type=int, metavar="N", help="at most N instances per repository")
    swe.add_argument("--sources", default="files,tasks", help="built-in sources to ask (default: files,tasks)")
    swe.add_argument("--also-sources", action="append", default=[], metavar="LIST",
                     help="also ask only these of the sources (e.g. files) and report them beside, "
                     "from the same indexes in the same run (repeatable)")
    swe.add_argument("--no-embed", action="store_true", help="keyword and symbol search only (no embeddings)")
    swe.add_argument("--work-dir", help="checkouts and indexes (default: a folder under the temp dir)")
    swe.add_argument("--json", action="store_true", help="print the report as JSON")
    swe.set_defaults(func=_swebench)

    latest = commands.add_parser("latest", help="print the path of the latest report")
    latest.set_defaults(func=_latest)

    def usage(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=usage)


def _explicit_config(args: argparse.Namespace) -> Config | None:
    """The config named with ``--config``, else None (the eval's own default)."""
    explicit = config_path(args)
    if explicit is None:
        return None
    from tributary.engine.config.load import load_config

    return load_config(explicit)


def _progress(phase: str, done: int, total: int) -> None:
    if sys.stderr.isatty() and total:
        print(f"\r{phase}: {done}/{total}   ", end="", file=sys.stderr, flush=True)


def _missing_eval_extra() -> str | None:
    """What to install when the statistics and charts of a report are missing."""
    import importlib.util

    missing = [name for name in ("scipy", "matplotlib") if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    from tributary.engine.extras import install_hint

    return f"evaluation reports need {' and '.join(missing)}: install the eval extra: {install_hint('eval')}"


def _run(args: argparse.Namespace) -> int:
    if (missing := _missing_eval_extra()) is not None:
        return fail(missing)
    from tributary.engine.eval.datasets import DatasetError
    from tributary.engine.eval.run import evaluate

    dataset = Path(args.dataset).expanduser()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out).expanduser() if args.out else data_dir() / "eval" / "reports" / f"{dataset.name}-{stamp}"
    config = _explicit_config(args)

    async def main() -> int:
        try:
            done = await evaluate(
                dataset, out=out, config=config,
                work_dir=Path(args.work_dir).expanduser() if args.work_dir else None,
                max_queries=args.max_queries, publish=not args.no_publish,
                on_progress=_progress, log=lambda text: print(text, file=sys.stderr),
            )
        except DatasetError as exc:
            return fail(str(exc))
        if sys.stderr.isatty():
            print(file=sys.stderr)
        _print_summary(done.result)
        print(f"report: {done.paths['md']}")
        if done.latest is not None:
            print(f"latest: {done.latest}")
        return 0

    return run_async(main)


def _print_summary(result: object) -> None:
    from tributary.engine.eval.experiment import ExperimentResult

    assert isinstance(result, ExperimentResult)
    print(f"{'variant':<28} {'recall@10 (held-out)':<26} {'MRR (held-out)':<26}")
    for variant in result.variants:
        if variant.variant.group not in ("default", "source", "strategy"):
            continue
        name = variant.variant.name
        r, m = result.estimate(name, "recall@10", "test"), result.estimate(name, "mrr", "test")
        print(f"{name:<28} {r.text():<26} {m.text():<26}")
    if result.best:
        best = result.best
        print(f"best grid setting (tuned on the other half): {best['name']}: "
              f"recall@10 {best['test']['recall@10']['mean']:.3f}, MRR {best['test']['mrr']['mean']:.3f}")
    from tributary.engine.eval.run import CONTENT_KEY

    for key, value in result.meta.items():  # the content-level figures, beside the file-level ones
        if key.startswith(CONTENT_KEY):
            print(f"{key}: {value}")


def _code(args: argparse.Namespace) -> int:
    import hashlib
    import json
    from dataclasses import asdict

    from tributary.engine.eval.codesearch import (
        AnnotationError,
        load_annotations,
        run_code_dataset,
        unreachable_targets,
    )

    code = Path(args.code).expanduser().resolve()
    if not (code / args.folder).is_dir():
        return fail(f"--code {args.code} --folder {args.folder}: not a folder")
    try:
        queries = load_annotations(Path(args.annotations).expanduser())
    except AnnotationError as exc:
        return fail(str(exc))
    problem = _unreachable_note(unreachable_targets(queries, code, args.folder), queries, code, args)
    if problem is not None:
        return fail(problem)
    key = hashlib.sha256(str(code / args.folder).encode()).hexdigest()[:12]
    work = Path(args.work_dir).expanduser() if args.work_dir else data_dir() / "eval" / "code"
    config = _explicit_config(args)

    async def main() -> int:
        run = await run_code_dataset(queries, code, folder=args.folder, index_dir=work / f"{code.name}-{key}",
                                     config=config, on_progress=_progress)
        if sys.stderr.isatty():
            print(file=sys.stderr)
        summary = run.summary
        if args.json:
            print(json.dumps({
                "queries": summary.queries, "chunks": run.chunks, "index_s": round(run.index_s, 2),
                "overall": {p: asdict(s) for p, s in summary.overall.items()},
                "by_category": {c: {p: asdict(s) for p, s in by.items()} for c, by in summary.by_category.items()},
            }, indent=2, default=float))
            return 0
        print(f"{summary.queries} queries, {run.chunks} chunks (indexed in {run.index_s:.1f} s)")
        print(f"{'':<14} {'NDCG@10':>8} {'recall@10':>10} {'MRR':>6}   (chunk protocol | file protocol)")
        rows = [("all", summary.overall), *sorted(summary.by_category.items())]
        for name, by in rows:
            chunk, file = by["chunk"], by["file"]
            print(f"{name:<14} {chunk.ndcg:>8.3f} {chunk.recall:>10.3f} {chunk.mrr:>6.3f}   |"
                  f" {file.ndcg:.3f} {file.recall:.3f} {file.mrr:.3f}")
        return 0

    return run_async(main)


def _unreachable_note(missing: list[str], queries: list[CodeQuery], code: Path, args: argparse.Namespace) -> str | None:
    """Why some annotated files cannot be found: an error when none can (every figure
    would be zero), a warning on stderr when only some cannot; None when all can."""
    if not missing:
        return None
    total = len({target.path for query in queries for target in query.targets})
    listed = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    where = code if args.folder in ("", ".") else code / args.folder
    text = f"{len(missing)} of {total} annotated files are not files in {where} ({listed})"
    parent = code.parent
    if all((parent / path).is_file() for path in missing[:3]):
        text += f"; the targets are relative to the checkout: try --code {parent} --folder {code.name}"
    else:
        text += "; the targets are paths relative to --code, and --folder is the part of it indexed"
    if len(missing) == total:
        return text
    print(f"tributary: warning: {text}; they count as not found", file=sys.stderr)
    return None


def _swebench(args: argparse.Namespace) -> int:
    import json

    from tributary.engine.eval.swebench import (
        InstanceError,
        default_work_dir,
        load_instances,
        render,
        run_instances,
    )

    try:
        instances = load_instances(Path(args.instances).expanduser())
    except InstanceError as exc:
        return fail(str(exc))
    if args.repo:
        instances = [i for i in instances if i.repo in args.repo]
    if args.split:
        instances = [i for i in instances if args.split in i.splits]
    if args.limit is not None:
        kept: dict[str, int] = {}
        chosen = []
        for instance in instances:
            if kept.get(instance.repo, 0) < args.limit:
                kept[instance.repo] = kept.get(instance.repo, 0) + 1
                chosen.append(instance)
        instances = chosen
    if not instances:
        return fail(f"{args.instances}: no instance left to run")
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    unknown = sorted(set(sources) - {"files", "tasks"})
    if unknown or not sources:
        return fail(f"--sources {args.sources}: the built-in sources are files and tasks")
    also = [[s.strip() for s in listed.split(",") if s.strip()] for listed in args.also_sources]
    work = Path(args.work_dir).expanduser() if args.work_dir else default_work_dir()
    config = _explicit_config(args)

    async def main() -> int:
        try:
            report = await run_instances(instances, Path(args.clones).expanduser(), work, sources=sources,
                                         also=also, embed=not args.no_embed, config=config,
                                         on_progress=_progress)
        except InstanceError as exc:
            return fail(str(exc))
        if sys.stderr.isatty():
            print(file=sys.stderr)
        print(json.dumps(report.as_dict(), indent=1) if args.json else render(report))
        return 0

    return run_async(main)


def _build(args: argparse.Namespace) -> int:
    from tributary.engine.eval.gitbuild import DEFAULT_EXTENSIONS, GitBuildError, build_from_git

    exts = tuple(e if e.startswith(".") else f".{e}" for e in args.ext) if args.ext else DEFAULT_EXTENSIONS
    try:
        report = build_from_git(Path(args.repo), args.split_at, Path(args.out).expanduser(),
                                head=args.head, extensions=exts, max_queries=args.max_queries)
    except GitBuildError as exc:
        return fail(str(exc))
    print(f"{report.out}: {report.tasks} tasks up to {report.commit[:12]} "
          f"({report.split_date.date()}), {report.queries} queries after it")
    for why, count in sorted(report.dropped.items()):
        print(f"  dropped {count}: {why}")
    return 0


def _docstrings(args: argparse.Namespace) -> int:
    from tributary.engine.eval.datasets import DatasetError, corpus_root, load_dataset
    from tributary.engine.eval.docstrings import build_docstring_dataset

    try:
        corpus = Path(args.corpus) if args.corpus else corpus_root(load_dataset(args.dataset))
    except DatasetError as exc:
        return fail(str(exc))
    if not corpus.is_dir():
        return fail(f"{corpus} is not a folder")
    report = build_docstring_dataset(corpus, Path(args.out).expanduser(), max_queries=args.max_queries)
    print(f"{report.out}: {report.queries} queries from {report.functions} documented functions in "
          f"{report.python_files} Python files; {report.stripped} docstrings stripped from the corpus")
    for why, count in sorted(report.dropped.items()):
        print(f"  dropped {count}: {why}")
    return 0


def _latest(_args: argparse.Namespace) -> int:
    if (missing := _missing_eval_extra()) is not None:
        return fail(missing)
    from tributary.engine.eval.report import REPORT_MD, latest_dir

    path = latest_dir() / REPORT_MD
    if not path.is_file():
        return fail(f"no report yet ({path}); run `tributary eval run DATASET`")
    print(path)
    return 0
