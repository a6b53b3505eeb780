"""The experiment report: Markdown with tables, PNG plots (matplotlib, Agg) and JSON.

``write_report(result, out)`` writes ``report.md``, ``report.json``, ``per_query.jsonl``,
``recall_at_k.png`` and ``sources.png`` into ``out``; ``publish_latest`` copies a report
to ``tributary.engine.paths.data_dir()/eval/latest/`` where the desktop app opens it.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np

from tributary.engine.eval.experiment import HEADLINE, ExperimentResult, VariantResult
from tributary.engine.eval.metrics import DEFAULT_KS
from tributary.engine.eval.stats import PairedTest
from tributary.engine.paths import data_dir

REPORT_MD = "report.md"
REPORT_JSON = "report.json"
PER_QUERY = "per_query.jsonl"
RECALL_PNG = "recall_at_k.png"
SOURCES_PNG = "sources.png"


def latest_dir() -> Path:
    """Where the latest report lives; the GUI opens ``latest_dir() / "report.md"``."""
    return data_dir() / "eval" / "latest"


# --------------------------------------------------------------------------- JSON


def _finite(value: float) -> float | str:
    return value if math.isfinite(value) else ("inf" if value > 0 else "-inf" if value < 0 else "nan")


def _test_json(test: PairedTest) -> dict[str, Any]:
    return {k: _finite(v) if isinstance(v, float) else v for k, v in test.as_dict().items()}


def report_json(result: ExperimentResult) -> dict[str, Any]:
    return {
        "dataset": result.dataset,
        "meta": result.meta,
        "queries": len(result.queries),
        "splits": {name: len(ids) for name, ids in result.splits.items()},
        "baseline": result.baseline,
        "variants": [
            {
                **r.variant.as_dict(),
                "summary": {
                    split: {m: e.as_dict() for m, e in metrics.items()}
                    for split, metrics in result.summary[r.variant.name].items()
                },
                "vs_baseline": {
                    split: {m: _test_json(t) for m, t in tests.items()}
                    for split, tests in result.tests.get(r.variant.name, {}).items()
                },
            }
            for r in result.variants
        ],
        "ablations": {
            name: {split: {m: _test_json(t) for m, t in tests.items()} for split, tests in splits.items()}
            for name, splits in result.ablations.items()
        },
        "best": result.best,
        "adaptive": result.adaptive,
        "contributions": {
            str(k): {
                "relevant": c.relevant_total, "found": c.found, "unique": c.unique,
                "union": c.union, "shared": c.shared, "coverage": c.coverage,
                "complementarity": c.complementarity,
            }
            for k, c in result.contributions.items()
        },
        "source_errors": result.source_errors,
        "latency_ms": {s: _latency(v) for s, v in result.latency_ms.items()},
    }


def _latency(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "n": 0}
    arr = np.asarray(values, dtype=float)
    return {"p50": float(np.percentile(arr, 50)), "p95": float(np.percentile(arr, 95)), "n": len(values)}


# --------------------------------------------------------------------------- plots


def _curve_variants(result: ExperimentResult) -> list[VariantResult]:
    """Sources, strategies and the reference; the default last, so it is drawn on top."""
    shown = [r for r in result.variants if r.variant.group in ("source", "strategy", "reference")]
    return shown + [r for r in result.variants if r.variant.group == "default"]


def plot_recall_curves(result: ExperimentResult, path: Path, split: str = "test") -> Path:
    ks = list(DEFAULT_KS)
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=110)
    for r in _curve_variants(result):
        means = [result.summary[r.variant.name][split][f"recall@{k}"].mean for k in ks]
        style = {"source": "--", "reference": ":"}.get(r.variant.group, "-")
        if r.variant.name == "default":
            ax.plot(ks, means, "-", marker="o", linewidth=2.8, markersize=4, color="black",
                    zorder=5, label="default (the product)")
        else:
            ax.plot(ks, means, style, marker="o", linewidth=1.3, markersize=3, label=r.variant.name)
    ax.set_xscale("log")
    ax.set_xticks(ks)
    ax.set_xticklabels([str(k) for k in ks])
    ax.set_xlabel("k (files)")
    ax.set_ylabel("recall@k")
    ax.set_ylim(0, 1)
    ax.grid(True, alpha=0.3)
    ax.set_title(f"{result.dataset}: recall@k per variant ({split} split, n={len(result.splits[split])})")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_sources(result: ExperimentResult, path: Path, k: int = 10) -> Path:
    c = result.contributions[k]
    sources = sorted(c.found)
    total = max(c.relevant_total, 1)
    shared = [(c.found[s] - c.unique[s]) / total for s in sources]
    unique = [c.unique[s] / total for s in sources]
    labels = [*sources, "any source"]
    fig, ax = plt.subplots(figsize=(6.5, 4.0), dpi=110)
    x = np.arange(len(labels))
    ax.bar(x[:-1], shared, color="#6c8ebf", label="also found by another source")
    ax.bar(x[:-1], unique, bottom=shared, color="#d79b00", label="found only by this source")
    ax.bar(x[-1:], [c.coverage], color="#82b366", label="coverage (union)")
    for xi, value in zip(x, [*(a + b for a, b in zip(shared, unique, strict=True)), c.coverage], strict=True):
        ax.text(float(xi), value + 0.01, f"{value:.2f}", ha="center", fontsize=9)
    ax.set_xticks(x)
    ax.set_xticklabels(labels)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(f"share of relevant files in the source's top {k}")
    ax.set_title(f"{result.dataset}: per-source contribution (complementarity {c.complementarity:.2f})")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


# --------------------------------------------------------------------------- Markdown


def _p(test: PairedTest | None) -> str:
    if test is None:
        return "—"
    p = "<0.001" if test.p_value < 0.001 else f"{test.p_value:.3f}"
    d = f"{test.cohens_d:+.2f}" if math.isfinite(test.cohens_d) else ("+∞" if test.cohens_d > 0 else "−∞")
    return f"{test.mean_diff:+.3f} (p={p}, d={d})"


def _variant_table(result: ExperimentResult, split: str, groups: Sequence[str]) -> list[str]:
    lines = [
        f"| variant | recall@10 | MRR | P@10 | NDCG@10 | Δ recall@10 vs {result.baseline} | Δ MRR |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result.variants:
        if r.variant.group not in groups:
            continue
        s = result.summary[r.variant.name][split]
        tests = result.tests.get(r.variant.name, {}).get(split, {})
        name = f"**{r.variant.name}**" if r.variant.name == "default" else r.variant.name
        lines.append(
            f"| {name} | {s['recall@10'].text()} | {s['mrr'].text()} | {s['precision@10'].mean:.3f} "
            f"| {s['ndcg@10'].mean:.3f} | {_p(tests.get('recall@10'))} | {_p(tests.get('mrr'))} |"
        )
    return lines


def _ablation_table(result: ExperimentResult, split: str) -> list[str]:
    if not result.ablations:
        return []
    default = result.summary["default"][split]
    lines = [
        "| removed | recall@10 | MRR | Δ recall@10 vs default | Δ MRR vs default |",
        "|---|---|---|---|---|",
        f"| (nothing: default) | {default['recall@10'].text()} | {default['mrr'].text()} | | |",
    ]
    for name, splits in result.ablations.items():
        s = result.summary[name][split]
        tests = splits[split]
        lines.append(f"| {name.removeprefix('without ')} | {s['recall@10'].text()} | {s['mrr'].text()} "
                     f"| {_p(tests['recall@10'])} | {_p(tests['mrr'])} |")
    return lines


def _contribution_table(result: ExperimentResult) -> list[str]:
    lines = ["| k | source | relevant found | found only by it | coverage (any source) | complementarity |",
             "|---|---|---|---|---|---|"]
    for k, c in sorted(result.contributions.items()):
        for source in sorted(c.found):
            lines.append(f"| {k} | {source} | {c.share(source):.3f} | {c.unique_share(source):.3f} "
                         f"| {c.coverage:.3f} | {c.complementarity:.3f} |")
    return lines


def _best_section(result: ExperimentResult) -> list[str]:
    best = result.best
    if not best:
        return []
    lines = [
        "## Parameter grid",
        "",
        f"{best['grid_size']} settings; the best by {best['objective']} (then MRR) on the tuning half, "
        "reported on the held-out half it never saw:",
        "",
        "| setting | split | recall@10 | MRR |",
        "|---|---|---|---|",
    ]
    for split in ("tune", "test"):
        r, m = best[split]["recall@10"], best[split]["mrr"]
        lines.append(f"| {best['name']} | {split} | {r['mean']:.3f} [{r['low']:.3f}, {r['high']:.3f}] "
                     f"| {m['mean']:.3f} [{m['low']:.3f}, {m['high']:.3f}] |")
    vs = best.get("vs_default_test")
    if vs:
        lines += ["", f"Against the default on the held-out half: recall@10 {vs['recall@10']['mean_diff']:+.3f} "
                  f"(p={vs['recall@10']['p_value']:.3f}), MRR {vs['mrr']['mean_diff']:+.3f} "
                  f"(p={vs['mrr']['p_value']:.3f})."]
    return [*lines, ""]


def _adaptive_section(result: ExperimentResult) -> list[str]:
    adaptive = result.adaptive
    if not adaptive:
        return []
    lines = [
        "## Query-adaptive weights",
        "",
        f"Per query class, the best of {adaptive['candidates']} settings (fusion strategy × tasks:files "
        f"weight) by {adaptive['objective']} on that class's tuning queries, kept only if it beats the "
        f"default there and the class has at least {adaptive['min_tune_queries']} tuning queries; "
        "scored on the held-out half:",
        "",
        "| class | setting | tune / held-out queries | default recall@10 | adaptive | Δ (p) "
        "| default MRR | adaptive | Δ (p) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in adaptive["classes"]:
        r, m = c["tests"]["recall@10"], c["tests"]["mrr"]
        lines.append(
            f"| {c['class']} | {c['setting']} | {c['tune_queries']} / {c['test_queries']} "
            f"| {c['default']['recall@10']:.3f} | {c['adaptive']['recall@10']:.3f} "
            f"| {r['mean_diff']:+.3f} ({_pv(r['p_value'])}) | {c['default']['mrr']:.3f} "
            f"| {c['adaptive']['mrr']:.3f} | {m['mean_diff']:+.3f} ({_pv(m['p_value'])}) |")
    vs = adaptive["vs_default_test"]
    lines += ["", f"All held-out queries: recall@10 {vs['recall@10']['mean_diff']:+.3f} "
              f"({_pv(vs['recall@10']['p_value'])}), MRR {vs['mrr']['mean_diff']:+.3f} "
              f"({_pv(vs['mrr']['p_value'])}) against the default.", ""]
    return lines


def _pv(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.3f}" if math.isfinite(p) else "p=n/a"


def report_markdown(result: ExperimentResult) -> str:
    meta = result.meta
    n = {name: len(ids) for name, ids in result.splits.items()}
    lines = [
        f"# Retrieval evaluation: {result.dataset}",
        "",
        f"{n['all']} queries (tuning half {n['tune']}, held-out half {n['test']}, split by a hash of the "
        "query id). Files are ranked by the rank of their first hit. Intervals are 95 % bootstrap "
        "intervals over queries; Δ columns are paired t-tests against the baseline "
        f"`{result.baseline}` (mean difference, p-value, Cohen's d for paired samples).",
        "",
    ]
    if meta:
        lines += ["| run | value |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in meta.items()]
        lines.append("")
    groups = ("default", "source", "strategy", "weights", "rrf_k", "depth", "reference")
    lines += ["## Held-out half", "", *_variant_table(result, "test", groups), ""]
    lines += ["## All queries", "", *_variant_table(result, "all", groups), ""]
    if result.ablations:
        lines += ["## Ablation (held-out half)", "", *_ablation_table(result, "test"), ""]
    lines += _best_section(result)
    lines += _adaptive_section(result)
    lines += ["## Sources", "", *_contribution_table(result), ""]
    lat = {s: _latency(v) for s, v in result.latency_ms.items()}
    lines += ["| source | errors | latency p50 (ms) | p95 (ms) |", "|---|---|---|---|"]
    lines += [f"| {s} | {result.source_errors.get(s, 0)} | {v['p50']:.0f} | {v['p95']:.0f} |"
              for s, v in sorted(lat.items())]
    lines += ["", f"![recall@k]({RECALL_PNG})", "", f"![sources]({SOURCES_PNG})", ""]
    return "\n".join(lines)


def write_report(result: ExperimentResult, out: Path) -> dict[str, Path]:
    """Write every report file into ``out``; returns their paths by kind."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "md": out / REPORT_MD, "json": out / REPORT_JSON, "per_query": out / PER_QUERY,
        "recall_png": out / RECALL_PNG, "sources_png": out / SOURCES_PNG,
    }
    plot_recall_curves(result, paths["recall_png"])
    plot_sources(result, paths["sources_png"])
    paths["md"].write_text(report_markdown(result), encoding="utf-8")
    paths["json"].write_text(json.dumps(report_json(result), indent=2, default=str) + "\n", encoding="utf-8")
    with paths["per_query"].open("w", encoding="utf-8") as handle:
        for query in result.queries:
            row: dict[str, Any] = {"id": query.id, "relevant": list(query.relevant),
                                   "split": "tune" if query.id in result.splits["tune"] else "test"}
            row["variants"] = {
                r.variant.name: {"files": r.rankings[query.id][:10],
                                 **{m: r.per_query[query.id][m] for m in HEADLINE}}
                for r in result.variants if r.variant.group != "grid"
            }
            handle.write(json.dumps(row) + "\n")
    return paths


def publish_latest(out: Path, latest: Path | None = None) -> Path:
    """Copy a written report to the well-known place the GUI opens; returns report.md there."""
    target = latest or latest_dir()
    staging = target.with_name(target.name + ".tmp")
    if staging.exists():
        shutil.rmtree(staging)
    shutil.copytree(out, staging)
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return target / REPORT_MD
