"""The Kaufmann & Koolen (2021) thresholds of the GLR stopping rule: their calibration under
the null (Monte Carlo) and the Gaussian all-arms threshold of the decision classes (issue 15)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from combex.environments import GaussianArms
from combex.estimation._glr import GLRThreshold, kk_C_gauss, kk_T
from combex.oracles import ExplicitFamily
from combex.solvers import TopTwo


def test_gaussian_all_arms_threshold_is_theorem_9_with_all_arms_and_tighter():
    delta, N = 0.01, 8
    g = GLRThreshold(delta, structure="all-arms-gaussian", n_arms=N)
    k = GLRThreshold(delta, structure="all-arms", n_arms=N)
    counts = np.full(N, 125)
    assert g(1000, counts) == pytest.approx(N * kk_C_gauss(math.log(1 / delta) / N) + 2 * N * math.log(4 + math.log(125)))
    assert k(1000, counts) == pytest.approx(N * kk_T(math.log(1 / delta) / N) + 3 * N * math.log1p(math.log(125)))
    assert g(1000, counts) < 0.6 * k(1000, counts)  # 52 against 101
    assert g.name == "valid:all-arms-gaussian"


def test_decision_class_runs_report_the_gaussian_all_arms_threshold():
    fam = ExplicitFamily([[0, 1], [1, 2, 3], [3, 4], [0, 4]], n=5)
    env = GaussianArms([0.1, 0.2, 0.3, 1.0, 0.9], sigma=0.5, rng=4)
    res = TopTwo(delta=0.05, decision_class=fam).run(env, rng=1)
    assert res.status == "identified" and res.info["threshold"] == "valid:all-arms-gaussian"
    assert np.array_equal(res.answer, [False, False, False, True, True])


def _deviation_crossing(structure, delta, N, runs, T, rng):
    """Fraction of null paths (all arms sampled in turn) whose deviation sum_i N_i d(mu_hat_i,
    mu_i), an upper bound of the GLR against any alternative containing the truth, ever
    reaches the threshold (exactly the event the theorems bound by delta)."""
    th = GLRThreshold(delta, structure=structure, n_alternatives=1, n_arms=N)
    n = np.arange(1, T + 1, dtype=float)
    dev = np.zeros((runs, T))
    for _ in range(N):
        dev += np.cumsum(rng.standard_normal((runs, T)), 1) ** 2 / (2.0 * n)
    b = np.array([th(N * k, np.full(N, k)) for k in n])
    return float(np.mean((dev >= b).any(axis=1)))


@pytest.mark.parametrize("structure,N", [("pairs", 2), ("all-arms-gaussian", 2), ("all-arms-gaussian", 6),
                                         ("all-arms", 6)])
def test_thresholds_are_calibrated_under_the_null(structure, N):
    assert _deviation_crossing(structure, 0.5, N, 1000, 500, np.random.default_rng(N)) <= 0.5


@pytest.mark.slow
@pytest.mark.parametrize("structure,N", [("pairs", 2), ("all-arms-gaussian", 4), ("all-arms-gaussian", 10)])
def test_thresholds_are_calibrated_under_the_null_long(structure, N):
    """delta = 0.9 (the least conservative regime) and 20,000 paths of 2,000 samples per arm:
    the crossing frequency stays below delta (Clopper-Pearson lower bound)."""
    from scipy.stats import beta as beta_dist

    delta, runs = 0.9, 20_000
    freq = np.mean([_deviation_crossing(structure, delta, N, 2000, 2000, np.random.default_rng(100 + N + i))
                    for i in range(runs // 2000)])
    k = int(round(freq * runs))
    assert (beta_dist.ppf(0.025, k, runs - k + 1) if k else 0.0) <= delta
