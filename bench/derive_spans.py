"""Add the changed lines to a shared benchmark's queries, from the project's git history.

    .venv/bin/python bench/derive_spans.py REPO DATASET OUT

The shared benchmarks (``../shared/bench/pytest``, ``click``) name the files each query
commit changed, not the lines. Given a clone of the project (``REPO``, holding the
snapshot commit of ``corpus.json`` and the query commits), this writes a copy of the
``DATASET`` folder to ``OUT`` whose queries carry ``spans``: the snapshot's line ranges
the commit changed in each relevant file (``tributary.engine.eval.gitspans``). ``tributary eval
run OUT`` then reports the content-level figures (context recall, chunk MRR/NDCG).
A query whose commit the clone lacks keeps no spans and is left out of those figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tributary.engine.eval.datasets import load_dataset
from tributary.engine.eval.gitspans import SpanError, changed_spans


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    dataset = load_dataset(args.dataset)
    snapshot = dataset.corpus.get("snapshot_commit")
    if not snapshot:
        sys.exit(f"{args.dataset}/corpus.json names no snapshot_commit")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("corpus.json", "tasks.jsonl"):
        shutil.copyfile(args.dataset / name, args.out / name)
    with_spans = missing = 0
    with (args.out / "queries.jsonl").open("w", encoding="utf-8") as out:
        for line in (args.dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            relevant = list(row["relevant"])
            try:
                spans = changed_spans(args.repo, str(snapshot), str(row["id"]), relevant)
            except SpanError as exc:
                print(f"  {row['id']}: {exc}", file=sys.stderr)
                spans, missing = (), missing + 1
            if spans:
                row["spans"] = [s.to_json() for s in spans]
                with_spans += 1
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{with_spans} of {len(dataset.queries)} queries with spans ({missing} commits not found) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
