"""Shared helpers of the MIPS searchers: argument checks and the result type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
from numpy.typing import NDArray

from .._validation import check_weights, check_int, _reject_complex, param_error
from ..exceptions import InvalidParameterError

__all__ = ["MIPSResult", "check_vectors", "check_query", "check_k", "check_finite_scores"]


@dataclass(frozen=True)
class MIPSResult:
    """The answer of a top-k search.

    Attributes
    ----------
    indices : int array of shape (k,)
        Row indices of the returned vectors, best first (by ``scores``).
    scores : float array of shape (k,)
        Their scores: exact inner products (exact, HNSW, LSH re-ranked) or the bandit's
        estimates (BoundedME), or minus squared distances for nearest-neighbour search.
    n_products : int
        Number of coordinate products (``v_ij * q_j``) computed, the cost unit of the
        BoundedME paper (``n * N`` for exact search).
    info : dict
        Method-specific details (rounds, candidates, timings...).
    epsilon, delta : float or None
        The (epsilon, delta) guarantee the answer carries, epsilon on the guarantee's own
        scale (BoundedME: a fraction of the scaled reward range [0, 1]); ``0.0, 0.0`` for
        exact search; None for methods without a guarantee (HNSW, LSH).
    preprocess_seconds : float
        Preprocessing the answer relied on (an index build, a bound computation), not
        included in the query's own time.
    """

    indices: NDArray[np.intp]
    scores: NDArray[np.float64]
    n_products: int
    info: Mapping[str, Any] = field(default_factory=dict)
    epsilon: float | None = None
    delta: float | None = None
    preprocess_seconds: float = 0.0

    @property
    def answer(self) -> NDArray[np.intp]:
        """:attr:`indices`, under the name every result family uses for what was found
        (``Result.answer`` of the PAC solvers)."""
        return self.indices

    @property
    def informative(self) -> bool | None:
        """Whether the guarantee says something: ``epsilon < 1`` on its scale (below the
        range of the scaled rewards); None when there is no guarantee."""
        return None if self.epsilon is None else bool(self.epsilon < 1.0)

    def precision(self, true_indices: Any) -> float:
        """Fraction of ``true_indices`` (the true top k) among :attr:`indices`."""
        t = np.asarray(true_indices).ravel()
        return float(np.intersect1d(self.indices, t).size) / max(t.size, 1)


def check_vectors(V: Any, owner: str, *, check_finite: bool = True, name: str = "V") -> NDArray[Any]:
    """A real 2-d array (float32 and float64 kept as is; others converted to float64).

    ``check_finite=False`` skips the full pass over the data (like scipy's
    ``check_finite``); the shape is always checked.
    """
    if isinstance(V, np.ndarray) and V.dtype in (np.float32, np.float64):
        a = V
    else:
        _reject_complex(V, name, owner)
        try:
            a = np.asarray(V, dtype=np.float64)
        except (TypeError, ValueError):
            raise param_error(name, owner, "a real 2-d array of shape (n, dim)", V) from None
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a real 2-d array of shape (n, dim) with "
            f"n >= 1 and dim >= 1. Got an array of shape {a.shape} instead."
        )
    if check_finite and not np.all(np.isfinite(a)):
        i, j = np.argwhere(~np.isfinite(a))[0]
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must have finite entries. Got {float(a[i, j])!r} at "
            f"[{i}, {j}] instead."
        )
    return a


def check_finite_scores(
    scores: NDArray[Any], V: NDArray[Any], owner: str, *, rows: NDArray[Any] | None = None,
    cols: NDArray[Any] | None = None, perm: NDArray[Any] | None = None, name: str = "V",
) -> None:
    """Refuse non-finite entries of ``V`` found through the scores they entered.

    A NaN or inf entry makes the score it enters non-finite (``inf * 0`` is NaN), so
    checking the scores checks every entry they were computed from; only the offending
    row is then scanned, to name the entry. ``scores[r]`` is row ``rows[r]`` (default:
    row ``r``) summed over the columns ``cols`` (default: all); ``perm`` maps stored
    columns to the caller's coordinates. A finite row with a non-finite score overflowed.
    """
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size == 0:
        return
    r = int(bad[0])
    i = r if rows is None else int(rows[r])
    row = np.asarray(V[i])
    cc = np.arange(row.size) if cols is None else np.asarray(cols)
    found = cc[~np.isfinite(row[cc])]
    if found.size:
        j = int(found[0]) if perm is None else int(perm[found[0]])
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must have finite entries. Got {float(row[found[0]])!r} at "
            f"[{i}, {j}] instead."
        )
    raise InvalidParameterError(
        f"The score of row {i} overflowed in {owner} ({float(scores[r])!r}): the entries of {name!r} are "
        "finite but too large for its precision; scale the data."
    )


def check_query(q: Any, dim: int, owner: str, *, dtype: Any = np.float64, name: str = "q") -> NDArray[Any]:
    """A finite real vector of length ``dim`` (the dimension of the vectors)."""
    return check_weights(q, dim, name, owner=owner, dtype=dtype)


def check_k(k: Any, n: int, owner: str) -> int:
    """``k`` in ``[1, n]`` (``n`` = number of vectors)."""
    return check_int(k, "k", owner=owner, low=1, high=n)


def top_k_of(scores: NDArray[Any], k: int) -> NDArray[np.intp]:
    """Indices of the ``k`` largest scores, best first (argpartition, then sort)."""
    if k >= scores.size:
        idx = np.arange(scores.size)
    else:
        idx = np.argpartition(-scores, k - 1)[:k]
    return idx[np.argsort(-scores[idx], kind="stable")].astype(np.intp)
