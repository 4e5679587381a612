"""The decision-class contract: the plug-in point of combex.

A *decision class* is a finite family of subsets (super-arms) of a ground set
``{0, ..., n-1}``, given implicitly through a linear maximization oracle. Every algorithm in
combex talks to the combinatorial structure only through this contract, so a user who can
optimize a linear function over their family can run every solver on it.

Members are represented as boolean indicator vectors of shape ``(n,)``.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Iterator

import numpy as np
from numpy.typing import NDArray

from .._validation import check_mask, check_weights, param_error
from ..exceptions import InfeasibleError, InvalidParameterError, OracleError

__all__ = ["DecisionClass", "BIG_M_SCALE"]

# Weight edit used by the generic constrained argmax: forcing an element in (out) adds
# (subtracts) a constant larger than the total absolute weight, scaled by this factor.
BIG_M_SCALE = 4.0


def _index_set(values: Any, n: int, name: str, owner: str | None = None) -> NDArray[np.intp]:
    """Validate a collection of element indices (or a bool mask of shape (n,)).

    Returns the sorted distinct indices. Raises InvalidParameterError on non-integer
    entries or indices outside [0, n-1] (negative indices are not wrapped around).
    """
    if isinstance(values, (set, frozenset)):
        values = sorted(values)
    arr = np.asarray(values)
    if arr.dtype == np.bool_:
        if arr.shape != (n,):
            raise param_error(name, owner, f"element indices or a bool mask of shape ({n},)", values)
        return np.flatnonzero(arr).astype(np.intp)
    arr = arr.reshape(-1)
    if arr.size == 0:
        return np.zeros(0, dtype=np.intp)
    if not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= n:
        raise param_error(name, owner, f"a collection of element indices in the range [0, {n - 1}]", values)
    return np.unique(arr).astype(np.intp)


class DecisionClass(ABC):
    """A finite family of subsets of ``{0, ..., n-1}`` with a linear maximization oracle.

    Subclasses implement :meth:`argmax` and may override the optional capabilities
    (:meth:`argmax_excluding`, :meth:`argmax_constrained`, :meth:`contains`,
    :meth:`enumerate`, :attr:`width`) where they know a faster or exact method.

    Attributes
    ----------
    n : int
        Size of the ground set.
    exact : bool (class attribute)
        True when :meth:`argmax` returns an exact maximizer (all built-in classes).
    name : str (class attribute)
        Registry name (e.g. ``"topk"``).

    Notes
    -----
    Tie-breaking is deterministic: for equal weights the same member is returned every
    call (no hidden randomness).
    """

    exact: ClassVar[bool] = True
    name: ClassVar[str] = ""

    n: int

    # ------------------------------------------------------------------ required
    @abstractmethod
    def argmax(self, weights: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Return a member M maximizing ``sum(weights[M])`` as a bool array of shape (n,).

        Raises
        ------
        InvalidParameterError
            If ``weights`` is not a finite real vector of length ``n``.
        InfeasibleError
            If the class is empty.
        """

    # ------------------------------------------------------------------ optional
    def argmax_constrained(
        self,
        weights: NDArray[np.float64],
        *,
        include: Any = (),
        exclude: Any = (),
    ) -> NDArray[np.bool_] | None:
        """Best member containing every element of ``include`` and none of ``exclude``.

        Returns ``None`` when no member satisfies the constraints.

        The generic method edits weights by a big-M constant: included elements get
        ``+M``, excluded ``-M`` with ``M = BIG_M_SCALE * (sum|w| + 1)``, then checks that
        the answer honours the constraints (if not, none does). This is exact for every
        class whose oracle is exact, because M exceeds any difference of objective values.
        """
        w = check_weights(weights, self.n, owner=type(self).__name__)
        inc = _index_set(include, self.n, "include", type(self).__name__)
        exc = _index_set(exclude, self.n, "exclude", type(self).__name__)
        if inc.size == 0 and exc.size == 0:
            return self.argmax(w)
        big = BIG_M_SCALE * (float(np.abs(w).sum()) + 1.0) * max(1, self.n)
        w2 = w.copy()
        w2[inc] += big
        w2[exc] -= big
        m = self.argmax(w2)
        if not (np.all(m[inc]) and not np.any(m[exc])):
            return None
        return m

    def _constrained_args(
        self, weights: Any, include: Any, exclude: Any, owner: str | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.intp], NDArray[np.intp], bool]:
        """Validated ``(weights, include, exclude)`` of :meth:`argmax_constrained`, and
        whether they conflict (an element both included and excluded: no member)."""
        owner = owner or type(self).__name__
        w = check_weights(weights, self.n, owner=owner)
        inc = _index_set(include, self.n, "include", owner)
        exc = _index_set(exclude, self.n, "exclude", owner)
        return w, inc, exc, bool(np.intersect1d(inc, exc).size)

    def argmax_excluding(
        self, weights: NDArray[np.float64], excluded: NDArray[np.bool_]
    ) -> NDArray[np.bool_] | None:
        """Best member other than ``excluded`` (``None`` if ``excluded`` is the only member).

        Generic method (used by ICB, SAQM, Exhaustive): any member M' != M differs from M
        in at least one element, so the best M' is the best of at most n constrained
        problems: for each e in M, the best member without e; for each e not in M, the best
        member with e. Subclasses override this where a closed form exists (e.g. top-k).
        """
        w = check_weights(weights, self.n, owner=type(self).__name__)
        m = check_mask(excluded, self.n, "excluded", owner=type(self).__name__)
        best: NDArray[np.bool_] | None = None
        best_val = -np.inf
        for e in range(self.n):
            cand = (
                self.argmax_constrained(w, exclude=(e,))
                if m[e]
                else self.argmax_constrained(w, include=(e,))
            )
            if cand is None:
                continue
            val = float(w[cand].sum())
            if val > best_val:
                best, best_val = cand, val
        return best

    def contains(self, mask: Any) -> bool:
        """Whether ``mask`` is a member. Generic method: membership through the oracle,
        by maximizing the weights that reward exactly the elements of ``mask``."""
        m = check_mask(mask, self.n, owner=type(self).__name__)
        w = np.where(m, 1.0, -1.0)
        best = self.argmax_constrained(w, include=np.flatnonzero(m), exclude=np.flatnonzero(~m))
        return best is not None and bool(np.array_equal(best, m))

    def enumerate(self) -> Iterator[NDArray[np.bool_]]:
        """Iterate over all members (small classes only). Generic method: filter all
        2^n subsets through :meth:`contains`; refuses n > 20."""
        if self.n > 20:
            raise InvalidParameterError(
                f"{type(self).__name__}.enumerate() is only available for n <= 20 by the "
                f"generic method. Got n={self.n} instead."
            )
        for bits in itertools.product((False, True), repeat=self.n):
            m = np.array(bits[::-1], dtype=bool)
            if self.contains(m):
                yield m

    @property
    def width(self) -> int | None:
        """width(M) of Chen et al. (2014), used by lil'CLUCB's bound; None when unknown."""
        return None

    @property
    def size(self) -> int | None:
        """Number of members when known in closed form (e.g. C(n, k)); else None."""
        return None

    # ------------------------------------------------------------------ helpers
    def _check_answer(self, mask: Any) -> NDArray[np.bool_]:
        """Validate an oracle answer (used by subclasses wrapping external solvers)."""
        m = np.asarray(mask)
        if m.shape != (self.n,):
            raise OracleError(
                f"{type(self).__name__}.argmax returned an array of shape {m.shape}; "
                f"expected ({self.n},)."
            )
        return m.astype(bool, copy=False)

    def _empty(self) -> InfeasibleError:
        return InfeasibleError(f"The decision class {self!r} has no member.")

    def params(self) -> dict[str, Any]:
        """Constructor parameters as a JSON-able dict (for results and the CLI)."""
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"
