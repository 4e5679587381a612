"""Matroids: independent sets or bases, maximized by the greedy algorithm.

Every class takes ``base``: ``base=False`` is the family of *independent sets* (greedy
adds, in decreasing weight order, each positive-weight element that keeps the set
independent), ``base=True`` the family of *bases* (maximal independent sets; greedy over
all elements in decreasing weight order gives a maximum-weight base). Ties in weight are
broken toward smaller element indices (stable sort), so answers are deterministic.

Constrained maximization is exact without big-M: forcing a set ``I`` in contracts the
matroid by ``I`` (greedy starting from ``I``), forcing elements out deletes them.

References
----------
Chen, Lin, King, Lyu, Chen (2014), Combinatorial pure exploration of multi-armed bandits,
Section 3.1: the width of matroid decision classes is at most 2.
"""

from __future__ import annotations

from abc import abstractmethod

import itertools
import math
from typing import Any, Callable, Iterator

import networkx as nx
import numpy as np
from numpy.typing import NDArray

from .._validation import check_bool, check_float, check_int, check_mask, check_matrix, check_weights, param_error
from ..exceptions import InvalidParameterError
from ._base import DecisionClass
from ._registry import register_decision_class

__all__ = [
    "Matroid",
    "UniformMatroid",
    "PartitionMatroid",
    "GraphicMatroid",
    "LinearMatroid",
    "SpanningTrees",
]

# enumerate() refuses to scan more candidate subsets than this
_ENUM_LIMIT = 1 << 22


class _MatroidBase(DecisionClass):
    """Shared greedy machinery. Subclasses set ``n``, ``base``, ``_rank`` and implement
    :meth:`_independent`; they may override :meth:`_greedy` with a faster method."""

    base: bool
    _rank: int

    # ------------------------------------------------------------ subclass hooks
    @abstractmethod
    def _independent(self, mask: NDArray[np.bool_]) -> bool:
        """Subclass hook."""

    def _greedy(
        self, w: NDArray[np.float64], inc: NDArray[np.bool_], allowed: NDArray[np.bool_]
    ) -> NDArray[np.bool_] | None:
        """Greedy from the forced set ``inc`` over the ``allowed`` elements (generic: one
        independence test per candidate). None when ``inc`` is dependent, or, for bases,
        when no base contains ``inc`` inside ``inc | allowed``."""
        if not self._independent(inc):
            return None
        cand = np.flatnonzero(allowed & ~inc)
        if not self.base:
            cand = cand[w[cand] > 0]
        order = cand[np.argsort(-w[cand], kind="stable")]
        cur = inc.copy()
        size = int(np.count_nonzero(cur))
        for e in order:
            if size >= self._rank:
                break
            cur[e] = True
            if self._independent(cur):
                size += 1
            else:
                cur[e] = False
        if self.base and size != self._rank:
            return None
        return cur

    # ------------------------------------------------------------ contract
    @property
    def rank(self) -> int:
        """Rank of the matroid (size of every base)."""
        return self._rank

    def _owner(self) -> str:
        return type(self).__name__

    def argmax(self, weights: NDArray[np.float64]) -> NDArray[np.bool_]:
        w = check_weights(weights, self.n, owner=self._owner())
        out = self._greedy(w, np.zeros(self.n, dtype=bool), np.ones(self.n, dtype=bool))
        if out is None:  # pragma: no cover - the empty set is independent
            raise self._empty()
        return out

    def argmax_constrained(
        self,
        weights: NDArray[np.float64],
        *,
        include: Any = (),
        exclude: Any = (),
    ) -> NDArray[np.bool_] | None:
        w, inc_idx, exc_idx, conflict = self._constrained_args(weights, include, exclude, self._owner())
        if conflict:
            return None
        inc = np.zeros(self.n, dtype=bool)
        inc[inc_idx] = True
        allowed = np.ones(self.n, dtype=bool)
        allowed[exc_idx] = False
        return self._greedy(w, inc, allowed)

    def argmax_excluding(
        self, weights: NDArray[np.float64], excluded: NDArray[np.bool_]
    ) -> NDArray[np.bool_] | None:
        """Best member other than ``excluded``.

        Bases: if ``excluded`` is not the greedy base B*, B* is the answer; otherwise the
        best other base is a single exchange B* - e + f (exact for matroids: by the
        symmetric exchange property a second-best base closest to B* differs from it by
        one exchange). Independent sets: the generic method of DecisionClass.
        """
        if not self.base:
            return super().argmax_excluding(weights, excluded)
        w = check_weights(weights, self.n, owner=self._owner())
        m = check_mask(excluded, self.n, "excluded", owner=self._owner())
        best = self.argmax(w)
        if not np.array_equal(best, m):
            return best
        return self._best_exchange(w, best)

    def _best_exchange(self, w: NDArray[np.float64], b: NDArray[np.bool_]) -> NDArray[np.bool_] | None:
        """Best base B - e + f (generic: candidate pairs by decreasing gain, first valid)."""
        ins = np.flatnonzero(b)
        outs = np.flatnonzero(~b)
        if ins.size == 0 or outs.size == 0:
            return None
        gain = w[outs][:, None] - w[ins][None, :]
        order = np.argsort(-gain, axis=None, kind="stable")
        cur = b.copy()
        for flat in order:
            fi, ei = divmod(int(flat), ins.size)
            f, e = outs[fi], ins[ei]
            cur[e] = False
            cur[f] = True
            if self._independent(cur):
                return cur
            cur[e] = True
            cur[f] = False
        return None

    def contains(self, mask: Any) -> bool:
        m = check_mask(mask, self.n, owner=self._owner())
        if self.base and int(np.count_nonzero(m)) != self._rank:
            return False
        return bool(self._independent(m))

    def enumerate(self) -> Iterator[NDArray[np.bool_]]:
        sizes = [self._rank] if self.base else list(range(self._rank + 1))
        total = sum(math.comb(self.n, s) for s in sizes)
        if total > _ENUM_LIMIT:
            raise InvalidParameterError(
                f"{self._owner()}.enumerate() would scan {total} candidate subsets "
                f"(limit {_ENUM_LIMIT}); it is meant for small ground sets."
            )
        for s in sizes:
            for c in itertools.combinations(range(self.n), s):
                m = np.zeros(self.n, dtype=bool)
                m[list(c)] = True
                if self._independent(m):
                    yield m

    @property
    def width(self) -> int:
        """2: bases of a matroid (Chen et al., 2014, Section 3.1); independent sets are the
        projections of the bases of the truncated direct sum with a free matroid, whose
        exchange sets project to single additions, removals or swaps (width <= 2)."""
        return 2


# ---------------------------------------------------------------------- generic
@register_decision_class("matroid")
class Matroid(_MatroidBase):
    """A matroid given by an independence oracle.

    Parameters
    ----------
    n : int
        Size of the ground set.
    is_independent : callable
        ``is_independent(mask) -> bool`` for a bool mask of shape (n,). It must describe
        a matroid (the empty set independent, hereditary, augmentation); this is the
        caller's responsibility (see ``tests/test_oracles_properties.py`` for checks).
    rank : int, optional
        The rank if known (saves n oracle calls); otherwise computed by greedy.
    base : bool, default=False
        False: the family of independent sets; True: the family of bases.

    Notes
    -----
    Greedy makes at most n oracle calls per :meth:`argmax`. The best other base
    (:meth:`argmax_excluding` with ``base=True``) tries single exchanges by decreasing
    gain, at most r(n - r) oracle calls.

    Examples
    --------
    >>> import numpy as np
    >>> from combex.oracles import Matroid
    >>> m = Matroid(4, lambda s: s.sum() <= 2, base=True)
    >>> m.rank, m.argmax(np.array([0.1, 0.5, -1.0, 0.3])).nonzero()[0]
    (2, array([1, 3]))
    """

    def __init__(
        self,
        n: int,
        is_independent: Callable[[NDArray[np.bool_]], bool],
        *,
        rank: int | None = None,
        base: bool = False,
    ) -> None:
        self.n = check_int(n, "n", owner="Matroid", low=1)
        if not callable(is_independent):
            raise param_error("is_independent", "Matroid", "a callable taking a bool mask", is_independent)
        self.is_independent = is_independent
        self.base = check_bool(base, "base", owner="Matroid")
        if not self._independent(np.zeros(self.n, dtype=bool)):
            raise param_error(
                "is_independent", "Matroid", "a matroid independence oracle (the empty set is independent)",
                is_independent,
            )
        if rank is None:
            self._rank = int(np.count_nonzero(self._greedy_all()))
        else:
            self._rank = check_int(rank, "rank", owner="Matroid", low=0, high=self.n)

    def _greedy_all(self) -> NDArray[np.bool_]:
        cur = np.zeros(self.n, dtype=bool)
        for e in range(self.n):
            cur[e] = True
            if not self._independent(cur):
                cur[e] = False
        return cur

    def _independent(self, mask: NDArray[np.bool_]) -> bool:
        return bool(self.is_independent(mask.copy()))

    def params(self) -> dict[str, Any]:
        return {"n": self.n, "is_independent": self.is_independent, "rank": self._rank, "base": self.base}


# ---------------------------------------------------------------------- partition
@register_decision_class("partition-matroid")
class PartitionMatroid(_MatroidBase):
    """Partition matroid: at most ``capacities[g]`` elements from each group ``g``.

    Example: at most 2 workers per skill. Bases take exactly ``min(capacities[g],
    |group g|)`` elements of each group.

    Parameters
    ----------
    groups : array-like of int, shape (n,)
        Group of each element, in ``[0, len(capacities) - 1]``.
    capacities : array-like of int, shape (n_groups,)
        Maximum number of chosen elements per group (>= 0).
    base : bool, default=False
        False: independent sets; True: bases.

    Notes
    -----
    Greedy is vectorized: one lexicographic sort by (group, -weight, index), then each
    group keeps its first ``quota`` elements. The best other base swaps, inside one
    group, the weakest chosen element for the strongest unchosen one.

    Examples
    --------
    >>> import numpy as np
    >>> from combex.oracles import PartitionMatroid
    >>> pm = PartitionMatroid([0, 0, 0, 1, 1], [2, 1], base=True)
    >>> pm.argmax(np.array([0.3, 0.1, 0.2, -0.5, -0.1])).nonzero()[0]
    array([0, 2, 4])
    """

    def __init__(self, groups: Any, capacities: Any, *, base: bool = False) -> None:
        owner = type(self).__name__
        self._setup(groups, capacities, base, owner)

    def _setup(self, groups: Any, capacities: Any, base: Any, owner: str) -> None:
        g = np.asarray(groups)
        c = np.asarray(capacities)
        if c.ndim != 1 or c.size == 0 or not np.issubdtype(c.dtype, np.integer) or np.any(c < 0):
            raise param_error("capacities", owner, "a non-empty 1-d array of non-negative ints", capacities)
        if (
            g.ndim != 1
            or g.size == 0
            or not np.issubdtype(g.dtype, np.integer)
            or g.min() < 0
            or g.max() >= c.size
        ):
            raise param_error(
                "groups", owner, f"a non-empty 1-d array of ints in the range [0, {c.size - 1}]", groups
            )
        self.n = int(g.size)
        self.groups = g.astype(np.intp)
        self.capacities = c.astype(np.int64)
        self.base = check_bool(base, "base", owner=owner)
        self._gsize = np.bincount(self.groups, minlength=c.size)
        self._quota = np.minimum(self.capacities, self._gsize)
        self._rank = int(self._quota.sum())

    def _independent(self, mask: NDArray[np.bool_]) -> bool:
        cnt = np.bincount(self.groups[mask], minlength=self.capacities.size)
        return bool(np.all(cnt <= self.capacities))

    def _greedy(
        self, w: NDArray[np.float64], inc: NDArray[np.bool_], allowed: NDArray[np.bool_]
    ) -> NDArray[np.bool_] | None:
        cnt = np.bincount(self.groups[inc], minlength=self.capacities.size)
        if np.any(cnt > self.capacities):
            return None
        cand = allowed & ~inc
        if not self.base:
            cand &= w > 0
        idx = np.flatnonzero(cand)
        order = idx[np.lexsort((-w[idx], self.groups[idx]))]  # stable: ties by index
        g = self.groups[order]
        pos = np.arange(g.size) - np.searchsorted(g, g, side="left")
        take = pos < (self.capacities - cnt)[g]
        out = inc.copy()
        out[order[take]] = True
        if self.base and int(np.count_nonzero(out)) != self._rank:
            return None
        return out

    def _best_exchange(self, w: NDArray[np.float64], b: NDArray[np.bool_]) -> NDArray[np.bool_] | None:
        # B - e + f is a base iff e and f are in the same group (f's group is full in B)
        G = self.capacities.size
        max_out = np.full(G, -np.inf)
        min_in = np.full(G, np.inf)
        np.maximum.at(max_out, self.groups[~b], w[~b])
        np.minimum.at(min_in, self.groups[b], w[b])
        gain = max_out - min_in
        gain[~(np.isfinite(max_out) & np.isfinite(min_in))] = -np.inf
        if not np.any(np.isfinite(gain)):
            return None
        gbest = int(np.argmax(gain))
        in_g = self.groups == gbest
        f = np.flatnonzero(in_g & ~b & (w == max_out[gbest]))[0]
        e = np.flatnonzero(in_g & b & (w == min_in[gbest]))[-1]
        out = b.copy()
        out[e] = False
        out[f] = True
        return out

    @property
    def size(self) -> int:
        if self.base:
            return math.prod(math.comb(int(s), int(q)) for s, q in zip(self._gsize, self._quota))
        return math.prod(
            sum(math.comb(int(s), j) for j in range(int(q) + 1)) for s, q in zip(self._gsize, self._quota)
        )

    def params(self) -> dict[str, Any]:
        return {"groups": self.groups.tolist(), "capacities": self.capacities.tolist(), "base": self.base}


@register_decision_class("uniform-matroid")
class UniformMatroid(PartitionMatroid):
    """Uniform matroid U(r, n): every subset of at most ``r`` elements is independent.

    ``base=True`` gives the subsets of exactly ``r`` elements (as :class:`TopK`).

    Parameters
    ----------
    n : int
        Size of the ground set.
    r : int
        Rank, ``0 <= r <= n``.
    base : bool, default=False
        False: subsets of size <= r; True: subsets of size exactly r.
    """

    def __init__(self, n: int, r: int, *, base: bool = False) -> None:
        n = check_int(n, "n", owner="UniformMatroid", low=1)
        self.r = check_int(r, "r", owner="UniformMatroid", low=0, high=n)
        self._setup(np.zeros(n, dtype=np.intp), np.array([self.r]), base, "UniformMatroid")

    def params(self) -> dict[str, Any]:
        return {"n": self.n, "r": self.r, "base": self.base}


# ---------------------------------------------------------------------- graphic
class _UnionFind:
    __slots__ = ("parent",)

    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, a: int) -> int:
        p = self.parent
        while p[a] != a:
            p[a] = p[p[a]]
            a = p[a]
        return a

    def union(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[ra] = rb
        return True


@register_decision_class("graphic-matroid")
class GraphicMatroid(_MatroidBase):
    """Graphic matroid of an undirected graph: the elements are its edges, the independent
    sets its forests.

    Parameters
    ----------
    graph : networkx.Graph or networkx.MultiGraph
        Undirected graph with at least one edge. Element ``i`` is ``self.edges[i]``, the
        edges in ``graph.edges`` order (with keys for multigraphs). A self-loop is never
        in a forest.
    base : bool, default=False
        False: forests; True: spanning forests (spanning trees of a connected graph).

    Notes
    -----
    Greedy is Kruskal's algorithm with a union-find structure. The best other base is
    ``B - e + f`` where ``e`` is the lightest edge on the cycle ``f`` closes in ``B``.
    """

    def __init__(self, graph: Any, *, base: bool = False) -> None:
        self._setup_graph(graph, type(self).__name__)
        self.base = check_bool(base, "base", owner=type(self).__name__)

    def _setup_graph(self, graph: Any, owner: str) -> None:
        if not isinstance(graph, nx.Graph) or graph.is_directed():
            raise param_error("graph", owner, "an undirected networkx Graph or MultiGraph", graph)
        if graph.number_of_edges() == 0:
            raise param_error("graph", owner, "a graph with at least one edge", graph)
        self.graph = graph
        self.edges: list[tuple[Any, ...]] = (
            list(graph.edges(keys=True)) if graph.is_multigraph() else list(graph.edges())
        )
        self.nodes = list(graph.nodes())
        index = {v: i for i, v in enumerate(self.nodes)}
        self._eu = np.array([index[e[0]] for e in self.edges], dtype=np.intp)
        self._ev = np.array([index[e[1]] for e in self.edges], dtype=np.intp)
        self.n = len(self.edges)
        self._rank = len(self.nodes) - nx.number_connected_components(graph)

    def _independent(self, mask: NDArray[np.bool_]) -> bool:
        uf = _UnionFind(len(self.nodes))
        for u, v in zip(self._eu[mask].tolist(), self._ev[mask].tolist()):
            if not uf.union(u, v):
                return False
        return True

    def _greedy(
        self, w: NDArray[np.float64], inc: NDArray[np.bool_], allowed: NDArray[np.bool_]
    ) -> NDArray[np.bool_] | None:
        uf = _UnionFind(len(self.nodes))
        eu, ev = self._eu.tolist(), self._ev.tolist()
        for e in np.flatnonzero(inc).tolist():
            if not uf.union(eu[e], ev[e]):
                return None
        cand = np.flatnonzero(allowed & ~inc)
        if not self.base:
            cand = cand[w[cand] > 0]
        order = cand[np.argsort(-w[cand], kind="stable")].tolist()
        out = inc.copy()
        size = int(np.count_nonzero(inc))
        for e in order:
            if size >= self._rank:
                break
            if uf.union(eu[e], ev[e]):
                out[e] = True
                size += 1
        if self.base and size != self._rank:
            return None
        return out

    def _best_exchange(self, w: NDArray[np.float64], b: NDArray[np.bool_]) -> NDArray[np.bool_] | None:
        # root the forest b; for each non-forest edge f = (u, v) find the lightest edge on
        # the forest path u - v (the fundamental cycle of f).
        V = len(self.nodes)
        adj: list[list[tuple[int, int]]] = [[] for _ in range(V)]
        for e in np.flatnonzero(b).tolist():
            u, v = int(self._eu[e]), int(self._ev[e])
            adj[u].append((v, e))
            adj[v].append((u, e))
        parent = [-1] * V
        pedge = [-1] * V
        depth = [-1] * V
        for r in range(V):
            if depth[r] >= 0:
                continue
            depth[r] = 0
            stack = [r]
            while stack:
                x = stack.pop()
                for y, e in adj[x]:
                    if depth[y] < 0:
                        depth[y], parent[y], pedge[y] = depth[x] + 1, x, e
                        stack.append(y)
        best_gain, best_pair = -np.inf, None
        for f in np.flatnonzero(~b).tolist():
            u, v = int(self._eu[f]), int(self._ev[f])
            if u == v:
                continue  # a self-loop is in no base
            e_min, w_min = -1, np.inf
            while u != v:
                if depth[u] < depth[v]:
                    u, v = v, u
                e = pedge[u]
                if w[e] < w_min or (w[e] == w_min and e > e_min):
                    e_min, w_min = e, float(w[e])
                u = parent[u]
            if e_min < 0:  # pragma: no cover - u, v are in one component of a spanning forest
                continue
            gain = float(w[f]) - w_min
            if gain > best_gain:
                best_gain, best_pair = gain, (e_min, f)
        if best_pair is None:
            return None
        out = b.copy()
        out[best_pair[0]] = False
        out[best_pair[1]] = True
        return out

    def params(self) -> dict[str, Any]:
        return {"graph": nx.node_link_data(self.graph, edges="edges"), "base": self.base}

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(graph with {len(self.nodes)} nodes and {self.n} edges, "
            f"base={self.base})"
        )


@register_decision_class("spanning-trees")
class SpanningTrees(GraphicMatroid):
    """Spanning trees of a connected undirected graph (bases of its graphic matroid).

    Parameters
    ----------
    graph : networkx.Graph or networkx.MultiGraph
        Connected undirected graph with at least one edge; element ``i`` is
        ``self.edges[i]``.

    Raises
    ------
    InvalidParameterError
        If the graph is directed, has no edge or is not connected.

    Examples
    --------
    >>> import networkx as nx, numpy as np
    >>> from combex.oracles import SpanningTrees
    >>> st = SpanningTrees(nx.cycle_graph(4))
    >>> st.edges
    [(0, 1), (0, 3), (1, 2), (2, 3)]
    >>> st.argmax(np.array([1.0, 2.0, -1.0, 3.0])).nonzero()[0]
    array([0, 1, 3])
    >>> st.size
    4
    """

    def __init__(self, graph: Any) -> None:
        self._setup_graph(graph, "SpanningTrees")
        if not nx.is_connected(graph):
            raise param_error(
                "graph", "SpanningTrees",
                f"a connected graph (it has {nx.number_connected_components(graph)} components)", graph,
            )
        self.base = True

    @property
    def size(self) -> int | None:
        """Number of spanning trees (Kirchhoff's matrix-tree theorem, exact integer
        Bareiss determinant, O(V^3); None for graphs with more than 120 nodes)."""
        V = len(self.nodes)
        if V > 120:
            return None
        lap = [[0] * V for _ in range(V)]
        for u, v in zip(self._eu.tolist(), self._ev.tolist()):
            if u != v:
                lap[u][u] += 1
                lap[v][v] += 1
                lap[u][v] -= 1
                lap[v][u] -= 1
        return _bareiss_det([row[1:] for row in lap[1:]])

    def params(self) -> dict[str, Any]:
        return {"graph": nx.node_link_data(self.graph, edges="edges")}

    def __repr__(self) -> str:
        return f"SpanningTrees(graph with {len(self.nodes)} nodes and {self.n} edges)"


def _bareiss_det(a: list[list[int]]) -> int:
    """Exact determinant of an integer matrix (fraction-free Bareiss elimination)."""
    m = len(a)
    if m == 0:
        return 1
    a = [row[:] for row in a]
    sign, prev = 1, 1
    for k in range(m - 1):
        if a[k][k] == 0:
            for i in range(k + 1, m):
                if a[i][k] != 0:
                    a[k], a[i] = a[i], a[k]
                    sign = -sign
                    break
            else:
                return 0
        for i in range(k + 1, m):
            for j in range(k + 1, m):
                a[i][j] = (a[i][j] * a[k][k] - a[i][k] * a[k][j]) // prev
        prev = a[k][k]
    return sign * a[m - 1][m - 1]


# ---------------------------------------------------------------------- linear
@register_decision_class("linear-matroid")
class LinearMatroid(_MatroidBase):
    """Linear (vector) matroid: the elements are the columns of a matrix, a set is
    independent when its columns are linearly independent.

    Parameters
    ----------
    matrix : array-like of shape (d, n)
        Real matrix; element ``i`` is column ``i``.
    base : bool, default=False
        False: independent column sets; True: column bases of the column space.
    tol : float, optional
        Singular-value threshold of the numerical rank. Default
        ``max(d, n) * eps * sigma_max(matrix)`` (numpy's rule, fixed once from the
        full matrix so every subset is judged by the same threshold).

    Notes
    -----
    Independence of a subset S is ``matrix_rank(matrix[:, S], tol) == |S|``; greedy
    makes at most n such tests.
    """

    def __init__(self, matrix: Any, *, base: bool = False, tol: float | None = None) -> None:
        a = check_matrix(matrix, "matrix", owner="LinearMatroid")
        if a.shape[1] == 0 or a.shape[0] == 0:
            raise param_error("matrix", "LinearMatroid", "a matrix with at least one row and one column", a)
        self.matrix = a
        self.n = int(a.shape[1])
        self.base = check_bool(base, "base", owner="LinearMatroid")
        if tol is None:
            smax = float(np.linalg.norm(a, 2))
            self.tol = max(a.shape) * np.finfo(np.float64).eps * smax
        else:
            self.tol = check_float(tol, "tol", owner="LinearMatroid", low=0.0)
        self._rank = int(np.count_nonzero(np.linalg.svd(a, compute_uv=False) > self.tol))

    def _independent(self, mask: NDArray[np.bool_]) -> bool:
        k = int(np.count_nonzero(mask))
        if k == 0:
            return True
        if k > self.matrix.shape[0]:
            return False
        s = np.linalg.svd(self.matrix[:, mask], compute_uv=False)
        return bool(np.count_nonzero(s > self.tol) == k)

    def params(self) -> dict[str, Any]:
        return {"matrix": self.matrix.tolist(), "base": self.base, "tol": self.tol}
