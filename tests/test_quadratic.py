"""Tests of combex.oracles.quadratic (Algorithm 1, certificates) and the DkS oracles."""

from __future__ import annotations

import doctest
import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from combex.exceptions import InvalidParameterError, OracleError
from combex.oracles import quadratic as qmod
from combex.oracles.quadratic import (
    DKS_ORACLES,
    ExactDkS,
    FeigePelegKortsarz,
    GreedyPeeling,
    QuadraticCertificate,
    QuadraticMaximization,
    dks_graph,
    get_dks_oracle,
    qp_value,
    solve_qp_exact,
    subgraph_weight,
    swap_local_search,
    upper_bound_qp,
)

ORACLES = ["peeling", "fpk", "exact"]
HYP = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------ references
def brute_qp(W: np.ndarray, k: int) -> float:
    """Independent reference: max x^T W x over k-subsets by itertools."""
    n = W.shape[0]
    return max(float(W[np.ix_(c, c)].sum()) for c in map(list, itertools.combinations(range(n), k)))


def brute_dks(Wt: np.ndarray, k: int) -> float:
    n = Wt.shape[0]
    W0 = Wt.copy()
    np.fill_diagonal(W0, 0.0)
    return max(float(W0[np.ix_(c, c)].sum()) / 2 for c in map(list, itertools.combinations(range(n), k)))


def naive_peeling(Wt: np.ndarray, k: int) -> np.ndarray:
    """Textbook peeling with Python loops (recompute degrees every step)."""
    n = Wt.shape[0]
    alive = list(range(n))
    while len(alive) > k:
        degs = [sum(Wt[v, u] for u in alive if u != v) for v in alive]
        alive.pop(int(np.argmin(degs)))
    mask = np.zeros(n, dtype=bool)
    mask[alive] = True
    return mask


# ------------------------------------------------------------------ strategies
@st.composite
def pd_instances(draw, max_n: int = 10):
    n = draw(st.integers(2, max_n))
    k = draw(st.integers(1, n))
    seed = draw(st.integers(0, 2**32 - 1))
    c = draw(st.sampled_from([1e-3, 0.1, 1.0, 5.0]))
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n, draw(st.integers(1, n))))
    if draw(st.booleans()):
        B = np.abs(B)  # positive correlations: large positive off-diagonals
    return B @ B.T + c * np.eye(n), k


@st.composite
def symmetric_instances(draw, max_n: int = 9):
    n = draw(st.integers(2, max_n))
    k = draw(st.integers(1, n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    B = rng.normal(size=(n, n)) * draw(st.sampled_from([0.01, 1.0, 100.0]))
    return (B + B.T) / 2, k


@st.composite
def graphs(draw, max_n: int = 10):
    n = draw(st.integers(2, max_n))
    k = draw(st.integers(1, n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    density = draw(st.sampled_from([0.2, 0.5, 1.0]))
    W = rng.exponential(size=(n, n)) * (rng.random((n, n)) < density)
    if draw(st.booleans()):
        W = np.round(W)  # many ties and zeros
    W = np.triu(W, 1)
    return W + W.T, k


def cem_matrix(rng: np.random.Generator, n: int, k: int, t: int, ridge: float = 1e-2) -> np.ndarray:
    X = np.zeros((t, n))
    for r in range(t):
        X[r, rng.choice(n, k, replace=False)] = 1.0
    return np.linalg.inv(X.T @ X + ridge * np.eye(n))


# ------------------------------------------------------------------ Algorithm 1
def test_dks_graph_hand_checked_3x3():
    W = np.array([[2.0, 0.5, -1.0], [0.5, 1.0, 0.25], [-1.0, 0.25, 3.0]])
    expected = np.array(
        [
            [0.0, 0.5 + 2 + 1, -1.0 + 2 + 3],
            [3.5, 0.0, 0.25 + 1 + 3],
            [4.0, 4.25, 0.0],
        ]
    )
    np.testing.assert_allclose(dks_graph(W), expected)


class RecordingOracle:
    """A DkS oracle stub recording what Algorithm 1 hands it."""

    name = "recording"

    def __init__(self, answer):
        self.answer = answer
        self.seen = None

    def solve(self, Wt, k):
        self.seen = (np.array(Wt), k)
        return np.array(self.answer), 0.0

    def alpha(self, n, k):
        return 0.5


def test_algorithm1_passes_the_tilde_graph_to_the_oracle():
    W = np.array([[2.0, 0.5, -1.0], [0.5, 1.0, 0.25], [-1.0, 0.25, 3.0]])
    oracle = RecordingOracle([True, False, True])
    mask, cert = QuadraticMaximization(oracle).maximize(W, 2)
    Wt, k = oracle.seen
    assert k == 2
    np.testing.assert_allclose(Wt, dks_graph(W))
    assert mask.tolist() == [True, False, True]
    assert cert.value == pytest.approx(2 + 3 - 2)
    assert cert.dks_oracle == "recording" and cert.alpha_dks == 0.5
    lam = np.linalg.eigvalsh(W)
    assert cert.worst_case_ratio == pytest.approx(lam[0] / lam[-1] * 0.5 / 1)
    assert cert.shift == 0.0


def test_algorithm1_on_3x3_with_each_oracle():
    W = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.2], [0.0, -0.2, 1.5]])
    # w~_01 = 3.5, w~_02 = 3.5, w~_12 = 2.3: peeling removes vertex 1 (min degree 5.8,
    # tie with vertex 2 broken by the lowest index) and returns {0, 2}.
    mask, cert = QuadraticMaximization("peeling").maximize(W, 2)
    assert mask.tolist() == [True, False, True] and cert.value == pytest.approx(3.5)
    for dks in ("fpk", "exact"):
        m, c = QuadraticMaximization(dks).maximize(W, 2)
        assert c.value in (pytest.approx(3.5), pytest.approx(4.0))
    assert upper_bound_qp(W, 2) == pytest.approx(4.0)  # "rows" bound is tight here


@HYP
@given(pd_instances())
@pytest.mark.parametrize("dks", ORACLES)
def test_theorem1_and_certificates_on_pd_matrices(dks, inst):
    W, k = inst
    opt = brute_qp(W, k)
    mask, cert = QuadraticMaximization(dks).maximize(W, k)
    assert isinstance(cert, QuadraticCertificate)
    assert mask.dtype == bool and mask.shape == (W.shape[0],) and mask.sum() == k
    assert cert.value == pytest.approx(qp_value(W, mask))
    tol = 1e-9 * max(1.0, abs(opt))
    assert cert.upper_bound >= opt - tol
    assert cert.value >= cert.worst_case_ratio * opt - tol
    assert cert.value >= cert.certified_ratio * opt - tol
    assert 0.0 < cert.worst_case_ratio <= 1.0
    assert 0.0 < cert.certified_ratio <= 1.0
    if 1 < k < W.shape[0]:
        lam = np.linalg.eigvalsh(W)
        # Remark in QuadraticMaximization: any set achieves lambda_min/lambda_max and the
        # certified ratio is never below it; Theorem 1's ratio is below it.
        assert cert.certified_ratio >= lam[0] / lam[-1] * (1 - 1e-9)
        assert cert.worst_case_ratio <= lam[0] / lam[-1] + 1e-12
        assert cert.worst_case_ratio == pytest.approx(lam[0] / lam[-1] * cert.alpha_dks / (k - 1))
    else:
        assert cert.worst_case_ratio == 1.0 and cert.value == pytest.approx(opt)
    assert cert.gap >= opt - cert.value - tol


@HYP
@given(symmetric_instances())
def test_every_upper_bound_is_valid(inst):
    W, k = inst
    opt = brute_qp(W, k)
    bounds = upper_bound_qp(W, k, return_all=True)
    assert bounds["min"] == min(v for key, v in bounds.items() if key != "min")
    for name, value in bounds.items():
        assert value >= opt - 1e-9 * max(1.0, abs(opt)), name


@HYP
@given(pd_instances())
def test_every_upper_bound_is_valid_pd(inst):
    W, k = inst
    opt = brute_qp(W, k)
    for name, value in upper_bound_qp(W, k, return_all=True).items():
        assert value >= opt - 1e-9 * max(1.0, abs(opt)), name


def test_upper_bounds_hand_computed():
    W = np.array([[1.0, 2.0, -1.0], [2.0, 0.0, 3.0], [-1.0, 3.0, 5.0]])
    b = upper_bound_qp(W, 2, return_all=True)
    # r_i = w_ii + largest off-diagonal of row i: 1+2, 0+3, 5+3 -> top 2: 8 + 3
    assert b["rows"] == pytest.approx(11.0)
    # top-2 diagonal 5 + 1, top pair 3 -> 6 + 2*3
    assert b["pairs"] == pytest.approx(12.0)
    assert b["spectral"] == pytest.approx(2 * np.linalg.eigvalsh(W)[-1])
    assert brute_qp(W, 2) == pytest.approx(11.0)  # {1, 2}: 0 + 5 + 6
    assert upper_bound_qp(W, 3) == pytest.approx(W.sum())


def test_shifted_spectral_bound_is_much_tighter_on_cem_matrices():
    rng = np.random.default_rng(3)
    W = cem_matrix(rng, 12, 6, 60)
    b = upper_bound_qp(W, 6, return_all=True)
    opt = brute_qp(W, 6)
    assert opt <= b["shifted_spectral"] < b["spectral"]


def test_spectrum_argument():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(8, 8))
    W = B @ B.T + np.eye(8)
    lam = np.linalg.eigvalsh(W)
    _, c1 = QuadraticMaximization().maximize(W, 4)
    _, c2 = QuadraticMaximization().maximize(W, 4, spectrum=(lam[0], lam[-1]))
    assert c2.worst_case_ratio == pytest.approx(c1.worst_case_ratio)
    assert c2.upper_bound >= brute_qp(W, 4) - 1e-9
    _, c3 = QuadraticMaximization().maximize(W, 4, spectrum=(lam[0] / 2, 2 * lam[-1]))
    assert c3.worst_case_ratio == pytest.approx(c1.worst_case_ratio / 4)
    b = upper_bound_qp(W, 4, spectrum=(lam[0], lam[-1]), return_all=True)
    assert "shifted_spectral" not in b and b["spectral"] == pytest.approx(4 * lam[-1])


# ------------------------------------------------------------------ non-PD W
@HYP
@given(symmetric_instances())
def test_indefinite_matrices_are_handled_as_documented(inst):
    W, k = inst
    n = W.shape[0]
    opt = brute_qp(W, k)
    lam_min = np.linalg.eigvalsh(W)[0]
    for dks in ORACLES:
        mask, cert = QuadraticMaximization(dks).maximize(W, k)
        assert mask.sum() == k
        assert cert.upper_bound >= opt - 1e-9 * max(1.0, abs(opt))
        assert cert.gap >= opt - cert.value - 1e-9 * max(1.0, abs(opt))
        if 1 < k < n:
            Wt = dks_graph(W)
            off_min = Wt[~np.eye(n, dtype=bool)].min()
            assert cert.shift == pytest.approx(max(0.0, -off_min))
            if lam_min <= 0:
                assert cert.worst_case_ratio == 0.0
                assert "not positive definite" in cert.worst_case_reason
        if cert.value >= cert.upper_bound:
            assert cert.certified_ratio == 1.0 and cert.value == pytest.approx(opt)
        elif not (cert.value >= 0 and cert.upper_bound > 0):
            assert math.isnan(cert.certified_ratio)
        else:
            assert cert.value >= cert.certified_ratio * opt - 1e-9 * max(1.0, abs(opt))


def test_shift_keeps_the_exact_dks_argmax():
    """With the exact oracle, Algorithm 1 after the shift returns an exact maximizer of the
    unshifted DkS objective w~(S) (adding s to every edge adds s*C(k,2) to every set)."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        n, k = 8, int(rng.integers(2, 8))
        B = rng.normal(size=(n, n))
        W = (B + B.T) / 2 - 2 * np.eye(n)
        mask, cert = QuadraticMaximization("exact").maximize(W, k)
        assert cert.shift > 0
        Wt = dks_graph(W)
        best = max(
            float(Wt[np.ix_(c, c)].sum()) / 2 for c in map(list, itertools.combinations(range(n), k))
        )
        assert subgraph_weight(Wt, mask) == pytest.approx(best)


def test_peeling_is_shift_invariant():
    rng = np.random.default_rng(6)
    W = rng.exponential(size=(15, 15))
    W = np.triu(W, 1)
    W = W + W.T
    for k in (3, 7, 12):
        m1, _ = GreedyPeeling().solve(W, k)
        m2, _ = GreedyPeeling().solve(W + 10.0 - 10.0 * np.eye(15), k)
        assert (m1 == m2).all()


# ------------------------------------------------------------------ DkS oracles
@HYP
@given(graphs())
@pytest.mark.parametrize("name", ORACLES)
def test_dks_oracle_meets_its_alpha(name, inst):
    Wt, k = inst
    n = Wt.shape[0]
    oracle = get_dks_oracle(name)
    opt = brute_dks(Wt, k)
    mask, value = oracle.solve(Wt, k)
    assert mask.dtype == bool and mask.shape == (n,) and mask.sum() == k
    assert value == pytest.approx(subgraph_weight(Wt, mask))
    alpha = oracle.alpha(n, k)
    assert 0.0 < alpha <= 1.0
    assert value >= alpha * opt - 1e-9
    if name == "exact":
        assert value == pytest.approx(opt)


@HYP
@given(graphs(max_n=12))
def test_peeling_matches_naive_and_the_averaging_bound(inst):
    Wt, k = inst
    n = Wt.shape[0]
    mask, value = GreedyPeeling().solve(Wt, k)
    Wi = np.round(4 * Wt)  # integer weights: degree updates are exact, ties are real ties
    assert (GreedyPeeling().solve(Wi, k)[0] == naive_peeling(Wi, k)).all()
    total = Wt.sum() / 2
    # The proof of GreedyPeeling.alpha: E_k >= alpha * E_n (stronger than vs OPT).
    if 1 < k < n:  # (alpha = 1 for k = 1 and k = n is relative to OPT, not E_n)
        assert value >= GreedyPeeling().alpha(n, k) * total - 1e-9


@pytest.mark.parametrize("n, k", [(6, 3), (10, 5), (9, 2), (12, 11)])
def test_peeling_alpha_is_tight_on_uniform_complete_graphs(n, k):
    """Equality case of the averaging argument: E_k = alpha * E_n (so alpha cannot be
    raised as a bound relative to the total weight)."""
    Wt = np.ones((n, n)) - np.eye(n)
    _, value = GreedyPeeling().solve(Wt, k)
    assert value == pytest.approx(GreedyPeeling().alpha(n, k) * Wt.sum() / 2)


@HYP
@given(graphs(max_n=12))
def test_fpk_candidate_guarantees(inst):
    Wt, k = inst
    n = Wt.shape[0]
    mask, value = FeigePelegKortsarz().solve(Wt, k)
    if k >= 2:
        assert value >= Wt.max() - 1e-12  # trivial candidate contains the heaviest edge
    if 2 <= k < n:
        h, c = (k + 1) // 2, k // 2
        m = n - h
        total = Wt.sum() / 2
        greedy = (h / n) * min(1.0, 2 * c / m)
        assert value >= greedy * total - 1e-9  # greedy candidate, vs the total weight
        assert FeigePelegKortsarz().alpha(n, k) == pytest.approx(max(greedy, 2 / (k * (k - 1))))


def test_fpk_walk_candidate_finds_a_planted_clique():
    """Three heavy star centres grab H (and the trivial and greedy candidates, weight 9);
    only the walks-of-length-2 candidate on V \\ H finds the planted 0.9-clique (13.5)."""
    n, k = 40, 6
    W = np.zeros((n, n))
    centres, leaves, clique = [0, 1, 2], list(range(3, 33)), list(range(33, 39))
    W[np.ix_(centres, leaves)] = 1.0
    W[np.ix_(clique, clique)] = 0.9
    W = np.maximum(W, W.T)
    np.fill_diagonal(W, 0.0)
    mask, value = FeigePelegKortsarz().solve(W, k)
    assert sorted(np.flatnonzero(mask).tolist()) == clique
    assert value == pytest.approx(13.5) == pytest.approx(brute_dks(W[30:, 30:], k))
    assert subgraph_weight(W, FeigePelegKortsarz._greedy(W, k, 3, 3)) == pytest.approx(9.0)
    assert subgraph_weight(W, FeigePelegKortsarz._trivial(W, k)) == pytest.approx(9.0)


def test_dks_alpha_formulas():
    assert GreedyPeeling().alpha(10, 5) == pytest.approx(20 / 90)
    assert GreedyPeeling().alpha(10, 1) == 1.0 and GreedyPeeling().alpha(10, 10) == 1.0
    # fpk: h=3, c=2, m=7 -> greedy (3/10) * min(1, 4/7); trivial 2/(5*4) = 0.1
    assert FeigePelegKortsarz().alpha(10, 5) == pytest.approx(0.3 * 4 / 7)
    assert FeigePelegKortsarz().alpha(10, 2) == pytest.approx(1.0)  # heaviest edge is optimal
    assert ExactDkS().alpha(10, 5) == 1.0
    assert ExactDkS(on_timeout="best").alpha(10, 5) == 0.0


def test_exact_enumeration_vs_cpsat_n12():
    rng = np.random.default_rng(12)
    for k in (3, 6):
        Wt = rng.exponential(size=(12, 12))
        Wt = np.triu(Wt, 1)
        Wt = Wt + Wt.T
        enum = ExactDkS()
        m1, v1 = enum.solve(Wt, k)
        cp = ExactDkS(max_enumeration=1, time_limit=30.0)
        m2, v2 = cp.solve(Wt, k)
        assert enum.last_method == "enumeration" and cp.last_method == "cp-sat"
        assert v2 == pytest.approx(v1, rel=1e-5)
        assert cp.last_upper_bound >= v1 - 1e-9
        # QP yardstick: enumeration vs CP-SAT on an indefinite W
        B = rng.normal(size=(12, 12))
        W = (B + B.T) / 2
        q1 = solve_qp_exact(W, k)[1]
        q2 = solve_qp_exact(W, k, max_enumeration=1, time_limit=30.0)[1]
        assert q2 == pytest.approx(q1, rel=1e-6)
        assert q1 == pytest.approx(brute_qp(W, k))


def test_enumeration_beyond_meet_in_the_middle():
    # n > 32 uses chunked combinations
    rng = np.random.default_rng(2)
    n, k = 34, 2
    Wt = rng.exponential(size=(n, n))
    Wt = np.triu(Wt, 1)
    Wt = Wt + Wt.T
    mask, value = ExactDkS().solve(Wt, k)
    assert value == pytest.approx(Wt.max())
    B = rng.normal(size=(n, n))
    W = (B + B.T) / 2
    assert solve_qp_exact(W, 3)[1] == pytest.approx(brute_qp(W, 3))


def test_exact_cpsat_timeout():
    rng = np.random.default_rng(0)
    n, k = 60, 30
    Wt = rng.random((n, n))
    Wt = np.triu(Wt, 1)
    Wt = Wt + Wt.T
    with pytest.raises(OracleError, match="time_limit=0.05"):
        ExactDkS(max_enumeration=1, time_limit=0.05).solve(Wt, k)
    best = ExactDkS(max_enumeration=1, time_limit=0.5, on_timeout="best")
    mask, value = best.solve(Wt, k)
    assert mask.sum() == k and best.last_upper_bound >= value
    with pytest.raises(OracleError, match="time_limit"):
        solve_qp_exact(Wt + np.eye(n), k, max_enumeration=1, time_limit=0.05)


def test_registry_and_lookup():
    assert set(DKS_ORACLES) == {"peeling", "fpk", "exact"}
    for name, cls in DKS_ORACLES.items():
        o = get_dks_oracle(name)
        assert isinstance(o, cls) and o.name == name
    custom = RecordingOracle([True])
    assert get_dks_oracle(custom) is custom
    with pytest.raises(InvalidParameterError, match="'dks'.*Got 'nope'"):
        get_dks_oracle("nope")
    with pytest.raises(InvalidParameterError, match="'dks'"):
        QuadraticMaximization("nope")
    with pytest.raises(InvalidParameterError, match="'dks'"):
        QuadraticMaximization(object())


# ------------------------------------------------------------------ swap refinement
@HYP
@given(symmetric_instances())
def test_swap_local_search_reaches_a_one_swap_local_optimum(inst):
    W, k = inst
    n = W.shape[0]
    start = np.zeros(n, dtype=bool)
    start[:k] = True
    mask = swap_local_search(W, start)
    assert mask.sum() == k
    value = qp_value(W, mask)
    assert value >= qp_value(W, start) - 1e-12
    tol = 1e-9 * max(1.0, np.abs(W).max())
    for i in np.flatnonzero(mask):  # brute-force check: no improving swap is left
        for j in np.flatnonzero(~mask):
            other = mask.copy()
            other[i], other[j] = False, True
            assert qp_value(W, other) <= value + tol


@HYP
@given(pd_instances())
def test_refine_swap_keeps_certificates_valid(inst):
    W, k = inst
    opt = brute_qp(W, k)
    m0, c0 = QuadraticMaximization("peeling").maximize(W, k)
    m1, c1 = QuadraticMaximization("peeling", refine="swap").maximize(W, k)
    assert c1.value >= c0.value - 1e-12
    assert c1.value >= c1.certified_ratio * opt - 1e-9 * max(1.0, opt)
    assert c1.value >= c1.worst_case_ratio * opt - 1e-9 * max(1.0, opt)


def test_refine_swap_improves_cem_instances():
    rng = np.random.default_rng(11)
    plain, refined = [], []
    for _ in range(5):
        W = cem_matrix(rng, 14, 7, 28, ridge=1e-3)
        opt = brute_qp(W, 7)
        plain.append(QuadraticMaximization("peeling").maximize(W, 7)[1].value / opt)
        refined.append(QuadraticMaximization("peeling", refine="swap").maximize(W, 7)[1].value / opt)
    assert np.mean(refined) > np.mean(plain)
    assert min(refined) >= 0.7 and np.mean(refined) >= 0.85


# ------------------------------------------------------------------ edge cases, CEM
def test_k_equal_one_and_n():
    W = np.array([[1.0, 5.0, 0.0], [5.0, 3.0, 0.0], [0.0, 0.0, 2.0]])
    mask, cert = QuadraticMaximization().maximize(W, 1)
    assert mask.tolist() == [False, True, False] and cert.value == 3.0
    assert cert.worst_case_ratio == 1.0 and cert.certified_ratio == 1.0
    mask, cert = QuadraticMaximization().maximize(W, 3)
    assert mask.all() and cert.value == pytest.approx(W.sum()) and cert.certified_ratio == 1.0


def test_maximize_norm():
    rng = np.random.default_rng(4)
    A_inv = cem_matrix(rng, 10, 5, 40)
    qm = QuadraticMaximization("exact")
    mask, norm = qm.maximize_norm(A_inv, 5)
    assert norm == pytest.approx(math.sqrt(qp_value(A_inv, mask)))
    opt_norm = math.sqrt(brute_qp(A_inv, 5))
    mask2, norm2, cert = qm.maximize_norm(A_inv, 5, return_certificate=True)
    assert (mask2 == mask).all() and norm2 == norm and cert.value == pytest.approx(norm**2)
    # Algorithm 1 with an exact DkS oracle maximizes w~, not x^T W x: not always optimal,
    # but within the certified ratio (sqrt of the QP ratio for the norm).
    assert math.sqrt(cert.certified_ratio) * opt_norm - 1e-12 <= norm <= opt_norm + 1e-12
    with pytest.raises(InvalidParameterError, match="positive semidefinite"):
        qm.maximize_norm(-np.eye(4), 2)


def test_certify_false_and_determinism():
    rng = np.random.default_rng(8)
    W = cem_matrix(rng, 20, 10, 80)
    m1, c1 = QuadraticMaximization("fpk", certify=False).maximize(W, 10)
    m2, c2 = QuadraticMaximization("fpk").maximize(W, 10)
    assert (m1 == m2).all() and c1.value == c2.value
    assert math.isnan(c1.worst_case_ratio) and math.isnan(c1.upper_bound)
    assert c2.ratio == max(c2.worst_case_ratio, c2.certified_ratio)


def test_require_pd():
    W = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues -1, 3
    mask, cert = QuadraticMaximization().maximize(W, 1, require_pd=False)
    assert cert.value == 1.0
    with pytest.raises(InvalidParameterError, match="positive definite"):
        QuadraticMaximization().maximize(W, 1, require_pd=True)
    with pytest.raises(InvalidParameterError, match="positive definite"):
        QuadraticMaximization(certify=False).maximize(np.eye(3), 2, spectrum=(0.0, 1.0), require_pd=True)
    _, cert = QuadraticMaximization().maximize(np.eye(3) + 0.5, 2, require_pd=True)
    assert cert.worst_case_ratio > 0
    with pytest.raises(InvalidParameterError, match="'require_pd'"):
        QuadraticMaximization().maximize(np.eye(3), 2, require_pd="no")


def test_bad_oracle_answers():
    W = np.eye(4) + 0.1
    with pytest.raises(OracleError, match="exactly k=2"):
        QuadraticMaximization(RecordingOracle([True, True, True, False])).maximize(W, 2)
    with pytest.raises(OracleError, match=r"shape \(4,\)"):
        QuadraticMaximization(RecordingOracle([True, True])).maximize(W, 2)
    with pytest.raises(OracleError, match="0/1"):
        QuadraticMaximization(RecordingOracle([0.5, 1, 0, 0])).maximize(W, 2)


# ------------------------------------------------------------------ input errors
BAD_W = [
    (np.ones((2, 3)), "square"),
    (np.ones(4), "2-d"),
    (np.array([[1.0, 2.0], [0.0, 1.0]]), "symmetric"),
    (np.array([[1.0, np.nan], [np.nan, 1.0]]), "finite"),
    (np.array([[1.0, np.inf], [np.inf, 1.0]]), "finite"),
    ("abc", "real 2-d array"),
]


@pytest.mark.parametrize("W, msg", BAD_W)
def test_bad_matrices(W, msg):
    with pytest.raises(InvalidParameterError, match=msg):
        QuadraticMaximization().maximize(W, 1)
    with pytest.raises(InvalidParameterError, match=msg):
        upper_bound_qp(W, 1)
    with pytest.raises(InvalidParameterError, match=msg):
        solve_qp_exact(W, 1)
    for name in ORACLES:
        with pytest.raises(InvalidParameterError, match=msg):
            get_dks_oracle(name).solve(W, 1)


@pytest.mark.parametrize("k", [0, 4, -1, 2.0, True, "2"])
def test_bad_k(k):
    W = np.eye(3)
    pattern = r"The 'k' parameter of QuadraticMaximization must be an int in the range \[1, 3\]"
    with pytest.raises(InvalidParameterError, match=pattern):
        QuadraticMaximization().maximize(W, k)
    with pytest.raises(InvalidParameterError, match="'k'"):
        upper_bound_qp(W, k)
    with pytest.raises(InvalidParameterError, match="'k'"):
        solve_qp_exact(W, k)
    for name in ORACLES:
        with pytest.raises(InvalidParameterError, match="'k'"):
            get_dks_oracle(name).solve(W - np.eye(3) + 1, k)
        with pytest.raises(InvalidParameterError, match="'k'"):
            get_dks_oracle(name).alpha(3, k)


def test_negative_edge_weights_rejected_by_dks_oracles():
    Wt = np.array([[0.0, -1.0], [-1.0, 0.0]])
    for name in ORACLES:
        with pytest.raises(InvalidParameterError, match="non-negative"):
            get_dks_oracle(name).solve(Wt, 1)
    # the diagonal is ignored
    assert GreedyPeeling().solve(np.array([[-5.0, 1.0], [1.0, -5.0]]), 2)[1] == 1.0


def test_bad_options():
    with pytest.raises(InvalidParameterError, match="'time_limit' parameter of ExactDkS"):
        ExactDkS(time_limit=0)
    with pytest.raises(InvalidParameterError, match="'on_timeout'"):
        ExactDkS(on_timeout="ignore")
    with pytest.raises(InvalidParameterError, match="'max_enumeration'"):
        ExactDkS(max_enumeration=0)
    with pytest.raises(InvalidParameterError, match="'precision'"):
        ExactDkS(precision=0.0)
    with pytest.raises(InvalidParameterError, match="'num_workers'"):
        ExactDkS(num_workers=0)
    with pytest.raises(InvalidParameterError, match="'refine'"):
        QuadraticMaximization(refine="2-opt")
    with pytest.raises(InvalidParameterError, match="'certify'"):
        QuadraticMaximization(certify="yes")
    with pytest.raises(InvalidParameterError, match="'spectrum'"):
        QuadraticMaximization().maximize(np.eye(3), 2, spectrum=3.0)
    with pytest.raises(InvalidParameterError, match=r"'spectrum\[1\]'"):
        QuadraticMaximization().maximize(np.eye(3), 2, spectrum=(2.0, 1.0))
    with pytest.raises(InvalidParameterError, match="'return_all'"):
        upper_bound_qp(np.eye(3), 2, return_all=1)
    with pytest.raises(InvalidParameterError, match="'return_certificate'"):
        QuadraticMaximization().maximize_norm(np.eye(3), 2, return_certificate=None)
    with pytest.raises(InvalidParameterError, match="'time_limit' parameter of solve_qp_exact"):
        solve_qp_exact(np.eye(3), 2, time_limit=-1.0)
    with pytest.raises(InvalidParameterError, match="'n' parameter of GreedyPeeling"):
        GreedyPeeling().alpha(0, 1)


def test_module_doctest():
    failures, _ = doctest.testmod(qmod, verbose=False)
    assert failures == 0


def test_shift_hint_keeps_the_upper_bound_valid_and_tight():
    """SAQM's warm start of the shifted-spectral bound: with any hint the
    certificate's upper bound stays >= the true optimum (brute force), and the hint of the
    previous certificate gives the same bound up to 1e-3."""
    import itertools

    from combex.oracles.quadratic import QuadraticMaximization

    rng = np.random.default_rng(5)
    n, k = 10, 5
    qm = QuadraticMaximization(dks="peeling")
    for _ in range(5):
        B = rng.normal(size=(n, n))
        W = np.linalg.inv(B @ B.T + n * np.eye(n) + 3.0 * np.ones((n, n)))
        W = 0.5 * (W + W.T)
        opt = max(W[np.ix_(c, c)].sum() for c in map(list, itertools.combinations(range(n), k)))
        _, cert = qm.maximize(W, k)
        assert cert.upper_bound >= opt - 1e-12 and np.isfinite(cert.spectral_shift)
        _, warm = qm.maximize(W, k, shift_hint=cert.spectral_shift)
        assert warm.upper_bound >= opt - 1e-12
        assert warm.upper_bound <= cert.upper_bound * (1 + 1e-3)
        for hint in rng.normal(size=4) * 10:
            _, c2 = qm.maximize(W, k, shift_hint=float(hint))
            assert c2.upper_bound >= opt - 1e-12


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(3, 9),
    seed=st.integers(0, 2**31 - 1),
    kind=st.sampled_from(["cem", "cem_ones", "indefinite"]),
    data=st.data(),
)
def test_secular_shifted_spectral_bound_is_valid_and_at_the_minimum(n, seed, kind, data):
    """The shifted-spectral bound parametrized by the eigenvalue: at the shift
    it returns, k lambda_max(W - cJ) + c k^2 (dense eigensolver) is below the bound, the bound
    is >= the brute-force optimum, and it is the minimum over c up to 1e-5 (a dense scan of
    c with exact eigenvalues; a grid + 12-halving bisection can be up to 1.6 % above that
    minimum)."""
    k = data.draw(st.integers(1, n - 1))
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n, n))
    if kind == "cem":
        W = np.linalg.inv(B @ B.T + n * np.eye(n) + 3.0 * np.ones((n, n)))
    elif kind == "cem_ones":
        W = np.linalg.inv(0.01 * B @ B.T + np.eye(n) + 50.0 * np.ones((n, n)))
    else:
        W = B + B.T
    W = 0.5 * (W + W.T)
    lam, Q = np.linalg.eigh(W)
    f, c = qmod._shifted_spectral_bound(lam, Q, k)
    J = np.ones((n, n))
    at_c = k * np.linalg.eigvalsh(W - c * J)[-1] + c * k * k
    tol = 1e-9 * max(1.0, abs(f))
    assert f >= at_c - tol
    opt = max(W[np.ix_(s, s)].sum() for s in map(list, itertools.combinations(range(n), k)))
    assert f >= opt - tol
    span = 4.0 * (abs(c) + (lam[-1] - lam[0]))
    cs = np.linspace(c - span, c + span, 801)
    scan = min(k * np.linalg.eigvalsh(W - cc * J)[-1] + cc * k * k for cc in cs)
    assert f <= scan + 1e-5 * max(1.0, abs(scan))


def test_maximize_valid_equals_maximize():
    """SAQM's unchecked entry point gives the same answer and certificate as ``maximize``."""
    rng = np.random.default_rng(3)
    qm = QuadraticMaximization("peeling")
    for n, k in ((8, 3), (24, 12), (12, 1), (6, 6)):
        B = rng.normal(size=(n, n))
        W = np.linalg.inv(B @ B.T + n * np.eye(n))
        m1, c1 = qm.maximize(W, k)
        m2, c2 = qm._maximize_valid(W, k)
        assert np.array_equal(m1, m2) and c1 == c2
