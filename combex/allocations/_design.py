"""The :class:`Design` result type and the checks and criteria shared by every design method.

A *design* (allocation strategy) is a probability vector ``p`` over a finite candidate set
``X`` (rows ``x_i`` of an array of shape ``(m, d)``); its information matrix is
``A(p) = sum_i p_i x_i x_i^T``. The criteria used in combex are

* G: ``max_i x_i^T A(p)^{-1} x_i`` (Soare et al. 2014; Appendix D of the full-bandit
  paper), whose minimum equals ``d`` (Kiefer-Wolfowitz equivalence theorem);
* XY (transductive): ``max_{y in Y} y^T A(p)^{-1} y`` for a direction set ``Y``
  (default: all differences ``x_i - x_j``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, check_matrix
from ..exceptions import AllocationError, InvalidParameterError

__all__ = [
    "Design",
    "information_matrix",
    "g_value",
    "xy_value",
    "pairwise_differences",
    "uniform_design",
    "SUPPORT_TOL",
]

#: Weights at or below this value are dropped from a computed design's support (and the
#: remaining weights renormalized). Interior-point solvers return tiny positive weights
#: (about 1e-9) off the optimal support.
SUPPORT_TOL = 1e-7


@dataclass(frozen=True, eq=False)
class Design:
    """A design (allocation strategy) over a finite candidate set.

    Attributes
    ----------
    weights : array of shape (m,)
        The design ``p``: nonnegative, sums to one. Weights at or below the support
        threshold have been set to zero and the rest renormalized, so
        ``weights[support]`` are the weights the tracking and rounding rules use.
    support : int array of shape (s,)
        Indices of the candidates with positive weight, increasing.
    value : float
        The criterion at ``weights``: ``max_x x^T A^{-1} x`` for G designs,
        ``max_y y^T A^{-1} y`` for XY designs (``nan`` when no candidate set is known).
    criterion : {"G", "XY", "uniform"}
    method : {"cvxpy", "frank-wolfe", "uniform"}
    solver : str or None
        The cvxpy solver used (``None`` for solver-free methods).
    iterations : int
        Frank-Wolfe iterations (solver iterations when reported, else 0, for cvxpy).
    kw_gap : float or None
        G designs: ``value - d`` (Kiefer-Wolfowitz check; 0 at the optimum, >= 0 always).
    gap : float or None
        A certified bound on ``value - optimum`` when the method provides one
        (Frank-Wolfe duality gap), else ``None``.
    converged : bool
        Whether the method met its tolerance.
    """

    weights: NDArray[np.float64]
    support: NDArray[np.intp]
    value: float
    criterion: str
    method: str
    solver: str | None = None
    iterations: int = 0
    kw_gap: float | None = None
    gap: float | None = None
    converged: bool = True

    def __post_init__(self) -> None:
        for name in ("weights", "support"):
            arr = np.array(getattr(self, name), copy=True)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def support_weights(self) -> NDArray[np.float64]:
        """The weights on the support (sum to one)."""
        return self.weights[self.support]

    @property
    def n_candidates(self) -> int:
        return int(self.weights.shape[0])

    def information(self, X: Any) -> NDArray[np.float64]:
        """The information matrix ``A(p) = X^T diag(p) X``."""
        return information_matrix(X, self.weights)

    def __repr__(self) -> str:
        return (
            f"Design(criterion={self.criterion!r}, method={self.method!r}, "
            f"m={self.n_candidates}, support_size={self.support.size}, value={self.value:.6g})"
        )


# ---------------------------------------------------------------------- checks
def _check_candidates(X: Any, owner: str, *, name: str = "X", full_rank: bool = True) -> NDArray[np.float64]:
    """A finite real array of shape (m, d) with m >= 1, d >= 1 and (optionally) rank d."""
    arr = check_matrix(X, name, owner=owner)
    m, d = arr.shape
    if m == 0 or d == 0:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a non-empty candidate set of shape "
            f"(m, d) with m >= 1 and d >= 1. Got an array of shape {arr.shape} instead."
        )
    if full_rank:
        rank = int(np.linalg.matrix_rank(arr))
        if rank < d:
            raise InvalidParameterError(
                f"The {name!r} parameter of {owner} must span R^{d} (rank {d}) so that an "
                f"invertible design exists. Got a candidate set of rank {rank} instead; add "
                f"candidates or project the problem onto the span of the candidates."
            )
    return arr


def _check_distribution(p: Any, owner: str, *, name: str = "p", m: int | None = None, atol: float = 1e-8) -> NDArray[np.float64]:
    """A probability vector: 1-d, finite, nonnegative, summing to one within ``atol``.

    Returns the vector divided by its sum (so the sum is one to machine precision).
    """
    if isinstance(p, Design):
        p = p.weights
    try:
        arr = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a probability vector. Got {p!r} instead."
        ) from None
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a non-empty 1-d probability vector. "
            f"Got an array of shape {arr.shape} instead."
        )
    if m is not None and arr.shape[0] != m:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must have shape ({m},). Got an array of shape "
            f"{arr.shape} instead."
        )
    if not np.all(np.isfinite(arr)):
        raise InvalidParameterError(f"The {name!r} parameter of {owner} must have finite entries.")
    if np.any(arr < 0):
        bad = int(np.flatnonzero(arr < 0)[0])
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a probability vector (nonnegative "
            f"entries). Got {arr[bad]!r} at index {bad} instead."
        )
    total = float(arr.sum())
    if abs(total - 1.0) > atol:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a probability vector summing to 1 "
            f"(within {atol:g}). Got entries summing to {total!r} instead."
        )
    return arr / total


def _finalize_weights(p: NDArray[np.float64], support_tol: float) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Zero the weights at or below ``support_tol`` (and negative round-off), renormalize."""
    q = np.where(p > support_tol, p, 0.0)
    if q.sum() <= 0:  # pragma: no cover - guarded by callers
        q = np.maximum(p, 0.0)
    q = q / q.sum()
    return q, np.flatnonzero(q > 0).astype(np.intp)


# ---------------------------------------------------------------------- criteria
def information_matrix(X: Any, weights: Any) -> NDArray[np.float64]:
    """``A(p) = sum_i p_i x_i x_i^T`` for candidates ``X`` of shape (m, d)."""
    Xa = np.asarray(X, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    return (Xa.T * w) @ Xa


def _inv_psd(A: NDArray[np.float64], owner: str) -> NDArray[np.float64]:
    try:
        c = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise AllocationError(
            f"{owner}: the information matrix of the design is singular (its support does not "
            f"span R^{A.shape[0]}); use a design whose support spans the space."
        ) from None
    ci = np.linalg.inv(c)
    return ci.T @ ci


def g_value(X: Any, weights: Any) -> float:
    """The G-criterion ``max_i x_i^T A(p)^{-1} x_i`` of the design ``weights`` on ``X``."""
    Xa = np.asarray(X, dtype=np.float64)
    Ainv = _inv_psd(information_matrix(Xa, weights), "g_value")
    return float(np.max(np.einsum("ij,jk,ik->i", Xa, Ainv, Xa)))


def xy_value(X: Any, Y: Any, weights: Any) -> float:
    """The XY-criterion ``max_{y in Y} y^T A(p)^{-1} y`` of the design ``weights`` on ``X``.

    XY-optimal designs may be singular (one direction needs at most ``d`` arms), so
    ``A^{-1}`` is the pseudo-inverse on the range of ``A``; a direction with a component
    outside the range (relative size > 1e-6) has value ``inf``.
    """
    Xa = np.asarray(X, dtype=np.float64)
    Ya = np.asarray(Y, dtype=np.float64)
    lam, U = np.linalg.eigh(information_matrix(Xa, weights))
    keep = lam > 1e-12 * max(float(lam.max()), 1e-300)
    Z = Ya @ U
    out_of_range = np.linalg.norm(Z[:, ~keep], axis=1) > 1e-6 * np.maximum(np.linalg.norm(Ya, axis=1), 1e-300)
    if np.any(out_of_range):
        return float("inf")
    return float(np.max((Z[:, keep] ** 2) @ (1.0 / lam[keep])))


def pairwise_differences(X: Any) -> NDArray[np.float64]:
    """All differences ``x_i - x_j`` for ``i < j`` (the default direction set ``Y``).

    The sign does not matter for the XY criterion, so one difference per pair suffices.
    """
    Xa = np.asarray(X, dtype=np.float64)
    i, j = np.triu_indices(Xa.shape[0], k=1)
    return Xa[i] - Xa[j]


def uniform_design(n_candidates: int, *, X: Any = None) -> Design:
    """The uniform design over ``n_candidates`` candidates.

    Parameters
    ----------
    n_candidates : int
        Number of candidates (>= 1).
    X : array of shape (n_candidates, d), optional
        When given, ``value`` is the G-criterion of the uniform design on ``X`` and
        ``kw_gap = value - d``; otherwise ``value`` is ``nan``.

    Examples
    --------
    >>> uniform_design(4).weights
    array([0.25, 0.25, 0.25, 0.25])
    """
    m = check_int(n_candidates, "n_candidates", owner="uniform_design", low=1)
    w = np.full(m, 1.0 / m)
    value, kw = float("nan"), None
    if X is not None:
        Xa = _check_candidates(X, "uniform_design")
        if Xa.shape[0] != m:
            raise InvalidParameterError(
                f"The 'X' parameter of uniform_design must have {m} rows (n_candidates). Got "
                f"an array of shape {Xa.shape} instead."
            )
        value = g_value(Xa, w)
        kw = value - Xa.shape[1]
    return Design(w, np.arange(m, dtype=np.intp), value, "uniform", "uniform", None, 0, kw, None, True)
