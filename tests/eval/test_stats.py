"""Bootstrap intervals and paired tests on constructed samples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tributary.engine.eval.stats import bootstrap_ci, cohens_d_paired, paired_test


def test_bootstrap_interval_contains_the_mean_and_is_reproducible() -> None:
    rng = np.random.default_rng(1)
    values = rng.random(80).tolist()
    first = bootstrap_ci(values, seed=7)
    again = bootstrap_ci(values, seed=7)
    assert first == again
    assert first.low < first.mean < first.high
    assert first.mean == pytest.approx(float(np.mean(values)))
    # about 2 standard errors each side for a 95 % interval
    se = float(np.std(values, ddof=1)) / math.sqrt(len(values))
    assert 3.0 * se < first.high - first.low < 5.0 * se


def test_bootstrap_of_constant_or_empty_values() -> None:
    flat = bootstrap_ci([0.5, 0.5, 0.5])
    assert (flat.mean, flat.low, flat.high) == (0.5, 0.5, 0.5)
    empty = bootstrap_ci([])
    assert empty.n == 0 and empty.mean == 0.0


def test_paired_t_test_and_cohens_d_by_hand() -> None:
    baseline = [0.1, 0.2, 0.3, 0.4]
    candidate = [0.2, 0.4, 0.4, 0.6]  # differences 0.1, 0.2, 0.1, 0.2
    test = paired_test(baseline, candidate)
    # mean diff 0.15, sd (n-1) 0.0577: t = 0.15 / (0.0577 / 2) = 5.196; d_z = 0.15 / 0.0577 = 2.598
    assert test.mean_diff == pytest.approx(0.15)
    assert test.t_statistic == pytest.approx(5.196152, rel=1e-5)
    assert test.p_value == pytest.approx(0.0138468, rel=1e-4)
    assert test.cohens_d == pytest.approx(2.598076, rel=1e-5)
    assert test.effect == "large"
    assert test.significant()


def test_paired_test_is_antisymmetric() -> None:
    a, b = [0.2, 0.5, 0.9, 0.4, 0.3], [0.3, 0.4, 1.0, 0.6, 0.3]
    forward, backward = paired_test(a, b), paired_test(b, a)
    assert forward.t_statistic == pytest.approx(-backward.t_statistic)
    assert forward.p_value == pytest.approx(backward.p_value)
    assert forward.cohens_d == pytest.approx(-backward.cohens_d)


def test_paired_test_without_variation() -> None:
    same = paired_test([0.3, 0.6], [0.3, 0.6])
    assert same.p_value == 1.0 and same.cohens_d == 0.0 and not same.significant()
    shifted = paired_test([0.3, 0.6], [0.4, 0.7])
    assert shifted.p_value == 0.0 and math.isinf(shifted.cohens_d) and shifted.cohens_d > 0
    with pytest.raises(ValueError):
        paired_test([1.0], [1.0, 2.0])


def test_cohens_d_small_effect() -> None:
    base = [0.0] * 10
    cand = [0.1, -0.1] * 5
    cand[0] = 0.3  # mean 0.02, sd ≈ 0.1317
    assert cohens_d_paired(base, cand) == pytest.approx(0.02 / float(np.std(cand, ddof=1)))
