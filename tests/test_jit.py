"""Kernels compiled by numba once a process (``combex._jit.compiled``), and the numpy paths
that run without numba."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from combex import _jit


def _add(a, b):  # noqa: ANN001, ANN202 - a kernel
    return a + _twice(b)


def _twice(b):  # noqa: ANN001, ANN202 - a helper the kernel calls
    return 2.0 * b


def test_a_kernel_is_compiled_once_with_its_helpers():
    pytest.importorskip("numba")
    fn = _jit.compiled(_add, helpers=(_twice,))
    assert fn is _jit.compiled(_add, helpers=(_twice,))
    assert fn(1.0, 2.0) == 5.0 and _twice(3.0) == 6.0  # the helper is unchanged for Python
    assert _jit.compiled(_add, boundscheck=False) is not fn  # other options, another compile


def test_without_numba_the_kernels_are_none_and_the_numpy_paths_answer(monkeypatch):
    """numba is an optional extra: without it ``compiled`` gives None and Track-and-Stop's
    solves (the pairs' barrier, Theorem 5's root) and the Gaussian pair costs run their numpy
    forms, with the values the compiled loops give."""
    from combex.identification import GaussianDivergence, bai_optimal_weights, pair_maxmin_weights

    mu = np.array([1.0, 0.8, 0.5, 0.45, 0.1])
    I, J = np.array([0, 0, 0, 1, 1, 1]), np.array([2, 3, 4, 2, 3, 4])
    c = (mu[I] - mu[J]) ** 2 / 2
    w = np.array([3.0, 5.0, 2.0, 7.0, 1.0])
    with_numba = (pair_maxmin_weights(I, J, c, 5, method="barrier"), GaussianDivergence(1.0).pair_at(mu, w, I, J, 0.1),
                  bai_optimal_weights(mu, epsilon=0.05, sigma=2.0))
    monkeypatch.setattr(_jit, "_COMPILED", {})
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba now raises ImportError
    assert _jit.compiled(_add) is None
    (w_n, v_n), (z_n, x_n), (b_n, t_n) = pair_maxmin_weights(I, J, c, 5, method="barrier"), \
        GaussianDivergence(1.0).pair_at(mu, w, I, J, 0.1), bai_optimal_weights(mu, epsilon=0.05, sigma=2.0)
    (w_c, v_c), (z_c, x_c), (b_c, t_c) = with_numba
    assert v_n == pytest.approx(v_c, rel=1e-9) and np.allclose(w_n, w_c, atol=1e-9)
    assert np.array_equal(z_n, z_c) and np.array_equal(x_n, x_c)
    assert t_n == pytest.approx(t_c, rel=1e-12) and np.allclose(b_n, b_c, rtol=1e-12)
