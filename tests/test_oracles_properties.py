"""Property tests: every oracle equals brute force on random small instances, and the
matroid classes satisfy the matroid axioms."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from combex.oracles import (
    ConstraintFamily,
    ExplicitFamily,
    GraphicMatroid,
    LinearMatroid,
    Matchings,
    Matroid,
    PartitionMatroid,
    SpanningTrees,
    STPaths,
    TopK,
    UniformMatroid,
)

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = 1e-9

# weights with many ties (small integers) mixed with arbitrary reals
weight_value = st.one_of(
    st.integers(-3, 3).map(float),
    st.floats(-10, 10, allow_nan=False, allow_infinity=False),
)


def weights(n):
    return st.lists(weight_value, min_size=n, max_size=n).map(lambda v: np.array(v, dtype=np.float64))


def all_masks(n):
    codes = np.arange(1 << n)
    return ((codes[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)


def brute_members(dc):
    """Members by filtering all 2^n masks through contains (independent of enumerate)."""
    return np.array([m for m in all_masks(dc.n) if dc.contains(m)], dtype=bool).reshape(-1, dc.n)


def assert_oracles_match(dc, w, members, data):
    """argmax, argmax_excluding and argmax_constrained against brute force, by value."""
    vals = members.astype(float) @ w
    scale = max(1.0, float(np.abs(w).sum()))
    m = dc.argmax(w)
    assert dc.contains(m)
    assert abs(w[m].sum() - vals.max()) <= TOL * scale
    # enumerate() lists exactly the members
    listed = {np.packbits(r).tobytes() for r in dc.enumerate()}
    assert listed == {np.packbits(r).tobytes() for r in members}
    if dc.size is not None:
        assert dc.size == len(members)
    # excluding the top member and a random member
    for ex in (m, members[data.draw(st.integers(0, len(members) - 1), label="excluded")]):
        others = ~np.all(members == ex, axis=1)
        r = dc.argmax_excluding(w, ex)
        if not others.any():
            assert r is None
        else:
            assert r is not None and dc.contains(r) and not np.array_equal(r, ex)
            assert abs(w[r].sum() - vals[others].max()) <= TOL * scale
    # constrained: include part of a random member, exclude part of the top member (so
    # the exclusion binds), plus arbitrary elements
    for trial in range(3):
        some = members[data.draw(st.integers(0, len(members) - 1), label="member")]
        inc = set(data.draw(st.sets(st.sampled_from(np.flatnonzero(some).tolist() or [0]), max_size=2)))
        top_el = np.flatnonzero(m).tolist() or [0]
        exc = set(data.draw(st.sets(st.sampled_from(top_el), max_size=2)))
        if trial == 2:
            inc |= data.draw(st.sets(st.integers(0, dc.n - 1), max_size=1), label="include")
            exc |= data.draw(st.sets(st.integers(0, dc.n - 1), max_size=1), label="exclude")
        inc, exc = sorted(inc), sorted(exc - inc)
        ok = np.all(members[:, inc], axis=1) & ~np.any(members[:, exc], axis=1)
        r = dc.argmax_constrained(w, include=inc, exclude=exc)
        if not ok.any():
            assert r is None
        else:
            assert r is not None and dc.contains(r) and r[inc].all() and not r[exc].any()
            assert abs(w[r].sum() - vals[ok].max()) <= TOL * scale


# ---------------------------------------------------------------- strategies
@st.composite
def small_graphs(draw, max_nodes=6, max_edges=7, connected=False):
    n_nodes = draw(st.integers(2, max_nodes))
    pairs = list(itertools.combinations(range(n_nodes), 2))
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=max_edges, unique=True))
    g = nx.Graph()
    g.add_nodes_from(range(n_nodes))
    g.add_edges_from(chosen)
    if connected:
        assume(nx.is_connected(g))
    return g


@st.composite
def small_dags(draw):
    n_nodes = draw(st.integers(2, 6))
    pairs = [(i, j) for i in range(n_nodes) for j in range(i + 1, n_nodes)]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=7, unique=True))
    # random node labels so topological order is not the label order
    perm = draw(st.permutations(range(n_nodes)))
    g = nx.DiGraph()
    g.add_nodes_from(perm)
    g.add_edges_from((perm[i], perm[j]) for i, j in chosen)
    s, t = perm[0], perm[n_nodes - 1]
    assume(nx.has_path(g, s, t))
    return g, s, t


@st.composite
def partitions(draw, base=None):
    n = draw(st.integers(1, 8))
    n_groups = draw(st.integers(1, 3))
    groups = draw(st.lists(st.integers(0, n_groups - 1), min_size=n, max_size=n))
    caps = draw(st.lists(st.integers(0, 3), min_size=n_groups, max_size=n_groups))
    b = draw(st.booleans()) if base is None else base
    return PartitionMatroid(np.array(groups), np.array(caps), base=b)


@st.composite
def linear_matroids(draw, base=None):
    d = draw(st.integers(1, 3))
    n = draw(st.integers(1, 6))
    entries = draw(st.lists(st.integers(-2, 2), min_size=d * n, max_size=d * n))
    b = draw(st.booleans()) if base is None else base
    return LinearMatroid(np.array(entries, dtype=float).reshape(d, n), base=b)


@st.composite
def generic_matroids(draw, base=None):
    """Matroid from a callable: independence of a random graphic matroid."""
    g = draw(small_graphs())
    gm = GraphicMatroid(g)
    b = draw(st.booleans()) if base is None else base
    return Matroid(gm.n, gm._independent, base=b)


@st.composite
def matroids(draw, base=None):
    kind = draw(st.sampled_from(["uniform", "partition", "graphic", "linear", "generic"]))
    b = draw(st.booleans()) if base is None else base
    if kind == "uniform":
        n = draw(st.integers(1, 8))
        return UniformMatroid(n, draw(st.integers(0, n)), base=b)
    if kind == "partition":
        return draw(partitions(base=b))
    if kind == "graphic":
        return GraphicMatroid(draw(small_graphs()), base=b)
    if kind == "linear":
        return draw(linear_matroids(base=b))
    return draw(generic_matroids(base=b))


# ---------------------------------------------------------------- oracle = brute force
@SETTINGS
@given(data=st.data(), n=st.integers(1, 9))
def test_topk_brute_force(data, n):
    k = data.draw(st.integers(1, n), label="k")
    dc = TopK(n, k)
    w = data.draw(weights(n), label="w")
    assert_oracles_match(dc, w, brute_members(dc), data)


@SETTINGS
@given(data=st.data(), dc=matroids())
def test_matroids_brute_force(data, dc):
    w = data.draw(weights(dc.n), label="w")
    assert_oracles_match(dc, w, brute_members(dc), data)


@SETTINGS
@given(data=st.data(), g=small_graphs(connected=True))
def test_spanning_trees_brute_force(data, g):
    dc = SpanningTrees(g)
    w = data.draw(weights(dc.n), label="w")
    assert_oracles_match(dc, w, brute_members(dc), data)


@SETTINGS
@given(data=st.data(), inst=small_dags())
def test_st_paths_brute_force(data, inst):
    g, s, t = inst
    dc = STPaths(g, s, t)
    w = data.draw(weights(dc.n), label="w")
    members = brute_members(dc)
    # contains() is checked against networkx's own path listing
    ref = set()
    for path in nx.all_simple_edge_paths(g, s, t):
        m = np.zeros(dc.n, dtype=bool)
        m[[dc.edges.index(e) for e in path]] = True
        ref.add(np.packbits(m).tobytes())
    assert ref == {np.packbits(r).tobytes() for r in members}
    assert_oracles_match(dc, w, members, data)


@SETTINGS
@given(data=st.data(), g=small_graphs())
def test_matchings_brute_force(data, g):
    nu = len(nx.max_weight_matching(g, maxcardinality=True))
    c = data.draw(st.one_of(st.none(), st.integers(1, nu)), label="cardinality")
    dc = Matchings(g, cardinality=c)
    w = data.draw(weights(dc.n), label="w")
    members = brute_members(dc)
    for m in members:  # contains() against the definition
        ends = [v for i in np.flatnonzero(m) for v in dc.edges[i]]
        assert len(ends) == len(set(ends)) and (c is None or m.sum() == c)
    assert_oracles_match(dc, w, members, data)


@SETTINGS
@given(data=st.data(), n=st.integers(1, 8))
def test_explicit_brute_force(data, n):
    rows = data.draw(
        st.lists(st.lists(st.booleans(), min_size=n, max_size=n).map(tuple), min_size=1, max_size=12, unique=True),
        label="members",
    )
    M = np.array(rows, dtype=bool)
    dc = ExplicitFamily(M)
    w = data.draw(weights(n), label="w")
    members = brute_members(dc)
    assert {np.packbits(r).tobytes() for r in members} == {np.packbits(r).tobytes() for r in M}
    assert_oracles_match(dc, w, members, data)
    # ties go to the member listed first
    vals = M.astype(float) @ w
    assert np.array_equal(dc.argmax(w), M[int(np.argmax(vals))])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(1, 8))
def test_constraints_brute_force(data, n):
    m = data.draw(st.integers(0, 3), label="rows")
    A = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=m * n, max_size=m * n)), dtype=np.int64).reshape(m, n)
    b = np.array(data.draw(st.lists(st.integers(-2, 4), min_size=m, max_size=m)), dtype=np.int64)
    sense = data.draw(st.sampled_from(["<=", ">=", "=="]), label="sense")
    use_eq = data.draw(st.booleans(), label="eq")
    A_eq = b_eq = None
    if use_eq:
        A_eq = np.array([data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))])
        b_eq = np.array([data.draw(st.integers(0, 3))])
    dc = ConstraintFamily(n, A, b, sense=sense, A_eq=A_eq, b_eq=b_eq)
    # brute force over all 2^n vectors, independent of the class
    X = all_masks(n).astype(np.int64)
    lhs = X @ A.T
    ok = {"<=": np.all(lhs <= b, axis=1), ">=": np.all(lhs >= b, axis=1), "==": np.all(lhs == b, axis=1)}[sense]
    if use_eq:
        ok &= np.all(X @ A_eq.T == b_eq, axis=1)
    members = X[ok].astype(bool)
    w = data.draw(weights(n), label="w")
    if len(members) == 0:
        from combex.exceptions import InfeasibleError

        with pytest.raises(InfeasibleError):
            dc.argmax(w)
        assert list(dc.enumerate()) == []
        return
    assert_oracles_match(dc, w, members, data)


# ---------------------------------------------------------------- matroid axioms
def _keyset(rows):
    return {np.packbits(r).tobytes() for r in rows}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dc=matroids(base=False))
def test_matroid_axioms(dc):
    masks = all_masks(dc.n)
    indep = np.array([dc.contains(m) for m in masks])
    fam = masks[indep]
    keys = _keyset(fam)
    assert np.packbits(np.zeros(dc.n, dtype=bool)).tobytes() in keys  # I1: empty set
    for I in fam:  # I2: hereditary (removing one element suffices by induction)
        for e in np.flatnonzero(I):
            J = I.copy()
            J[e] = False
            assert np.packbits(J).tobytes() in keys
    sizes = fam.sum(axis=1)
    for I, sI in zip(fam, sizes):  # I3: augmentation
        for J in fam[sizes > sI]:
            cands = np.flatnonzero(J & ~I)
            assert any(np.packbits(np.where(np.arange(dc.n) == e, True, I)).tobytes() in keys for e in cands)
    assert sizes.max() == dc.rank


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_matroid_bases_axioms(data):
    ind = data.draw(matroids(base=False))
    # the same matroid as bases
    params = ind.params()
    if isinstance(ind, UniformMatroid):
        bas = UniformMatroid(ind.n, ind.r, base=True)
    elif isinstance(ind, PartitionMatroid):
        bas = PartitionMatroid(params["groups"], params["capacities"], base=True)
    elif isinstance(ind, GraphicMatroid):
        bas = GraphicMatroid(ind.graph, base=True)
    elif isinstance(ind, LinearMatroid):
        bas = LinearMatroid(ind.matrix, base=True, tol=ind.tol)
    else:
        bas = Matroid(ind.n, ind.is_independent, base=True)
    masks = all_masks(ind.n)
    fam = masks[[ind.contains(m) for m in masks]]
    maximal = fam[fam.sum(axis=1) == fam.sum(axis=1).max()]
    bases = masks[[bas.contains(m) for m in masks]]
    assert _keyset(bases) == _keyset(maximal)  # bases = maximal independent sets
    keys = _keyset(bases)
    for B1, B2 in itertools.islice(itertools.product(bases, bases), 400):  # base exchange
        for x in np.flatnonzero(B1 & ~B2):
            ok = False
            for y in np.flatnonzero(B2 & ~B1):
                C = B1.copy()
                C[x], C[y] = False, True
                ok |= np.packbits(C).tobytes() in keys
            assert ok


# ---------------------------------------------------------------- width claims
def exchange_class_valid(members, width):
    """Whether the exchange sets of size <= width form an exchange class in the sense of
    Chen et al. (2014): for all members M != M' and e in M \\ M' there is b = (b+, b-)
    with e in b-, b- in M \\ M', b+ in M' \\ M, M - b- + b+ and M' - b+ + b- members."""
    keys = _keyset(members)
    for M, Mp in itertools.permutations(members, 2):
        d_minus = np.flatnonzero(M & ~Mp).tolist()
        d_plus = np.flatnonzero(Mp & ~M).tolist()
        for e in d_minus:
            rest = [x for x in d_minus if x != e]
            found = False
            for size in range(1, width + 1):
                for a in range(0, size):  # b- = {e} + a others
                    for bm in itertools.combinations(rest, a):
                        for bp in itertools.combinations(d_plus, size - 1 - a):
                            minus, plus = [e, *bm], list(bp)
                            A, B = M.copy(), Mp.copy()
                            A[minus], A[plus] = False, True
                            B[plus], B[minus] = False, True
                            if np.packbits(A).tobytes() in keys and np.packbits(B).tobytes() in keys:
                                found = True
                                break
                        if found:
                            break
                    if found:
                        break
                if found:
                    break
            if not found:
                return False
    return True


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dc=st.one_of(
        matroids(),
        small_graphs().map(Matchings),
        small_graphs().flatmap(
            lambda g: st.integers(1, len(nx.max_weight_matching(g, maxcardinality=True))).map(
                lambda c: Matchings(g, cardinality=c)
            )
        ),
        small_dags().map(lambda x: STPaths(*x)),
        st.integers(2, 6).flatmap(lambda n: st.integers(1, n).map(lambda k: TopK(n, k))),
    )
)
def test_width_is_an_exchange_class_bound(dc):
    members = brute_members(dc)
    assume(len(members) <= 40)
    assert exchange_class_valid(members, dc.width)


def test_exchange_class_checker_can_fail():
    # two disjoint 2-sets: any exchange must move all four elements
    members = np.array([[1, 1, 0, 0], [0, 0, 1, 1]], dtype=bool)
    assert not exchange_class_valid(members, 3)
    assert exchange_class_valid(members, 4)
