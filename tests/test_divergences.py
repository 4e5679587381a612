"""The reward models of independent arms: the pair GLR is the minimum over the pair's
alternative (brute force on a grid), and its gradients are the divergences at the
alternative (envelope theorem, finite differences)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from combex.exceptions import CombexError
from combex.identification import (
    BernoulliDivergence,
    GaussianDivergence,
    UnknownVarianceDivergence,
    make_divergence,
    pair_glr,
)

MODELS = {
    "gaussian": (lambda: GaussianDivergence(sigma=0.7), (-2.0, 2.0)),
    "bernoulli": (BernoulliDivergence, (0.05, 0.95)),
    "unknown-variance": (UnknownVarianceDivergence, (-2.0, 2.0)),
}


def _brute(model, mi, mj, ni, nj, eps, vi, vj, lo, hi):
    """min over lambda_i = x, lambda_j = x + eps on a fine grid (the infimum of the pair's
    alternative is on the boundary lambda_j = lambda_i + eps when mu_i + eps > mu_j)."""
    x = np.linspace(lo - 1.0 if lo < 0 else 1e-9, (hi + 1.0 if hi > 1 else 1 - eps - 1e-9), 200_001)
    return float(np.min(ni * model.d(mi, x, vi) + nj * model.d(mj, x + eps, vj)))


@pytest.mark.parametrize("name", list(MODELS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_the_pair_glr_is_the_minimum_over_the_pairs_alternative(name, data):
    make, (lo, hi) = MODELS[name]
    model = make()
    mi, mj = (data.draw(st.floats(lo, hi)) for _ in range(2))
    ni, nj = (data.draw(st.floats(1.0, 50.0)) for _ in range(2))
    vi, vj = (data.draw(st.floats(0.1, 2.0)) for _ in range(2))
    eps = data.draw(st.sampled_from([0.0, 0.02]))
    z, x = model.pair(np.array([mi]), np.array([mj]), np.array([ni]), np.array([nj]), eps,
                      np.array([vi]), np.array([vj]))
    z, x = float(z[0]), float(x[0])
    if mi + eps <= mj:
        assert z == 0.0
        return
    at_x = float(ni * model.d(mi, x, vi) + nj * model.d(mj, x + eps, vj))
    assert at_x == pytest.approx(z, rel=1e-6, abs=1e-9)  # x is the alternative the value is taken at
    assert z <= _brute(model, mi, mj, ni, nj, eps, vi, vj, lo, hi) + 1e-6 * max(1.0, z)


@pytest.mark.parametrize("name", list(MODELS))
def test_the_gradients_are_the_divergences_at_the_alternative(name):
    make, _ = MODELS[name]
    model = make()
    mi, mj, ni, nj, eps, vi, vj = 0.6, 0.4, 7.0, 11.0, 0.02, 0.5, 0.8
    z, x = model.pair(np.array([mi]), np.array([mj]), np.array([ni]), np.array([nj]), eps,
                      np.array([vi]), np.array([vj]))
    gi, gj = model.gradients(mi, mj, x, eps, vi, vj)
    h = 1e-5
    zi = model.pair(np.array([mi]), np.array([mj]), np.array([ni + h]), np.array([nj]), eps, np.array([vi]), np.array([vj]))[0]
    zj = model.pair(np.array([mi]), np.array([mj]), np.array([ni]), np.array([nj + h]), eps, np.array([vi]), np.array([vj]))[0]
    assert float((zi - z)[0] / h) == pytest.approx(float(np.asarray(gi).ravel()[0]), rel=1e-3)
    assert float((zj - z)[0] / h) == pytest.approx(float(np.asarray(gj).ravel()[0]), rel=1e-3)


def test_the_gaussian_pair_is_pair_glrs_closed_form_bit_for_bit():
    rng = np.random.default_rng(0)
    mi, mj, ni, nj = rng.normal(size=50), rng.normal(size=50), rng.integers(1, 99, 50) * 1.0, rng.integers(1, 99, 50) * 1.0
    z, x = GaussianDivergence(1.3).pair(mi, mj, ni, nj, 0.1)
    z2, x2 = pair_glr(mi, mj, ni, nj, epsilon=0.1, sigma=1.3)
    assert np.array_equal(z, z2) and np.array_equal(x, x2)


def test_make_divergence_names_the_bad_argument():
    assert isinstance(make_divergence("unknown-variance"), UnknownVarianceDivergence)
    with pytest.raises(CombexError, match="'name' parameter of make_divergence must be one of"):
        make_divergence("poisson")
    with pytest.raises(CombexError, match="'sigma' parameter of make_divergence is required"):
        make_divergence("gaussian")
    with pytest.raises(CombexError, match="'sigma' parameter of GaussianDivergence"):
        GaussianDivergence(-1.0)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 30), st.floats(0.0, 2.0), st.floats(0.05, 20.0), st.integers(0, 2**31 - 1))
def test_the_gaussian_pair_of_gathered_arms_is_bit_identical_to_numpys(n, epsilon, sigma, seed):
    """``pair_at`` (one compiled loop when numba is installed) gives exactly the values of
    ``pair`` on the gathered arrays: ties, negative gaps, zero and fractional weights."""
    rng = np.random.default_rng(seed)
    g = make_divergence("gaussian", sigma=sigma)
    mu = np.round(rng.normal(0.0, 1.0, n), int(rng.integers(0, 4)))  # rounding makes ties
    w = rng.choice([0.0, 1.0, 3.0, 0.25, 1e-9, 7e5], size=n) if seed % 2 else rng.integers(1, 50, n) / 17.0
    I = rng.integers(0, n, 3 * n).astype(np.intp)
    J = rng.integers(0, n, 3 * n).astype(np.intp)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = g.pair(mu[I], mu[J], w[I], w[J], epsilon)
        got = g.pair_at(mu, w, I, J, epsilon)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b))
