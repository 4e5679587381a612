"""Best-K / CPE solvers with semi-bandit feedback (combex.solvers.semi_bandit)."""

from __future__ import annotations

import copy
import math

import networkx as nx
import numpy as np
import pytest

from combex.environments import GaussianArms, Problem, NoiseModel
from combex.environments import BestKGaussianArms, jiang_1sparse, jiang_1sparse_means, jiang_exponential, jiang_exponential_means, lil_exponential, lil_exponential_means
from combex.estimation import lil_c_epsilon, lil_radius
from combex.exceptions import InvalidParameterError, StateError
from combex.oracles import PartitionMatroid, STPaths, TopK
from combex.solvers import Batch, get_solver
from combex.solvers.semi_bandit import (
    FAITHFUL_EPSILON,
    LUCB,
    LilCLUCB,
    LilLUCB,
    LilRandLUCB,
    LilUCB,
    LUCBPlusPlus,
)

BEST_K = [LilRandLUCB, LilCLUCB, LUCB, LilLUCB, LUCBPlusPlus]
ALL = BEST_K + [LilUCB]
MODES = ["faithful", "heuristic"]


def _solver(cls, K, mode="heuristic", **kw):
    return cls(1 if cls is LilUCB else K, mode=mode, **kw)


def _drive(exp, env, rounds=None):
    """Run ask/tell against env for at most `rounds` asks (all when None)."""
    i = 0
    while not exp.done and (rounds is None or i < rounds):
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
        i += 1
    return exp


# ====================================================================== instances
def test_instance_means_exact() -> None:
    np.testing.assert_array_equal(jiang_1sparse_means(5, 2), [0.5, 0.5, 0, 0, 0])
    # alpha-Exponential, N = 6, K = 2, alpha = 0.3 (Section 5.1 formula, by hand)
    N, K, a = 6, 2, 0.3
    expect = [4 / 6 + (2 / 6) * ((2 - i) / 2) ** a for i in (1, 2)] + [
        4 / 6 - (4 / 6) * ((i - 2) / 4) ** a for i in (3, 4, 5, 6)
    ]
    np.testing.assert_allclose(jiang_exponential_means(N, K, a), expect, rtol=1e-14)
    assert jiang_exponential_means(6, 2)[1] == pytest.approx(4 / 6)  # mu_[K] = (N-K)/N
    assert jiang_exponential_means(6, 2)[-1] == pytest.approx(0.0)
    np.testing.assert_allclose(lil_exponential_means(4, 0.6), [1, 1 - 0.25**0.6, 1 - 0.5**0.6, 1 - 0.75**0.6])
    for mu in (jiang_exponential_means(50, 25), lil_exponential_means(50, 0.3)):
        assert np.all(np.diff(mu) <= 0)


def test_instance_environments() -> None:
    env = jiang_exponential(10, 3, 0.3, rng=0)
    assert isinstance(env, GaussianArms) and env.K == 3 and env.noise.sigma == 0.5
    assert env.best().tolist() == [True] * 3 + [False] * 7
    other = env.best().copy()
    other[2], other[3] = False, True
    assert env.is_correct(env.best()) and not env.is_correct(other)
    assert env.value(other) == pytest.approx(env.means()[[0, 1, 3]].sum())
    one = lil_exponential(5, 0.6, rng=0)
    assert one.K == 1 and one.is_correct(0) and not one.is_correct(1)
    assert one.is_correct(np.array([True, False, False, False, False]))
    assert env.params()["K"] == 3
    # ties inside the top set: any top-K set is correct
    sp = jiang_1sparse(4, 2)
    assert sp.is_correct(np.array([True, True, False, False]))
    with pytest.raises(InvalidParameterError, match="exactly K=3"):
        env.value(np.ones(10, dtype=bool))


@pytest.mark.parametrize(
    ("fn", "args", "match"),
    [
        (jiang_1sparse, (5, 5), "'K' parameter of jiang_1sparse"),
        (jiang_1sparse, (1, 1), "'N' parameter"),
        (jiang_exponential, (10, 0), "'K' parameter"),
        (jiang_exponential, (10, 2, -0.3), "'alpha' parameter"),
        (lil_exponential, (10, 0.0), "'alpha' parameter"),
        (lil_exponential, (1,), "'N' parameter"),
    ],
)
def test_instance_errors(fn, args, match) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        fn(*args)


def test_instances_registered() -> None:
    from combex.experiments import make_instance

    env = make_instance("jiang-1sparse", rng=0, N=6, K=3)
    assert isinstance(env, BestKGaussianArms) and env.K == 3


# ====================================================================== correctness (fast)
@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("mode", MODES)
def test_identifies_easy_instance(cls, mode) -> None:
    K = 1 if cls is LilUCB else 2
    for seed in range(3):
        env = BestKGaussianArms([0.9, 0.8, 0.2, 0.1, 0.0][: 5], K, sigma=0.5, rng=seed)
        res = _solver(cls, K, mode).run(env, rng=100 + seed)
        assert res.status == "identified"
        assert env.is_correct(res.answer)
        assert res.answer.dtype == bool and res.answer.sum() == K
        assert res.samples == res.pulls.sum() and np.all(res.pulls >= 1)


@pytest.mark.parametrize("cls", ALL)
def test_first_batch_samples_every_arm_once(cls) -> None:
    env = jiang_1sparse(7, 1 if cls is LilUCB else 2, rng=0)
    exp = _solver(cls, 2).start(env, rng=0)
    b = exp.ask()
    np.testing.assert_array_equal(b.arms, np.arange(7))
    np.testing.assert_array_equal(b.counts, np.ones(7))
    assert exp.ask() is b  # same batch until told
    exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    assert exp.rounds == 1
    nxt = exp.ask()
    assert len(nxt) == (2 if cls in (LUCB, LilLUCB, LUCBPlusPlus) else 1)
    assert nxt.total == len(nxt)


@pytest.mark.parametrize("cls", BEST_K)
def test_high_set_and_bounds_match_brute_force(cls) -> None:
    """The incrementally maintained High_t and bounds equal a from-scratch computation
    (with lil_radius, independent of the solver's LILRadius) at every round."""
    N, K = 12, 4
    env = jiang_exponential(N, K, 0.3, rng=3)
    solver = cls(K, mode="faithful")
    exp = solver.start(env, rng=4)
    p = solver.confidence_parameters(N)
    sigma = 0.5
    for _ in range(300):
        if exp.done:
            break
        _drive(exp, env, rounds=1)
        mu = exp.S / exp.T
        np.testing.assert_allclose(exp.mu, mu, rtol=1e-13)
        high = exp.high
        assert high.sum() == K
        assert mu[high].min() >= mu[~high].max()
        if cls is LUCB:
            t = exp.rounds
            beta = np.sqrt(2 * sigma**2 * np.log(1.25 * N * t**4 / p["delta"]) / exp.T)
            lcb, ucb = mu - beta, mu + beta
        else:
            om = p["omegas"]
            lcb = mu - lil_radius(exp.T, om["high"], epsilon=p["epsilon"], sigma=sigma)
            ucb = mu + lil_radius(exp.T, om["low"], epsilon=p["epsilon"], sigma=sigma)
        gap = lcb[high].min() - ucb[~high].max()
        assert exp._gap == pytest.approx(gap, rel=1e-9, abs=1e-12)
        if not exp.done:
            h = np.flatnonzero(high)[np.argmin(lcb[high])]
            l_ = np.flatnonzero(~high)[np.argmax(ucb[~high])]
            assert (exp._h, exp._l) == (h, l_)
            nxt = exp.ask().arms.tolist()
            if cls in (LUCB, LilLUCB, LUCBPlusPlus):
                assert nxt == [h, l_]
            elif cls is LilRandLUCB:
                assert nxt in ([h], [l_])
            else:  # lil'CLUCB: largest radius in M_t xor M~_t
                r = lil_radius(exp.T, p["omegas"]["high"], epsilon=p["epsilon"], sigma=sigma)
                mt = np.where(high, mu - r, mu + r)
                top = np.zeros(N, bool)
                top[np.argsort(-mt)[:K]] = True
                diff = high ^ top
                assert diff[nxt[0]] and r[nxt[0]] == pytest.approx(r[diff].max())


@pytest.mark.parametrize("cls", [LilRandLUCB, LUCBPlusPlus, LilLUCB, LilCLUCB, LUCB])
def test_stops_exactly_when_bounds_separate(cls) -> None:
    env = jiang_1sparse(6, 2, rng=1)
    s = cls(2, mode="faithful")
    exp = s.start(env, rng=2)
    exp.record_trace = True
    _drive(exp, env)
    res = exp.result()
    gaps = res.trace["gap"]
    assert len(gaps) == res.rounds
    if cls is LUCB:
        assert np.all(gaps[:-1] <= 0) and gaps[-1] > 0
    else:
        assert np.all(gaps[:-1] < 0) and gaps[-1] >= 0
    assert res.certificate["gap"] == gaps[-1]
    assert env.is_correct(res.answer)


def test_randomized_rule_probability() -> None:
    """Algorithm 1 samples h_t with probability T_l / (T_h + T_l)."""
    env_means = [1.0, 0.9, 0.1, 0.0]
    solver = LilRandLUCB(2, mode="heuristic", sigma=0.5)
    problem = Problem(n_arms=4, noise=NoiseModel("gaussian", 0.5))
    chose_h = 0
    runs = 2000
    for seed in range(runs):
        exp = solver.start(problem, rng=seed)
        b = exp.ask()
        exp.tell_batch(b, env_means)
        exp.ask()
        exp.tell(0, 1.0 * 5, 5)  # arms 0, 1 (High) now have T = 6
        exp.tell(1, 0.9 * 5, 5)
        h, l_ = exp._h, exp._l
        if seed == 0:
            assert (h, l_) == (1, 2) and exp.T[h] == 6 and exp.T[l_] == 1
        chose_h += exp.ask().arms.tolist() == [h]
    p = 1 / 7
    assert abs(chose_h / runs - p) < 4 * math.sqrt(p * (1 - p) / runs)


def test_lil_ucb_stopping_rule() -> None:
    env = jiang_1sparse(5, 1, rng=2)
    s = LilUCB(mode="heuristic")
    exp = s.start(env, rng=0)
    exp.record_trace = True
    _drive(exp, env)
    p = s.confidence_parameters(5)
    assert p["lambda"] == pytest.approx(1 + 10 / 5) and p["beta"] == 0.5 and p["lil_delta"] == pytest.approx(0.01)
    assert p["delta"] == 0.05  # the default guaranteed error probability; heuristic lil_delta = delta / 5
    T = exp.T
    i = int(np.argmax(T))
    assert T[i] >= 1 + p["lambda"] * (T.sum() - T[i])
    # one sample earlier the rule did not hold for that arm
    assert T[i] - 1 < 1 + p["lambda"] * (T.sum() - T[i])
    assert np.all(exp.result().trace["gap"][:-1] < 0)
    assert exp.answer.tolist() == [True, False, False, False, False]
    # the arm sampled is the argmax of the index mu + (1 + beta) U(T, lil_delta)
    exp2 = s.start(env.spawn(5), rng=0)
    _drive(exp2, env.spawn(6), rounds=3)
    idx = exp2.mu + 1.5 * lil_radius(exp2.T, p["lil_delta"], epsilon=0.0, sigma=0.5)
    assert exp2.ask().arms.tolist() == [int(np.argmax(idx))]


# ====================================================================== parameters
def test_faithful_parameters() -> None:
    delta = 0.01
    c = lil_c_epsilon(FAITHFUL_EPSILON)
    p = LilRandLUCB(2, delta=delta).confidence_parameters(100)
    assert p["epsilon"] == 0.01 and p["lil_delta"] == pytest.approx(delta / c) and p["delta"] == delta
    assert p["error_bound"] == pytest.approx(delta)
    assert p["omegas"] == {"high": pytest.approx(p["lil_delta"] / 196), "low": pytest.approx(p["lil_delta"] / 4)}
    p = LilCLUCB(2, delta=delta, epsilon=0.1).confidence_parameters(100)
    c1 = lil_c_epsilon(0.1)
    assert c1 * p["lil_delta"] ** 1.1 / 100**0.1 == pytest.approx(delta, rel=1e-9)
    assert p["omegas"]["high"] == p["omegas"]["low"] == pytest.approx(p["lil_delta"] / 100)
    p = LilUCB(delta=delta).confidence_parameters(10)
    assert (p["beta"], p["lambda"], p["epsilon"]) == (1.0, 9.0, 0.01)
    assert 4 * math.sqrt(c * p["lil_delta"]) + 4 * c * p["lil_delta"] == pytest.approx(delta)
    p = LUCB(3, delta=0.05).confidence_parameters(10)
    assert p["delta"] == 0.05 and p["error_bound"] == 0.05 and "lil_delta" not in p
    h = LilLUCB(3, delta=0.05, mode="heuristic").confidence_parameters(10)
    assert (h["epsilon"], h["lil_delta"], h["error_bound"]) == (0.0, 0.05, None)
    # LUCB has no heuristic version: both modes give the same run
    env = jiang_1sparse(6, 2, rng=0)
    a = LUCB(2, mode="faithful").run(env.spawn(1), rng=0)
    b = LUCB(2, mode="heuristic").run(env.spawn(1), rng=0)
    assert a.samples == b.samples


def test_sigma_from_problem_or_setting() -> None:
    env = jiang_1sparse(6, 2, rng=0)
    r1 = LilRandLUCB(2, mode="heuristic").run(env.spawn(3), rng=1)
    r2 = LilRandLUCB(2, mode="heuristic", sigma=0.5).run(env.spawn(3), rng=1)
    r3 = LilRandLUCB(2, mode="heuristic", sigma=1.0).run(env.spawn(3), rng=1)
    assert r1.samples == r2.samples and r1.certificate["sigma"] == 0.5
    assert r3.samples > r1.samples


# ====================================================================== reproducibility, save / resume
@pytest.mark.parametrize("cls", ALL)
def test_seeded_reproducibility(cls) -> None:
    K = 1 if cls is LilUCB else 3
    env = jiang_exponential(10, K, 0.3, rng=0) if K > 1 else lil_exponential(10, 0.3)
    s = _solver(cls, K)
    a = s.run(env.spawn(11), rng=5)
    b = s.run(env.spawn(11), rng=5)
    assert a.samples == b.samples and a.rounds == b.rounds
    np.testing.assert_array_equal(a.pulls, b.pulls)
    np.testing.assert_array_equal(a.answer, b.answer)
    c = s.run(env.spawn(12), rng=6)
    assert c.samples != a.samples or not np.array_equal(c.pulls, a.pulls)


def test_randlucb_uses_its_own_generator() -> None:
    env = jiang_1sparse(20, 2)
    s = LilRandLUCB(2, mode="heuristic")
    a = s.run(env.spawn(1), rng=1)
    b = s.run(env.spawn(1), rng=2)  # same noise stream, different coin flips
    assert not np.array_equal(a.pulls, b.pulls)


def _cpe_cases():
    pm = PartitionMatroid([0, 0, 0, 1, 1, 1, 2, 2], [1, 2, 1], base=True)
    mu_pm = np.array([0.9, 0.3, 0.1, 0.8, 0.7, 0.2, 0.0, 0.6])
    g = nx.DiGraph()
    g.add_edges_from([("s", "a"), ("s", "b"), ("a", "c"), ("b", "c"), ("a", "t"), ("c", "t"), ("b", "t")])
    paths = STPaths(g, "s", "t")
    w = {("s", "a"): 0.8, ("s", "b"): 0.5, ("a", "c"): 0.6, ("b", "c"): 0.1, ("a", "t"): 0.2, ("c", "t"): 0.7, ("b", "t"): 0.3}
    mu_p = np.array([w[e] for e in paths.edges])
    return [(pm, mu_pm), (paths, mu_p)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", [0, 1], ids=["partition-matroid", "st-paths"])
def test_generalized_lil_clucb_finds_optimum(mode, case) -> None:
    dc, mu = _cpe_cases()[case]
    best = dc.argmax(mu)
    for seed in range(3):
        env = GaussianArms(mu, sigma=0.5, rng=seed)
        res = LilCLUCB(decision_class=dc, mode=mode).run(env, rng=seed)
        assert res.status == "identified"
        np.testing.assert_array_equal(res.answer, best)
        assert res.certificate["width"] == dc.width
        assert res.certificate["gap"] >= 0


def test_generalized_matches_top_k_path() -> None:
    """With TopK(N, K) as the decision class, Algorithm 3 is Algorithm 2 (same samples)."""
    env = jiang_exponential(12, 3, 0.3, rng=0)
    a = LilCLUCB(3, mode="faithful").run(env.spawn(7), rng=0)
    b = LilCLUCB(3, mode="faithful", decision_class=TopK(12, 3)).run(env.spawn(7), rng=0)
    assert a.samples == b.samples
    np.testing.assert_array_equal(a.answer, b.answer)
    np.testing.assert_array_equal(a.pulls, b.pulls)
    assert a.certificate["width"] == b.certificate["width"] == 2


def _resume_cases():
    out = [(cls, None) for cls in ALL]
    out.append((LilCLUCB, "pm"))
    return out


@pytest.mark.parametrize(("cls", "dc"), _resume_cases())
@pytest.mark.parametrize("pending", [False, True])
def test_save_resume_identical(cls, dc, pending, tmp_path) -> None:
    if dc == "pm":
        dcl, mu = _cpe_cases()[0]
        env = GaussianArms(mu, sigma=0.5, rng=3)
        s = LilCLUCB(decision_class=dcl, mode="faithful")
    else:
        K = 1 if cls is LilUCB else 2
        env = jiang_exponential(9, K, 0.3, rng=3) if K > 1 else lil_exponential(9, 0.6, rng=3)
        s = _solver(cls, K, "faithful")
    exp = s.start(env, rng=9)
    _drive(exp, env, rounds=25)
    assert not exp.done
    if pending:
        exp.ask()
    state = exp.state_dict()
    env2 = copy.deepcopy(env)
    exp2 = s.resume(state, env2)
    if pending:
        np.testing.assert_array_equal(exp2.ask().arms, exp.ask().arms)
    path = exp.save(tmp_path / "state.json")
    exp3 = s.load(path, env2.problem)
    env3 = copy.deepcopy(env)
    r1 = _drive(exp, env).result()
    r2 = _drive(exp2, env2).result()
    r3 = _drive(exp3, env3).result()
    for r in (r2, r3):
        assert (r.samples, r.rounds, r.status) == (r1.samples, r1.rounds, r1.status)
        np.testing.assert_array_equal(r.pulls, r1.pulls)
        np.testing.assert_array_equal(r.answer, r1.answer)
        assert r.certificate == r1.certificate


def test_resume_rejects_other_settings() -> None:
    env = jiang_1sparse(6, 2, rng=0)
    exp = _drive(LilRandLUCB(2).start(env, rng=0), env, rounds=3)
    with pytest.raises(StateError, match="settings"):
        LilRandLUCB(3).resume(exp.state_dict(), env)
    with pytest.raises(StateError, match="belongs to solver"):
        LilLUCB(2).resume(exp.state_dict(), env)


def test_budget_and_human_tells() -> None:
    env = jiang_1sparse(10, 2, rng=0)
    res = LilRandLUCB(2).run(env, rng=0, budget=37)
    assert res.status == "budget_exhausted" and res.samples == 37
    assert res.certificate["mode"] == "faithful"
    # a budget smaller than N leaves arms unsampled; the first round waits for them
    res = LilLUCB(2).run(env.spawn(1), rng=0, budget=4)
    assert res.samples == 4 and res.rounds == 0
    # a human may report any arm, several counts at once, in pieces
    s = LUCBPlusPlus(2, mode="heuristic")
    exp = s.start(env.problem, rng=0)
    for i in range(10):
        exp.tell(i, 0.5 * 3 if i < 2 else 0.0, 3)
    assert exp.rounds == 1 and exp.T.tolist() == [3] * 10
    exp.tell_batch(Batch(np.array([4, 4, 5]), np.array([1, 2, 1])), [0.1, 0.1, 0.0])
    assert exp.T[4] == 6 and exp.T[5] == 4 and exp.mu[4] == pytest.approx(0.2 / 6)
    assert exp.high.tolist() == [True, True] + [False] * 8


def test_registry_and_runner() -> None:
    for name, cls in [("lil-randlucb", LilRandLUCB), ("lil-clucb", LilCLUCB), ("lucb", LUCB),
                      ("lil-lucb", LilLUCB), ("lucb++", LUCBPlusPlus), ("lil-ucb", LilUCB)]:
        assert get_solver(name) is cls
    from combex.experiments import run_many

    doc = run_many("lil-randlucb", "jiang-1sparse", {"N": 8, "K": 2}, runs=3, seed=1,
                   solver_params={"K": 2, "mode": "heuristic"})
    assert doc["summary"]["error_rate"] == 0.0
    assert all(len(r["answer"]) == 2 for r in doc["runs"])


@pytest.mark.parametrize("cls", ALL)
def test_delta_is_the_guaranteed_error_probability_and_nu_its_deprecated_alias(cls) -> None:
    # one vocabulary with every PAC solver: delta is the error probability the solver
    # guarantees (default 0.05); Lemma 2.1's constant is lil_delta; nu means delta
    assert cls().delta == 0.05 and "nu" not in cls().get_params()
    with pytest.warns(DeprecationWarning, match=f"'nu' parameter of {cls.__name__} is deprecated; use 'delta'") as rec:
        old = cls(1, nu=0.1)
    assert rec[0].filename == __file__  # the warning points at the caller's line
    new = cls(1, delta=0.1)
    assert old.get_params() == new.get_params() and new.delta == 0.1
    p = new.confidence_parameters(5)
    assert p["delta"] == 0.1 and p["error_bound"] <= 0.1 * (1 + 1e-9)
    env = jiang_1sparse(5, 1, rng=3)
    a, b = old.run(env.spawn(4), rng=5), new.run(env.spawn(4), rng=5)
    assert (a.samples, a.answer.tolist()) == (b.samples, b.answer.tolist())
    with pytest.warns(DeprecationWarning), pytest.raises(InvalidParameterError, match="give only 'delta'"):
        cls(1, delta=0.1, nu=0.1)


def test_cli_run_takes_delta_for_the_lil_solvers(capsys) -> None:
    import json

    from combex.cli import main

    assert main(["run", "lil-lucb", "--instance", "jiang-1sparse", "--set", "N=4", "--set", "K=1", "--delta", "0.05",
                 "--runs", "1", "--json", "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["solver_params"]["delta"] == 0.05 and doc["runs"][0]["correct"]
    assert doc["runs"][0]["certificate"]["error_bound"] <= 0.05


# ====================================================================== bad input
@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: LilRandLUCB(0), "'K' parameter of LilRandLUCB"),
        (lambda: LilRandLUCB(2.5), "'K' parameter"),
        (lambda: LilRandLUCB(2, delta=0.0), "'delta' parameter of LilRandLUCB must be a float in the range \\(0.0, 1.0\\)"),
        (lambda: LilLUCB(2, delta=1.0), "'delta' parameter"),
        (lambda: LUCBPlusPlus(2, delta=-0.1), "'delta' parameter"),
        (lambda: LilCLUCB(2, mode="fast"), "'mode' parameter"),
        (lambda: LilRandLUCB(2, epsilon=0.0), "'epsilon' parameter of LilRandLUCB must be a float in the range \\(0.0, 1.0\\)"),
        (lambda: LilRandLUCB(2, epsilon=1.0), "'epsilon' parameter"),
        (lambda: LilRandLUCB(2, epsilon=1.0, mode="heuristic"), "'epsilon' parameter"),
        (lambda: LilUCB(epsilon=-0.5), "'epsilon' parameter of LilUCB"),
        (lambda: LilRandLUCB(2, lil_delta=1.5), "'lil_delta' parameter"),
        (lambda: LilRandLUCB(2, sigma=0.0), "'sigma' parameter"),
        (lambda: LilUCB(2), "'K' parameter of LilUCB must be 1"),
        (lambda: LilUCB(beta=0.0), "'beta' parameter"),
        (lambda: LilUCB(lam=-1.0), "'lam' parameter"),
        (lambda: LUCB(2, epsilon=-0.1), "'epsilon' parameter of LUCB"),
        (lambda: LilCLUCB(decision_class="topk"), "'decision_class' parameter"),
    ],
)
def test_bad_settings(make, match) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        make()


@pytest.mark.parametrize("cls", BEST_K)
def test_k_at_least_n_is_rejected(cls) -> None:
    env = jiang_1sparse(5, 2)
    for K in (5, 7):
        with pytest.raises(InvalidParameterError, match=r"'K' parameter of .* must be an int in the range \[1, 4\]. Got"):
            cls(K).start(env)
        with pytest.raises(InvalidParameterError, match="'K' parameter"):
            cls(K).run(env)


def test_bad_problems_and_tells() -> None:
    env = jiang_1sparse(5, 2, rng=0)
    # faithful mode: a lil_delta breaking the guarantee, an epsilon outside Lemma 2.1's range
    with pytest.raises(InvalidParameterError, match="'lil_delta' parameter of LilRandLUCB gives a guaranteed error "
                                                    "probability of .* > delta=0.05"):
        LilRandLUCB(2, lil_delta=0.5).start(env)
    with pytest.raises(InvalidParameterError, match="guaranteed error probability"):
        LilUCB(lil_delta=0.5).start(env)
    # (only reachable for Theorem 4.1 solvers with a large delta and epsilon: lil_delta/N = 0.277)
    with pytest.raises(InvalidParameterError, match=r"'omega_high' parameter of LilCLUCB .*log\(1 \+ epsilon\)/e"):
        LilCLUCB(1, delta=0.99, epsilon=0.99).start(jiang_1sparse(2, 1))
    # heuristic mode accepts what faithful mode refuses
    LilRandLUCB(2, mode="heuristic", lil_delta=0.5).start(env)
    # decision class over another ground set
    with pytest.raises(InvalidParameterError, match="ground set of the problem's 5 arms"):
        LilCLUCB(decision_class=TopK(6, 2)).start(env)
    # super-arm problems are not semi-bandit problems
    mask_problem = Problem(n_arms=5, noise=NoiseModel("gaussian", 0.5), arm_type="mask")
    with pytest.raises(InvalidParameterError, match="index arms"):
        LilRandLUCB(2).start(mask_problem)
    # no sigma anywhere
    with pytest.raises(InvalidParameterError, match="'sigma'"):
        LilRandLUCB(2).start(type("P", (), {"n_arms": 5, "arm_type": "index", "noise": None})())
    exp = LilRandLUCB(2).start(env, rng=0)
    with pytest.raises(InvalidParameterError, match=r"'arm' parameter of LilRandLUCB must be an int in the range \[0, 4\]"):
        exp.tell(5, 1.0)
    with pytest.raises(InvalidParameterError, match="'arm' parameter"):
        exp.tell_batch(Batch(np.arange(6), np.ones(6, dtype=np.int64)), np.zeros(6))
    with pytest.raises(InvalidParameterError, match="'count' parameter"):
        exp.tell_batch(Batch(np.array([1]), np.array([-1])), [0.0])
    with pytest.raises(InvalidParameterError, match="'count' parameter"):
        exp.tell_batch(Batch(np.arange(5), -np.ones(5, dtype=np.int64)), np.zeros(5))
    with pytest.raises(InvalidParameterError, match="'arm' parameter"):
        exp.tell_batch(Batch(np.array([0.5]), np.array([1])), [0.0])
    with pytest.raises(InvalidParameterError, match="reward_sums"):
        exp.tell(1, np.nan)


# ====================================================================== slow: error rates
@pytest.mark.slow
@pytest.mark.parametrize("cls", ALL)
def test_faithful_error_rate_at_most_delta(cls) -> None:
    """Error rate <= delta over 500 seeded runs of every faithful solver (delta = 0.01).

    Small instance to keep the time down: Gaussian arms, sigma = 1/2, means
    (1, 1, 0, 0) with K = 2 for the Best-K solvers, (1, 0, 0) for lil'UCB (whose faithful
    stopping rule, T_i >= 1 + 9 sum_{j != i} T_j, is ten times costlier). Faithful runs are
    this accurate in practice (the bounds are loose), so the test guards against
    algorithmic errors rather than measuring the bound's tightness.
    """
    delta, runs = 0.01, 500
    K = 1 if cls is LilUCB else 2
    means = [1.0, 0.0, 0.0] if K == 1 else [1.0, 1.0, 0.0, 0.0]
    solver = cls(K, delta=delta, mode="faithful")
    errors = 0
    ss = np.random.SeedSequence(2024)
    for child in ss.spawn(runs):
        env_rng, alg_rng = np.random.default_rng(child).spawn(2)
        env = BestKGaussianArms(means, K, sigma=0.5, rng=env_rng)
        res = solver.run(env, rng=alg_rng)
        assert res.status == "identified"
        errors += not env.is_correct(res.answer)
    assert errors / runs <= delta


# ---------------------------------------------------------------------- per-round overhead
def test_gaussian_pair_pull_is_the_array_draw():
    """GaussianArms pulls a pair with two scalar draws: the same rewards, bit for bit, as
    the array draw it replaces (standard_normal(2), the same arithmetic)."""
    from combex.environments import GaussianArms

    rng = np.random.default_rng(3)
    for trial in range(50):
        n = int(rng.integers(2, 9))
        mu, sg = rng.normal(size=n), rng.uniform(0.1, 2.0, size=n)
        e1, e2 = GaussianArms(mu, sigma=sg, rng=trial), GaussianArms(mu, sigma=sg, rng=trial)
        for _ in range(10):
            arms, counts = rng.integers(0, n, size=2), rng.integers(0, 5, size=2)
            c = counts.astype(np.float64)
            want = c * mu[arms] + np.sqrt(c) * sg[arms] * e2.rng.standard_normal(2)
            np.testing.assert_array_equal(e1.pull_many(arms, counts), want)


@pytest.mark.parametrize("name", ["lucb", "lil-randlucb", "lil-ucb"])
def test_per_round_batches_are_reused_immutable_and_resume(name):
    """The one- and two-arm batches of the per-round path are made once per arm (pair),
    read-only, and a resumed exploration continues with the same pulls."""
    from combex.environments import GaussianArms

    mu = np.linspace(0.5, 0.0, 6)
    solver = get_solver(name)(K=1, mode="heuristic") if name != "lucb" else get_solver(name)(K=1)
    env = GaussianArms(mu, sigma=0.5, rng=1)
    exp = solver.start(env, rng=0)
    seen = {}
    for _ in range(200):
        if exp.done:
            break
        b = exp.ask()
        assert exp.ask() is b
        if b.arms.shape[0] <= 2:
            key = tuple(b.arms.tolist())
            assert seen.setdefault(key, b) is b
            assert not b.arms.flags.writeable and not b.counts.flags.writeable
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    assert any(len(k) <= 2 for k in seen)
    ref = solver.run(GaussianArms(mu, sigma=0.5, rng=1), rng=0, budget=400)
    env2 = GaussianArms(mu, sigma=0.5, rng=1)
    exp = solver.start(env2, rng=0)
    for _ in range(50):
        b = exp.ask()
        exp.tell_batch(b, env2.pull_many(b.arms, b.counts))
    exp = solver.resume(exp.state_dict(), env2)
    while not exp.done and exp.samples < 400:
        b = exp.ask().truncated(400 - exp.samples)
        exp.tell_batch(b, env2.pull_many(b.arms, b.counts))
    np.testing.assert_array_equal(exp.result().pulls, ref.pulls)


def test_best_k_budget_exhausted_lists_the_arms_across_the_boundary():
    # Regression test: a Best-K run that ends on its budget lists the arms whose confidence
    # bounds still cross the boundary between its answer and the rest.
    from combex.exceptions import TieWarning

    env = GaussianArms([1.0, 0.5, 0.5, 0.0], rng=0)  # K = 2: arms 1 and 2 tie
    seen = []
    with pytest.warns(TieWarning):
        res = get_solver("lil-randlucb")(2).run(env, rng=0, budget=20_000, callback=lambda e: seen.append(e.progress()))
    assert res.status == "budget_exhausted"
    assert np.isfinite(seen[-1]["statistic"]) and seen[-1]["statistic"] > seen[-1]["threshold"] == 0.0
    ind = res.info["indistinguishable"]
    assert {1, 2} <= set(ind["in_answer"]) | set(ind["outside"])
