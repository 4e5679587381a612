"""Tests of the linear best-arm identification solvers (LinGapE, XY-static/adaptive/oracle,
LinGapE through the oracle interface) and their instances."""

from __future__ import annotations

import math

import numpy as np
import pytest

from combex.allocations import apportion, l1_design
from combex.environments import FullBandit, LinearBandit, Problem
from combex.environments import LinearInstance, canonical, diabetes_linear, soare, wine_linear
from combex.estimation import self_normalized_radius, static_radius
from combex.exceptions import InvalidParameterError
from combex.solvers import Solver, get_solver
from combex.solvers.linear import LinGapE, LinGapEOracle, XYAdaptive, XYOracle, XYStatic


def easy_soare(angle=0.5, seed=0):
    """Soare-like 2-d instance with a larger angle (gap 2(1 - cos angle))."""
    x = np.array([[1.0, 0.0], [0.0, 1.0], [np.cos(angle), np.sin(angle)]])
    return LinearInstance(x, [2.0, 0.0], rng=seed)


# ---------------------------------------------------------------------- helpers
def test_l1_design_on_linear_instances():
    """The ratio rule's p* (l1_design): canonical basis and the soare direction."""
    r = l1_design(np.eye(4), np.array([1.0, 0.0, -1.0, 0.0]))
    np.testing.assert_allclose(r.p, [0.5, 0.0, 0.5, 0.0])
    assert r.variance_bound == pytest.approx(4.0)
    x = np.r_[np.eye(3), [[np.cos(0.01), np.sin(0.01), 0.0]]]
    p = l1_design(x, x[0] - x[3]).p
    # y = (1 - cos) e1 - sin e2: almost all weight on e2
    assert p[1] > 0.99 and p[2] == 0.0


def _sequential_counts(p, n):
    """The tracking rule argmin_{p_a > 0} T_a / p_a (lowest index on ties), n steps."""
    T = np.zeros(len(p), dtype=np.int64)
    for _ in range(n):
        r = np.where(p > 0, T / np.where(p > 0, p, 1), np.inf)
        T[int(np.argmin(r))] += 1
    return T


@pytest.mark.parametrize("seed", range(3))
def test_static_tracking_is_sequential_and_nested(seed):
    """XY-static's batches (apportion) are the counts of one-at-a-time tracking."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(6))
    p[rng.integers(6)] = 0.0
    p /= p.sum()
    prev = np.zeros(6, dtype=np.int64)
    for n in range(0, 80):
        c = apportion(p, n)
        assert np.all(c >= prev)
        np.testing.assert_array_equal(c, _sequential_counts(p, n))
        prev = c


# ---------------------------------------------------------------------- LinGapE
@pytest.mark.parametrize("rule", ["greedy", "ratio"])
def test_lingape_identifies_easy_instances(rule):
    for env in (canonical(3, 1.0, rng=1), easy_soare(seed=2)):
        res = LinGapE(rule=rule).run(env, rng=0)
        assert res.status == "identified"
        assert res.answer == env.best()
        assert res.samples == res.pulls.sum()
        assert res.certificate["B"] <= 0.0
        assert res.info["S"] == pytest.approx(np.linalg.norm(env.theta))
        assert res.info["lower_bound_ratio"] > 1.0


def _same_result(a, b):
    assert a.status == b.status and a.answer == b.answer
    assert a.samples == b.samples and a.rounds == b.rounds
    np.testing.assert_array_equal(a.pulls, b.pulls)
    ca, cb = dict(a.certificate), dict(b.certificate)
    na, nb = ca.pop("noise_check", None), cb.pop("noise_check", None)
    assert ca == cb
    # the test of the declared scale folds a block of pulls at once (Chan et al.'s pairwise
    # update) where the loop folds them one by one: the same statistic up to rounding
    assert (na is None) == (nb is None)
    if na is not None:
        assert na.keys() == nb.keys() and na["rejected"] == nb["rejected"]
        for k in na:
            assert na[k] == (pytest.approx(nb[k], rel=1e-12) if isinstance(nb[k], float) else nb[k]), k
    np.testing.assert_array_equal(a.info["theta_hat"], b.info["theta_hat"])


@pytest.mark.parametrize("rule", ["greedy", "ratio"])
@pytest.mark.parametrize(
    "make,kwargs",
    [(lambda s: canonical(4, 0.5, rng=s), {}), (lambda s: soare(3, rng=s), {}),
     (lambda s: easy_soare(angle=0.2, seed=s), {"radius": "dimension", "union_bound": True, "refactor_every": 3}),
     (lambda s: diabetes_linear(12, rng=s), {"sigma": 2.0})],
    ids=["canonical", "soare3", "easy-dimension", "diabetes-pm1"],
)
def test_fast_run_equals_ask_tell_loop(make, kwargs, rule):
    """LinGapE.run's block simulation = the ask/tell loop of Solver.run: same pulls,
    rounds, stop, estimate, trace, and the environment's generator ends in the same state."""
    solver = LinGapE(rule=rule, **kwargs)
    for seed in range(2):
        e1, e2 = make(seed), make(seed)
        slow = Solver.run(solver, e1, rng=0, budget=6000, trace=True)
        fast = solver.run(e2, rng=0, budget=6000, trace=True)
        _same_result(slow, fast)
        for key in ("B", "C", "i", "j"):
            np.testing.assert_array_equal(slow.trace[key], fast.trace[key])
        assert e1.rng.bit_generator.state == e2.rng.bit_generator.state
        assert e1.pull(0)[0] == e2.pull(0)[0]


def test_fast_run_budget_below_initialization():
    env = canonical(5, 0.5, rng=0)
    res = LinGapE().run(env, rng=0, budget=3)
    assert res.status == "budget_exhausted" and res.samples == 3
    slow = Solver.run(LinGapE(), canonical(5, 0.5, rng=0), rng=0, budget=3)
    assert slow.status == res.status and slow.samples == res.samples
    np.testing.assert_array_equal(slow.pulls, res.pulls)


def test_radius_is_self_normalized_radius():
    """C_t computed in the block evaluation equals combex.estimation.self_normalized_radius."""
    env = easy_soare(angle=0.2, seed=1)
    for union in (False, True):
        exp = LinGapE(union_bound=union, ridge=0.5).start(env.problem, rng=0)
        for _ in range(30):
            b = exp.ask()
            exp.tell_batch(b, env.pull_many(b.arms, b.counts))
            A = 0.5 * np.eye(2) + (exp.X * exp.T[:, None]).T @ exp.X
            want = self_normalized_radius(np.linalg.slogdet(A)[1], 2, 0.05, R=1.0, ridge=0.5, S=2.0,
                                          log_union_size=2 * math.log(3) if union else 0.0)
            assert exp.C == pytest.approx(want, rel=1e-12)
            ref = self_normalized_radius(exp._logdet + np.log1p(exp.streak_k * exp._q), 2, 0.05, R=1.0, ridge=0.5,
                                         S=2.0, log_union_size=2 * math.log(3) if union else 0.0)
            assert exp.C == ref  # bit for bit


def test_lingape_soare5_speed():
    """The target: LinGapE (Algorithm 1 exactly, growth=0) on soare d = 5 in < 10 s."""
    import time

    t0 = time.perf_counter()
    res = LinGapE().run(soare(5, rng=1), rng=1)
    assert time.perf_counter() - t0 < 10.0
    assert res.answer == 0 and res.samples > 1e5 and res.rounds == res.samples - 5


def _from_scratch(exp, lam):
    X = exp.X
    A = lam * np.eye(X.shape[1]) + (X * exp.T[:, None]).T @ X
    Ainv = np.linalg.inv(A)
    theta = Ainv @ (X.T @ exp.sums)
    return A, Ainv, theta


def test_lingape_rounds_match_algorithm_from_scratch():
    """B(t), C_t (eq. (3)), i_t, j_t and the greedy arm (9) equal a from-scratch
    computation with explicit inverses at every round."""
    env = easy_soare(angle=0.2, seed=3)
    solver = LinGapE(refactor_every=7)
    exp = solver.start(env.problem, rng=0)
    R, S, lam, delta = 1.0, 2.0, 1.0, 0.05
    for _ in range(300):
        batch = exp.ask()
        exp.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
        if exp.done:
            break
        A, Ainv, theta = _from_scratch(exp, lam)
        C = R * math.sqrt(2 * math.log(math.sqrt(np.linalg.det(A) / lam**2) / delta)) + math.sqrt(lam) * S
        assert exp.C == pytest.approx(C, rel=1e-9)
        u = exp.X @ theta
        i = int(np.argmax(u))
        f = [u[j] - u[i] + C * math.sqrt((exp.X[j] - exp.X[i]) @ Ainv @ (exp.X[j] - exp.X[i])) for j in range(3)]
        assert exp.i_t == i and exp.j_t == int(np.argmax(f))
        assert exp.B == pytest.approx(max(f), rel=1e-8, abs=1e-10)
        y = exp.X[i] - exp.X[exp.j_t]
        vals = [y @ np.linalg.inv(A + np.outer(x, x)) @ y for x in exp.X]
        assert vals[exp.next_arm] == pytest.approx(min(vals), rel=1e-9)


def test_lingape_ratio_rule_tracks_pstar():
    env = easy_soare(angle=0.2, seed=4)
    exp = LinGapE(rule="ratio").start(env.problem, rng=0)
    for _ in range(100):
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
        if exp.done:
            break
        p = l1_design(exp.X, exp.X[exp.i_t] - exp.X[exp.j_t]).p
        r = np.where(p > 1e-12, exp.T / np.where(p > 1e-12, p, 1), np.inf)
        assert exp.next_arm == int(np.argmin(r))


def test_lingape_reproducible_and_seed_dependent():
    env = easy_soare(seed=5)
    a = LinGapE().run(env.spawn(11), rng=3)
    b = LinGapE().run(env.spawn(11), rng=3)
    c = LinGapE().run(env.spawn(12), rng=3)
    assert a.samples == b.samples and np.array_equal(a.pulls, b.pulls) and a.answer == b.answer
    assert a.samples != c.samples or not np.array_equal(a.pulls, c.pulls)


def test_lingape_growth_mode_and_budget():
    env = soare(5, rng=0)
    res = LinGapE(growth=0.01).run(env, rng=0)
    assert res.status == "identified" and res.answer == 0
    assert res.rounds < 3000
    res = LinGapE().run(soare(3, rng=1), rng=0, budget=500)
    assert res.status == "budget_exhausted" and res.samples == 500


def _run_with_resume(solver, env_factory, steps, tmp_path=None):
    """Run to the end, and run again saving/resuming after ``steps`` asks."""
    env1 = env_factory()
    full = solver.run(env1, rng=7)
    env2 = env_factory()
    exp = solver.start(env2, rng=7)
    for _ in range(steps):
        b = exp.ask()
        exp.tell_batch(b, env2.pull_many(b.arms, b.counts))
        if exp.done:
            break
    if tmp_path is not None:
        path = exp.save(tmp_path / "state.json")
        exp = solver.load(path, env2)
    else:
        exp = solver.resume(exp.state_dict(), env2)
    while not exp.done:
        b = exp.ask()
        exp.tell_batch(b, env2.pull_many(b.arms, b.counts))
    res = exp.result()
    assert res.answer_list() == full.answer_list()
    assert res.samples == full.samples and res.rounds == full.rounds
    np.testing.assert_array_equal(res.pulls, full.pulls)
    return full


@pytest.mark.parametrize(
    "solver",
    [LinGapE(), LinGapE(rule="ratio", refactor_every=5), XYStatic(growth=0.05), XYAdaptive(growth=0.05),
     XYAdaptive(growth=0.05, readmit=False, radius="sub-gaussian"), XYOracle(theta=[2.0, 0.0], growth=0.05)],
    ids=lambda s: repr(s)[:40],
)
def test_save_resume_identical(solver, tmp_path):
    _run_with_resume(solver, lambda: easy_soare(angle=0.4, seed=9), steps=40, tmp_path=tmp_path)


# ---------------------------------------------------------------------- XY family
def _reference_xy_static(env, p, delta, eps=0.0):
    """Per-round XY-static from scratch: sequential tracking, OLS, Proposition 1."""
    X = env.features
    K = X.shape[0]
    T = np.zeros(K, dtype=np.int64)
    sums = np.zeros(K)
    H = K * (K - 1) // 2
    # the first check comes after |support| samples, pulled as one batch in index order
    p = np.asarray(p)
    n = int(np.count_nonzero(p))
    T[:] = _sequential_counts(p, n)
    arms = np.flatnonzero(T)
    sums[arms] = env.pull_many(arms, T[arms])
    first = True
    while True:
        if not first:
            r = np.where(p > 0, T / np.where(p > 0, p, 1), np.inf)
            a = int(np.argmin(r))
            sums[a] += env.pull(a, 1)[0]
            T[a] += 1
            n += 1
        first = False
        A = (X * T[:, None]).T @ X
        if np.linalg.matrix_rank(A) < X.shape[1]:
            continue
        Ainv = np.linalg.inv(A)
        u = X @ (Ainv @ (X.T @ sums))
        i = int(np.argmax(u))
        c = 2 * np.sqrt(2 * np.log(6 * n * n * H / (delta * np.pi**2)))  # Proposition 1
        B = max(u[j] - u[i] + c * np.sqrt((X[j] - X[i]) @ Ainv @ (X[j] - X[i])) if j != i else 0.0 for j in range(K))
        if B <= eps:
            return i, n, T


@pytest.mark.parametrize("seed", range(3))
def test_xy_static_g0_equals_per_round_reference(seed):
    env = canonical(3, 1.0, rng=seed)
    res = XYStatic(growth=0.0).run(env.spawn(100 + seed), rng=0)
    ans, n, T = _reference_xy_static(env.spawn(100 + seed), res.info["allocation"], 0.05)
    assert res.answer == ans and res.samples == n
    np.testing.assert_array_equal(res.pulls, T)


def test_xy_static_batched_overshoot_and_design():
    env = canonical(4, 0.5, rng=0)
    exact = XYStatic(growth=0.0).run(env.spawn(1), rng=0)
    batched = XYStatic(growth=0.05).run(env.spawn(1), rng=0)
    np.testing.assert_allclose(exact.info["allocation"], 0.25, atol=1e-4)  # uniform on a basis
    assert batched.answer == 0 and batched.rounds < exact.rounds
    assert 1.0 < batched.info["max_check_ratio"]


def test_xy_static_soare_speed_and_size():
    import time

    t0 = time.perf_counter()
    res = XYStatic().run(soare(5, rng=0), rng=0)
    assert time.perf_counter() - t0 < 10.0
    assert res.answer == 0 and res.samples > 5e6
    assert res.rounds < 3000


def test_xy_oracle_uses_true_theta():
    env = soare(3, rng=0)
    res = XYOracle().run(env, rng=0)
    assert res.answer == 0
    assert res.info["allocation"][1] > 0.9  # (18): almost everything on e2
    with pytest.raises(InvalidParameterError, match="theta"):
        XYOracle().start(env.problem)
    with pytest.raises(InvalidParameterError, match="shape"):
        XYOracle(theta=[1.0, 0.0]).start(env.problem)


def test_xy_adaptive_phases_and_answer():
    env = easy_soare(angle=0.4, seed=1)
    res = XYAdaptive().run(env, rng=0, trace=True)
    assert res.status == "identified" and res.answer == 0
    assert res.info["phases"] >= 1 and "lower_bound_ratio" in res.info


def _active_sets(solver, env):
    exp = solver.start(env.problem, rng=0)
    sets = [exp.active.copy()]
    while not exp.done:
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
        sets.append(exp.active.copy())
    return exp.result(), sets


@pytest.mark.parametrize("readmit", [True, False])
def test_xy_adaptive_readmission(readmit):
    """Soare et al.'s rule chooses X_hat_{j+1} among all arms, so arms discarded in one phase
    come back in the next (the "forgetting" Xu et al. describe); readmit=False never brings
    one back, and on this instance stops sooner."""
    x = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [np.cos(0.2), np.sin(0.2), 0.0]])
    res, sets = _active_sets(XYAdaptive(delta=0.1, readmit=readmit), LinearInstance(x, [2.0, 0.0, 0.0], rng=1))
    back = sum(bool((now & ~before).any()) for before, now in zip(sets, sets[1:]))
    assert res.answer == 0
    if readmit:
        assert back >= 1 and res.samples > 30_000
    else:
        assert back == 0 and res.samples < 15_000


def test_static_radius_setting_is_the_sub_gaussian_constant_over_checks():
    """radius="sub-gaussian" stops the XY solvers sooner on the same samples' path: at each
    check its width is static_radius(k, constant="sub-gaussian") with k the phase's check."""
    env = canonical(3, 0.5, rng=0)
    printed = XYStatic(delta=0.1).run(env.spawn(1), rng=0, trace=True)
    tight = XYStatic(delta=0.1, radius="sub-gaussian").run(env.spawn(1), rng=0, trace=True)
    assert printed.answer == tight.answer == 0
    assert tight.samples < printed.samples / 2
    exp = XYStatic(delta=0.1, radius="sub-gaussian").start(env.problem, rng=0)
    env2 = env.spawn(1)
    for _ in range(3):
        b = exp.ask()
        exp.tell_batch(b, env2.pull_many(b.arms, b.counts))
    want = static_radius(exp.phase_checks, 0.1, sigma=1.0, log_n_hypotheses=math.log(3), constant="sub-gaussian")
    assert exp.phase_checks == exp.rounds == 3
    assert exp._radius(0.1) == pytest.approx(want, rel=1e-12)
    with pytest.raises(InvalidParameterError, match="radius"):
        XYAdaptive(radius="tight")
    with pytest.raises(InvalidParameterError, match="readmit"):
        XYAdaptive(readmit="no")


@pytest.mark.parametrize("name", ["lingape", "xy-static", "xy-adaptive", "xy-oracle"])
def test_registry_and_lower_bound_ratio(name):
    solver = get_solver(name)()
    res = solver.run(canonical(3, 1.0, rng=0), rng=0)
    assert res.answer == 0
    lb = res.info["lower_bound_ratio"]
    assert np.isfinite(lb) and lb == pytest.approx(res.samples / res.info["lower_bound_samples"])


# ---------------------------------------------------------------------- instances
def test_instances():
    env = soare(4, rng=0)
    assert env.features.shape == (5, 4) and env.best() == 0
    assert env.problem.info["S"] == pytest.approx(2.0)
    assert env.gap(4) == pytest.approx(2 * (1 - np.cos(0.01)))
    env = canonical(5, 0.3, rng=0)
    np.testing.assert_allclose(env.means(), [0.3, 0, 0, 0, 0])
    with pytest.raises(InvalidParameterError, match="gap"):
        canonical(3, 0.0)


@pytest.mark.parametrize("builder,d", [(diabetes_linear, 11), (wine_linear, 12)])
def test_real_data_instances(builder, d):
    env = builder(15, rng=0)
    mu = env.means()
    b = int(np.argmax(mu))
    assert env.features.shape == (15, d)
    assert np.all(np.abs(mu) <= 1.0)
    gaps = np.delete(mu[b] - mu, b)
    assert np.all(gaps >= 0.05)
    assert env.noise.kind == "pm1"
    again = builder(15, rng=0)
    np.testing.assert_array_equal(again.features, env.features)
    with pytest.raises(InvalidParameterError, match="n_arms"):
        builder(5, rng=0)
    res = LinGapE(sigma=2.0, growth=0.01).run(env, rng=0)
    assert res.answer == b


# ---------------------------------------------------------------------- bad input
def _problem(features):
    from combex.environments import NoiseModel

    return Problem(n_arms=len(np.atleast_2d(features)), noise=NoiseModel("gaussian", 1.0), features=features)


@pytest.mark.parametrize("cls", [LinGapE, XYStatic, XYAdaptive])
def test_bad_features(cls):
    with pytest.raises(InvalidParameterError, match="2-d"):
        cls().start(_problem(np.array([1.0, 2.0, 3.0])))
    with pytest.raises(InvalidParameterError, match="must span R"):
        cls().start(_problem(np.array([[1.0, 0.0], [2.0, 0.0], [-1.0, 0.0]])))
    with pytest.raises(InvalidParameterError, match="at least two rows"):
        cls().start(_problem(np.array([[1.0]])))
    with pytest.raises(InvalidParameterError, match="features"):
        from combex.environments import NoiseModel

        cls().start(Problem(n_arms=3, noise=NoiseModel("gaussian", 1.0)))


@pytest.mark.parametrize(
    "kwargs,match",
    [({"ridge": 0.0}, "ridge"), ({"ridge": -1.0}, "ridge"), ({"rule": "best"}, "rule"), ({"delta": 1.0}, "delta"),
     ({"epsilon": -0.1}, "epsilon"), ({"S": -1.0}, "'S'"), ({"sigma": 0.0}, "'sigma'"), ({"radius": "x"}, "radius"),
     ({"union_bound": 1}, "union_bound"), ({"growth": -1.0}, "growth"), ({"refactor_every": 0}, "refactor_every")],
)
def test_lingape_bad_settings(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        LinGapE(**kwargs)


def test_xy_bad_settings():
    with pytest.raises(InvalidParameterError, match="ridge"):
        XYStatic(ridge=-0.1)
    with pytest.raises(InvalidParameterError, match="alpha"):
        XYAdaptive(alpha=1.0)
    with pytest.raises(InvalidParameterError, match="design_method"):
        XYStatic(design_method="newton")
    with pytest.raises(InvalidParameterError, match="theta"):
        XYOracle(theta=[np.nan, 1.0])
    with pytest.raises(InvalidParameterError, match="quadratic"):
        LinGapEOracle(quadratic="exact-ish")


def test_dimension_radius_and_union_bound_are_wider():
    env = easy_soare(seed=3)
    base = LinGapE().run(env.spawn(1), rng=0)
    wide = LinGapE(radius="dimension", union_bound=True).run(env.spawn(1), rng=0)
    assert wide.answer == base.answer == 0
    assert wide.samples >= base.samples


# ---------------------------------------------------------------------- decision class
def _topk_env(means, k, seed):
    return FullBandit(np.asarray(means, dtype=float), k=k, rng=seed)


def _exhaustive_B(exp, members):
    th = exp.theta
    I = exp.best_mask
    xi = I.astype(float)
    vals = []
    for m in members:
        v = m.astype(float) - xi
        vals.append(float(th @ v) + exp.C * math.sqrt(max(float(v @ exp.M @ v), 0.0)))
    return max(vals)


@pytest.mark.parametrize("quadratic", ["spectral", "peeling"])
@pytest.mark.parametrize("n,k", [(5, 2), (6, 3)])
def test_oracle_lingape_bound_dominates_exhaustive(n, k, quadratic):
    means = np.linspace(1.0, 0.0, n)
    env = _topk_env(means, k, 0)
    members = list(env.decision_class.enumerate())
    solver = LinGapEOracle(quadratic=quadratic, S=float(np.linalg.norm(means)))
    exp = solver.start(env.problem, rng=0)
    steps = 0
    while not exp.done and steps < 150:
        assert exp.B >= _exhaustive_B(exp, members) - 1e-9
        # i_t is the linear-oracle best member of theta_hat
        best_val = max(float(exp.theta[m].sum()) for m in members)
        assert float(exp.theta[exp.best_mask].sum()) == pytest.approx(best_val)
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
        steps += 1
    assert exp.B >= _exhaustive_B(exp, members) - 1e-9


@pytest.mark.parametrize("n", [4])
def test_oracle_and_exhaustive_lingape_find_optimum(n):
    means = np.r_[3.0, 2.5, np.zeros(n - 2)]
    k = 2
    env = _topk_env(means, k, 1)
    res = LinGapEOracle(quadratic="peeling", ridge=0.1, S=4.0).run(env, rng=0, budget=5000)
    assert res.status == "identified"
    np.testing.assert_array_equal(res.answer, env.best())
    assert np.isfinite(res.info["lower_bound_ratio"])
    members = np.array(list(env.decision_class.enumerate()), dtype=float)
    lin = LinearBandit(members, means, sigma=math.sqrt(k), rng=1)
    ex = LinGapE(ridge=0.1, S=4.0).run(lin, rng=0)
    assert ex.status == "identified"
    np.testing.assert_array_equal(members[ex.answer].astype(bool), env.best())


@pytest.mark.slow
def test_oracle_lingape_resume_and_errors(tmp_path):
    means = np.array([3.0, 2.5, 0.0, 0.0])
    _run_with_resume(LinGapEOracle(ridge=0.1, S=4.0), lambda: _topk_env(means, 2, 3), steps=30, tmp_path=tmp_path)
    from combex.environments import NoiseModel

    with pytest.raises(InvalidParameterError, match="decision class"):
        LinGapEOracle().start(Problem(n_arms=3, noise=NoiseModel("gaussian", 1.0), arm_type="mask"))


# ---------------------------------------------------------------------- slow
@pytest.mark.slow
def test_error_rate_below_delta():
    """Over 60 seeded runs per setting, the error rate stays below delta = 0.1."""
    delta = 0.1
    settings = [
        (LinGapE(delta=delta), lambda s: canonical(3, 0.8, rng=s)),
        (LinGapE(delta=delta, rule="ratio", growth=0.01), lambda s: easy_soare(angle=0.6, seed=s)),
        (XYStatic(delta=delta), lambda s: canonical(3, 0.5, rng=s)),
        (XYStatic(delta=delta), lambda s: easy_soare(angle=0.6, seed=s)),
        (XYStatic(delta=delta, radius="sub-gaussian"), lambda s: canonical(3, 0.5, rng=s)),
        (XYAdaptive(delta=delta, readmit=False, radius="sub-gaussian"), lambda s: easy_soare(angle=0.3, seed=s)),
    ]
    for solver, make in settings:
        errors = 0
        for s in range(60):
            env = make(s)
            res = solver.run(env, rng=10_000 + s)
            errors += res.answer != env.best()
        assert errors / 60 <= delta, (solver, errors)


# ---------------------------------------------------------------------- ask / tell speed path
@pytest.mark.skipif(not __import__("combex.solvers._lingape_kernel", fromlist=["x"]).HAVE_NUMBA,
                    reason="numba not installed")
@pytest.mark.parametrize(
    "make,kwargs",
    [(lambda s: soare(4, rng=s), {}), (lambda s: diabetes_linear(12, rng=s), {"sigma": 2.0}),
     (lambda s: easy_soare(angle=0.05, seed=s), {"radius": "dimension", "refactor_every": 50})],
    ids=["soare4", "diabetes-pm1", "dimension-refactor"],
)
def test_compiled_round_is_bit_identical_to_numpy(make, kwargs, monkeypatch):
    """The numba round (used after COMPILE_AFTER rounds) gives the numpy path's trajectory
    bit for bit: same pulls, stop, trace of B / C / i / j, estimate and env stream."""
    from combex.solvers import _lingape_kernel as kern

    monkeypatch.setattr(kern, "COMPILE_AFTER", 5)
    calls = _count_kernel_calls(monkeypatch, kern, "compiled_switch", "switch")
    solver = LinGapE(**kwargs)
    runs = {}
    for enabled in (False, True):
        monkeypatch.setattr(kern, "ENABLED", enabled)
        env = make(3)
        res = Solver.run(solver, env, rng=0, budget=4000, trace=True)
        runs[enabled] = (res, env.rng.bit_generator.state)
    (a, sa), (b, sb) = runs[False], runs[True]
    _same_result(a, b)
    for key in ("B", "C", "i", "j"):
        np.testing.assert_array_equal(a.trace[key], b.trace[key])
    assert sa == sb
    assert calls["switch"] > 0  # the changes of arm went through the compiled fold


@pytest.mark.skipif(not __import__("combex.solvers._lingape_kernel", fromlist=["x"]).HAVE_NUMBA,
                    reason="numba not installed")
@pytest.mark.parametrize(
    "make,kwargs",
    [(lambda s: soare(4, rng=s), {}), (lambda s: diabetes_linear(12, rng=s), {"sigma": 2.0}),
     (lambda s: easy_soare(angle=0.05, seed=s), {"radius": "dimension", "refactor_every": 50})],
    ids=["soare4", "diabetes-pm1", "dimension-refactor"],
)
def test_compiled_fast_path_is_bit_identical_to_numpy_ask_tell(make, kwargs, monkeypatch):
    """LinGapE.run with the compiled blocks, rounds and changes of arm = the numpy ask/tell
    loop, bit for bit (pulls, stop, trace, estimate, environment stream)."""
    from combex.solvers import _lingape_kernel as kern

    monkeypatch.setattr(kern, "COMPILE_AFTER", 5)
    calls = _count_kernel_calls(monkeypatch, kern, "compiled_block", "block")
    solver = LinGapE(**kwargs)
    monkeypatch.setattr(kern, "ENABLED", False)
    e1 = make(3)
    slow = Solver.run(solver, e1, rng=0, budget=5000, trace=True)
    monkeypatch.setattr(kern, "ENABLED", True)
    e2 = make(3)
    fast = solver._simulate(e2, rng=0, budget=5000, trace=True)  # run() without its T* afterwards
    _same_result(slow, fast)
    for key in ("B", "C", "i", "j"):
        np.testing.assert_array_equal(slow.trace[key], fast.trace[key])
    assert e1.rng.bit_generator.state == e2.rng.bit_generator.state
    assert calls["block"] > 0


def test_switch_kernel_matches_numpy_fold_on_random_states():
    """lingape_switch (interpreted: same source as the compiled one) = the numpy fold and
    streak vectors of a change of arm, bit for bit, on the diabetes instance (+-1 rewards)."""
    import copy

    from combex.solvers._lingape_kernel import lingape_switch

    env = diabetes_linear(12, rng=0)
    exp = LinGapE(sigma=2.0, refactor_every=37).start(env, rng=0)
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(400):
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
        if exp.done:
            break
        if exp.streak_k == 0:
            continue
        new = int(rng.integers(exp.X.shape[0]))
        if new == exp.streak_arm:
            continue
        ref, got = copy.deepcopy(exp), copy.deepcopy(exp)
        ref._switch = None
        ref._start_streak(new)
        refresh = (got._n_folds + 1) % got.solver.refactor_every == 0
        ok, q, ua = lingape_switch(got.u, got.g, got._Gbuf, got._have, got._ga, got._ga2, float(got.streak_k),
                                   got.streak_S, got._ua, got._q, new, not refresh)
        got._fold_counts(got.streak_arm, got.streak_k, got.streak_S)
        if not ok:
            got.streak_arm, got.streak_k, got.streak_S = new, 0, 0.0
            got._streak_vectors()
            q, ua = got._q, got._ua
        assert ok == (not refresh and bool(exp._have[new]))
        for name in ("u", "g", "_ga", "_ga2", "Tb", "sb"):
            np.testing.assert_array_equal(getattr(ref, name), getattr(got, name), err_msg=name)
        np.testing.assert_array_equal(ref._Gbuf[ref._have], got._Gbuf[got._have])
        np.testing.assert_array_equal(ref._have, got._have)
        assert (q, ua, ref._logdet_base) == (ref._q, ref._ua, got._logdet_base)
        checked += 1
    assert checked > 50


def test_lingape_large_K_keeps_the_least_squares_and_resumes(tmp_path):
    """K > MAX_ARMS: the base is a LeastSquares (no compiled path); save / resume is exact."""
    from combex.solvers import _lingape_kernel as kern

    rng = np.random.default_rng(0)
    X = 0.3 * rng.normal(size=(kern.MAX_ARMS + 6, 3))
    X[0] = [2.0, 0.0, 0.0]
    theta = np.array([1.0, 0.5, -0.5])
    make = lambda: LinearBandit(X, theta, rng=4)  # noqa: E731
    solver = LinGapE(S=2.0, refactor_every=9)
    exp = solver.start(make().problem, rng=0)
    assert exp.ls is not None and exp._Gbuf is None
    _run_with_resume(solver, make, steps=150, tmp_path=tmp_path)


def test_compiled_round_kernel_matches_evaluate_on_random_states():
    """lingape_round (interpreted: same source as the compiled one) = _evaluate for one state."""
    from combex.solvers._lingape_kernel import lingape_round

    env = diabetes_linear(12, rng=0)
    exp = LinGapE(sigma=2.0).start(env, rng=0)
    rng = np.random.default_rng(1)
    for _ in range(300):
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
        if exp.done:
            break
        a = exp.streak_arm
        k = int(rng.integers(1, 50))
        S = float(rng.normal() * k)
        i, j, B, C, nxt = exp._evaluate(np.array([k]), np.array([S]), np.array([exp.T[a] + k]),
                                        np.array([float(exp.samples + k)]))
        for r in (i[0], j[0]):
            exp._row(int(r))
        got = lingape_round(exp.u, exp.g, exp._ga, exp._ga2, exp._Gbuf, exp._have, float(k), S, exp._ua,
                            exp._q, exp._radius_one(k * exp._q, float(exp.samples + k)), True)
        assert got == (int(i[0]), int(j[0]), float(B[0]), int(nxt[0]), -1)
        assert exp._radius_one(k * exp._q, 0.0) == float(C[0])


def test_solvers_never_touch_an_environments_private_state():
    """Solvers use the public environment API only (pull_many, state_dict /
    load_state_dict, sequential_draws): no generator, no _pull_many."""
    import pathlib
    import re

    import combex.solvers

    root = pathlib.Path(combex.solvers.__file__).parent
    bad = re.compile(r"\benv(_\w+)?\.(rng\b|_\w+)|(?<!self\.rng\.)bit_generator|\._pull_many")
    hits = [f"{p.name}:{n}: {line.strip()}" for p in sorted(root.glob("*.py"))
            for n, line in enumerate(p.read_text().splitlines(), 1) if bad.search(line)]
    assert hits == []


def test_fast_path_rewinds_through_public_state_dict(monkeypatch):
    """The fast path reaches the environment only through its public methods."""
    env = soare(3, rng=0)
    calls = {"state_dict": 0, "load_state_dict": 0}
    for name in calls:
        orig = getattr(env, name)

        def wrapped(*a, _orig=orig, _name=name, **k):
            calls[_name] += 1
            return _orig(*a, **k)

        monkeypatch.setattr(env, name, wrapped)
    res = LinGapE().run(env, rng=0, budget=20000)
    assert res.samples == 20000
    assert calls["state_dict"] > 0 and 0 < calls["load_state_dict"] <= calls["state_dict"]


def test_one_result_vocabulary():
    """answer / wall_seconds in every family; the deprecated names warn."""
    from combex.mips import exact_top_k
    from combex.solvers import RegretResult

    env = canonical(3, 1.0, rng=0)
    exp = LinGapE().start(env, rng=0)
    b = exp.ask()
    exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    with pytest.warns(DeprecationWarning, match="Exploration.answer"):
        assert exp.recommendation == exp.answer
    assert exp.result().answer == exp.answer
    rr = RegretResult(regret=1.0, curve=np.ones(2), arms=np.zeros(2, dtype=np.int64), wall_seconds=2.0,
                      preprocess_seconds=0.5)
    with pytest.warns(DeprecationWarning, match="wall_seconds"):
        assert rr.seconds == 2.0
    m = exact_top_k(np.eye(4), np.arange(4.0), 2)
    np.testing.assert_array_equal(m.answer, m.indices)


def test_resume_past_the_compiled_switch_is_exact():
    """Save after the compiled round and switch have taken over (diabetes, +-1 rewards,
    K <= MAX_ARMS: base = counts, sums, carried rows of G), resume, and get the trajectory
    of the uninterrupted run bit for bit."""
    from combex.solvers import _lingape_kernel as kern

    solver = LinGapE(sigma=2.0, refactor_every=300)
    budget = 3000
    env1 = diabetes_linear(12, rng=5)
    full = Solver.run(solver, env1, rng=0, budget=budget, trace=True)
    env2 = diabetes_linear(12, rng=5)
    exp = solver.start(env2, rng=0)
    exp.record_trace = True
    while exp.samples < kern.COMPILE_AFTER + 700:
        b = exp.ask()
        exp.tell_batch(b, env2.pull_many(b.arms, b.counts))
    assert exp.ls is None and exp._n_folds > 300
    exp = solver.resume(exp.state_dict(), env2)
    while not exp.done and exp.samples < budget:
        b = exp.ask()
        exp.tell_batch(b, env2.pull_many(b.arms, b.counts))
    res = exp.result()
    assert res.samples == full.samples and res.rounds == full.rounds
    np.testing.assert_array_equal(res.pulls, full.pulls)
    np.testing.assert_array_equal(res.info["theta_hat"], full.info["theta_hat"])
    assert res.info["C_t"] == full.info["C_t"] and res.info["B"] == full.info["B"]


def test_resume_a_state_saved_with_a_least_squares_base():
    """A LinGapE state saved before the base kept its counts and sums (only 'ls') resumes:
    the counts come from T minus the streak, and the run goes on to the right answer."""
    env = easy_soare(angle=0.4, seed=9)
    solver = LinGapE()
    exp = solver.start(env, rng=7)
    for _ in range(30):
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    st = exp.state_dict()
    old = dict(st, extra={k: v for k, v in st["extra"].items() if k not in ("Tb", "sb", "logdet", "n_folds")})
    ls = __import__("combex.estimation", fromlist=["LeastSquares"]).LeastSquares(2, ridge=1.0)
    X, Tb = exp.X, exp.Tb
    for k in range(X.shape[0]):
        if Tb[k]:
            ls.update(X[k], float(exp.sb[k]), int(Tb[k]))
    old["extra"]["ls"] = ls.state_dict()
    back = solver.resume(old, env)
    np.testing.assert_array_equal(back.Tb, exp.Tb)
    assert back._logdet_base == pytest.approx(exp._logdet_base, rel=1e-12)
    while not back.done:
        b = back.ask()
        back.tell_batch(b, env.pull_many(b.arms, b.counts))
    assert back.result().answer == env.best()


def test_base_solve_survives_a_numerically_singular_design(monkeypatch):
    """The base's A^-1 by Cholesky falls back to an eigendecomposition when A is not
    numerically positive definite (a tiny ridge)."""
    env = easy_soare(angle=0.4, seed=9)
    exp = LinGapE().start(env, rng=0)
    b = exp.ask()
    exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    exp._solved = None
    want = exp._base_solve()

    def fail(_):
        raise np.linalg.LinAlgError("not positive definite")

    exp._solved = None
    monkeypatch.setattr(np.linalg, "cholesky", fail)
    got = exp._base_solve()
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    assert got[2] == pytest.approx(want[2], rel=1e-12)


def _count_kernel_calls(monkeypatch, kern, factory, key):
    """Wrap the compiled kernel that ``kern.<factory>()`` returns so that its calls are
    counted in the returned dict under ``key``."""
    fn = getattr(kern, factory)()
    calls = {key: 0}

    def counted(*args):
        calls[key] += 1
        return fn(*args)

    monkeypatch.setattr(kern, factory, lambda: counted)
    return calls


# ---------------------------------------------------------------------- the norm bound S and the stopping rule
def test_lingape_refuses_without_norm_bound_and_is_right_with_one():
    # Regression test: with a default S = 1, LinGapE answered theta = (50, 50.8) wrongly in
    # every run (C_t of eq. (3) is valid only when ||theta||_2 <= S).
    env = LinearBandit(np.eye(2), [50.0, 50.8], rng=0)
    from combex.exceptions import CombexError

    with pytest.raises(CombexError, match="'S' parameter.*required"):
        LinGapE(delta=0.1).run(env, rng=0)
    wrong = 0
    for seed in range(5):  # a small ridge keeps lambda^{1/2} S (about 0.7) from dominating C_t
        res = LinGapE(delta=0.1, ridge=1e-4, S=float(np.hypot(50.0, 50.8))).run(env.spawn(seed), rng=seed)
        wrong += res.answer != 1
    assert wrong == 0


def test_lingape_derives_S_from_a_known_reward_range():
    # Regression test: S comes from the problem's known reward range, never a guess.
    env = LinearBandit(np.eye(2), [0.2, 0.7], rng=0)
    p = env.problem
    prob = Problem(n_arms=p.n_arms, noise=p.noise, features=p.features, info={"reward_range": (-1.0, 1.0)})
    exp = get_solver("lingape")().start(prob, rng=0)
    assert exp.S == pytest.approx(np.sqrt(2.0))  # m sqrt(K) / s_min(X) with X = I


def test_lingape_oracle_needs_S_on_gaussian_full_bandit_and_derives_it_otherwise():
    # Regression test: LinGapEOracle takes no default S on Gaussian full-bandit problems
    # (means near 50 were answered wrongly with S = 1); it derives S from bounded means.
    from combex.environments import kuroki_synthetic, topk_gaussian
    from combex.exceptions import CombexError

    Oracle = get_solver("lingape-oracle")
    env = FullBandit([50.0, 50.8, 0.0], k=1, rng=0)
    with pytest.raises(CombexError, match="'S' parameter"):
        Oracle(delta=0.1).start(env.problem, rng=0)
    bern = FullBandit([0.2, 0.9, 0.5, 0.1], k=2, noise="bernoulli", rng=0)
    assert Oracle().start(bern.problem, rng=0).S == pytest.approx(2.0)  # sqrt(n), means in [0, 1]
    assert Oracle().start(kuroki_synthetic(6, 2, rng=0).problem, rng=0).S == pytest.approx(np.sqrt(6))
    assert Oracle().start(topk_gaussian((3, 4, 0), k=1).problem, rng=0).S == pytest.approx(5.0)


def test_lingape_oracle_stops_on_easy_top2_of_6_within_budget():
    # Regression test: LinGapEOracle stops on an easy top-2 of 6 within a small budget
    # (measured 271-408 samples over seeds 0-4).
    from combex.environments import topk_gaussian

    Oracle = get_solver("lingape-oracle")
    for seed in range(2):
        env = topk_gaussian((3, 2.5, 0, 0, 0, 0), k=2, rng=seed)
        res = Oracle(ridge=0.1, S=4.0).run(env, rng=seed, budget=2000)
        assert res.status == "identified", res.info
        assert res.samples <= 1000
        np.testing.assert_array_equal(res.answer, env.best())


def test_xy_static_reports_its_measured_check_ratio():
    # Regression test: the ratio between successive stopping checks is measured and
    # reported, and it exceeds 1 + growth early on (the "n + 1" steps while n < 20).
    res = get_solver("xy-static")(growth=0.05).run(canonical(4, 0.5, rng=0), rng=0)
    assert res.info["max_check_ratio"] > 1.05


def test_lingape_budget_exhausted_lists_the_indistinguishable_arms():
    # Regression test: a run that ends on its budget says which arms the data cannot
    # separate from its answer.
    from combex.exceptions import TieWarning

    env = LinearBandit(np.eye(3), [1.0, 1.0, 0.0], rng=0)  # arms 0 and 1 tie
    with pytest.warns(TieWarning):
        res = get_solver("lingape")(S=2.0).run(env, rng=0, budget=3000)
    assert res.status == "budget_exhausted"
    assert res.info["indistinguishable"][0] == 1 - int(res.answer)  # the tied arm, least separated
