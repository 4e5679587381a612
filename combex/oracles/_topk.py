"""Top-k: all subsets of exactly k elements of ``{0, ..., n-1}`` (best-k-arm identification)."""

from __future__ import annotations

import itertools
import math
from typing import Any, Iterator

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, check_mask, check_weights
from ._base import DecisionClass
from ._registry import register_decision_class

__all__ = ["TopK", "top_mask"]


def top_mask(w: NDArray[np.float64], k: int) -> NDArray[np.bool_]:
    """Indicator of the ``k`` largest entries of ``w``, ties broken toward smaller indices.

    Runs in O(len(w)): one :func:`numpy.partition` for the k-th largest value, then every
    entry strictly above it plus the first entries equal to it.
    """
    n = w.shape[0]
    if k >= n:
        return np.ones(n, dtype=bool)
    if k <= 0:
        return np.zeros(n, dtype=bool)
    thr = np.partition(w, n - k)[n - k]
    mask = w > thr
    need = k - int(np.count_nonzero(mask))
    if need > 0:
        mask[np.flatnonzero(w == thr)[:need]] = True
    return mask


@register_decision_class("topk")
class TopK(DecisionClass):
    """All subsets of size exactly ``k`` of ``n`` arms (the best-k-arm decision class).

    Parameters
    ----------
    n : int
        Number of arms, ``n >= 1``.
    k : int
        Size of every member, ``1 <= k <= n``.

    Notes
    -----
    :meth:`argmax` is O(n) (one partition); ties are broken toward smaller indices.
    :meth:`argmax_excluding` is closed form: if ``excluded`` is not the top set, the top
    set is the answer; otherwise the best other k-set swaps the weakest member for the
    strongest non-member (any other k-set swaps at least one pair, and each swap loses at
    least that much). The width is 2 (Chen et al., 2014, Section 3.1).

    Examples
    --------
    >>> import numpy as np
    >>> from combex.oracles import TopK
    >>> TopK(5, 2).argmax(np.array([0.1, 0.9, 0.3, 0.8, 0.0])).nonzero()[0]
    array([1, 3])
    """

    def __init__(self, n: int, k: int) -> None:
        self.n = check_int(n, "n", owner="TopK", low=1)
        self.k = check_int(k, "k", owner="TopK", low=1, high=self.n)

    def argmax(self, weights: NDArray[np.float64]) -> NDArray[np.bool_]:
        w = check_weights(weights, self.n, owner="TopK")
        return top_mask(w, self.k)

    def argmax_excluding(
        self, weights: NDArray[np.float64], excluded: NDArray[np.bool_]
    ) -> NDArray[np.bool_] | None:
        w = check_weights(weights, self.n, owner="TopK")
        m = check_mask(excluded, self.n, "excluded", owner="TopK")
        best = top_mask(w, self.k)
        if not np.array_equal(best, m):
            return best
        if self.k == self.n:
            return None
        inside = np.flatnonzero(best)
        # weakest member (ties: the largest index, the last one the top set admitted)
        wi = w[inside]
        e = inside[np.flatnonzero(wi == wi.min())[-1]]
        # strongest non-member (ties: the smallest index)
        f = int(np.argmax(np.where(best, -np.inf, w)))
        out = best.copy()
        out[e] = False
        out[f] = True
        return out

    def argmax_constrained(
        self,
        weights: NDArray[np.float64],
        *,
        include: Any = (),
        exclude: Any = (),
    ) -> NDArray[np.bool_] | None:
        w, inc, exc, conflict = self._constrained_args(weights, include, exclude)
        if conflict or inc.size > self.k:
            return None
        free = np.ones(self.n, dtype=bool)
        free[inc] = False
        free[exc] = False
        idx = np.flatnonzero(free)
        need = self.k - inc.size
        if idx.size < need:
            return None
        out = np.zeros(self.n, dtype=bool)
        out[inc] = True
        out[idx[top_mask(w[idx], need)]] = True
        return out

    def contains(self, mask: Any) -> bool:
        m = check_mask(mask, self.n, owner="TopK")
        return int(np.count_nonzero(m)) == self.k

    def enumerate(self) -> Iterator[NDArray[np.bool_]]:
        for c in itertools.combinations(range(self.n), self.k):
            m = np.zeros(self.n, dtype=bool)
            m[list(c)] = True
            yield m

    @property
    def width(self) -> int:
        return 2

    @property
    def size(self) -> int:
        return math.comb(self.n, self.k)

    def params(self) -> dict[str, Any]:
        return {"n": self.n, "k": self.k}
