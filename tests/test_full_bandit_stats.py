"""Statistical / exactness checks of the full-bandit stopping statistics against enumeration
(the quantities of Figure 1 of Kuroki et al.), slow-marked.

At every check of a run on (n, k) = (10, 5), with the exact maxima computed over the 252
5-subsets:

* SAQM: ``alpha_t * C_t max_M ||chi_M||_{A^-1} <= Z_t <= C_t max_M ||chi_M||_{A^-1}``
  (Z_t is attained by a member; alpha_t is a valid approximation ratio for CEM).
* SA-FOA: ``Z'_t <= max_{M != M_hat} (5) <= upper_bound_5`` (Z'_t is attained; the
  certified mode's bound is an upper bound).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from combex.allocations import topk_support
from combex.environments import kuroki_synthetic
from combex.solvers.full_bandit import SAFOA, SAQM

pytestmark = pytest.mark.slow

N, K = 10, 5
X = np.zeros((math.comb(N, K), N), dtype=bool)
for _i, _c in enumerate(itertools.combinations(range(N), K)):
    X[_i, list(_c)] = True
XF = X.astype(float)


def _checks(solver, gap, seed, horizon=30_000):
    """Yield the exploration after every check of a run kept going up to ``horizon``."""
    env = kuroki_synthetic(N, K, gap, rng=seed)
    env.reset(seed + 1)
    exp = solver.start(env, rng=seed + 2)
    while exp.samples < horizon:
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
        yield exp
        if exp.done:
            exp.status = "running"  # observe past the stopping time


@pytest.mark.parametrize("support", ["all", "windows"])
@pytest.mark.parametrize("gap", [0.1, 1.0])
def test_saqm_z_and_alpha_sandwich_the_exact_cem(support, gap):
    sup = None if support == "all" else topk_support(N, K)
    n_checks = 0
    for seed in (0, 10):
        for exp in _checks(SAQM(growth=0.1, support=sup, full_certificate=True), gap, seed):
            cert = exp.certificate
            exact = cert["C_t"] * math.sqrt(float(np.einsum("ij,jk,ik->i", XF, exp._A_inv(), XF).max()))
            assert cert["Z_t"] <= exact * (1 + 1e-9) + 1e-12
            assert cert["Z_t"] >= cert["alpha_t"] * exact * (1 - 1e-9) - 1e-12
            assert 0 < cert["alpha_t"] <= 1
            n_checks += 1
    assert n_checks > 50


@pytest.mark.parametrize("support", ["all", "windows"])
@pytest.mark.parametrize("gap", [0.1, 1.0])
def test_safoa_z_prime_and_bound_sandwich_the_exact_maximum_of_5(support, gap):
    sup = None if support == "all" else topk_support(N, K)
    n_checks = 0
    for seed in (0, 10):
        for exp in _checks(SAFOA(growth=0.1, support=sup, report_bound=True), gap, seed):
            cert = exp.certificate
            chi = exp._chi_hat
            D = XF - chi.astype(float)
            q = np.maximum(np.einsum("ij,jk,ik->i", D, exp._A_inv(), D), 0.0)
            obj = XF @ exp._theta() + cert["C_t"] * np.sqrt(q)
            obj[(X == chi).all(axis=1)] = -np.inf
            exact = float(obj.max())
            tol = 1e-9 * max(1.0, abs(exact))
            assert cert["Z_prime_t"] <= exact + tol
            assert cert["upper_bound_5"] >= exact - tol
            assert cert["statistic"] <= cert["certified_statistic"] + tol
            n_checks += 1
    assert n_checks > 50


def test_certified_safoa_on_crowd_is_eps_optimal_and_certified():
    from combex.environments import CrowdQuiz
    from combex.exceptions import DataNotFoundError

    try:
        env = CrowdQuiz("ITMANAGE", k=10, rng=0)
    except DataNotFoundError:  # pragma: no cover - data absent
        pytest.skip("crowd data not available")
    res = SAFOA(epsilon=0.5, allocation="uniform", growth=0.1, certified=True).run(env, rng=1)
    assert res.identified
    assert env.is_correct(res.answer, 0.5)
    assert res.certificate["certified_statistic"] <= 0.25
    # The default (uncertified) SA-FOA stops no later on the same stream.
    env.reset(0)
    res0 = SAFOA(epsilon=0.5, allocation="uniform", growth=0.1).run(env, rng=1)
    assert res0.samples <= res.samples
