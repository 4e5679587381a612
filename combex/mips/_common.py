"""Shared helpers of the MIPS searchers: argument checks and the result type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
from numpy.typing import NDArray

from .._validation import check_weights, check_int, param_error
from ..exceptions import InvalidParameterError

__all__ = ["MIPSResult", "check_vectors", "check_query", "check_k"]


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
    """

    indices: NDArray[np.intp]
    scores: NDArray[np.float64]
    n_products: int
    info: Mapping[str, Any] = field(default_factory=dict)

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
            f"The {name!r} parameter of {owner} must have finite entries. Got {a[i, j]!r} at "
            f"[{i}, {j}] instead."
        )
    return a


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
