"""The LIL confidence radius U(t, omega) of Lemma 2.1 (+2 of Section 5) and lil'UCB's index."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from combex.estimation import LILRadius, check_lil_lemma, lil_c_epsilon, lil_omega_max, lil_radius, lil_ucb_index
from combex.exceptions import InvalidParameterError


# ---------------------------------------------------------------------- known values
def test_c_epsilon_hand_values() -> None:
    # c_eps = (2 + eps)/eps * (1/log(1 + eps))^(1 + eps)
    # eps = 1/2: 5 * (1/0.4054651081)^1.5 = 5 * 2.466303^1.5 = 19.365993
    assert lil_c_epsilon(0.5) == pytest.approx(19.365993121615958, rel=1e-12)
    # eps = 0.01: 201 * (1/0.00995033085)^1.01 = 21152.8...
    assert lil_c_epsilon(0.01) == pytest.approx(201.0 * (1.0 / math.log(1.01)) ** 1.01, rel=1e-12)
    assert 21000 < lil_c_epsilon(0.01) < 21300


def test_radius_hand_values() -> None:
    # eps = 0, sigma = 1, omega = 0.1, t = 1: sqrt(2 log(log(3) / 0.1)) = sqrt(2 * 2.396541)
    assert float(lil_radius(1, 0.1, epsilon=0.0)) == pytest.approx(2.1893528361644887, rel=1e-12)
    # eps = 0, sigma = 1/2, omega = 0.01, t = 98: log(100) = 4.605170, /0.01 -> log = 6.132352;
    # sqrt(2 * 0.25 * 6.132352 / 98) = sqrt(0.0312875) = 0.1768827
    assert float(lil_radius(98, 0.01, epsilon=0.0, sigma=0.5)) == pytest.approx(0.1768827, rel=1e-6)
    # eps = 0.01, sigma = 0.5, omega = 0.01, t = 10: (1.1) sqrt(0.505/10 * log(log(12.1)/0.01))
    expect = 1.1 * math.sqrt(0.505 / 10 * math.log(math.log(12.1) / 0.01))
    assert float(lil_radius(10, 0.01, epsilon=0.01, sigma=0.5)) == pytest.approx(expect, rel=1e-12)
    assert expect == pytest.approx(0.5807087, rel=1e-6)


def test_plus_zero_is_lemma_verbatim() -> None:
    eps, w, t = 0.5, 0.01, 7.0
    expect = (1 + math.sqrt(eps)) * math.sqrt(2 * (1 + eps) / t * math.log(math.log((1 + eps) * t) / w))
    assert float(lil_radius(t, w, epsilon=eps, plus=0.0)) == pytest.approx(expect, rel=1e-12)
    assert float(LILRadius(w, epsilon=eps, plus=0.0)(t)) == pytest.approx(expect, rel=1e-12)


def test_vectorized_scalar_and_class_agree() -> None:
    t = np.arange(1, 2001)
    U = LILRadius(1e-4, epsilon=0.01, sigma=0.5)
    v = lil_radius(t, 1e-4, epsilon=0.01, sigma=0.5)
    assert v.shape == t.shape
    np.testing.assert_allclose(U(t), v, rtol=1e-13)
    np.testing.assert_allclose([U.scalar(int(x)) for x in t[:50]], v[:50], rtol=1e-13)
    assert lil_radius(np.ones((2, 3)), 0.1, epsilon=0.0).shape == (2, 3)


# ---------------------------------------------------------------------- properties
@settings(max_examples=60, deadline=None)
@given(
    t=st.floats(1.0, 1e9),
    factor=st.floats(1.001, 100.0),
    # U(t)^2 ~ log(log(t + 2) / omega) / t decreases in t for t >= 1 only while
    # log(log 3 / omega) > max_t t / ((t + 2) log(t + 2)) = 0.373 (near t = 4), i.e.
    # omega < 0.756: at omega = 0.875, U(1) = 0.6747 < U(2) = 0.6784 (hypothesis found it).
    omega=st.floats(1e-12, 0.75),
    eps=st.floats(0.0, 0.99),
    sigma=st.floats(0.01, 10.0),
)
def test_radius_decreasing_in_t_and_omega(t: float, factor: float, omega: float, eps: float, sigma: float) -> None:
    u = float(lil_radius(t, omega, epsilon=eps, sigma=sigma))
    assert u > 0
    assert float(lil_radius(t * factor, omega, epsilon=eps, sigma=sigma)) < u
    assert float(lil_radius(t, omega / factor, epsilon=eps, sigma=sigma)) > u
    # linear in sigma
    assert float(lil_radius(t, omega, epsilon=eps, sigma=2 * sigma)) == pytest.approx(2 * u, rel=1e-12)


def test_radius_increasing_in_epsilon_at_fixed_omega() -> None:
    us = [float(lil_radius(50, 1e-3, epsilon=e)) for e in (0.0, 0.01, 0.1, 0.5)]
    assert us == sorted(us)


def test_lemma_holds_empirically() -> None:
    """Lemma 2.1: P(exists t <= T: mean_t > U(t, omega)) <= c_eps omega^(1+eps).
    With eps = 1/2, omega = 0.02: the bound is 19.37 * 0.02^1.5 = 0.0548; the observed
    crossing frequency of 2000 standard Gaussian walks over 2000 steps must stay below it
    (and a radius three times smaller crosses about 20% of the time: the check can fail)."""
    rng = np.random.default_rng(12345)
    eps, w, n_paths, horizon = 0.5, 0.02, 2000, 2000
    t = np.arange(1, horizon + 1)
    U = lil_radius(t, w, epsilon=eps, sigma=1.0)
    crossed = 0
    for _ in range(4):
        x = rng.standard_normal((n_paths // 4, horizon))
        means = np.cumsum(x, axis=1) / t
        crossed += int(np.any(means > U, axis=1).sum())
    bound = lil_c_epsilon(eps) * w ** (1 + eps)
    assert crossed / n_paths <= bound
    # the frequency test has power: a radius three times smaller crosses far more often
    x = rng.standard_normal((500, horizon))
    means = np.cumsum(x, axis=1) / t
    assert np.mean(np.any(means > U / 3.0, axis=1)) > bound


def test_lemma_range_helpers() -> None:
    assert lil_omega_max(0.01) == pytest.approx(math.log(1.01) / math.e)
    check_lil_lemma(0.01, 1e-3)
    with pytest.raises(InvalidParameterError, match=r"'omega' parameter .* log\(1 \+ epsilon\)/e"):
        check_lil_lemma(0.01, 0.004)
    with pytest.raises(InvalidParameterError, match="'epsilon'"):
        check_lil_lemma(0.0, 1e-3)
    with pytest.raises(InvalidParameterError, match="'delta' parameter of X"):
        check_lil_lemma(0.5, 0.5, name="delta", owner="X")


# ---------------------------------------------------------------------- lil'UCB index
def test_lil_ucb_index_values() -> None:
    idx = lil_ucb_index([0.0, 0.5], [1, 4], lil_delta=0.1, epsilon=0.0, beta=0.0)
    expect1 = 0.5 + math.sqrt(2 * math.log(math.log(6) / 0.1) / 4)
    np.testing.assert_allclose(idx, [2.1893528361644887, expect1], rtol=1e-12)
    # (1 + beta) scales the radius
    idx2 = lil_ucb_index([0.0, 0.5], [1, 4], lil_delta=0.1, epsilon=0.0, beta=0.5)
    np.testing.assert_allclose(idx2 - [0.0, 0.5], 1.5 * (idx - [0.0, 0.5]), rtol=1e-12)


def test_lil_ucb_index_delta_is_a_deprecated_alias_of_lil_delta() -> None:
    # the lemma's constant is lil_delta; delta names a guaranteed error probability elsewhere
    with pytest.warns(DeprecationWarning, match="'delta' parameter of lil_ucb_index is deprecated; use 'lil_delta'"):
        old = lil_ucb_index([0.0, 0.5], [1, 4], delta=0.1, epsilon=0.0, beta=0.0)
    np.testing.assert_array_equal(old, lil_ucb_index([0.0, 0.5], [1, 4], lil_delta=0.1, epsilon=0.0, beta=0.0))
    with pytest.warns(DeprecationWarning), pytest.raises(InvalidParameterError, match="give only 'lil_delta'"):
        lil_ucb_index([0.0], [1], lil_delta=0.1, delta=0.2, epsilon=0.0, beta=0.0)
    with pytest.raises(InvalidParameterError, match="'lil_delta' parameter of lil_ucb_index is required"):
        lil_ucb_index([0.0], [1], epsilon=0.0, beta=0.0)


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"t": 0.5, "omega": 0.1, "epsilon": 0.0}, "'t' parameter"),
        ({"t": [1, np.nan], "omega": 0.1, "epsilon": 0.0}, "'t' parameter"),
        ({"t": 1, "omega": 0.0, "epsilon": 0.0}, "'omega' parameter"),
        ({"t": 1, "omega": 1.0, "epsilon": 0.0}, "'omega' parameter"),
        ({"t": 1, "omega": 0.1, "epsilon": -0.1}, "'epsilon' parameter"),
        ({"t": 1, "omega": 0.1, "epsilon": 1.0}, "'epsilon' parameter"),
        ({"t": 1, "omega": 0.1, "epsilon": 0.0, "sigma": 0.0}, "'sigma' parameter"),
        ({"t": 1, "omega": 0.1, "epsilon": 0.0, "plus": -1.0}, "'plus' parameter"),
        ({"t": 1, "omega": 0.1, "epsilon": 0.0, "plus": 0.0}, "undefined at t=1"),
        ({"t": "a", "omega": 0.1, "epsilon": 0.0}, "'t' parameter"),
    ],
)
def test_radius_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        lil_radius(**kwargs)


def test_other_errors() -> None:
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter of lil_c_epsilon"):
        lil_c_epsilon(0.0)
    with pytest.raises(InvalidParameterError, match="'epsilon'"):
        lil_omega_max(1.0)
    with pytest.raises(InvalidParameterError, match="undefined at t=1"):
        LILRadius(0.5, epsilon=0.0, plus=0.0)
    with pytest.raises(InvalidParameterError, match="'omega' parameter of LILRadius"):
        LILRadius(1.5)
    with pytest.raises(InvalidParameterError, match="one shape"):
        lil_ucb_index([0.0, 1.0], [1], lil_delta=0.1, epsilon=0.0, beta=1.0)
    with pytest.raises(InvalidParameterError, match="'beta'"):
        lil_ucb_index([0.0], [1], lil_delta=0.1, epsilon=0.0, beta=-1.0)
    with pytest.raises(InvalidParameterError, match="finite"):
        lil_ucb_index([np.inf], [1], lil_delta=0.1, epsilon=0.0, beta=1.0)
    assert "LILRadius(omega=0.1" in repr(LILRadius(0.1))
