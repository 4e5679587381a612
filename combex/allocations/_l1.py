"""The L1 design of LinGapE (Xu, Honda and Sugiyama 2018, Section 5.1 and Appendix B)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog

from .._validation import check_matrix
from ..exceptions import AllocationError, InvalidParameterError
from ._design import _check_candidates

__all__ = ["L1Design", "l1_design"]


@dataclass(frozen=True, eq=False)
class L1Design:
    """Solution of LinGapE's linear program (11) for one direction ``y``.

    Attributes
    ----------
    w : array of shape (m,)
        ``w* = argmin sum_i |w_i|`` s.t. ``y = sum_i w_i x_i`` (eq. (11)).
    p : array of shape (m,)
        ``p*_i = |w*_i| / sum_j |w*_j|`` (eq. (10)): the ratio tracked by rule (12).
    rho : float
        ``rho(y) = sum_i |w*_i|`` as printed in eq. (15).
    support : int array
        Indices with ``p*_i > 0``.

    Notes
    -----
    The paper is inconsistent about ``rho``: eq. (15) prints ``sum_i |w*_i|``, while the
    canonical-basis example after Theorem 2 (``rho(y(i, j)) = 4`` for ``y = e_i - e_j``)
    and Appendix B (``rho(y) = sum_i w*_i^2 / p*_i``, the optimal value of (21), used in
    Lemma 1 as ``||y||^2_{A_t^{-1}} <= rho(y) / T_{i,j}(t)``) give its square. ``rho``
    here follows eq. (15) (as the combex brief asks); use :attr:`variance_bound`
    ``= rho**2 = sum_i w*_i^2 / p*_i`` in Lemma 1 and in ``H_epsilon`` (13).
    """

    w: NDArray[np.float64]
    p: NDArray[np.float64]
    rho: float
    support: NDArray[np.intp]

    def __post_init__(self) -> None:
        for name in ("w", "p", "support"):
            arr = np.array(getattr(self, name), copy=True)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def variance_bound(self) -> float:
        """``rho(y)^2 = sum_i w*_i^2 / p*_i``: ``y^T A^{-1} y <= variance_bound / T`` when
        the counts are ``T p*`` (Lemma 1 of LinGapE)."""
        return float(self.rho) ** 2


def l1_design(X: Any, y: Any, *, zero_tol: float = 1e-12) -> L1Design:
    """LinGapE's ratio design for direction ``y`` (eqs. (10), (11), (15)).

    Solves ``min sum_i |w_i|`` s.t. ``sum_i w_i x_i = y`` as the linear program
    ``min 1^T (u + v)``, ``X^T (u - v) = y``, ``u, v >= 0`` with HiGHS
    (:func:`scipy.optimize.linprog`), then ``p* = |w*| / sum |w*|``, ``rho = sum |w*|``.

    Parameters
    ----------
    X : array of shape (m, d)
        Arm features (rows). Need not span R^d, but ``y`` must lie in their span.
    y : array of shape (d,)
        The direction (e.g. ``x_i - x_j``); nonzero.
    zero_tol : float
        ``|w_i|`` at or below ``zero_tol * max|w|`` are set to zero (LP round-off).

    Raises
    ------
    InvalidParameterError
        Bad shapes or values, ``y = 0``.
    AllocationError
        ``y`` is not in the span of the rows of ``X`` (LP infeasible) or HiGHS failed.

    Examples
    --------
    >>> r = l1_design(np.eye(3), [1.0, -1.0, 0.0])
    >>> r.p.tolist(), r.rho, r.variance_bound
    ([0.5, 0.5, 0.0], 2.0, 4.0)
    """
    owner = "l1_design"
    Xa = _check_candidates(X, owner, full_rank=False)
    m, d = Xa.shape
    ya = check_matrix(np.atleast_2d(np.asarray(y, dtype=np.float64)) if np.ndim(y) == 1 else y, "y", owner=owner, shape=(1, d))[0]
    if not np.any(ya != 0):
        raise InvalidParameterError(f"The 'y' parameter of {owner} must be a nonzero direction. Got the zero vector instead.")
    c = np.ones(2 * m)
    A_eq = np.hstack([Xa.T, -Xa.T])
    res = linprog(c, A_eq=A_eq, b_eq=ya, bounds=[(0, None)] * (2 * m), method="highs")
    if res.status == 2:
        raise AllocationError(
            f"{owner}: y is not in the span of the rows of X (the HiGHS linear program is "
            f"infeasible, status 2); add arms spanning y or project y onto span(X)."
        )
    if res.status != 0:
        raise AllocationError(
            f"{owner}: the HiGHS linear program failed with status {res.status} ({res.message}); "
            f"rescale X and y."
        )
    w = res.x[:m] - res.x[m:]
    aw = np.abs(w)
    aw[aw <= zero_tol * aw.max()] = 0.0
    w = np.where(aw > 0, w, 0.0)
    rho = float(aw.sum())
    p = aw / rho
    return L1Design(w, p, rho, np.flatnonzero(p > 0).astype(np.intp))
