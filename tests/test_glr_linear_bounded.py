"""Bounded / Bernoulli rewards on the linear side: the linear GLR solvers take the
sub-Gaussian scale of the declared reward range, (b - a) / 2, never a silent default."""

from __future__ import annotations

import numpy as np
import pytest

from combex.environments import BernoulliArms, LinearBandit
from combex.solvers import TopTwo, get_solver

X = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]])
THETA = np.array([0.7, 0.1])  # means 0.7, 0.1, 0.48 in [-1, 1]: +-1 (Bernoulli-type) rewards


@pytest.mark.parametrize("name", ["top-two", "fw-sampling", "rage"])
def test_linear_solvers_use_the_range_of_pm1_rewards(name):
    env = LinearBandit(X, THETA, noise="pm1", rng=1)
    assert env.noise.kind == "pm1" and env.noise.bound == 2.0
    # a +-1 reward has range [-1, 1]: sub-Gaussian scale (1 - (-1)) / 2 = 1 (Hoeffding's lemma)
    assert env.noise.sigma == pytest.approx((1.0 - (-1.0)) / 2.0)
    res = get_solver(name)(delta=0.05).run(env, rng=2, budget=500_000)
    assert res.status == "identified" and res.answer == 0
    if "sigma" in res.info:
        assert res.info["sigma"] == pytest.approx(1.0)
    # the linear T* is the sigma = 1 Gaussian model's, and the result says so
    assert "sigma = 1" in res.info["lower_bound_model"] and "pm1" in res.info["lower_bound_model"]
    gaussian = get_solver(name)(delta=0.05).run(LinearBandit(X, THETA, rng=1), rng=2, budget=500_000)
    assert "lower_bound_model" not in gaussian.info


def test_bernoulli_index_arms_use_half_the_unit_range():
    res = TopTwo(delta=0.05).run(BernoulliArms([0.9, 0.3, 0.1], rng=0), rng=1)
    assert res.info["divergence"] == "bernoulli"  # KL on pairs
    res = TopTwo(delta=0.05, divergence="gaussian").run(BernoulliArms([0.9, 0.3, 0.1], rng=0), rng=1)
    assert res.info["sigma"] == pytest.approx(0.5)  # (1 - 0) / 2


@pytest.mark.slow
@pytest.mark.parametrize("name,runs", [("top-two", 100), ("fw-sampling", 100), ("rage", 100), ("lingame", 100)])
def test_linear_bernoulli_error_rate_at_most_delta(name, runs):
    """+-1 rewards, near tie (0.7 vs 0.48 on the third arm), delta = 0.1: Clopper-Pearson."""
    from scipy.stats import beta as beta_dist

    delta, errors = 0.1, 0
    for s in np.random.SeedSequence(33).spawn(runs):
        e, a = s.spawn(2)
        res = get_solver(name)(delta=delta).run(LinearBandit(X, THETA, noise="pm1", rng=e), rng=a,
                                                budget=2_000_000)
        assert res.status == "identified"
        errors += int(res.answer != 0)
    lo = beta_dist.ppf(0.025, errors, runs - errors + 1) if errors else 0.0
    assert lo <= delta
