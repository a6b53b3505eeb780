"""Does confidence tell a real question from nonsense? Figures on two kinds of question.

    .venv/bin/python bench/confidence.py --checkouts DIR [--bench DIR] [--work-dir DIR]
                                         [--nonsense 200] [--fit] [--keyword-only]

Runs the pytest benchmark's 195 real queries (commit messages; the files and tasks
sources over the benchmark's indexes, prepared as ``tributary eval run`` does) and
``--nonsense`` queries of 2-6 random words from the system dictionary
(``/usr/share/dict/words``, Debian's ``wamerican``; fixed seed) through the engine; and
semble's 202 annotated code-search questions over the repositories checked out in
``--checkouts`` (as ``bench/semble.py`` takes them: the files source alone, as for a
repository indexed without its history), with 20 nonsense queries for each. Prints for
each set, on the held-out half (the eval's split; semble's every other question;
nonsense split alike) and on all queries: the AUC of the answer's confidence (real
against nonsense), the share of nonsense flagged not confident (target >= 90 %) and of
real queries wrongly flagged (target <= 5 %).

``--fit`` fits ``tributary.engine.pipeline.confidence.CONFIDENCE_MODEL`` on both tune
halves: a logistic regression of "this hit's file is relevant" on the hits' signals
(nonsense hits are never relevant; a signal fit below zero is left out, since it can
only be evidence for relevance), and the bar as the confidence that flags at most 2 %
of the tune halves' real queries; it prints the model to paste into that module. The
signals of every query are kept in the work dir, so a second run costs no queries.

``--keyword-only`` judges ``KEYWORD_ONLY_MODEL``, the model for answers that hold no
meaning-based evidence (the model is loading, the vectors are not made yet, or the index
was built without them), on each answer's keyword hits with their cosine left out. With
``--fit`` it moves that model's intercept so that ``CONFIDENCE_MODEL``'s bar flags as
few real questions as it does there, and keeps the other weights: refitting them per
hit without the cosine tells real questions from nonsense worse (AUC 0.88 against 0.98
on the held-out half).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import platform
import random
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.semble import ANNOTATIONS, REPOS
from tributary.engine.config.schema import Config
from tributary.engine.engine import Engine
from tributary.engine.eval.codesearch import hits_located, load_annotations
from tributary.engine.eval.datasets import load_dataset
from tributary.engine.eval.experiment import FILES, tune_ids
from tributary.engine.eval.retrieval import (
    PathMapper,
    corpus_files,
    default_work_dir,
    eval_config,
    prepare,
)
from tributary.engine.index.manager import index_repository
from tributary.engine.model import Hit, SearchRequest, SearchResponse
from tributary.engine.pipeline.confidence import (
    CONFIDENCE_MODEL,
    KEYWORD_ONLY_MODEL,
    SIGNALS,
    TOP_HITS,
    ConfidenceModel,
    query_words,
    signal_rows,
)

BENCH = Path(__file__).resolve().parent.parent.parent / "shared" / "bench"
DICTIONARY = Path("/usr/share/dict/words")
SEED = 20240719
MAX_WRONGLY_FLAGGED = 0.02  # the bar is set on the tune halves well under the 5 % target
SEMBLE_NONSENSE = 20  # nonsense queries asked of each semble repository
# A signal the tune half never shows (the benchmark's commit messages look up no names,
# so no hit has ``symbol``) cannot be fit: it keeps this weight, set by hand.
PRIOR_WEIGHTS = {"symbol": 2.0}


def nonsense_queries(count: int, seed: int = SEED) -> list[str]:
    """``count`` queries of 2-6 random dictionary words (no names, no possessives)."""
    words = [w for w in DICTIONARY.read_text(encoding="utf-8").split()
             if re.fullmatch(r"[a-z]{3,}", w)]
    rng = random.Random(seed)
    return [" ".join(rng.sample(words, rng.randint(2, 6))) for _ in range(count)]


async def collect(bench: Path, work_dir: Path | None, nonsense: list[str]) -> list[dict[str, Any]]:
    dataset = load_dataset(bench / "pytest")
    prepared = prepare(dataset, work_dir=work_dir)
    mapper = PathMapper(prepared.corpus, prepared.corpus_files)
    config = eval_config(Config(), prepared.index_dir, prepared.sources)
    engine = Engine(config)
    rows: list[dict[str, Any]] = []
    tune = set(tune_ids([q.id for q in dataset.queries]))
    asked = [(q.id, q.query, set(q.relevant), q.id in tune) for q in dataset.queries]
    asked += [(f"nonsense-{i}", text, set(), i % 2 == 0) for i, text in enumerate(nonsense)]
    try:
        await engine.start_sources(prepared.sources)
        for n, (qid, text, relevant, in_tune) in enumerate(asked, 1):
            response = await engine.search(SearchRequest(query=text, assemble=False, use_cache=False))
            rows.append(_row(qid, text, response, in_tune, relevant,
                             lambda hit: mapper(hit.path) if hit.path else None))
            if n % 50 == 0:
                print(f"  {n}/{len(asked)} queries", file=sys.stderr)
    finally:
        await engine.aclose()
    return rows


async def collect_semble(checkouts: Path, work_dir: Path, nonsense: list[str]) -> list[dict[str, Any]]:
    """Semble's questions of each repository checked out in ``checkouts``, and
    ``SEMBLE_NONSENSE`` of ``nonsense`` each, asked with the files source alone."""
    rows: list[dict[str, Any]] = []
    for number, repo in enumerate(REPOS):
        root = (checkouts / repo.name / repo.folder).resolve()
        annotations = ANNOTATIONS / f"{repo.name}.json"
        if not root.is_dir() or not annotations.is_file():
            print(f"  {repo.name}: no checkout at {root} or no annotations: skipped", file=sys.stderr)
            continue
        index_dir = work_dir / "semble" / repo.name
        index_repository(root, index_dir=index_dir)
        path_of = _checkout_path(root, corpus_files(root), repo.folder)
        own = nonsense[number * SEMBLE_NONSENSE : (number + 1) * SEMBLE_NONSENSE]
        asked = [(f"{repo.name}-{n}", q.query, {t.path for t in q.targets})
                 for n, q in enumerate(load_annotations(annotations))]
        asked += [(f"{repo.name}-nonsense-{n}", text, set()) for n, text in enumerate(own)]
        engine = Engine(eval_config(Config(), index_dir, [FILES]))
        try:
            await engine.start_sources([FILES])
            for n, (qid, text, relevant) in enumerate(asked):
                response = await engine.search(
                    SearchRequest(query=text, sources=[FILES], assemble=False, use_cache=False))
                rows.append(_row(qid, text, response, n % 2 == 0, relevant, path_of))
        finally:
            await engine.aclose()
        print(f"  semble {repo.name}: {len(asked)} queries", file=sys.stderr)
    return rows


def _checkout_path(root: Path, files: frozenset[str], folder: str) -> Callable[[Hit], str | None]:
    """A hit's path relative to the checkout, as semble's annotations name files."""
    def path_of(hit: Hit) -> str | None:
        return next((located.path for located in hits_located([hit], root, files, folder)), None)
    return path_of


def _row(qid: str, text: str, response: SearchResponse, tune: bool, relevant: set[str],
         path_of: Callable[[Hit], str | None]) -> dict[str, Any]:
    """One query's kept record: its first hits' signals and which of them are relevant
    (``path_of`` gives a hit's path as ``relevant`` names files)."""
    by_kept = {g.kept.id: g for g in response.groups}
    hits = response.hits[:TOP_HITS]
    return {
        "id": qid, "real": bool(relevant), "tune": tune, "words": len(query_words(text)),
        "signals": signal_rows(hits, by_kept, text),
        "relevant": [path_of(hit) in relevant for hit in hits],
    }


def overall(row: dict[str, Any], model: ConfidenceModel) -> float:
    if not row["words"]:
        return 0.0
    return max((model.probability(s) for s in row["signals"]), default=0.0)


def auc(positives: list[float], negatives: list[float]) -> float:
    from sklearn.metrics import roc_auc_score

    labels = [1] * len(positives) + [0] * len(negatives)
    return float(roc_auc_score(labels, positives + negatives))


def fit(rows: list[dict[str, Any]]) -> ConfidenceModel:
    from sklearn.linear_model import LogisticRegression

    x: list[list[float]] = []
    y: list[int] = []
    for row in rows:
        if row["tune"]:
            for signals, relevant in zip(row["signals"], row["relevant"], strict=True):
                x.append([signals[name] for name in SIGNALS])
                y.append(int(relevant))
    used = list(range(len(SIGNALS)))
    while True:
        model = LogisticRegression(C=1.0, max_iter=1000).fit([[row[i] for i in used] for row in x], y)
        below = [i for i, w in zip(used, model.coef_[0], strict=True) if w < 0]
        if not below:
            break
        used = [i for i in used if i not in below]  # a signal that can only be evidence for relevance
    weights = {SIGNALS[i]: round(float(w), 3) for i, w in zip(used, model.coef_[0], strict=True)}
    for i, name in enumerate(SIGNALS):
        if name in PRIOR_WEIGHTS and len({row[i] for row in x}) == 1:
            weights[name] = PRIOR_WEIGHTS[name]
    draft = ConfidenceModel(weights, round(float(model.intercept_[0]), 3), 0.0)
    real = sorted(overall(r, draft) for r in rows if r["tune"] and r["real"])
    bar = real[int(len(real) * MAX_WRONGLY_FLAGGED)] if real else 0.5
    return ConfidenceModel(weights, draft.intercept, round(bar - 1e-4, 4))


def keyword_hits(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` as a keyword-only answer would give it: its keyword hits, no cosine."""
    kept = [(dict(signals, cosine=0.0), relevant)
            for signals, relevant in zip(row["signals"], row["relevant"], strict=True) if signals["keyword"]]
    return dict(row, signals=[s for s, _ in kept], relevant=[r for _, r in kept])


def fit_bar(rows: list[dict[str, Any]], like: ConfidenceModel) -> ConfidenceModel:
    """``like``'s weights without the cosine and ``like``'s bar, the intercept moved so
    that the bar flags at most ``MAX_WRONGLY_FLAGGED`` of the tune half's real queries
    (a confidence then reads the same whichever model gave it)."""
    draft = ConfidenceModel({k: w for k, w in like.weights.items() if k != "cosine"}, like.intercept, 0.0)
    real = sorted(overall(r, draft) for r in rows if r["tune"] and r["real"])
    quantile = real[int(len(real) * MAX_WRONGLY_FLAGGED)] if real else 0.5
    shift = _logit(like.bar) - _logit(quantile)
    return ConfidenceModel(draft.weights, round(like.intercept + shift + 1e-3, 3), like.bar)


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def report(sets: dict[str, list[dict[str, Any]]], model: ConfidenceModel) -> None:
    print(f"model: weights {dict(model.weights)}, intercept {model.intercept}, bar {model.bar}")
    print(f"{'set':<8} {'split':<10} {'AUC':>6} {'nonsense flagged':>18} {'real flagged':>14} "
          f"{'median conf real/nonsense':>27}")
    for name, rows in sets.items():
        for label, chosen in (("held-out", [r for r in rows if not r["tune"]]), ("all", rows)):
            real = [overall(r, model) for r in chosen if r["real"]]
            noise = [overall(r, model) for r in chosen if not r["real"]]
            if not real or not noise:
                continue
            flagged_noise = sum(c < model.bar for c in noise) / len(noise)
            flagged_real = sum(c < model.bar for c in real) / len(real)
            print(f"{name:<8} {label:<10} {auc(real, noise):>6.3f} {flagged_noise:>17.1%} {flagged_real:>13.1%} "
                  f"{statistics.median(real):>13.3f}/{statistics.median(noise):.3f}"
                  f"   ({len(real)} real, {len(noise)} nonsense)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkouts", type=Path, help="folder of semble's NAME/ checkouts (bench/semble.py)")
    parser.add_argument("--bench", default=str(BENCH), help="the shared benchmarks folder")
    parser.add_argument("--work-dir", default=None, help="indexes and corpora (default: the eval's)")
    parser.add_argument("--nonsense", type=int, default=200)
    parser.add_argument("--fit", action="store_true", help="fit the model on the tune halves")
    parser.add_argument("--fresh", action="store_true", help="ask the engine again (ignore kept signals)")
    parser.add_argument("--keyword-only", action="store_true",
                        help="the model for answers without meaning-based evidence (no cosine)")
    args = parser.parse_args()
    work = Path(args.work_dir) if args.work_dir else default_work_dir()
    sets: dict[str, list[dict[str, Any]]] = {}
    kept = work / "confidence-signals.json"
    if kept.exists() and not args.fresh:
        sets["pytest"] = json.loads(kept.read_text())
    else:
        sets["pytest"] = asyncio.run(collect(Path(args.bench), work, nonsense_queries(args.nonsense)))
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(json.dumps(sets["pytest"]))
    kept = work / "confidence-semble.json"
    if kept.exists() and not args.fresh:
        sets["semble"] = json.loads(kept.read_text())
    elif args.checkouts:
        nonsense = nonsense_queries(SEMBLE_NONSENSE * len(REPOS), seed=SEED + 1)
        sets["semble"] = asyncio.run(collect_semble(args.checkouts, work, nonsense))
        kept.write_text(json.dumps(sets["semble"]))
    else:
        print("no --checkouts: semble's questions are left out", file=sys.stderr)
    rows = [row for chosen in sets.values() for row in chosen]
    if args.keyword_only:
        sets = {name: [keyword_hits(row) for row in chosen] for name, chosen in sets.items()}
        keyword_rows = [row for chosen in sets.values() for row in chosen]
        model = fit_bar(keyword_rows, fit(rows)) if args.fit else KEYWORD_ONLY_MODEL
    else:
        model = fit(rows) if args.fit else CONFIDENCE_MODEL
    report(sets, model)
    print(f"machine: {platform.machine()}, {_cpu()}, Python {platform.python_version()}")
    return 0


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
