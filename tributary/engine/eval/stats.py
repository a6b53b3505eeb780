"""Statistics over per-query scores: bootstrap confidence intervals and paired tests.

Queries are the unit of sampling: a variant's score is the mean of its per-query
values, its uncertainty a percentile bootstrap over queries (numpy, seeded, so a
report is reproducible), and two variants are compared on the *same* queries with
a paired t-test (``scipy.stats.ttest_rel``) and Cohen's d for paired samples
(d_z: mean difference / standard deviation of the differences).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 20240127
# Differences that vary less than this are constant (float noise such as 0.4-0.3 vs 0.7-0.6).
_FLAT = 1e-12


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean with its bootstrap confidence interval."""

    mean: float
    low: float
    high: float
    n: int

    def as_dict(self) -> dict[str, float | int]:
        return {"mean": self.mean, "low": self.low, "high": self.high, "n": self.n}

    def text(self, digits: int = 3) -> str:
        return f"{self.mean:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def bootstrap_ci(
    values: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> Estimate:
    """Mean and percentile-bootstrap interval of ``values`` (resampling with replacement)."""
    data = np.asarray(values, dtype=float)
    n = int(data.size)
    if n == 0:
        return Estimate(mean=0.0, low=0.0, high=0.0, n=0)
    mean = float(data.mean())
    if n == 1 or float(data.min()) == float(data.max()):
        return Estimate(mean=mean, low=mean, high=mean, n=n)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    means = data[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    # The percentile interval of a mean always brackets it for these sizes; clamp
    # anyway so floating-point quantile interpolation never reports mean ∉ [low, high].
    return Estimate(mean=mean, low=min(float(low), mean), high=max(float(high), mean), n=n)


@dataclass(frozen=True, slots=True)
class PairedTest:
    """Candidate minus baseline over the same queries."""

    n: int
    baseline_mean: float
    candidate_mean: float
    mean_diff: float
    t_statistic: float
    p_value: float
    cohens_d: float

    @property
    def effect(self) -> str:
        d = abs(self.cohens_d)
        if d < 0.2:
            return "negligible"
        if d < 0.5:
            return "small"
        if d < 0.8:
            return "medium"
        return "large"

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_value < alpha

    def as_dict(self) -> dict[str, float | int | str | bool]:
        return {
            "n": self.n,
            "baseline_mean": self.baseline_mean,
            "candidate_mean": self.candidate_mean,
            "mean_diff": self.mean_diff,
            "t_statistic": self.t_statistic,
            "p_value": self.p_value,
            "cohens_d": self.cohens_d,
            "effect": self.effect,
            "significant": self.significant(),
        }


def cohens_d_paired(
    baseline: Sequence[float] | npt.NDArray[np.float64],
    candidate: Sequence[float] | npt.NDArray[np.float64],
) -> float:
    """d_z = mean(candidate − baseline) / sd(candidate − baseline), sd with ddof=1.

    Identical differences (sd 0) give 0 when the mean difference is 0, else ±inf.
    """
    diff = np.asarray(candidate, dtype=float) - np.asarray(baseline, dtype=float)
    if diff.size < 2:
        return 0.0
    mean = float(diff.mean())
    sd = float(diff.std(ddof=1))
    if sd <= _FLAT:
        return 0.0 if abs(mean) <= _FLAT else math.copysign(math.inf, mean)
    return mean / sd


def paired_test(baseline: Sequence[float], candidate: Sequence[float]) -> PairedTest:
    """Paired t-test of candidate against baseline, with Cohen's d_z.

    With no variation in the differences the t-test is undefined: p is 1 when the
    two agree everywhere, 0 when they differ by the same non-zero amount everywhere.
    """
    if len(baseline) != len(candidate):
        raise ValueError("paired samples must have the same length")
    base = np.asarray(baseline, dtype=float)
    cand = np.asarray(candidate, dtype=float)
    n = int(base.size)
    diff = cand - base
    mean_diff = float(diff.mean()) if n else 0.0
    if n < 2 or float(diff.std(ddof=0)) <= _FLAT:
        t, p = (0.0, 1.0) if abs(mean_diff) <= _FLAT else (math.copysign(math.inf, mean_diff), 0.0)
    else:
        # scipy is the [eval] extra: imported here, so that what only shares this
        # module's types (``tributary eval code``, the experiment's data) runs without it.
        from scipy import stats as scipy_stats

        result = scipy_stats.ttest_rel(cand, base)
        t, p = float(result.statistic), float(result.pvalue)
    return PairedTest(
        n=n,
        baseline_mean=float(base.mean()) if n else 0.0,
        candidate_mean=float(cand.mean()) if n else 0.0,
        mean_diff=mean_diff,
        t_statistic=t,
        p_value=p,
        cohens_d=cohens_d_paired(base, cand),
    )
