"""Tests of combex.estimation.LeastSquares against brute-force linear algebra."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from combex._state import load_state, save_state
from combex.estimation import LeastSquares
from combex.exceptions import InvalidParameterError, StateError

RTOL = 1e-8  # the accuracy the spec asks of A^{-1} and theta after 10^6 updates


def rel_err(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(b))


def random_batch(rng, m, n=20, theta=None, max_count=100):
    X = rng.integers(0, 2, size=(m, n)).astype(float)
    c = rng.integers(1, max_count + 1, size=m)
    if theta is None:
        theta = np.linspace(-1.0, 1.0, n)
    s = c * (X @ theta) + np.sqrt(c) * rng.standard_normal(m)
    return X, s, c


def brute(X, s, c, ridge=0.0):
    d = X.shape[1]
    A = ridge * np.eye(d) + X.T @ (c[:, None] * X)
    b = X.T @ s
    return A, b


def spanning_rows(n):
    """Rows e_i, so that A is invertible after one pass."""
    return np.eye(n)


# ---------------------------------------------------------------------- accuracy
def test_million_count_weighted_updates_in_chunks():
    n = 20
    rng = np.random.default_rng(0)
    ls = LeastSquares(n)
    A = np.zeros((n, n))
    b = np.zeros(n)
    total = 0
    ls.update_many(spanning_rows(n), np.zeros(n), np.ones(n, dtype=int))
    A += np.eye(n)
    total += n
    # Mostly Woodbury chunks (m < d: incremental, drift-prone), some refactor chunks (m >= d).
    sizes = [19, 7, 2, 19, 1000, 19, 13, 3]
    k = 0
    while total < 1_000_000:
        m = sizes[k % len(sizes)]
        k += 1
        X, s, c = random_batch(rng, m, n)
        ls.update_many(X, s, c)
        dA, db = brute(X, s, c)
        A += dA
        b += db
        total += m
    assert ls.n_updates == total
    assert np.array_equal(ls.A, A)  # integer sums: exact
    np.testing.assert_allclose(ls.b, b, rtol=1e-12)
    assert rel_err(ls.A_inv, np.linalg.inv(A)) < RTOL
    assert rel_err(ls.theta, np.linalg.solve(A, b)) < RTOL
    sign, ld = np.linalg.slogdet(A)
    assert sign == 1.0 and abs(ls.logdet() - ld) < RTOL * abs(ld)


def test_incremental_drift_without_refactor():
    """Woodbury updates only, never refactorized: drift stays far below RTOL."""
    n = 20
    rng = np.random.default_rng(1)
    ls = LeastSquares(n, refactor_every=10**9)
    ls.update_many(spanning_rows(n)[:10], np.zeros(10))
    ls.update_many(spanning_rows(n)[10:], np.zeros(10))
    assert ls.is_invertible  # first factorization (lazy)
    Xs, Ss, Cs = [spanning_rows(n)], [np.zeros(n)], [np.ones(n)]
    for _ in range(2000):
        X, s, c = random_batch(rng, 10, n)
        ls.update_many(X, s, c)
        Xs.append(X), Ss.append(s), Cs.append(c)
    A, b = brute(np.vstack(Xs), np.concatenate(Ss), np.concatenate(Cs))
    assert rel_err(ls.A_inv, np.linalg.inv(A)) < RTOL
    assert rel_err(ls.theta, np.linalg.solve(A, b)) < RTOL
    assert abs(ls.logdet() - np.linalg.slogdet(A)[1]) < 1e-9 * abs(np.linalg.slogdet(A)[1])


@pytest.mark.slow
def test_hundred_thousand_single_sherman_morrison_updates():
    n = 20
    rng = np.random.default_rng(2)
    ls = LeastSquares(n)
    ls.update_many(spanning_rows(n), np.zeros(n))
    X, s, c = random_batch(rng, 100_000, n)
    for i in range(X.shape[0]):
        ls.update(X[i], s[i], c[i])
    A, b = brute(np.vstack([spanning_rows(n), X]), np.concatenate([np.zeros(n), s]),
                 np.concatenate([np.ones(n), c]))
    assert np.array_equal(ls.A, A)
    assert rel_err(ls.A_inv, np.linalg.inv(A)) < RTOL
    assert rel_err(ls.theta, np.linalg.solve(A, b)) < RTOL
    assert abs(ls.logdet() - np.linalg.slogdet(A)[1]) < RTOL * abs(np.linalg.slogdet(A)[1])
    assert ls.total_count == n + int(c.sum())


def test_single_updates_equal_update_many():
    n = 20
    rng = np.random.default_rng(3)
    X, s, c = random_batch(rng, 3000, n)
    X = np.vstack([spanning_rows(n), X])
    s = np.concatenate([np.zeros(n), s])
    c = np.concatenate([np.ones(n, dtype=int), c])
    one = LeastSquares(n, refactor_every=10**9)
    for i in range(X.shape[0]):
        one.update(X[i], s[i], int(c[i]))
    many = LeastSquares(n, refactor_every=10**9)
    for lo in range(0, X.shape[0], 17):  # Woodbury chunks (first one: the singular phase)
        many.update_many(X[lo:lo + 17], s[lo:lo + 17], c[lo:lo + 17])
    whole = LeastSquares(n)
    whole.update_many(X, s, c)  # refactor path
    for other in (many, whole):
        assert np.array_equal(one.A, other.A)
        np.testing.assert_allclose(one.b, other.b, rtol=1e-12)
        assert rel_err(one.A_inv, other.A_inv) < 1e-10
        assert rel_err(one.theta, other.theta) < 1e-10
        assert abs(one.logdet() - other.logdet()) < 1e-10 * abs(one.logdet())
        assert other.n_updates == one.n_updates == X.shape[0]
        assert other.total_count == one.total_count == int(c.sum())


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    d=st.integers(1, 6),
    sizes=st.lists(st.integers(1, 9), min_size=1, max_size=6),
    ridge=st.sampled_from([0.0, 0.5, 3.0]),
)
def test_every_update_path_matches_brute_force(seed, d, sizes, ridge):
    rng = np.random.default_rng(seed)
    ls = LeastSquares(d, ridge=ridge, refactor_every=3)
    Xs, Ss, Cs = [], [], []
    for j, m in enumerate(sizes):
        X = rng.standard_normal((m, d))
        c = rng.integers(0, 5, size=m)
        s = np.where(c > 0, rng.standard_normal(m), 0.0)
        if j % 2 == 0 and m == 1:
            ls.update(X[0], s[0], int(c[0]))
        else:
            ls.update_many(X, s, c)
        Xs.append(X), Ss.append(s), Cs.append(c)
    A, b = brute(np.vstack(Xs), np.concatenate(Ss), np.concatenate(Cs).astype(float), ridge)
    np.testing.assert_allclose(ls.A, A, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ls.b, b, rtol=1e-12, atol=1e-12)
    if np.linalg.matrix_rank(A) < d or np.linalg.cond(A) > 1e8:
        return
    assert ls.is_invertible
    assert rel_err(ls.A_inv, np.linalg.inv(A)) < 1e-7
    assert rel_err(ls.theta, np.linalg.solve(A, b)) < 1e-6 or np.linalg.norm(b) < 1e-12
    assert abs(ls.logdet() - np.linalg.slogdet(A)[1]) < 1e-7 * max(1.0, abs(np.linalg.slogdet(A)[1]))
    Y = rng.standard_normal((4, d))
    brute_norms = np.array([y @ np.linalg.solve(A, y) for y in Y])
    np.testing.assert_allclose(ls.norms_sq(Y), brute_norms, rtol=1e-7)
    assert math.isclose(ls.norm_sq(Y[0]), brute_norms[0], rel_tol=1e-7)


def test_logdet_tracks_slogdet_along_the_way():
    n = 8
    rng = np.random.default_rng(4)
    ls = LeastSquares(n, ridge=1.0)
    A = np.eye(n)
    assert ls.logdet() == 0.0
    for _ in range(200):
        X, s, c = random_batch(rng, 1, n)
        ls.update(X[0], s[0], int(c[0]))
        A += c[0] * np.outer(X[0], X[0])
        assert abs(ls.logdet() - np.linalg.slogdet(A)[1]) < 1e-10 * max(1.0, np.linalg.slogdet(A)[1])


def test_ridge_closed_form():
    d, lam = 5, 2.5
    ls = LeastSquares(d, ridge=lam)
    assert ls.is_invertible
    np.testing.assert_array_equal(ls.A, lam * np.eye(d))
    np.testing.assert_allclose(ls.A_inv, np.eye(d) / lam)
    np.testing.assert_array_equal(ls.theta, np.zeros(d))
    assert math.isclose(ls.logdet(), d * math.log(lam))
    # One arm x pulled c times: (lam I + c x x^T)^{-1} x = x / (lam + c |x|^2).
    x = np.array([1.0, 2.0, 0.0, -1.0, 0.5])
    c, s = 7, 3.0
    ls.update(x, s, c)
    q = float(x @ x)
    np.testing.assert_allclose(ls.theta, s * x / (lam + c * q), rtol=1e-13)
    assert math.isclose(ls.norm_sq(x), q / (lam + c * q), rel_tol=1e-13)
    assert math.isclose(ls.logdet(), d * math.log(lam) + math.log(1 + c * q / lam), rel_tol=1e-13)
    # A unit vector orthogonal to x keeps variance 1/lam.
    e = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    assert math.isclose(ls.norm_sq(e), 1 / lam, rel_tol=1e-13)


def test_singular_until_spanning():
    d = 3
    ls = LeastSquares(d)
    assert not ls.is_invertible
    for _ in range(5):  # the same direction many times stays singular
        ls.update([1.0, 1.0, 0.0], 2.0, count=4)
    ls.update_many(np.array([[2.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]), [1.0, 0.0, 1.0], [1, 1, 1])
    assert not ls.is_invertible
    for get in (lambda: ls.A_inv, lambda: ls.theta, lambda: ls.logdet(),
                lambda: ls.norm_sq([1.0, 0, 0]), lambda: ls.norms_sq(np.eye(3))):
        with pytest.raises(StateError, match="design matrix is singular: pull arms spanning R\\^3 first"):
            get()
    # A and b stay exact while singular
    A = 20 * np.outer([1, 1, 0], [1, 1, 0]) + np.outer([2, 2, 0], [2, 2, 0]) + np.outer([1, 1, 0], [1, 1, 0])
    np.testing.assert_array_equal(ls.A, A)
    np.testing.assert_array_equal(ls.b, 10 * np.array([1.0, 1, 0]) + [2, 2, 0] + [1, 1, 0])
    ls.update([1.0, 0.0, 0.0], 1.0)
    assert not ls.is_invertible
    ls.update([0.0, 0.0, 1.0], 5.0, 2)
    assert ls.is_invertible
    A = A + np.diag([1.0, 0, 0]) + 2 * np.diag([0, 0, 1.0])
    np.testing.assert_allclose(ls.A_inv, np.linalg.inv(A), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ls.theta, np.linalg.solve(A, ls.b), rtol=1e-12)
    assert math.isclose(ls.logdet(), np.linalg.slogdet(A)[1], rel_tol=1e-12)
    # incremental from here on
    ls.update([0.0, 1.0, 1.0], 1.0, 3)
    A = A + 3 * np.outer([0, 1, 1], [0, 1, 1])
    np.testing.assert_allclose(ls.A_inv, np.linalg.inv(A), rtol=1e-12, atol=1e-14)


def test_singular_state_is_decided_on_access_and_becomes_invertible_in_a_batch():
    ls = LeastSquares(4)
    ls.update_many(np.eye(4)[:2], [1.0, 2.0])
    assert not ls.is_invertible
    ls.update_many(np.eye(4)[2:], [3.0, 4.0], [2, 4])
    np.testing.assert_allclose(ls.theta, [1.0, 2.0, 1.5, 1.0])
    assert ls.total_count == 8


def test_rank_deficient_large_batch_stays_singular():
    X = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 2.0]] * 5)
    ls = LeastSquares(3)
    ls.update_many(X, np.ones(15), np.arange(1, 16))
    assert not ls.is_invertible
    ls.refactor()  # harmless on a singular design
    assert not ls.is_invertible


def test_zero_counts_are_no_ops():
    ls = LeastSquares(2, ridge=1.0)
    ls.update([1.0, 2.0], 0.0, count=0)
    ls.update_many(np.ones((3, 2)), [0.0, 0.0, 0.0], [0, 0, 0])
    assert ls.n_updates == 0 and ls.total_count == 0
    np.testing.assert_array_equal(ls.A, np.eye(2))
    ls.update_many(np.array([[1.0, 0.0], [0.0, 1.0]]), [0.0, 3.0], [0, 3])
    assert ls.n_updates == 1 and ls.total_count == 3
    np.testing.assert_allclose(ls.theta, [0.0, 0.75])


def test_counts_may_be_integer_valued_floats():
    a, b = LeastSquares(2), LeastSquares(2)
    X = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    a.update_many(X, [1.0, 2.0, 3.0], [2, 3, 4])
    b.update_many(X, [1.0, 2.0, 3.0], np.array([2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(a.theta, b.theta)
    assert b.total_count == 9 and isinstance(b.total_count, int)


def test_automatic_refactor_schedule(monkeypatch):
    calls = []
    orig = LeastSquares._factorize

    def spy(self):
        calls.append(self._since_refactor)
        return orig(self)

    monkeypatch.setattr(LeastSquares, "_factorize", spy)
    ls = LeastSquares(3, ridge=1.0, refactor_every=5)
    for i in range(12):
        ls.update([1.0, i, 0.5], 1.0)
    assert calls == [5, 5]  # after the 5th and the 10th rank-one update
    ls.update_many(np.ones((2, 3)), [1.0, 1.0])  # 12 + 2 -> 14: not yet (4 since last)
    assert len(calls) == 2
    ls.update_many(np.ones((2, 3)), [1.0, 1.0])  # 6 since last -> refactor
    assert len(calls) == 3
    ls.update_many(np.ones((3, 3)), [1.0, 1.0, 1.0])  # m >= d: always refactor
    assert len(calls) == 4


def test_theta_is_cached_and_views_are_read_only():
    ls = LeastSquares(2, ridge=1.0)
    ls.update([1.0, 0.0], 2.0)
    t1 = ls.theta
    assert ls.theta is t1
    for arr in (ls.A, ls.b, ls.A_inv, ls.theta):
        with pytest.raises(ValueError):
            arr[0] = 5.0
    ls.update([0.0, 1.0], 2.0)
    assert ls.theta is not t1
    np.testing.assert_allclose(t1, [1.0, 0.0])  # the old cached value was not mutated


def test_bool_super_arm_masks_are_accepted():
    ls = LeastSquares(3, ridge=1.0)
    ls.update(np.array([True, False, True]), 1.0, 2)
    np.testing.assert_array_equal(ls.A, np.eye(3) + 2 * np.outer([1, 0, 1], [1, 0, 1]))


# ---------------------------------------------------------------------- save / resume
@pytest.mark.parametrize("ridge", [0.0, 1.0])
def test_state_round_trip_continues_bit_for_bit(tmp_path, ridge):
    rng = np.random.default_rng(5)
    ls = LeastSquares(6, ridge=ridge, refactor_every=7)
    X, s, c = random_batch(rng, 30, 6)
    for i in range(4):
        ls.update(X[i], s[i], int(c[i]))
    if ridge == 0.0:
        assert not ls.is_invertible
    path = save_state({"ls": ls.state_dict()}, tmp_path / "ls.json")
    back = LeastSquares.from_state(load_state(path)["ls"])
    for other in (ls, back):
        for i in range(4, 20):
            other.update(X[i], s[i], int(c[i]))
        other.update_many(X[20:], s[20:], c[20:])
    assert np.array_equal(ls.A, back.A) and np.array_equal(ls.b, back.b)
    assert np.array_equal(ls.A_inv, back.A_inv)
    assert ls.logdet() == back.logdet()
    assert (ls.n_updates, ls.total_count) == (back.n_updates, back.total_count)
    assert repr(back) == repr(ls)


def test_from_state_rejects_bad_states():
    good = LeastSquares(2, ridge=1.0).state_dict()
    with pytest.raises(StateError, match="not a LeastSquares state"):
        LeastSquares.from_state({"kind": "Other"})
    with pytest.raises(StateError, match="lacks the keys"):
        LeastSquares.from_state({k: v for k, v in good.items() if k != "b"})
    with pytest.raises(StateError, match="wrong shapes"):
        LeastSquares.from_state({**good, "A": np.eye(3)})
    with pytest.raises(StateError, match="bad settings"):
        LeastSquares.from_state({**good, "ridge": -1.0})
    with pytest.raises(StateError, match="log-determinant"):
        LeastSquares.from_state({**good, "logdet": None})


# ---------------------------------------------------------------------- bad input
MSG = r"The '{}' parameter of LeastSquares must"


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"d": 0}, "d"),
        ({"d": 2.0}, "d"),
        ({"d": 2, "ridge": -0.1}, "ridge"),
        ({"d": 2, "ridge": float("nan")}, "ridge"),
        ({"d": 2, "ridge": float("inf")}, "ridge"),
        ({"d": 2, "refactor_every": 0}, "refactor_every"),
    ],
)
def test_bad_constructor_arguments(kwargs, name):
    with pytest.raises(InvalidParameterError, match=MSG.format(name) + r".* Got .* instead\."):
        LeastSquares(**kwargs)


@pytest.mark.parametrize(
    "args, name",
    [
        (([1.0, 0.0], 1.0), "x"),
        (([1.0, 0.0, 0.0, 1.0], 1.0), "x"),
        (([1.0, np.nan, 0.0], 1.0), "x"),
        (([1.0, 0.0, 0.0], np.nan), "reward_sum"),
        (([1.0, 0.0, 0.0], np.inf), "reward_sum"),
        (([1.0, 0.0, 0.0], "a"), "reward_sum"),
        (([1.0, 0.0, 0.0], 1.0, -1), "count"),
        (([1.0, 0.0, 0.0], 1.0, 1.5), "count"),
        (([1.0, 0.0, 0.0], 1.0, 0), "reward_sum"),
    ],
)
def test_bad_update_arguments(args, name):
    ls = LeastSquares(3, ridge=1.0)
    with pytest.raises(InvalidParameterError, match=MSG.format(name)):
        ls.update(*args)
    assert ls.n_updates == 0


@pytest.mark.parametrize(
    "args, name",
    [
        ((np.ones((2, 2)), [1.0, 1.0]), "X"),
        ((np.ones(3), [1.0]), "X"),
        ((np.array([[1.0, np.inf, 0.0]]), [1.0]), "X"),
        ((np.ones((2, 3)), [1.0]), "reward_sums"),
        ((np.ones((2, 3)), [1.0, np.nan]), "reward_sums"),
        ((np.ones((2, 3)), [1.0, 1.0], [1, -2]), "counts"),
        ((np.ones((2, 3)), [1.0, 1.0], [1, 0.5]), "counts"),
        ((np.ones((2, 3)), [1.0, 1.0], [1, 2, 3]), "counts"),
        ((np.ones((2, 3)), [1.0, 1.0], [1, 0]), "reward_sums"),
    ],
)
def test_bad_update_many_arguments(args, name):
    ls = LeastSquares(3, ridge=1.0)
    with pytest.raises(InvalidParameterError, match=MSG.format(name)):
        ls.update_many(*args)
    assert ls.n_updates == 0


def test_bad_query_arguments():
    ls = LeastSquares(3, ridge=1.0)
    with pytest.raises(InvalidParameterError, match=MSG.format("x")):
        ls.norm_sq([1.0, 2.0])
    with pytest.raises(InvalidParameterError, match=MSG.format("X")):
        ls.norms_sq(np.ones((2, 4)))


def test_error_messages_have_the_standard_shape():
    with pytest.raises(InvalidParameterError) as exc:
        LeastSquares(3, ridge=-1.0)
    assert str(exc.value) == (
        "The 'ridge' parameter of LeastSquares must be a float in the range [0.0, inf). "
        "Got -1.0 instead."
    )
    with pytest.raises(InvalidParameterError) as exc:
        LeastSquares(3).update([1.0, 0.0, 0.0], 1.0, -2)
    assert str(exc.value) == (
        "The 'count' parameter of LeastSquares must be an int in the range [0, inf). Got -2 instead."
    )


def test_returned_arrays_are_snapshots():
    ls = LeastSquares(2, ridge=1.0)
    ls.update([1.0, 0.0], 2.0)
    A, b, A_inv, theta = ls.A, ls.b, ls.A_inv, ls.theta
    copies = [a.copy() for a in (A, b, A_inv, theta)]
    ls.update([1.0, 1.0], 3.0, 4)
    ls.update_many(np.eye(2), [1.0, 1.0])
    ls.update_many(np.eye(2)[:1], [1.0])
    for old, cp in zip((A, b, A_inv, theta), copies):
        np.testing.assert_array_equal(old, cp)
