"""Tests of the confidence radii in combex.estimation (hand-computed values, shapes,
monotonicity, errors, and a coverage check of Proposition 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from combex.estimation import (
    LeastSquares,
    independent_radius,
    independent_widths,
    log_binomial,
    lucb_radius,
    self_normalized_radius,
    static_radius,
)
from combex.exceptions import InvalidParameterError
from combex.testing import clopper_pearson

PI2 = math.pi**2


# ---------------------------------------------------------------------- log_binomial
@pytest.mark.parametrize("n, k", [(0, 0), (1, 0), (1, 1), (5, 2), (20, 10), (60, 7), (111, 10)])
def test_log_binomial_matches_math_comb(n, k):
    assert math.isclose(log_binomial(n, k), math.log(math.comb(n, k)), rel_tol=1e-12, abs_tol=1e-12)


def test_log_binomial_huge():
    # C(10^6, 5 * 10^5) overflows every float; compare with Stirling-free lgamma.
    want = math.lgamma(10**6 + 1) - 2 * math.lgamma(5 * 10**5 + 1)
    assert math.isclose(log_binomial(10**6, 5 * 10**5), want, rel_tol=1e-12)


@pytest.mark.parametrize("n, k, name", [(-1, 0, "n"), (3, 4, "k"), (3, -1, "k"), (3.0, 1, "n"), (3, True, "k")])
def test_log_binomial_errors(n, k, name):
    with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter of log_binomial must be an int"):
        log_binomial(n, k)


# ---------------------------------------------------------------------- static radius
@pytest.mark.parametrize(
    "t, delta, sigma, K",
    [(10, 0.05, 1.0, 20), (1, 0.1, 0.5, 2), (12345, 0.001, 3.0, math.comb(111, 10))],
)
def test_static_radius_hand_values(t, delta, sigma, K):
    want = 2 * math.sqrt(2) * sigma * math.sqrt(math.log(6 * t * t * K / (delta * PI2)))
    got = static_radius(t, delta, sigma=sigma, log_n_hypotheses=math.log(K))
    assert isinstance(got, float)
    assert math.isclose(got, want, rel_tol=1e-12)


def test_static_radius_matches_lingape_eq2_and_binomial_log():
    # eq. (2) of the LinGapE paper: 2 sigma sqrt(2 log(6 n^2 K / (delta pi^2)))
    t, delta, sigma = 500, 0.05, 0.7
    logk = log_binomial(111, 10)
    want = 2 * sigma * math.sqrt(2 * (math.log(6 * t**2 / (delta * PI2)) + logk))
    assert math.isclose(static_radius(t, delta, sigma=sigma, log_n_hypotheses=logk), want, rel_tol=1e-12)


def test_static_radius_floor_at_zero_only_when_log_negative():
    # c' t^2 K / delta = 0.608 / 0.9 < 1 for K = 1, t = 1, delta = 0.9.
    assert static_radius(1, 0.9, sigma=1.0, log_n_hypotheses=0.0) == 0.0
    assert static_radius(2, 0.9, sigma=1.0, log_n_hypotheses=0.0) > 0.0


@pytest.mark.parametrize("t, delta, sigma, K", [(10, 0.05, 1.0, 20), (1, 0.1, 0.5, 2), (10**5, 0.05, 1.0, 30)])
def test_static_radius_sub_gaussian_constant(t, delta, sigma, K):
    """sigma sqrt(2 log(pi^2 t^2 K / (3 delta))), below the printed radius once t^2 K / delta >= 3."""
    want = sigma * math.sqrt(2 * math.log(PI2 * t * t * K / (3 * delta)))
    got = static_radius(t, delta, sigma=sigma, log_n_hypotheses=math.log(K), constant="sub-gaussian")
    assert math.isclose(got, want, rel_tol=1e-12)
    assert got < static_radius(t, delta, sigma=sigma, log_n_hypotheses=math.log(K))
    if t == 10**5:  # the docstring's figure: the printed C^2 is 3.8 times this one
        assert (static_radius(t, delta, sigma=sigma, log_n_hypotheses=math.log(K)) / got) ** 2 == pytest.approx(3.78, abs=0.01)
    with pytest.raises(InvalidParameterError, match="constant"):
        static_radius(t, delta, sigma=sigma, log_n_hypotheses=0.0, constant="tight")


def test_static_radius_sub_gaussian_holds_under_the_null_at_every_t():
    """A fixed design (three arms in turn, Gaussian noise, theta = 0): the sub-Gaussian radius
    covers |x^T theta_hat_t| for every arm x and every t <= 300 in at least 1 - delta of 4,000
    runs (Clopper-Pearson upper bound of the miss rate <= delta); halving it does not."""
    rng = np.random.default_rng(7)
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    runs, horizon, delta = 4000, 300, 0.2
    arms = np.arange(horizon) % 3
    noise = rng.standard_normal((runs, horizon))
    b = np.cumsum(noise[:, :, None] * X[arms][None, :, :], axis=1)  # (runs, t, d)
    missed = {1.0: np.zeros(runs, dtype=bool), 0.5: np.zeros(runs, dtype=bool)}
    A = np.zeros((2, 2))
    for t in range(horizon):
        A += np.outer(X[arms[t]], X[arms[t]])
        if t < 1:
            continue
        Ainv = np.linalg.inv(A)
        theta = b[:, t, :] @ Ainv  # A symmetric
        width = np.sqrt(np.einsum("kd,de,ke->k", X, Ainv, X))
        c = static_radius(t + 1, delta, sigma=1.0, log_n_hypotheses=math.log(3), constant="sub-gaussian")
        dev = np.abs(theta @ X.T) / width
        for f in missed:
            missed[f] |= (dev > f * c).any(axis=1)
    assert clopper_pearson(int(missed[1.0].sum()), runs)[1] <= delta
    assert missed[0.5].mean() > delta


# ---------------------------------------------------------------------- self-normalized
@pytest.mark.parametrize(
    "logdet, d, delta, R, lam, S",
    [(5.3, 3, 0.01, 0.5, 2.0, 1.5), (0.0, 1, 0.1, 1.0, 1.0, 0.0), (40.0, 10, 0.05, 2.0, 0.1, 3.0)],
)
def test_self_normalized_radius_hand_values(logdet, d, delta, R, lam, S):
    det_a = math.exp(logdet)
    want = R * math.sqrt(2 * math.log(det_a**0.5 * (lam**d) ** -0.5 / delta)) + math.sqrt(lam) * S
    got = self_normalized_radius(logdet, d, delta, R=R, ridge=lam, S=S)
    assert isinstance(got, float)
    assert math.isclose(got, want, rel_tol=1e-12)


def test_self_normalized_radius_union_variant_of_lemma5():
    # Lemma 5 of the LinGapE paper: K^2 det(A)^{1/2} det(lam I)^{-1/2} / delta.
    K, logdet, d, delta, R, lam, S = 7, 9.0, 4, 0.05, 1.0, 0.5, 2.0
    want = R * math.sqrt(2 * math.log(K**2 * math.exp(logdet) ** 0.5 * (lam**d) ** -0.5 / delta)) + math.sqrt(lam) * S
    got = self_normalized_radius(logdet, d, delta, R=R, ridge=lam, S=S, log_union_size=2 * math.log(K))
    assert math.isclose(got, want, rel_tol=1e-12)


def test_self_normalized_radius_with_least_squares_logdet():
    rng = np.random.default_rng(0)
    ls = LeastSquares(4, ridge=0.5)
    X = rng.standard_normal((30, 4))
    ls.update_many(X, np.zeros(30))
    A = 0.5 * np.eye(4) + X.T @ X
    want = math.sqrt(2 * math.log(math.sqrt(np.linalg.det(A)) / math.sqrt(0.5**4) / 0.1)) + math.sqrt(0.5)
    got = self_normalized_radius(ls.logdet(), 4, 0.1, R=1.0, ridge=0.5, S=1.0)
    assert math.isclose(got, want, rel_tol=1e-10)


def test_self_normalized_radius_accepts_logdet_at_the_floor_with_rounding():
    floor = 3 * math.log(0.3)
    r = self_normalized_radius(floor * (1 + 1e-12), 3, 0.2, R=1.0, ridge=0.3, S=0.0)
    assert math.isclose(r, math.sqrt(2 * math.log(1 / 0.2)), rel_tol=1e-9)


# ---------------------------------------------------------------------- independent (ICB)
@pytest.mark.parametrize("t, delta, sigma, n", [(10, 0.05, 1.0, 20), (3, 0.3, 0.25, 111), (10**6, 1e-4, 10.0, 5)])
def test_independent_radius_hand_values(t, delta, sigma, n):
    want = sigma * math.sqrt(2 * math.log(PI2 / 3 * t * t * n / delta))  # c' = pi^2/3 (erratum)
    got = independent_radius(t, delta, sigma=sigma, n_arms=n)
    assert isinstance(got, float)
    assert math.isclose(got, want, rel_tol=1e-12)


def test_independent_widths_and_lemma1_bound():
    diag = np.array([0.25, 1.0, 0.0, 4.0])
    w = independent_widths(diag, 50, 0.1, sigma=2.0)
    c_t = 2.0 * math.sqrt(2 * math.log(PI2 / 3 * 2500 * 4 / 0.1))
    np.testing.assert_allclose(w, c_t * np.array([0.5, 1.0, 0.0, 2.0]), rtol=1e-12)
    # The Lemma 1 bound for x in {-1, 0, 1}^n is C_t sum |x_i| sqrt(A^{-1}(i, i)) = w @ |x|.
    x = np.array([1, -1, 0, 1])
    assert math.isclose(w @ np.abs(x), c_t * (0.5 + 1.0 + 2.0), rel_tol=1e-12)


def test_independent_widths_errors():
    with pytest.raises(InvalidParameterError, match="The 'a_inv_diag' parameter of independent_widths"):
        independent_widths([0.1, -0.2], 5, 0.1, sigma=1.0)
    with pytest.raises(InvalidParameterError, match="The 'a_inv_diag' parameter of independent_widths"):
        independent_widths(np.ones((2, 2)), 5, 0.1, sigma=1.0)
    with pytest.raises(InvalidParameterError, match="The 'a_inv_diag' parameter of independent_widths"):
        independent_widths([], 5, 0.1, sigma=1.0)
    with pytest.raises(InvalidParameterError, match="The 't' parameter of independent_widths"):
        independent_widths([1.0], 0.5, 0.1, sigma=1.0)
    with pytest.raises(InvalidParameterError, match="The 'sigma' parameter of independent_radius"):
        independent_widths([1.0], 2, 0.1, sigma=0.0)


# ---------------------------------------------------------------------- LUCB
@pytest.mark.parametrize("u, t, n, delta", [(4, 10, 5, 0.1), (1, 1, 2, 0.5), (1000, 5000, 100, 1e-3)])
def test_lucb_radius_hand_values_for_unit_interval_rewards(u, t, n, delta):
    want = math.sqrt(math.log(1.25 * n * t**4 / delta) / (2 * u))
    got = lucb_radius(u, t, n, delta)
    assert isinstance(got, float)
    assert math.isclose(got, want, rel_tol=1e-12)
    # sigma-sub-Gaussian scaling: 2 sigma times the [0, 1] form
    assert math.isclose(lucb_radius(u, t, n, delta, sigma=3.0), 6.0 * want, rel_tol=1e-12)
    assert math.isclose(lucb_radius(u, t, n, delta, sigma=0.5), want, rel_tol=1e-15)


def test_lucb_radius_vectorized_over_arms():
    u = np.array([1, 2, 8, 32])
    got = lucb_radius(u, 7, 4, 0.05)
    assert isinstance(got, np.ndarray) and got.shape == (4,)
    want = [math.sqrt(math.log(1.25 * 4 * 7**4 / 0.05) / (2 * ui)) for ui in u]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.all(np.diff(got) < 0)  # decreasing in u
    got2 = lucb_radius(u[:, None], np.array([1.0, 10.0, 100.0])[None, :], 4, 0.05)
    assert got2.shape == (4, 3)


# ---------------------------------------------------------------------- shared properties
RADII = {
    "static": lambda t, delta: static_radius(t, delta, sigma=1.0, log_n_hypotheses=math.log(50)),
    "independent": lambda t, delta: independent_radius(t, delta, sigma=1.0, n_arms=50),
    "lucb": lambda t, delta: lucb_radius(10, t, 50, delta),
}


@pytest.mark.parametrize("name", list(RADII))
def test_monotone_in_t_and_delta_and_vectorized(name):
    f = RADII[name]
    t = np.array([1.0, 2.0, 10.0, 1e3, 1e6, 1e9])
    r = f(t, 0.05)
    assert isinstance(r, np.ndarray) and r.shape == t.shape
    assert np.all(np.diff(r) > 0)  # increasing in t
    np.testing.assert_allclose(r, [f(float(ti), 0.05) for ti in t], rtol=1e-15)
    deltas = [1e-9, 1e-3, 0.05, 0.5, 0.99]
    rd = [f(100.0, dl) for dl in deltas]
    assert np.all(np.diff(rd) < 0)  # decreasing in delta
    np.testing.assert_array_equal(f(np.arange(1.0, 7.0).reshape(2, 3), 0.1).shape, (2, 3))


def test_self_normalized_monotone():
    ld = np.linspace(0.0, 50.0, 11)
    r = self_normalized_radius(ld, 5, 0.05, R=1.0, ridge=1.0, S=1.0)
    assert isinstance(r, np.ndarray) and r.shape == (11,)
    assert np.all(np.diff(r) > 0)  # increasing in det A_t (so in t)
    rd = [self_normalized_radius(10.0, 5, dl, R=1.0, ridge=1.0, S=1.0) for dl in (1e-6, 0.01, 0.5, 0.9)]
    assert np.all(np.diff(rd) < 0)


BAD_DELTAS = [0.0, 1.0, -0.1, 1.5, float("nan"), "0.1"]


@pytest.mark.parametrize(
    "call, owner",
    [
        (lambda **kw: static_radius(kw.get("t", 5), kw.get("delta", 0.1), sigma=kw.get("sigma", 1.0),
                                    log_n_hypotheses=kw.get("log_n_hypotheses", 1.0)), "static_radius"),
        (lambda **kw: independent_radius(kw.get("t", 5), kw.get("delta", 0.1), sigma=kw.get("sigma", 1.0),
                                         n_arms=kw.get("n_arms", 4)), "independent_radius"),
        (lambda **kw: lucb_radius(kw.get("u", 3), kw.get("t", 5), kw.get("n", 4), kw.get("delta", 0.1),
                                  sigma=kw.get("sigma", 0.5)), "lucb_radius"),
    ],
)
def test_common_errors(call, owner):
    for bad in BAD_DELTAS:
        with pytest.raises(InvalidParameterError, match=rf"The 'delta' parameter of {owner} must be a float in the range \(0.0, 1.0\)"):
            call(delta=bad)
    for bad in (0.999, 0.0, -3, float("inf"), float("nan")):
        with pytest.raises(InvalidParameterError, match=rf"The 't' parameter of {owner} must"):
            call(t=bad)
    with pytest.raises(InvalidParameterError, match=rf"The 't' parameter of {owner} must have entries in the range \[1.0, inf\). Got 0.5 at index \(2,\) instead."):
        call(t=np.array([1.0, 3.0, 0.5]))
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(InvalidParameterError, match=rf"The 'sigma' parameter of {owner} must be a float in the range \(0.0, inf\)"):
            call(sigma=bad)
    call()  # the defaults are fine


def test_specific_errors():
    with pytest.raises(InvalidParameterError, match="The 'log_n_hypotheses' parameter of static_radius"):
        static_radius(5, 0.1, sigma=1.0, log_n_hypotheses=-0.5)
    with pytest.raises(InvalidParameterError, match="The 'n_arms' parameter of independent_radius"):
        independent_radius(5, 0.1, sigma=1.0, n_arms=0)
    for bad in (0, -1.0, np.array([1.0, 0.0])):
        with pytest.raises(InvalidParameterError, match="The 'u' parameter of lucb_radius"):
            lucb_radius(bad, 5, 4, 0.1)
    with pytest.raises(InvalidParameterError, match="The 'n' parameter of lucb_radius"):
        lucb_radius(1, 5, 0, 0.1)
    good = dict(R=1.0, ridge=1.0, S=1.0)
    for key, bad in [("R", 0.0), ("ridge", 0.0), ("ridge", -1.0), ("S", -0.1), ("log_union_size", -1.0)]:
        with pytest.raises(InvalidParameterError, match=f"The '{key}' parameter of self_normalized_radius"):
            self_normalized_radius(3.0, 2, 0.1, **{**good, key: bad})
    with pytest.raises(InvalidParameterError, match="The 'd' parameter of self_normalized_radius"):
        self_normalized_radius(3.0, 0, 0.1, **good)
    with pytest.raises(InvalidParameterError, match="The 'delta' parameter of self_normalized_radius"):
        self_normalized_radius(3.0, 2, 1.0, **good)
    with pytest.raises(InvalidParameterError, match=r"The 'logdet_A' parameter of self_normalized_radius must be at least d\*log\(ridge\)"):
        self_normalized_radius(1.0, 2, 0.1, R=1.0, ridge=2.0, S=0.0)  # 1 < 2 log 2
    with pytest.raises(InvalidParameterError, match="The 'logdet_A' parameter of self_normalized_radius"):
        self_normalized_radius(np.array([3.0, np.nan]), 2, 0.1, **good)


# ---------------------------------------------------------------------- coverage
def _coverage_failures(scale: float, runs: int = 200, delta: float = 0.1) -> int:
    """Runs (of ``runs``) in which scale * C_t fails to cover some x^T theta at some t."""
    d, K, sigma = 5, 12, 1.0
    root = np.random.default_rng(2024)
    X = root.standard_normal((K, d))
    theta = root.standard_normal(d)
    mean = X @ theta
    # fixed (non-adaptive) design: round robin, checked after 1, 2, 4, ..., 256 passes
    passes = 2 ** np.arange(9)
    increments = np.diff(np.concatenate([[0], passes]))
    failures = 0
    for child in np.random.SeedSequence(7).spawn(runs):
        rng = np.random.default_rng(child)
        ls = LeastSquares(d)
        failed = False
        for p, inc in zip(passes, increments):
            counts = np.full(K, inc)
            sums = counts * mean + sigma * np.sqrt(counts) * rng.standard_normal(K)
            ls.update_many(X, sums, counts)
            t = int(K * p)
            c_t = scale * static_radius(t, delta, sigma=sigma, log_n_hypotheses=math.log(K))
            err = np.abs(X @ ls.theta - mean)
            failed |= bool(np.any(err > c_t * np.sqrt(ls.norms_sq(X))))
        failures += failed
    return failures


@pytest.mark.slow
def test_static_radius_covers_with_probability_one_minus_delta():
    runs, delta = 200, 0.1
    assert _coverage_failures(1.0, runs, delta) <= delta * runs
    # The check can fail: a radius of one standard deviation does not cover.
    target = _coverage_failures(1.0 / static_radius(12, delta, sigma=1.0, log_n_hypotheses=math.log(12)), runs, delta)
    assert target > delta * runs


def test_icb_lemma1_union_bound_sums_to_delta_from_t1():
    # Regression test of ICB's Lemma 1 constant: the union over arms and rounds of the
    # two-sided tails of independent_radius sums to delta (no slack). The printed constant
    # c' = 6 / pi^2 sums to 2 pi^4 / 36 = 5.41 delta instead.
    delta, sigma, n = 0.05, 1.3, 7
    t = np.arange(1, 2 * 10**6 + 1, dtype=float)
    C = independent_radius(t, delta, sigma=sigma, n_arms=n)
    # two-sided sub-Gaussian tail per arm and round: 2 exp(-C_t^2 / (2 sigma^2))
    per_round = n * 2.0 * np.exp(-(C**2) / (2 * sigma**2))
    total = per_round.sum() + per_round[-1] * t[-1]  # tail sum_{s > T} T^2/s^2 <= T
    assert total <= delta * (1 + 1e-9)
    assert total >= 0.999 * delta
    printed = sigma * np.sqrt(2 * np.log(6 / math.pi**2 * t**2 * n / delta))
    printed_total = (n * 2.0 * np.exp(-(printed**2) / (2 * sigma**2))).sum()
    assert printed_total / delta == pytest.approx(2 * math.pi**4 / 36, rel=1e-5)
    assert 5.40 < 2 * math.pi**4 / 36 < 5.42
