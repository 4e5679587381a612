"""Graph decision classes whose elements are edges: s-t paths in a DAG and matchings.

(Spanning trees are bases of the graphic matroid: see :class:`combex.oracles.SpanningTrees`.)
"""

from __future__ import annotations

from typing import Any, Iterator

import networkx as nx
import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, check_mask, check_weights, param_error
from ..exceptions import InfeasibleError
from ._base import DecisionClass
from ._registry import register_decision_class

__all__ = ["STPaths", "Matchings"]


# ---------------------------------------------------------------------- s-t paths
@register_decision_class("st-paths")
class STPaths(DecisionClass):
    """Directed paths from ``source`` to ``target`` in a directed acyclic graph.

    Parameters
    ----------
    dag : networkx.DiGraph
        Directed acyclic graph with at least one edge. Element ``i`` is
        ``self.edges[i]``, the edges in ``dag.edges`` order.
    source, target : hashable
        Distinct nodes of ``dag``.

    Raises
    ------
    InvalidParameterError
        If ``dag`` is not a DiGraph, has a directed cycle or no edge, or the end points
        are not distinct nodes.
    InfeasibleError
        If ``target`` cannot be reached from ``source`` (the class would be empty).

    Notes
    -----
    :meth:`argmax` is the longest (maximum-weight) path by dynamic programming over a
    topological order, O(V + E); ties go to the first in-edge in ``dag.edges`` order.
    Constrained maximization is exact: the included edges, sorted topologically, cut the
    path into segments, each a longest path avoiding the excluded edges.
    The width is at most the number of nodes on s-t paths (Chen et al., 2014: two paths
    differ by detours, each a cycle of the underlying graph).

    Examples
    --------
    >>> import networkx as nx, numpy as np
    >>> from combex.oracles import STPaths
    >>> g = nx.DiGraph([("s", "a"), ("a", "t"), ("s", "t")])
    >>> p = STPaths(g, "s", "t")
    >>> p.edges
    [('s', 'a'), ('s', 't'), ('a', 't')]
    >>> [p.edges[i] for i in np.flatnonzero(p.argmax(np.array([1.0, 1.5, 1.0])))]
    [('s', 'a'), ('a', 't')]
    """

    def __init__(self, dag: Any, source: Any, target: Any) -> None:
        owner = "STPaths"
        if not isinstance(dag, nx.DiGraph) or dag.is_multigraph():
            raise param_error("dag", owner, "a networkx DiGraph", dag)
        if dag.number_of_edges() == 0:
            raise param_error("dag", owner, "a graph with at least one edge", dag)
        if not nx.is_directed_acyclic_graph(dag):
            cycle = nx.find_cycle(dag)
            raise param_error("dag", owner, f"a directed acyclic graph (found the cycle {cycle})", dag)
        if source not in dag:
            raise param_error("source", owner, "a node of dag", source)
        if target not in dag:
            raise param_error("target", owner, "a node of dag", target)
        if source == target:
            raise param_error("target", owner, "a node different from source", target)
        self.dag = dag
        self.source = source
        self.target = target
        self.edges: list[tuple[Any, Any]] = list(dag.edges())
        self.n = len(self.edges)
        order = list(nx.topological_sort(dag))
        self._nodes = order
        pos = {v: i for i, v in enumerate(order)}
        self._pos = pos
        self._eu = np.array([pos[u] for u, _ in self.edges], dtype=np.intp)
        self._ev = np.array([pos[v] for _, v in self.edges], dtype=np.intp)
        V = len(order)
        # in-edges of each node (by topological position), in dag.edges order
        by_head: list[list[int]] = [[] for _ in range(V)]
        for i, v in enumerate(self._ev.tolist()):
            by_head[v].append(i)
        self._in_edges = [np.array(lst, dtype=np.intp) for lst in by_head]
        self._in_tails = [self._eu[lst] for lst in self._in_edges]
        s, t = pos[source], pos[target]
        self._s, self._t = s, t
        desc = nx.descendants(dag, source) | {source}
        anc = nx.ancestors(dag, target) | {target}
        if target not in desc:
            raise InfeasibleError(f"STPaths: the target {target!r} is not reachable from the source {source!r}.")
        self._useful = desc & anc

    # ------------------------------------------------------------ dynamic programming
    def _longest(
        self, w: NDArray[np.float64], allowed: NDArray[np.bool_], a: int, b: int
    ) -> NDArray[np.bool_] | None:
        """Maximum-weight path from position ``a`` to position ``b`` using allowed edges."""
        out = np.zeros(self.n, dtype=bool)
        if a == b:
            return out
        if a > b:
            return None
        val = np.full(b - a + 1, -np.inf)
        back = np.full(b - a + 1, -1, dtype=np.intp)
        val[0] = 0.0
        wa = np.where(allowed, w, -np.inf)
        for v in range(a + 1, b + 1):
            tails = self._in_tails[v]
            if tails.size == 0:
                continue
            sel = (tails >= a) & (tails < v)
            if not np.any(sel):
                continue
            es = self._in_edges[v][sel]
            cand = val[tails[sel] - a] + wa[es]
            j = int(np.argmax(cand))
            if cand[j] > -np.inf:
                val[v - a] = cand[j]
                back[v - a] = es[j]
        if back[b - a] < 0:
            return None
        v = b
        while v != a:
            e = int(back[v - a])
            out[e] = True
            v = int(self._eu[e])
        return out

    def argmax(self, weights: NDArray[np.float64]) -> NDArray[np.bool_]:
        w = check_weights(weights, self.n, owner="STPaths")
        out = self._longest(w, np.ones(self.n, dtype=bool), self._s, self._t)
        if out is None:  # pragma: no cover - reachability is checked at construction
            raise self._empty()
        return out

    def argmax_constrained(
        self,
        weights: NDArray[np.float64],
        *,
        include: Any = (),
        exclude: Any = (),
    ) -> NDArray[np.bool_] | None:
        w, inc, exc, conflict = self._constrained_args(weights, include, exclude)
        if conflict:
            return None
        allowed = np.ones(self.n, dtype=bool)
        allowed[exc] = False
        inc = inc[np.argsort(self._eu[inc], kind="stable")]
        out = np.zeros(self.n, dtype=bool)
        cur = self._s
        for e in inc.tolist():
            seg = self._longest(w, allowed, cur, int(self._eu[e]))
            if seg is None:
                return None
            out |= seg
            out[e] = True
            cur = int(self._ev[e])
        seg = self._longest(w, allowed, cur, self._t)
        if seg is None:
            return None
        return out | seg

    def contains(self, mask: Any) -> bool:
        """In a DAG an edge set is an s-t path iff every node has in- and out-degree at
        most 1 and the degrees balance except at s (one more out) and t (one more in)."""
        m = check_mask(mask, self.n, owner="STPaths")
        V = len(self._nodes)
        out_deg = np.bincount(self._eu[m], minlength=V)
        in_deg = np.bincount(self._ev[m], minlength=V)
        if out_deg.max(initial=0) > 1 or in_deg.max(initial=0) > 1:
            return False
        bal = out_deg - in_deg
        want = np.zeros(V, dtype=bal.dtype)
        want[self._s] = 1
        want[self._t] = -1
        return bool(np.array_equal(bal, want))

    def enumerate(self) -> Iterator[NDArray[np.bool_]]:
        """All s-t paths by depth-first search (each as an edge mask)."""
        out_edges: dict[int, list[int]] = {}
        for i, (u, v) in enumerate(zip(self._eu.tolist(), self._ev.tolist())):
            out_edges.setdefault(u, []).append(i)
        useful = {self._pos[v] for v in self._useful}
        def dfs(v: int, path: list[int]) -> Iterator[NDArray[np.bool_]]:
            if v == self._t:
                m = np.zeros(self.n, dtype=bool)
                m[path] = True
                yield m
                return
            for e in out_edges.get(v, []):
                h = int(self._ev[e])
                if h in useful:
                    path.append(e)
                    yield from dfs(h, path)
                    path.pop()

        yield from dfs(self._s, [])

    @property
    def size(self) -> int:
        """Number of s-t paths (exact count by dynamic programming)."""
        count = [0] * len(self._nodes)
        count[self._s] = 1
        for v in range(self._s + 1, self._t + 1):
            count[v] = sum(count[u] for u in self._in_tails[v].tolist())
        return count[self._t]

    @property
    def width(self) -> int:
        """At most the number of nodes lying on some s-t path (Chen et al., 2014), and at
        most the number of edges."""
        return min(len(self._useful), self.n)

    def params(self) -> dict[str, Any]:
        return {"dag": nx.node_link_data(self.dag, edges="edges"), "source": self.source, "target": self.target}

    def __repr__(self) -> str:
        return (
            f"STPaths(DAG with {len(self._nodes)} nodes and {self.n} edges, "
            f"source={self.source!r}, target={self.target!r})"
        )


# ---------------------------------------------------------------------- matchings
@register_decision_class("matchings")
class Matchings(DecisionClass):
    """Matchings of an undirected graph (sets of edges without a common end point).

    Parameters
    ----------
    graph : networkx.Graph
        Simple undirected graph (no self-loop) with at least one edge. Element ``i`` is
        ``self.edges[i]``, the edges in ``graph.edges`` order.
    cardinality : int, optional
        None: every matching (the empty one included). An int c: the matchings with
        exactly c edges, ``1 <= c <= nu(G)`` (the maximum matching size).

    Notes
    -----
    Exact oracle by Edmonds' blossom algorithm (:func:`networkx.max_weight_matching`):

    - ``cardinality=None``: maximum-weight matching on the positive-weight edges.
    - ``cardinality=c``: first a maximum-weight maximum-cardinality matching (with
      shifted weights, below); if it has c edges it is the answer (the common case of
      perfect or maximum matchings), if fewer there is no c-matching. Otherwise,
      reduction to maximum-weight perfect matching. On the f free
      nodes add ``f - 2c`` dummy nodes joined to every real node; the perfect matchings
      of that graph are exactly the c-matchings of G (the dummies cover the unmatched real
      nodes). All weights are shifted by the same constant ``C = 2 max|w|`` (1 if all
      weights are 0; every perfect matching has the same number of edges, so the order is
      unchanged, and the shifted weights are positive; C scales with w, so a positive
      scaling of the weights gives the same answer), and ``maxcardinality=True`` returns a
      maximum-weight perfect matching whenever one exists.

    The reduction adds up to V dummy nodes with V edges each, so a general c costs a
    blossom run on O(V^2) edges (seconds for V = 100 in pure Python networkx).
    networkx computes with floats for real weights; its documentation warns that such
    weights can give a slightly suboptimal matching through rounding (differences of
    about 1e-15 relative, below every tolerance used in combex).
    Width: any two matchings differ in at most ``2 nu(G) <= |V|`` edges (``2c`` with a
    cardinality), which bounds the width (Chen et al., 2014).

    Examples
    --------
    >>> import networkx as nx, numpy as np
    >>> from combex.oracles import Matchings
    >>> mt = Matchings(nx.path_graph(4))
    >>> mt.edges
    [(0, 1), (1, 2), (2, 3)]
    >>> mt.argmax(np.array([1.0, 1.5, 1.0])).nonzero()[0]
    array([0, 2])
    >>> Matchings(nx.path_graph(4), cardinality=1).argmax(np.array([1.0, 1.5, 1.0])).nonzero()[0]
    array([1])
    """

    def __init__(self, graph: Any, *, cardinality: int | None = None) -> None:
        owner = "Matchings"
        if not isinstance(graph, nx.Graph) or graph.is_directed() or graph.is_multigraph():
            raise param_error("graph", owner, "an undirected simple networkx Graph", graph)
        if graph.number_of_edges() == 0:
            raise param_error("graph", owner, "a graph with at least one edge", graph)
        if nx.number_of_selfloops(graph) > 0:
            raise param_error("graph", owner, "a graph without self-loops", graph)
        self.graph = graph
        self.edges: list[tuple[Any, Any]] = list(graph.edges())
        self.n = len(self.edges)
        self._nodes = list(graph.nodes())
        index = {v: i for i, v in enumerate(self._nodes)}
        self._eu = np.array([index[u] for u, _ in self.edges], dtype=np.intp)
        self._ev = np.array([index[v] for _, v in self.edges], dtype=np.intp)
        self._edge_index = {}
        for i, (u, v) in enumerate(zip(self._eu.tolist(), self._ev.tolist())):
            self._edge_index[(u, v)] = i
            self._edge_index[(v, u)] = i
        self._nu = len(nx.max_weight_matching(nx.Graph(list(zip(self._eu.tolist(), self._ev.tolist()))),
                                              maxcardinality=True))
        if cardinality is not None:
            cardinality = check_int(cardinality, "cardinality", owner=owner, low=1, high=self._nu)
        self.cardinality = cardinality

    # ------------------------------------------------------------ blossom
    def _solve(
        self, w: NDArray[np.float64], allowed: NDArray[np.bool_], blocked: NDArray[np.bool_], c: int | None
    ) -> NDArray[np.bool_] | None:
        """Best matching on the allowed edges avoiding blocked nodes, with c edges
        (any number if c is None)."""
        out = np.zeros(self.n, dtype=bool)
        ok = allowed & ~blocked[self._eu] & ~blocked[self._ev]
        if c is None:
            ok &= w > 0
        elif c == 0:
            return out
        idx = np.flatnonzero(ok)
        h = nx.Graph()
        if c is None:
            h.add_weighted_edges_from(
                zip(self._eu[idx].tolist(), self._ev[idx].tolist(), w[idx].tolist())
            )
            mate = nx.max_weight_matching(h)
        else:
            free = np.flatnonzero(~blocked).tolist()
            n_dummy = len(free) - 2 * c
            if n_dummy < 0 or idx.size < c:
                return None
            shift = 2.0 * float(np.abs(w).max(initial=0.0)) or 1.0
            h.add_nodes_from(free)
            h.add_weighted_edges_from(
                zip(self._eu[idx].tolist(), self._ev[idx].tolist(), (w[idx] + shift).tolist())
            )
            # first without dummies: when c is the maximum matching size of what is left
            # (perfect or maximum matchings), a maximum-weight maximum-cardinality matching
            # is the answer
            mate = nx.max_weight_matching(h, maxcardinality=True)
            if len(mate) < c:
                return None
            if len(mate) == c:
                for u, v in mate:
                    out[self._edge_index[(u, v)]] = True
                return out
            V = len(self._nodes)
            h.add_weighted_edges_from((V + d, v, shift) for d in range(n_dummy) for v in free)
            mate = nx.max_weight_matching(h, maxcardinality=True)
            if 2 * len(mate) != h.number_of_nodes():
                return None
            mate = {(u, v) for u, v in mate if u < V and v < V}
        for u, v in mate:
            out[self._edge_index[(u, v)]] = True
        return out

    def argmax(self, weights: NDArray[np.float64]) -> NDArray[np.bool_]:
        w = check_weights(weights, self.n, owner="Matchings")
        out = self._solve(w, np.ones(self.n, dtype=bool), np.zeros(len(self._nodes), dtype=bool), self.cardinality)
        if out is None:  # pragma: no cover - cardinality <= nu is checked at construction
            raise self._empty()
        return out

    def argmax_constrained(
        self,
        weights: NDArray[np.float64],
        *,
        include: Any = (),
        exclude: Any = (),
    ) -> NDArray[np.bool_] | None:
        w, inc, exc, conflict = self._constrained_args(weights, include, exclude)
        if conflict:
            return None
        ends = np.concatenate([self._eu[inc], self._ev[inc]])
        if np.unique(ends).size != ends.size:
            return None  # the included edges share an end point
        c = None
        if self.cardinality is not None:
            c = self.cardinality - inc.size
            if c < 0:
                return None
        allowed = np.ones(self.n, dtype=bool)
        allowed[exc] = False
        allowed[inc] = False
        blocked = np.zeros(len(self._nodes), dtype=bool)
        blocked[ends] = True
        out = self._solve(w, allowed, blocked, c)
        if out is None:
            return None
        out[inc] = True
        return out

    def contains(self, mask: Any) -> bool:
        m = check_mask(mask, self.n, owner="Matchings")
        if self.cardinality is not None and int(np.count_nonzero(m)) != self.cardinality:
            return False
        deg = np.bincount(np.concatenate([self._eu[m], self._ev[m]]), minlength=len(self._nodes))
        return bool(deg.max(initial=0) <= 1)

    def enumerate(self) -> Iterator[NDArray[np.bool_]]:
        """All matchings (with exactly ``cardinality`` edges if set), by backtracking over
        edges in index order."""
        eu, ev = self._eu.tolist(), self._ev.tolist()
        used = [False] * len(self._nodes)
        chosen: list[int] = []
        c = self.cardinality

        def rec(start: int) -> Iterator[NDArray[np.bool_]]:
            if c is None or len(chosen) == c:
                m = np.zeros(self.n, dtype=bool)
                m[chosen] = True
                yield m
                if c is not None:
                    return
            for e in range(start, self.n):
                u, v = eu[e], ev[e]
                if not used[u] and not used[v]:
                    used[u] = used[v] = True
                    chosen.append(e)
                    yield from rec(e + 1)
                    chosen.pop()
                    used[u] = used[v] = False

        yield from rec(0)

    @property
    def width(self) -> int:
        return 2 * (self.cardinality if self.cardinality is not None else self._nu)

    def params(self) -> dict[str, Any]:
        return {"graph": nx.node_link_data(self.graph, edges="edges"), "cardinality": self.cardinality}

    def __repr__(self) -> str:
        return (
            f"Matchings(graph with {len(self._nodes)} nodes and {self.n} edges, "
            f"cardinality={self.cardinality!r})"
        )
