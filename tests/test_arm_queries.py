"""The queries of independent arms: their answers and the pairs of their alternative sets,
against brute force on small instances."""

from itertools import combinations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from combex.exceptions import CombexError
from combex.identification import (
    BestArmQuery,
    BestKQuery,
    ClassQuery,
    SwapQuery,
    arm_query,
    class_members,
)
from combex.oracles import GraphicMatroid, PartitionMatroid, TopK

distinct_means = st.integers(3, 8).flatmap(
    lambda n: st.lists(st.integers(-50, 50), min_size=n, max_size=n, unique=True).map(
        lambda v: np.array(v, dtype=float) / 10))


def _members(dc):
    return [m for m in class_members(dc, 10_000)]


@settings(max_examples=60, deadline=None)
@given(mu=distinct_means, data=st.data())
def test_best_k_answer_is_the_set_of_largest_total_mean(mu, data):
    n = mu.size
    k = data.draw(st.integers(1, n - 1))
    q = arm_query(n, K=k)
    assert isinstance(q, BestArmQuery if k == 1 else BestKQuery)
    best = max(combinations(range(n), k), key=lambda S: mu[list(S)].sum())
    ans = q.answer(mu)
    got = [ans] if k == 1 else np.flatnonzero(ans).tolist()
    assert sorted(got) == sorted(best)
    I, J = q.pairs(ans)
    assert len(I) == q.n_alternatives == k * (n - k)
    inside = set(got)
    assert all(i in inside and j not in inside for i, j in zip(I.tolist(), J.tolist()))


def _graph_class(seed):
    g = nx.gnm_random_graph(5, 7, seed=seed)
    while not nx.is_connected(g):
        seed += 1000
        g = nx.gnm_random_graph(5, 7, seed=seed)
    return GraphicMatroid(g, base=True)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), data=st.data())
def test_swap_pairs_are_exactly_the_single_exchanges_that_give_a_base(seed, data):
    dc = _graph_class(seed)
    n = dc.n
    mu = np.array(data.draw(st.lists(st.integers(-50, 50), min_size=n, max_size=n, unique=True)), float) / 10
    q = arm_query(n, decision_class=dc)
    assert isinstance(q, SwapQuery) and q.K == 4  # spanning trees of 5 nodes have 4 edges
    members = _members(dc)
    best = max(members, key=lambda m: mu[m].sum())
    ans = q.answer(mu)
    assert np.array_equal(ans, best)
    keys = {m.tobytes() for m in members}
    want = set()
    for i in np.flatnonzero(ans):
        for j in np.flatnonzero(~ans):
            m = ans.copy()
            m[i], m[j] = False, True
            if m.tobytes() in keys:
                want.add((int(i), int(j)))
    I, J = q.pairs(ans)
    assert set(zip(I.tolist(), J.tolist())) == want and len(I) == len(want) <= q.n_alternatives
    # the answer is the best base iff no single exchange improves it (the exchange property)
    assert all(mu[i] >= mu[j] for i, j in want)


def test_the_only_base_is_compared_with_itself():
    dc = PartitionMatroid([0, 0, 1], [2, 1], base=True)  # one base: every element
    q = arm_query(3, decision_class=dc)
    ans = q.answer(np.array([0.1, 0.2, 0.3]))
    I, J = q.pairs(ans)
    assert ans.all() and I.tolist() == J.tolist() == [0]


@pytest.mark.parametrize("eps,kind", [(0.0, BestKQuery), (0.1, ClassQuery)])
def test_a_top_k_class_is_a_pair_query_only_at_epsilon_zero(eps, kind):
    q = arm_query(6, decision_class=TopK(6, 2), epsilon=eps)
    assert isinstance(q, kind) and q.K == 2
    assert isinstance(arm_query(6, K=2, epsilon=eps), kind)
    if kind is ClassQuery:
        with pytest.raises(CombexError, match="members of its class, not pairs"):
            q.pairs(q.answer(np.arange(6.0)))


def test_a_class_declaring_matroid_bases_is_a_swap_query():
    class Bases(PartitionMatroid):
        matroid_bases = True

    assert isinstance(arm_query(4, decision_class=Bases([0, 0, 1, 1], [1, 1], base=True)), SwapQuery)
    assert isinstance(arm_query(4, decision_class=PartitionMatroid([0, 0, 1, 1], [1, 1])), ClassQuery)


@pytest.mark.parametrize("kwargs,msg", [
    ({"n_arms": 1}, "'n_arms' parameter of Top-Two must be an int in the range \\[2, "),
    ({"n_arms": 5, "K": 5}, "'K' parameter of Top-Two must be an int in the range \\[1, 4\\]. Got 5"),
    ({"n_arms": 5, "decision_class": TopK(4, 2)}, "ground set of the problem's 5 arms. Got a class over 4"),
    ({"n_arms": 4, "decision_class": "spanning trees"}, "'decision_class' parameter of Top-Two"),
])
def test_bad_input_names_the_argument_and_the_value(kwargs, msg):
    with pytest.raises(CombexError, match=msg):
        arm_query(owner="Top-Two", **kwargs)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), eps=st.sampled_from([0.0, 0.05]), per_arm=st.booleans())
def test_class_costs_are_the_gaussian_glr_of_each_other_member(seed, eps, per_arm):
    """The cost of a member is the minimum over its half-space {lambda(S') >= lambda(S) + eps}
    of sum_a w_a (mu_a - lambda_a)^2 / (2 v_a) (closed form by Lagrange, checked against a
    direct minimization along the only direction that matters); the listed alternatives are
    every member but the answer; the gradient matches finite differences."""
    rng = np.random.default_rng(seed)
    dc = _graph_class(seed)
    n = dc.n
    mu, w = rng.normal(size=n), rng.uniform(1.0, 20.0, size=n)
    v = rng.uniform(0.2, 3.0, size=n) if per_arm else np.full(n, 0.7 ** 2)
    q = ClassQuery(dc)
    ans = q.answer(mu)
    alts = q.other_members(ans)
    members = {m.tobytes() for m in _members(dc)}
    assert {m.tobytes() for m in alts} == members - {ans.tobytes()} and len(alts) == len(members) - 1
    kw = {"variances": v} if per_arm else {"sigma": 0.7}
    F, D, V = q.costs(mu, w, ans, alts, eps, **kw)
    for r, alt in enumerate(alts):
        sign = ans.astype(float) - alt.astype(float)  # lambda moves along +-1 on D only
        g = float(sign @ mu) + eps
        # lambda = mu - t * sign * v / w; the constraint is active at t = g / V: the cost there
        t = max(g, 0.0) / float(np.sum(np.abs(sign) * v / w))
        lam = mu - t * sign * v / w
        cost = float(np.sum(w * (mu - lam) ** 2 / (2 * v)))
        assert np.isclose(F[r], cost, rtol=1e-9, atol=1e-12)
        assert float(sign @ lam) + eps <= 1e-9  # lam is in the alternative's half-space
        assert set(np.flatnonzero(D[r])) == set(np.flatnonzero(sign))
        grad = q.cost_gradient(w, F, D, V, r, **({"variances": v} if per_arm else {}))
        if F[r] > 0:
            for a in np.flatnonzero(D[r])[:2]:
                h = 1e-6 * w[a]
                wp = w.copy()
                wp[a] += h
                Fp = q.costs(mu, wp, ans, alts[r:r + 1], eps, **kw)[0][0]
                assert np.isclose((Fp - F[r]) / h, grad[a], rtol=1e-3, atol=1e-9)
    rows = q.cost_gradient(w, F, D, V, **({"variances": v} if per_arm else {}))  # every row at once
    assert np.array_equal(rows, np.array([q.cost_gradient(w, F, D, V, r, **({"variances": v} if per_arm else {}))
                                          for r in range(len(alts))]))


def test_a_class_too_large_to_list_has_no_members():
    q = ClassQuery(TopK(16, 8))  # 12,870 members
    assert q.members is None and ClassQuery(TopK(16, 8), max_members=20_000).members.shape == (12_870, 16)
    with pytest.raises(CombexError, match="more than max_members=4096 members"):
        q.other_members(np.arange(16) < 8)


def test_the_alternative_answer_of_a_pair_or_a_member():
    mu = np.array([0.9, 0.5, 0.7, 0.1])
    q = arm_query(4)
    assert q.alternative_answer(q.answer(mu), (0, 2)) == 2
    q = arm_query(4, K=2)
    S = q.answer(mu)
    assert np.flatnonzero(q.alternative_answer(S, (2, 1))).tolist() == [0, 1] and S.tolist() == [True, False, True, False]
    q = ClassQuery(TopK(4, 2))
    member = np.array([False, True, True, False])
    assert q.alternative_answer(q.answer(mu), member).tolist() == member.tolist()
