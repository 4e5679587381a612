"""Explicit families: the members are listed one by one; the oracle is brute force."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, check_mask, check_weights, param_error
from ..exceptions import InvalidParameterError
from ._base import DecisionClass, _index_set
from ._registry import register_decision_class

__all__ = ["ExplicitFamily"]

# width is computed exactly (max pairwise symmetric difference) up to this many pairs x n
_WIDTH_WORK_LIMIT = 50_000_000


@register_decision_class("explicit")
class ExplicitFamily(DecisionClass):
    """A decision class given by the list of its members.

    Parameters
    ----------
    sets : sequence
        The members. Each is either a bool numpy array of shape (n,) (an indicator) or a
        collection of element indices. A 2-d bool array is read as a stack of indicators.
        (Lists of 0/1 ints are read as *indices*; pass ``np.array(..., dtype=bool)`` for
        indicators.)
    n : int, optional
        Size of the ground set; by default the indicator length, or one more than the
        largest index.

    Raises
    ------
    InvalidParameterError
        If the family is empty, an index is out of range or repeated inside a member,
        indicators have different lengths, or two members are equal.

    Notes
    -----
    The members are stacked into a matrix M of shape (m, n) and :meth:`argmax` computes
    ``M @ weights`` (O(mn)); ties go to the member listed first.

    Examples
    --------
    >>> import numpy as np
    >>> from combex.oracles import ExplicitFamily
    >>> fam = ExplicitFamily([[0, 1], [1, 2], [3]])
    >>> fam.argmax(np.array([0.5, 0.2, 0.4, 0.65])).nonzero()[0]
    array([0, 1])
    """

    def __init__(self, sets: Any, n: int | None = None) -> None:
        owner = "ExplicitFamily"
        if n is not None:
            n = check_int(n, "n", owner=owner, low=1)
        if isinstance(sets, np.ndarray) and sets.dtype == np.bool_ and sets.ndim == 2:
            items: list[Any] = list(sets)
        else:
            try:
                items = list(sets)
            except TypeError:
                raise param_error("sets", owner, "a non-empty sequence of index collections or bool masks", sets) from None
        if not items:
            raise param_error("sets", owner, "a non-empty sequence of index collections or bool masks", sets)
        masks: list[NDArray[np.bool_] | None] = []
        indices: list[NDArray[np.intp] | None] = []
        n_mask: int | None = None
        max_index = -1
        for j, item in enumerate(items):
            if isinstance(item, np.ndarray) and item.dtype == np.bool_:
                if item.ndim != 1 or (n_mask is not None and item.size != n_mask):
                    raise InvalidParameterError(
                        f"The 'sets' parameter of ExplicitFamily must hold indicators of one length. "
                        f"Got member {j} of shape {item.shape} instead."
                    )
                n_mask = item.size
                masks.append(item)
                indices.append(None)
                continue
            if isinstance(item, (set, frozenset)):
                item = sorted(item)
            arr = np.asarray(item)
            if arr.ndim != 1 and arr.size > 0:
                raise InvalidParameterError(
                    f"The 'sets' parameter of ExplicitFamily must hold 1-d index collections. "
                    f"Got member {j} of shape {arr.shape} instead."
                )
            arr = arr.reshape(-1)
            if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0):
                raise InvalidParameterError(
                    f"The 'sets' parameter of ExplicitFamily must hold non-negative int indices. "
                    f"Got member {j} = {item!r} instead."
                )
            if np.unique(arr).size != arr.size:
                raise InvalidParameterError(
                    f"The 'sets' parameter of ExplicitFamily must not repeat an index inside a "
                    f"member. Got member {j} = {item!r} instead."
                )
            if arr.size:
                max_index = max(max_index, int(arr.max()))
            masks.append(None)
            indices.append(arr.astype(np.intp))
        if n is None:
            n = n_mask if n_mask is not None else max_index + 1
            if n < 1:
                raise param_error("sets", owner, "members over a ground set of size >= 1", sets)
        if n_mask is not None and n_mask != n:
            raise InvalidParameterError(
                f"The 'sets' parameter of ExplicitFamily must hold indicators of length n={n}. "
                f"Got length {n_mask} instead."
            )
        if max_index >= n:
            raise InvalidParameterError(
                f"The 'sets' parameter of ExplicitFamily must hold indices in the range "
                f"[0, {n - 1}]. Got index {max_index} instead."
            )
        M = np.zeros((len(items), n), dtype=bool)
        for j, (mk, ix) in enumerate(zip(masks, indices)):
            if mk is not None:
                M[j] = mk
            else:
                M[j, ix] = True
        seen: dict[bytes, int] = {}
        for j, row in enumerate(M):
            key = np.packbits(row).tobytes()
            if key in seen:
                raise InvalidParameterError(
                    f"The 'sets' parameter of ExplicitFamily must not list a member twice. "
                    f"Members {seen[key]} and {j} are equal ({np.flatnonzero(row).tolist()})."
                )
            seen[key] = j
        self.n = int(n)
        self._M = M
        self._Mf = M.astype(np.float64)
        self._index = seen

    @property
    def members(self) -> NDArray[np.bool_]:
        """Copy of the members as a bool array of shape (m, n), in the order given."""
        return self._M.copy()

    def argmax(self, weights: NDArray[np.float64]) -> NDArray[np.bool_]:
        w = check_weights(weights, self.n, owner="ExplicitFamily")
        return self._M[int(np.argmax(self._Mf @ w))].copy()

    def argmax_excluding(
        self, weights: NDArray[np.float64], excluded: NDArray[np.bool_]
    ) -> NDArray[np.bool_] | None:
        w = check_weights(weights, self.n, owner="ExplicitFamily")
        m = check_mask(excluded, self.n, "excluded", owner="ExplicitFamily")
        vals = self._Mf @ w
        j = self._index.get(np.packbits(m).tobytes())
        if j is not None:
            if vals.size == 1:
                return None
            vals[j] = -np.inf
        return self._M[int(np.argmax(vals))].copy()

    def argmax_constrained(
        self,
        weights: NDArray[np.float64],
        *,
        include: Any = (),
        exclude: Any = (),
    ) -> NDArray[np.bool_] | None:
        w = check_weights(weights, self.n, owner="ExplicitFamily")
        inc = _index_set(include, self.n, "include", "ExplicitFamily")
        exc = _index_set(exclude, self.n, "exclude", "ExplicitFamily")
        ok = np.all(self._M[:, inc], axis=1) & ~np.any(self._M[:, exc], axis=1)
        if not np.any(ok):
            return None
        vals = np.where(ok, self._Mf @ w, -np.inf)
        j = int(np.argmax(vals))
        return self._M[j].copy()

    def contains(self, mask: Any) -> bool:
        m = check_mask(mask, self.n, owner="ExplicitFamily")
        return np.packbits(m).tobytes() in self._index

    def enumerate(self) -> Iterator[NDArray[np.bool_]]:
        for row in self._M:
            yield row.copy()

    @property
    def size(self) -> int:
        return int(self._M.shape[0])

    @property
    def width(self) -> int:
        """Largest symmetric difference of two members (an upper bound on the width of
        Chen et al. (2014): the exchange class of all pairwise differences is valid); n
        when the family is too large to compute it."""
        m = self._M.shape[0]
        if m < 2:
            return 1
        if m * m * self.n > _WIDTH_WORK_LIMIT:
            return self.n
        sizes = self._Mf.sum(axis=1)
        # |A xor B| = |A| + |B| - 2 |A and B|
        d = sizes[:, None] + sizes[None, :] - 2.0 * (self._Mf @ self._Mf.T)
        return max(1, int(round(float(d.max()))))

    def params(self) -> dict[str, Any]:
        return {"sets": [np.flatnonzero(r).tolist() for r in self._M], "n": self.n}

    def __repr__(self) -> str:
        return f"ExplicitFamily({self._M.shape[0]} members, n={self.n})"
