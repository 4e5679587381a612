"""The fast path of the MAB / Best-K GLR solvers and the per-pair valid thresholds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from combex.environments import BernoulliArms, GaussianArms, jiang_1sparse
from combex.estimation._glr import GLRThreshold, kk_C_gauss
from combex.exceptions import InvalidParameterError
from combex.oracles import PartitionMatroid
from combex.solvers import CombGame, FWSampling, Solver, TopTwo, TrackAndStop
from combex.solvers.glr import _fast_simulator

ALL = [TrackAndStop, TopTwo, FWSampling, CombGame]


def _cases():
    pm = PartitionMatroid([0, 0, 0, 1, 1], [1, 1], base=True)
    return {
        "bai": (lambda: GaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], rng=3), {}),
        "topk": (lambda: jiang_1sparse(8, 2, rng=4), {"K": 2}),
        "matroid": (lambda: GaussianArms([0.2, 1.0, 0.0, 0.5, 0.9], sigma=0.5, rng=2), {"decision_class": pm}),
        "epsilon": (lambda: GaussianArms([1.0, 0.9, 0.3], sigma=[0.5, 1.0, 0.7], rng=5), {"epsilon": 0.15}),
    }


@pytest.mark.parametrize("budget", [None, 23])
@pytest.mark.parametrize("case", list(_cases()))
@pytest.mark.parametrize("cls", ALL)
def test_fast_path_is_bit_identical_to_ask_tell(cls, case, budget):
    """``run`` on a GaussianArms takes the fast path; the ask / tell loop of Solver.run on
    the same environment gives the same answer, samples, rounds, pulls, certificate, trace
    and leaves the environment's generator in the same state."""
    make_env, kw = _cases()[case]
    e1, e2 = make_env(), make_env()
    assert _fast_simulator(e1)
    a = cls(delta=0.1, **kw).run(e1, rng=7, budget=budget, trace=True)
    b = Solver.run(cls(delta=0.1, **kw), e2, rng=7, budget=budget, trace=True)
    assert (a.status, a.samples, a.rounds) == (b.status, b.samples, b.rounds)
    assert np.array_equal(np.asarray(a.answer), np.asarray(b.answer))
    assert np.array_equal(a.pulls, b.pulls) and a.certificate == b.certificate
    assert a.trace.keys() == b.trace.keys() and all(np.array_equal(a.trace[k], b.trace[k]) for k in a.trace)
    assert e1.rng.bit_generator.state == e2.rng.bit_generator.state
    if budget is not None:
        assert a.status == "budget_exhausted" and a.samples == budget


def test_fast_path_only_for_gaussian_simulators_without_callback():
    assert not _fast_simulator(BernoulliArms([0.5, 0.2]))
    seen = []
    env = GaussianArms([1.0, 0.0], rng=0)
    res = TopTwo(delta=0.1).run(env, rng=1, callback=lambda exp: seen.append(exp.samples))
    assert res.identified and len(seen) == res.rounds - 1  # the callback ran at every check but the last


# ----------------------------------------------------------------------------- per-pair thresholds
def test_best_k_stops_on_the_pair_threshold_from_the_two_counts():
    """The certificate's threshold is c + 2 log(4 + log N_i) + 2 log(4 + log N_j) for the
    binding pair (Kaufmann & Koolen 2021, Theorem 9 on two arms), below the scalar
    threshold in t that the solvers used before."""
    env = jiang_1sparse(10, 2, rng=0)
    res = TopTwo(K=2, delta=0.01, threshold="valid-kk").run(env, rng=3)
    assert res.info["threshold"] == "valid:pairs"
    c = res.certificate
    m = 2 * 8
    scalar = GLRThreshold(0.01, "valid", structure="pairs", n_alternatives=m)(res.samples)
    assert res.identified and c["glr"] >= c["threshold_value"]
    assert c["threshold_value"] < scalar - 0.3
    const = 2 * kk_C_gauss(math.log(m / 0.01) / 2)
    # the value is const + term(N_i) + term(N_j) for two arms of the run
    hits = [2 * math.log(4 + math.log(n)) for n in res.pulls]
    assert any(abs(c["threshold_value"] - const - h1 - h2) < 1e-9 for h1 in hits for h2 in hits)


# ----------------------------------------------------------------------------- top-two beta
def test_top_two_optimal_beta_is_the_answer_share_of_the_optimal_allocation():
    """beta="optimal": the leader's probability is sum_{i in S} w*_i(mu_hat); on
    jiang-1sparse K = 2 that share is 1/4 (1/8 per answer arm, 1/24 per other arm)."""
    from combex.identification import bandit_characteristic_time

    env = jiang_1sparse(20, 2, rng=0)
    lb = bandit_characteristic_time(env.means(), K=2, sigma=0.5)
    assert float(lb.allocation[:2].sum()) == pytest.approx(0.25, abs=1e-3)
    exp = TopTwo(K=2, delta=0.01, beta="optimal").start(env, rng=1)
    assert exp.solver.beta == "optimal"
    exp._simulate(env, None)
    assert exp.status == "identified"
    share = exp._leader_probability()
    assert share == pytest.approx(float(exp.w[exp._answer].sum()))
    # w is w*(mu_hat) of the last solve (at most 10% of the samples ago): close to the
    # exact allocation of the final means
    ref = bandit_characteristic_time(exp.mu, K=2, sigma=0.5).allocation
    assert share == pytest.approx(float(ref[exp._answer].sum()), abs=0.03)
    assert share == pytest.approx(0.25, abs=0.06)
    # a fixed beta is used as given
    fixed = TopTwo(K=2, delta=0.01, beta=0.3).start(env.spawn(1), rng=1)
    assert fixed._leader_probability() == 0.3


def test_top_two_ids_is_the_default_and_pulls_the_leader_with_the_information_share():
    """beta="ids" (default): within the chosen pair (i, j), i with probability h_i / (h_i +
    h_j), h_a = N_a d(mu_hat_a, lambda_a); Gaussian: N_j / (N_i + N_j). Checked on the
    selection itself: with the random draw just below / above the share, the leader / the
    challenger is pulled."""
    assert TopTwo().beta == "ids"
    env = jiang_1sparse(10, 2, rng=0)
    exp = TopTwo(K=2, delta=0.01).start(env, rng=1)
    for _ in range(200):  # a few hundred samples through ask / tell
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    cv = exp.T.astype(float)
    z, x, I, J = exp.pair_costs(cv, exp._answer)
    k = int(np.argmin(z + np.log(cv[I] + cv[J])))
    i, j = int(I[k]), int(J[k])
    share = cv[j] / (cv[i] + cv[j])
    assert exp._ids_leader(share - 1e-9, cv, k, x, I, J) and not exp._ids_leader(share + 1e-9, cv, k, x, I, J)
    # Bernoulli KL: h_a = N_a kl(mu_a, lambda_a)
    from combex.identification import kl_bernoulli

    benv = BernoulliArms([0.7, 0.5, 0.2], rng=2)
    bx = TopTwo(delta=0.05).start(benv, rng=3)
    for _ in range(60):
        b = bx.ask()
        bx.tell_batch(b, benv.pull_many(b.arms, b.counts))
    cv = bx.T.astype(float)
    z, x, I, J = bx.pair_costs(cv, bx._answer)
    hi = cv[I[0]] * float(kl_bernoulli(bx.mu[I[0]], x[0]))
    hj = cv[J[0]] * float(kl_bernoulli(bx.mu[J[0]], x[0]))
    p = hi / (hi + hj)
    assert bx._ids_leader(p - 1e-9, cv, 0, x, I, J) and not bx._ids_leader(p + 1e-9, cv, 0, x, I, J)


def test_top_two_ids_needs_fewer_samples_than_beta_one_half_on_best_k():
    """jiang-1sparse N = 20, K = 2, 30 seeded runs: IDS below beta = 1/2 (100 runs: 855
    against 1,068)."""
    env = jiang_1sparse(20, 2, rng=0)
    seeds = np.random.SeedSequence(2024).spawn(30)
    mean = {b: np.mean([TopTwo(K=2, delta=0.01, beta=b).run(env.spawn(seeds[r]), rng=r).samples
                        for r in range(30)]) for b in ("ids", 0.5)}
    assert mean["ids"] < 0.9 * mean[0.5]


def test_top_two_beta_is_checked():
    from combex.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="beta"):
        TopTwo(beta="best")
    with pytest.raises(InvalidParameterError, match="beta"):
        TopTwo(beta=1.5)


# ------------------------------------------------------------------ exact Gaussian pair max-min
@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")  # cvxpy, the comparison
@settings(max_examples=40, deadline=None)
@given(st.integers(3, 12), st.integers(1, 5), st.integers(0, 10_000), st.floats(0.2, 3.0))
@example(N=7, K=3, seed=435, sigma=1.0)  # a near-tie (gap 1e-4) the conic solvers find infeasible
def test_pair_maxmin_weights_is_exact(N, K, seed, sigma):
    """w* of the Gaussian pair alternatives (Best-K): the returned value is attained by the
    returned w (min over pairs), equals Theorem 5's root-finding for K = 1, and is at least
    cvxpy's (which it replaces in bandit_characteristic_time) for K >= 2; no random
    allocation does better."""
    from combex.identification import bai_optimal_weights, pair_maxmin_weights
    from combex.identification._bandit import _cvx_time

    K = min(K, N - 1)
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 1.0, N)
    order = np.argsort(-mu)
    I, J = np.repeat(order[:K], N - K), np.tile(order[K:], K)
    c = (mu[I] - mu[J]) ** 2 / (2 * sigma**2)
    w, val = pair_maxmin_weights(I, J, c, N)
    assert w.sum() == pytest.approx(1.0) and np.all(w >= 0)
    assert float(np.min(c / (1 / w[I] + 1 / w[J]))) == pytest.approx(val, rel=1e-9)
    if K == 1:
        _, inv = bai_optimal_weights(mu, sigma=sigma)
        assert val == pytest.approx(inv, rel=1e-6)
    else:
        S = np.zeros(N, dtype=bool)
        S[order[:K]] = True
        alts = []
        for i, j in zip(I, J):
            m = S.copy()
            m[i], m[j] = False, True
            alts.append(m)
        T_cvx, _ = _cvx_time(mu, S, alts, 0.0, sigma)
        assert val >= (1 - 1e-6) / T_cvx
    for v in rng.dirichlet(np.ones(N), size=200):
        assert float(np.min(c / (1 / v[I] + 1 / v[J]))) <= val * (1 + 1e-9)


def test_pair_maxmin_weights_input_and_warm_start():
    from combex.identification import pair_maxmin_weights

    I, J = np.array([0, 0, 1, 1]), np.array([2, 3, 2, 3])
    c = np.array([1.0, 2.0, 1.5, 0.5])
    w, val = pair_maxmin_weights(I, J, c, 5)
    assert w[4] == 0.0 and val > 0  # arm 4 is in no pair
    w2, val2 = pair_maxmin_weights(I, J, c * 1.01, 5, w0=w)  # warm start, nearby costs
    assert val2 == pytest.approx(pair_maxmin_weights(I, J, c * 1.01, 5)[1], rel=1e-6)
    w0, val0 = pair_maxmin_weights(I, J, np.array([1.0, 0.0, 1.0, 1.0]), 5)  # a tie: value 0
    assert val0 == 0.0 and np.allclose(w0, 0.2)
    w_b, val_b = pair_maxmin_weights(I, J, c, 5, method="barrier")  # the fallback, alone
    assert val_b == pytest.approx(val, rel=1e-6)
    with pytest.raises(InvalidParameterError, match="method"):
        pair_maxmin_weights(I, J, c, 5, method="newton")
    with pytest.raises(InvalidParameterError, match="distinct pairs"):
        pair_maxmin_weights(np.array([0, 1]), np.array([1, 2]), np.ones(2), 3)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 200), st.integers(0, 10_000), st.floats(-4.0, 2.0), st.floats(0.0, 0.3))
def test_theorem_5_root_equalizes_every_pair(K, seed, decade, epsilon):
    """Theorem 5's allocation (Gaussian, the root found by the safeguarded Newton method):
    every arm's pair cost ``c_j / (1/w_a + 1/w_j)`` equals the returned ``1 / T`` and the
    optimality condition ``sum_j (w_j / w_a)^2 = 1`` holds, to rounding, on gaps over six
    decades."""
    from combex.identification import bai_optimal_weights

    rng = np.random.default_rng(seed)
    mu = np.r_[1.0, 1.0 - rng.exponential(1.0, K - 1) * 10.0 ** decade]
    w, inv = bai_optimal_weights(mu, epsilon=epsilon)
    c = (mu[0] - mu[1:] + epsilon) ** 2 / 2.0
    assert w.sum() == pytest.approx(1.0, rel=1e-12) and inv > 0
    assert np.allclose(c / (1.0 / w[0] + 1.0 / w[1:]), inv, rtol=1e-9, atol=0.0)
    assert float(np.sum((w[1:] / w[0]) ** 2)) == pytest.approx(1.0, rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 200), st.integers(0, 10_000), st.floats(-4.0, 2.0), st.floats(0.0, 0.3), st.floats(0.1, 10.0))
def test_theorem_5_root_compiled_agrees_with_numpy(K, seed, decade, epsilon, sigma):
    """The compiled Theorem 5 (what Python's solve and Track-and-Stop's loop call with numba)
    and its numpy form (sums pairwise) agree to rounding, the answer not the best arm
    included; an answer that is not epsilon-good gets uniform weights and 0 from both."""
    from combex.identification._bandit import gaussian_bai_weights, gaussian_bai_weights_kernel

    kernel = gaussian_bai_weights_kernel()
    if kernel is None:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(seed)
    mu = np.r_[1.0, 1.0 - rng.exponential(1.0, K - 1) * 10.0 ** decade]
    for a in (0, int(rng.integers(K))):
        w_n, v_n = gaussian_bai_weights(mu, a, epsilon, 2.0 * sigma * sigma)
        w_c, v_c = kernel(mu, a, epsilon, 2.0 * sigma * sigma)
        assert v_c == pytest.approx(v_n, rel=1e-12, abs=0.0)
        assert np.allclose(w_c, w_n, rtol=1e-12, atol=1e-15)
        if v_n == 0.0:
            assert np.array_equal(w_c, np.full(K, 1.0 / K))


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 30), st.integers(1, 6), st.integers(0, 10_000), st.floats(0.0, 0.05))
def test_complete_pairs_solve_agrees_with_the_general_one(N, K, seed, move):
    """Track-and-Stop's Best-K solve (compiled, on the complete pairs of an answer: what its
    Python solve and its compiled loop call) and the general ``pair_maxmin_weights`` by the
    barrier method agree to rounding, cold (uniform start) and warm (from the last w*, means
    moved); the value returned is the one the weights attain."""
    from combex.identification import pair_maxmin_weights
    from combex.identification._pairs_kernel import complete_pairs_kernel

    kernel = complete_pairs_kernel()
    if kernel is None:
        pytest.skip("numba is not installed")
    K = min(K, N - 1)
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 1.0, N)
    ans = np.zeros(N, dtype=bool)
    ans[rng.choice(N, K, replace=False)] = True
    ins, outs = np.flatnonzero(ans), np.flatnonzero(~ans)
    I, J = np.repeat(ins, outs.size), np.tile(outs, ins.size)
    c = (np.abs(mu[I] - mu[J]) + 0.05) ** 2 / 2.0
    w_prev = np.full(N, 1.0 / N)
    for tol, c_now in ((1e-6, c), (1e-3, c * np.exp(rng.uniform(-move, move, c.size)))):
        out = np.empty(N)
        val = kernel(ins, outs, c_now, N, tol, w_prev, out)
        w_gen, val_gen = pair_maxmin_weights(I, J, c_now, N, tol=tol, w0=w_prev, method="barrier")
        assert val > 0 and val == pytest.approx(val_gen, rel=1e-9)
        assert np.allclose(out, w_gen, rtol=1e-7, atol=1e-12) and out.sum() == pytest.approx(1.0, rel=1e-12)
        assert val == float(np.min(c_now / (1.0 / out[I] + 1.0 / out[J])))
        w_prev = out


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 12), st.integers(1, 5), st.integers(0, 10_000), st.floats(0.001, 0.05))
def test_pair_barrier_loose_warm_solve_agrees_with_the_tight_one(N, K, seed, move):
    """Track-and-Stop's warm re-solve (barrier, tol 1e-3, from the last w* after the means
    moved): its value is within the gap of the tight solve's, its w close to the tight w."""
    from combex.identification import pair_maxmin_weights

    K = min(K, N - 1)
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 1.0, N)
    order = np.argsort(-mu)
    I, J = np.repeat(order[:K], N - K), np.tile(order[K:], K)
    w_old, _ = pair_maxmin_weights(I, J, (mu[I] - mu[J]) ** 2 / 2, N, tol=1e-6, method="barrier")
    mu2 = mu + rng.normal(0.0, move, N) * np.abs(mu[I] - mu[J]).min()  # a move that keeps the answer
    c = (mu2[I] - mu2[J]) ** 2 / 2
    w, val = pair_maxmin_weights(I, J, c, N, tol=1e-3, w0=w_old, method="barrier")
    w_ref, val_ref = pair_maxmin_weights(I, J, c, N, tol=1e-9, method="barrier")
    assert val == pytest.approx(val_ref, rel=2e-3) and val <= val_ref * (1 + 1e-9)
    assert np.abs(w - w_ref).max() < 0.02


def test_pair_interior_point_certifies_and_agrees_with_the_barrier_fallback():
    """Pair costs over four orders of magnitude (near-ties beside clear gaps): the
    primal-dual method stops on its dual certificate (no fallback) and matches the barrier
    method's optimum. With the usual 99% step to the boundary it failed on most of these."""
    from combex.identification._bandit import _pairs_barrier, _pairs_primal_dual

    rng = np.random.default_rng(1)
    for _ in range(30):
        N = int(rng.integers(3, 60))
        K = int(rng.integers(1, min(10, N - 1) + 1))
        mu = rng.normal(0.0, 1.0, N)
        o = np.argsort(-mu)
        I, J = np.repeat(o[:K], N - K), np.tile(o[K:], K)
        c = (mu[I] - mu[J]) ** 2 / (2 * rng.uniform(0.2, 3.0) ** 2)
        L, li = np.unique(I, return_inverse=True)
        R, ri = np.unique(J, return_inverse=True)
        capL, capR = np.full(L.size, np.inf), np.full(R.size, np.inf)
        np.minimum.at(capL, li, c)
        np.minimum.at(capR, ri, c)
        pd = _pairs_primal_dual(li, ri, c, L.size, R.size, 0.25 * capL, 0.25 * capR, 1e-7)
        assert pd is not None
        bar = _pairs_barrier(li, ri, c, L.size, R.size, 0.25 * capL, 0.25 * capR, 1e-9)
        f_pd, f_bar = (float(np.sum(1 / vL) + np.sum(1 / vR)) for vL, vR in (pd, bar))
        assert f_pd == pytest.approx(f_bar, rel=2e-7)


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 40), st.integers(1, 12), st.integers(0, 10_000), st.floats(0.2, 3.0), st.booleans())
def test_pair_barrier_compiled_loop_takes_the_numpy_steps(N, K, seed, scale, warm):
    """The barrier method compiled by numba (Track-and-Stop's re-solves) and its numpy form
    take the same Newton steps: the same optimum to rounding, cold and warm-started, on pair
    costs over orders of magnitude."""
    pytest.importorskip("numba")
    import combex.identification._bandit as bandit

    K = min(K, N - 1)
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 1.0, N)
    o = np.argsort(-mu)
    I, J = np.repeat(o[:K], N - K), np.tile(o[K:], K)
    c = (mu[I] - mu[J]) ** 2 / (2 * scale ** 2)
    if not np.all(c > 0):
        return
    w0 = rng.dirichlet(np.ones(N)) if warm else None
    tol = 1e-3 if warm else 1e-6
    assert bandit.pairs_barrier_kernel() is not None
    w_c, val_c = bandit.pair_maxmin_weights(I, J, c, N, tol=tol, w0=w0, method="barrier")
    kernel = bandit.pairs_barrier_kernel
    try:
        bandit.pairs_barrier_kernel = lambda: None  # the numpy steps
        w_n, val_n = bandit.pair_maxmin_weights(I, J, c, N, tol=tol, w0=w0, method="barrier")
    finally:
        bandit.pairs_barrier_kernel = kernel
    assert val_c == pytest.approx(val_n, rel=1e-9)
    assert np.abs(w_c - w_n).max() < 1e-9


@pytest.mark.parametrize("cls", [TrackAndStop, TopTwo, FWSampling, CombGame])
def test_reward_lists_are_refused_at_start_not_when_a_list_runs_out(cls):
    """Finite reward lists (the mips family, sampled without replacement) are refused by
    the GLR solvers before any pull; before, a run went on until a list ran out ("Arm 19 ...
    cannot be pulled 1 more times"), after up to ``n * list_size`` pulls. The same means
    as i.i.d. arms still run, and a solver that declares 'mips' still takes the lists."""
    from combex.environments import RewardLists
    from combex.solvers import LUCB

    lists = np.tile(np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]), (1, 50))
    env = RewardLists(lists, rng=0)
    with pytest.raises(InvalidParameterError, match=r"instance families semi-bandit.*Got finite reward lists"):
        cls().start(env.problem, rng=0)
    assert cls().start(GaussianArms(lists.mean(axis=1), rng=0).problem, rng=0).samples == 0
    assert LUCB().start(env.problem, rng=0).samples == 0


# ----------------------------------------------------------------------------- compiled Top-Two loop
def _rng_state(g):
    return str(g.bit_generator.state)


_KERNEL_CASES = {
    "bai": (lambda: GaussianArms(np.linspace(1.0, 0.0, 6), rng=3), {}, None),
    "bai-kk": (lambda: GaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], rng=4), {"threshold": "valid-kk"}, None),
    "bai-beta": (lambda: GaussianArms([1.0, 0.7, 0.5, 0.1], rng=5), {"beta": 0.4}, None),
    "bai-epsilon": (lambda: GaussianArms([1.0, 0.9, 0.3], sigma=[0.5, 1.0, 0.7], rng=5), {"epsilon": 0.15}, None),
    "near-tie-budget": (lambda: GaussianArms([1.0, 1.0 - 1e-3, 0.5, 0.2], rng=1), {}, 3000),
    "topk": (lambda: jiang_1sparse(8, 2, rng=4), {"K": 2}, None),
    "topk-beta-budget": (lambda: jiang_1sparse(12, 3, rng=6), {"K": 3, "beta": 0.5}, 700),
    "bai-k40-budget": (lambda: GaussianArms(np.linspace(1.0, 0.0, 40), rng=2), {}, 4000),
    "misdeclared-scale": (lambda: GaussianArms([1.0, 0.5, 0.4, 0.0], sigma=2.0, rng=1), {"sigma": 1.0}, None),
}


@pytest.mark.skipif(not __import__("combex.solvers._glr_kernel", fromlist=["x"]).HAVE_NUMBA,
                    reason="numba not installed")
@pytest.mark.filterwarnings("ignore::combex.exceptions.NoiseScaleWarning")
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("case", list(_KERNEL_CASES))
@pytest.mark.parametrize("cls", [TopTwo, TrackAndStop, FWSampling, CombGame])
def test_compiled_loop_is_bit_identical_to_ask_tell(cls, case, seed, monkeypatch):
    """``run`` through the compiled loop (from the first check; Track-and-Stop's w* solved in
    the loop, or in Python where the loop hands it back) gives ask / tell's samples, answer, pulls, certificate and final
    states of both generators, and the Python fast path's info; the same with the loop
    switched off."""
    from combex.solvers import _glr_kernel as kern

    make_env, kw, budget = _KERNEL_CASES[case]
    if cls is not TopTwo:
        kw = {k: v for k, v in kw.items() if k != "beta"}
    monkeypatch.setattr(kern, "COMPILE_AFTER", 0)
    calls = []
    fn = kern.compiled_steps()
    monkeypatch.setattr(kern, "_COMPILED", lambda *a: calls.append(1) or fn(*a))
    runs = {}
    for mode in ("kernel", "python", "ask-tell"):
        monkeypatch.setattr(kern, "ENABLED", mode == "kernel")
        env, g = make_env(), np.random.default_rng(seed)
        solver = cls(delta=0.1, **kw)
        res = solver.run(env, rng=g, budget=budget) if mode != "ask-tell" else Solver.run(solver, env, rng=g, budget=budget)
        runs[mode] = (res, _rng_state(env.rng), _rng_state(g))
    assert calls  # the compiled loop ran
    a, ea, ga = runs["kernel"]
    for mode in ("python", "ask-tell"):
        b, eb, gb = runs[mode]
        assert (a.status, a.samples, a.rounds) == (b.status, b.samples, b.rounds)
        assert np.array_equal(np.asarray(a.answer), np.asarray(b.answer))
        assert np.array_equal(a.pulls, b.pulls) and a.certificate == b.certificate
        assert (ea, ga) == (eb, gb)
    b = runs["python"][0]
    info_a, info_b = ({k: v for k, v in r.info.items() if "wall" not in k} for r in (a, b))
    assert info_a.keys() == info_b.keys()
    for k, v in info_a.items():  # (Track-and-Stop's info holds its allocation, an array)
        assert np.array_equal(v, info_b[k]) if isinstance(v, np.ndarray) else v == info_b[k], k
    if budget is not None and a.status == "budget_exhausted":
        assert a.samples == budget


@pytest.mark.skipif(not __import__("combex.solvers._glr_kernel", fromlist=["x"]).HAVE_NUMBA,
                    reason="numba not installed")
@pytest.mark.parametrize("case", ["bai", "topk"])
@pytest.mark.parametrize("cls", [TopTwo, TrackAndStop, FWSampling, CombGame])
def test_compiled_loop_saved_state_matches(cls, case, monkeypatch, tmp_path):
    """Stopped by a budget in the middle of the compiled loop, the exploration's saved state
    (and the environment's generator) is the Python path's."""
    from combex.solvers import _glr_kernel as kern

    make_env, kw, _ = _KERNEL_CASES[case]
    monkeypatch.setattr(kern, "COMPILE_AFTER", 0)
    states = []
    for enabled in (True, False):
        monkeypatch.setattr(kern, "ENABLED", enabled)
        env = make_env()
        exp = cls(delta=0.01, **kw).start(env, rng=3)
        exp._simulate(env, 157)
        st = exp.state_dict()
        st.pop("wall_seconds", None)
        states.append((repr(st), _rng_state(env.rng)))
    assert states[0] == states[1]


def _study_like_run(make_env, kw, seed, budget, cls=TopTwo):
    """Ask / tell one sample at a time as a live study drives it, with the reads and detours
    a study makes: the confidence and progress read every 97 samples, a saved state resumed
    every 300, a told arm other than the asked one every 151st sample, a two-arm batch
    every 401st. Returns everything observable."""
    env = make_env()
    solver = cls(delta=0.1, **kw)
    exp = solver.start(env, rng=seed)
    seen = []
    step = 0
    while not exp.done and exp.samples < budget:
        step += 1
        if step % 401 == 0:
            arms = np.array([0, env.n_arms - 1])
            batch = type(exp.ask())(arms, np.array([1, 1], dtype=np.int64))
        else:
            batch = exp.ask()
            if step % 151 == 0:
                batch = type(batch)(np.array([(int(batch.arms[0]) + 1) % env.n_arms]), batch.counts)
        exp.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
        if step % 97 == 0:
            p = exp.progress()
            seen.append((exp.samples, p["statistic"], p["threshold"], p["delta_achieved"], p["evaluations_left"],
                         repr(p["leader"]), repr(p["challenger"])))
        if step % 300 == 0:
            exp = solver.resume(exp.state_dict(), env.problem)
    res = exp.result()
    st = exp.state_dict()
    st.pop("wall_seconds", None)
    return (res.status, res.samples, repr(np.asarray(res.answer)), res.pulls.tolist(), repr(res.certificate), seen,
            repr(st), _rng_state(env.rng))


@pytest.mark.skipif(not __import__("combex.solvers._glr_kernel", fromlist=["x"]).HAVE_NUMBA,
                    reason="numba not installed")
@pytest.mark.filterwarnings("ignore::combex.exceptions.NoiseScaleWarning")
@pytest.mark.parametrize("case", list(_KERNEL_CASES))
@pytest.mark.parametrize("cls", [TopTwo, TrackAndStop, FWSampling, CombGame])
def test_compiled_one_sample_ask_tell_is_bit_identical(cls, case, monkeypatch):
    """One sample per ask through the compiled select / tell entries gives the Python
    rule's samples, reads, saved states and answer, through resumes, a told arm other
    than the asked one and a two-arm batch (Top-Two, Track-and-Stop's D-tracking, Frank-Wolfe
    sampling and CombGame: the loop's own selection step)."""
    from combex.solvers import _glr_kernel as kern

    make_env, kw, budget = _KERNEL_CASES[case]
    if cls is not TopTwo:
        kw = {k: v for k, v in kw.items() if k != "beta"}
    monkeypatch.setattr(kern, "COMPILE_AFTER", 0)
    fn = kern.compiled_steps()
    kern.compiled_select()
    calls = []
    monkeypatch.setattr(kern, "_COMPILED", lambda *a: calls.append(a[0] is None) or fn(*a))
    runs = []
    for enabled in (True, False):
        monkeypatch.setattr(kern, "ENABLED", enabled)
        runs.append(_study_like_run(make_env, kw, 11, budget or 2500, cls))
    assert any(calls)  # told rewards went through the kernel
    for a, b in zip(*runs):
        assert a == b
