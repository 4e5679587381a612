"""Efficient apportionment (Appendix D of the full-bandit paper) and the tracking rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from combex._state import load_state, save_state
from combex.allocations import Tracker, apportion, uniform_design
from combex.allocations._design import _check_distribution
from combex.exceptions import InvalidParameterError, StateError


@st.composite
def designs(draw, max_m=8):
    m = draw(st.integers(1, max_m))
    if draw(st.booleans()):
        # rational weights with many ties
        raw = np.array(draw(st.lists(st.integers(0, 4), min_size=m, max_size=m)), dtype=float)
    else:
        raw = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=m, max_size=m)))
        raw[raw < 1e-3] = 0.0
    if raw.sum() == 0:
        raw[draw(st.integers(0, m - 1))] = 1.0
    return raw / raw.sum()


def brute_apportion(p, t):
    """Appendix D verbatim, with O(s) scans (raise lowest index / lower highest index)."""
    supp = np.flatnonzero(p > 0)
    s = supp.size
    n = np.zeros(p.size, dtype=np.int64)
    n[supp] = np.ceil((t - s / 2) * p[supp]).astype(np.int64)
    while n.sum() < t:
        r = n[supp] / p[supp]
        n[supp[np.flatnonzero(r == r.min())[0]]] += 1
    while n.sum() > t:
        r = (n[supp] - 1) / p[supp]
        n[supp[np.flatnonzero(r == r.max())[-1]]] -= 1
    return n


def test_known_values():
    assert apportion([0.5, 0.3, 0.2], 10).tolist() == [5, 3, 2]
    assert apportion([0.5, 0.0, 0.5], 3).tolist() == [2, 0, 1]
    # hand computation: p = (0.6, 0.4), t = 3: ceil(2 * 0.6) = 2, ceil(2 * 0.4) = 1 -> (2, 1)
    assert apportion([0.6, 0.4], 3).tolist() == [2, 1]
    # t < s: one pull to each of the t lowest-indexed support points (tracking's answer)
    assert apportion([0.25, 0.25, 0.0, 0.5], 2).tolist() == [1, 1, 0, 0]
    assert apportion(uniform_design(4), 0).tolist() == [0, 0, 0, 0]


@settings(max_examples=150, deadline=None)
@given(designs(), st.integers(0, 60))
@example(np.array([4 / 9, 3 / 9, 2 / 9]), 19)  # an exact three-way tie, decided by rounding
def test_apportion_properties(p, t):
    n = apportion(p, t)
    s = int(np.count_nonzero(p))
    assert n.dtype == np.int64 and n.sum() == t and np.all(n >= 0)
    assert np.all(n[p == 0] == 0)
    if t >= s:
        assert np.all(n[p > 0] >= 1)
        # Appendix D verbatim gives the same counts (our tie rule, O(s) scans), on the
        # design apportion actually rounds: p divided by its sum (documented). Exact ties
        # such as p = (4/9, 3/9, 2/9), t = 19 are decided by that rounding.
        assert np.array_equal(n, brute_apportion(_check_distribution(p, "test"), t))
    dev = n - t * p
    assert np.all(dev <= 1 + 1e-9) and np.all(dev >= -s * p - 1e-9)
    # house monotone: the rounding of t + 1 dominates that of t
    assert np.all(apportion(p, t + 1) >= n)


@settings(max_examples=100, deadline=None)
@given(designs(), st.lists(st.integers(0, 25), min_size=1, max_size=6))
def test_batched_equals_one_at_a_time(p, steps):
    one = Tracker(p)
    batched = Tracker(p)
    for step in steps:
        for _ in range(step):
            one.next()
        add = batched.advance(batched.t + step)
        assert add.sum() == step and np.all(add >= 0)
        assert np.array_equal(one.counts, batched.counts)
        # from zero, tracking and apportionment agree at every checkpoint
        assert np.array_equal(one.counts, apportion(p, one.t))


@settings(max_examples=50, deadline=None)
@given(designs(), st.lists(st.integers(0, 3), min_size=8, max_size=8), st.integers(0, 40))
def test_batched_from_arbitrary_counts(p, start, k):
    start = np.where(p > 0, np.array(start[: p.size]), 0)
    one = Tracker(p, counts=start)
    batched = Tracker(p, counts=start)
    picks = [one.next() for _ in range(k)]
    batched.advance(batched.t + k)
    assert np.array_equal(one.counts, batched.counts)
    assert all(p[j] > 0 for j in picks)


def test_tracker_rule_and_ties():
    tr = Tracker([0.5, 0.25, 0.25])
    # all ratios 0 at start: ties to the lowest index
    assert [tr.next() for _ in range(3)] == [0, 1, 2]
    # ratios (2, 4, 4) -> 0; then (4, 4, 4) -> tie -> 0 ... lowest index
    assert tr.next() == 0
    assert tr.next() == 0
    assert tr.counts.tolist() == [3, 1, 1]


def test_tracker_large_batch_fast():
    rng = np.random.default_rng(0)
    p = rng.random(500)
    p /= p.sum()
    tr = Tracker(p)
    add = tr.advance(10**9)
    assert add.sum() == 10**9
    assert np.all(np.abs(add - 10**9 * p) <= 500 * p + 1 + 1e-6)
    assert np.array_equal(add, apportion(p, 10**9))


def test_tracker_state_roundtrip(tmp_path):
    tr = Tracker([0.2, 0.0, 0.8])
    for _ in range(7):
        tr.next()
    path = save_state(tr.state_dict(), tmp_path / "tr.json")
    tr2 = Tracker.from_state(load_state(path))
    assert np.array_equal(tr2.counts, tr.counts)
    assert [tr.next() for _ in range(5)] == [tr2.next() for _ in range(5)]
    with pytest.raises(StateError, match="keys"):
        Tracker.from_state({"p": [1.0]})


@pytest.mark.parametrize(
    "p, match",
    [
        ([0.5, 0.6], "summing to 1"),
        ([1.5, -0.5], "nonnegative"),
        ([], "non-empty"),
        ([[0.5, 0.5]], "1-d"),
        ([np.nan, 1.0], "finite"),
        ("abc", "probability vector"),
    ],
)
def test_bad_distribution(p, match):
    with pytest.raises(InvalidParameterError, match=match):
        apportion(p, 3)
    with pytest.raises(InvalidParameterError, match=match):
        Tracker(p)


def test_bad_t_and_counts():
    with pytest.raises(InvalidParameterError, match="'t' parameter of apportion"):
        apportion([1.0], -1)
    with pytest.raises(InvalidParameterError, match="'t' parameter of apportion"):
        apportion([1.0], 2.5)
    with pytest.raises(InvalidParameterError, match="nonnegative. Got -1 at index 0"):
        Tracker([0.5, 0.5], counts=[-1, 2])
    with pytest.raises(InvalidParameterError, match="outside the support"):
        Tracker([1.0, 0.0], counts=[1, 1])
    with pytest.raises(InvalidParameterError, match="shape"):
        Tracker([1.0, 0.0], counts=[1])
    with pytest.raises(InvalidParameterError, match="integers"):
        Tracker([1.0, 0.0], counts=[0.5, 0])
    tr = Tracker([0.5, 0.5])
    tr.advance(4)
    with pytest.raises(InvalidParameterError, match="'total' parameter of Tracker.advance"):
        tr.advance(3)
