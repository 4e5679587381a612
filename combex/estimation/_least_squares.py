"""Least squares with count-weighted rank-one updates of the inverse design matrix.

Every linear and full-bandit solver keeps the design matrix and the response vector

.. math::

    A_t = \\lambda I + \\sum_i c_i x_i x_i^\\top, \\qquad b_t = \\sum_i x_i s_i,

where arm ``x_i`` was pulled ``c_i`` times with reward sum ``s_i`` (so one call with
``count=c`` is exactly ``c`` single pulls of the same arm), and needs
:math:`A_t^{-1}`, :math:`\\hat\\theta_t = A_t^{-1} b_t`, the matrix norms
:math:`\\|x\\|^2_{A_t^{-1}}` and :math:`\\log\\det A_t`. :class:`LeastSquares` keeps all
of them current under updates, with the count-weighted Sherman-Morrison formula

.. math::

    (A + c\\,x x^\\top)^{-1} = A^{-1} - \\frac{c\\,A^{-1}x x^\\top A^{-1}}{1 + c\\,x^\\top A^{-1} x},
    \\qquad \\log\\det(A + c\\,x x^\\top) = \\log\\det A + \\log(1 + c\\,x^\\top A^{-1} x),

its block form (Woodbury, matrix determinant lemma) for a few arms at once, and a fresh
Cholesky factorization when a batch has at least ``d`` arms or every ``refactor_every``
rank-one updates (to keep rounding drift of the updated inverse bounded).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from .._validation import check_float, check_int, check_weights, param_error
from ..exceptions import InvalidParameterError, StateError

__all__ = ["LeastSquares"]

_OWNER = "LeastSquares"

#: A Cholesky pivot below this fraction of the largest diagonal entry of A (times d) is
#: taken as zero: A is then treated as singular.
_SINGULAR_RTOL = 1e-13

_STATE_KEYS = (
    "kind",
    "d",
    "ridge",
    "refactor_every",
    "A",
    "b",
    "A_inv",
    "logdet",
    "n_updates",
    "total_count",
    "since_refactor",
)


def _readonly(a: NDArray[np.float64]) -> NDArray[np.float64]:
    v = a.view()
    v.flags.writeable = False
    return v


class LeastSquares:
    """Ordinary (``ridge=0``) or ridge least squares kept current under pulls.

    Maintains :math:`A = \\lambda I + \\sum_i c_i x_i x_i^\\top`,
    :math:`b = \\sum_i x_i s_i`, :math:`A^{-1}`, :math:`\\log\\det A` and
    :math:`\\hat\\theta = A^{-1} b` (the estimator :math:`\\hat\\theta_t` of Proposition 1
    of the full-bandit paper, and :math:`\\hat\\theta^\\lambda_t` of the LinGapE paper
    when ``ridge > 0``).

    Parameters
    ----------
    d : int
        Dimension (number of base arms in the full-bandit setting, feature dimension in
        the linear setting).
    ridge : float, default=0.0
        Regularization :math:`\\lambda \\ge 0`. With ``ridge=0`` the matrix A is singular
        until the pulled arms span :math:`\\mathbb{R}^d`.
    refactor_every : int, default=4096
        After this many rank-one updates applied through Sherman-Morrison / Woodbury,
        :math:`A^{-1}` and :math:`\\log\\det A` are recomputed from A by Cholesky.

    Attributes
    ----------
    d : int
    ridge : float
    refactor_every : int

    Notes
    -----
    *Snapshots.* Updates build new arrays instead of writing in place, so the read-only
    arrays returned by :attr:`A`, :attr:`b`, :attr:`A_inv` and :attr:`theta` never change
    after they are returned.

    *Exactness.* A and b are accumulated exactly as sums (for 0/1 arms and integer
    counts, A is exact in floating point up to :math:`2^{53}`); only the inverse and the
    log-determinant are updated incrementally, and they are refreshed from A.

    *Singular designs.* While A is singular (``ridge=0`` and too few directions pulled),
    updates only accumulate A and b. Whether A is invertible is decided lazily, by a
    Cholesky factorization attempted when :attr:`is_invertible`, :attr:`A_inv`,
    :attr:`theta`, :meth:`norm_sq`, :meth:`norms_sq` or :meth:`logdet` is used after an
    update; a pivot :math:`\\ell_{ii}^2 \\le 10^{-13}\\, d \\max_j A_{jj}` counts as zero
    (numerically singular; with ``ridge > 0``, A is always invertible). Until then those accessors raise
    :class:`~combex.exceptions.StateError` ("design matrix is singular: pull arms
    spanning R^d first"). From the first invertible A on, updates are incremental.

    *Paths of* :meth:`update_many` *with m arms.* ``m == 1``: Sherman-Morrison.
    ``1 < m < d``: one Woodbury update with the m x m capacitance matrix
    :math:`I_m + C^{1/2} X A^{-1} X^\\top C^{1/2}` (cost :math:`O(m d^2)`, and
    :math:`\\log\\det` by the matrix determinant lemma). ``m >= d``: A is accumulated with
    one matrix product and refactorized by Cholesky (cost :math:`O(m d^2 + d^3)`, no
    drift), which is cheaper than m rank-one updates and exact.

    Examples
    --------
    >>> import numpy as np
    >>> ls = LeastSquares(2)
    >>> ls.update([1.0, 0.0], reward_sum=3.0, count=3)
    >>> ls.is_invertible
    False
    >>> ls.update([1.0, 1.0], reward_sum=4.0, count=2)
    >>> np.round(ls.theta, 12)
    array([1., 1.])
    >>> float(np.round(ls.norm_sq([0.0, 1.0]), 12))
    0.833333333333
    """

    def __init__(self, d: int, *, ridge: float = 0.0, refactor_every: int = 4096) -> None:
        self.d = check_int(d, "d", owner=_OWNER, low=1)
        self.ridge = check_float(ridge, "ridge", owner=_OWNER, low=0.0)
        self.refactor_every = check_int(refactor_every, "refactor_every", owner=_OWNER, low=1)
        self._A = self.ridge * np.eye(self.d)
        self._b = np.zeros(self.d)
        self._n_updates = 0
        self._total_count = 0
        self._since_refactor = 0
        self._theta: NDArray[np.float64] | None = None
        self._A_inv: NDArray[np.float64] | None
        self._logdet: float | None
        if self.ridge > 0.0:
            self._A_inv = np.eye(self.d) / self.ridge
            self._logdet = self.d * math.log(self.ridge)
            self._dirty = False
        else:
            self._A_inv = None
            self._logdet = None
            self._dirty = False  # all-zero A: known singular until the next update

    # ------------------------------------------------------------------ validation
    def _check_x(self, x: Any, name: str = "x") -> NDArray[np.float64]:
        return check_weights(x, self.d, name, owner=_OWNER)

    @staticmethod
    def _check_reward(value: Any, name: str = "reward_sum") -> float:
        return check_float(value, name, owner=_OWNER)

    def _check_X(self, X: Any) -> NDArray[np.float64]:
        try:
            a = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise param_error("X", _OWNER, f"a real array of shape (m, {self.d})", X) from None
        if a.ndim != 2 or a.shape[1] != self.d:
            raise InvalidParameterError(
                f"The 'X' parameter of {_OWNER} must be a real array of shape (m, {self.d}). "
                f"Got an array of shape {a.shape} instead."
            )
        if not np.all(np.isfinite(a)):
            raise InvalidParameterError(f"The 'X' parameter of {_OWNER} must have finite entries.")
        return a

    @staticmethod
    def _check_vector(value: Any, m: int, name: str) -> NDArray[np.float64]:
        return check_weights(value, m, name, owner=_OWNER)

    @staticmethod
    def _check_counts(counts: Any, m: int) -> NDArray[np.int64]:
        c = check_weights(counts, m, "counts", owner=_OWNER)
        bad = (c < 0) | (c != np.floor(c))
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise InvalidParameterError(
                f"The 'counts' parameter of {_OWNER} must contain non-negative integers. "
                f"Got {c[i]!r} at index {i} instead."
            )
        return c.astype(np.int64)

    # ------------------------------------------------------------------ updates
    def update(self, x: ArrayLike, reward_sum: float, count: int = 1) -> None:
        """Record ``count`` pulls of arm ``x`` whose rewards sum to ``reward_sum``.

        Parameters
        ----------
        x : array-like of shape (d,)
            The arm (a feature vector, or a super-arm indicator).
        reward_sum : float
            Sum :math:`s` of the ``count`` observed rewards.
        count : int, default=1
            Number of pulls :math:`c \\ge 0`; ``count=0`` requires ``reward_sum == 0`` and
            changes nothing.

        Raises
        ------
        InvalidParameterError
            If ``x`` has the wrong shape or non-finite entries, ``reward_sum`` is not
            finite, ``count`` is not a non-negative int, or ``count == 0`` with a
            non-zero ``reward_sum``.
        """
        xv = self._check_x(x)
        s = self._check_reward(reward_sum)
        c = check_int(count, "count", owner=_OWNER, low=0)
        if c == 0:
            if s != 0.0:
                raise param_error("reward_sum", _OWNER, "0.0 when count is 0", s)
            return
        self._add(xv, s, c)

    def _add(self, xv: NDArray[np.float64], s: float, c: int) -> None:
        """:meth:`update` without argument checks (``xv`` a float64 vector, ``c >= 1``):
        the hot path of the regret minimizers, which call it once per step."""
        self._A = self._A + c * (xv[:, None] * xv)  # np.outer without its overhead
        self._b = self._b + s * xv
        self._n_updates += 1
        self._total_count += c
        self._theta = None
        if self._A_inv is None:
            self._dirty = True
            return
        self._sherman_morrison(xv, float(c))
        self._after_incremental(1)

    def update_many(self, X: ArrayLike, reward_sums: ArrayLike, counts: ArrayLike | None = None) -> None:
        """Record pulls of several arms at once (rows of ``X``; rows may repeat).

        Equivalent to ``update(X[i], reward_sums[i], counts[i])`` for every ``i`` (up to
        rounding), through the cheapest exact path (see the class Notes).

        Parameters
        ----------
        X : array-like of shape (m, d)
        reward_sums : array-like of shape (m,)
        counts : array-like of shape (m,), optional
            Non-negative integer pull counts (integer-valued floats are accepted);
            all ones when omitted.

        Raises
        ------
        InvalidParameterError
            On a wrong shape, a non-finite entry, a negative or non-integer count, or a
            non-zero reward sum with a zero count.
        """
        Xa = self._check_X(X)
        m = Xa.shape[0]
        s = self._check_vector(reward_sums, m, "reward_sums")
        c = np.ones(m, dtype=np.int64) if counts is None else self._check_counts(counts, m)
        zero = c == 0
        if np.any(zero & (s != 0.0)):
            i = int(np.flatnonzero(zero & (s != 0.0))[0])
            raise InvalidParameterError(
                f"The 'reward_sums' parameter of {_OWNER} must be 0.0 where counts is 0. "
                f"Got {s[i]!r} at index {i} instead."
            )
        if np.any(zero):
            keep = ~zero
            Xa, s, c = Xa[keep], s[keep], c[keep]
            m = Xa.shape[0]
        if m == 0:
            return
        if m == 1:
            self.update(Xa[0], float(s[0]), int(c[0]))
            return
        cf = c.astype(np.float64)
        self._A = self._A + Xa.T @ (cf[:, None] * Xa)
        self._b = self._b + Xa.T @ s
        self._n_updates += m
        self._total_count += int(c.sum())
        self._theta = None
        if self._A_inv is None:
            self._dirty = True
            return
        if m >= self.d:
            self.refactor()
            return
        self._woodbury(Xa, cf)
        self._after_incremental(m)

    def _sherman_morrison(self, x: NDArray[np.float64], c: float) -> None:
        assert self._A_inv is not None and self._logdet is not None
        u = self._A_inv @ x
        denom = 1.0 + c * float(x @ u)
        self._A_inv = self._A_inv - (c / denom) * (u[:, None] * u)
        self._logdet += math.log(denom)

    def _woodbury(self, X: NDArray[np.float64], c: NDArray[np.float64]) -> None:
        assert self._A_inv is not None and self._logdet is not None
        W = self._A_inv @ (X.T * np.sqrt(c))  # (d, m) = A^{-1} U C^{1/2}
        S = np.sqrt(c)[:, None] * (X @ W)  # C^{1/2} U^T A^{-1} U C^{1/2}
        S = 0.5 * (S + S.T)
        S[np.diag_indices_from(S)] += 1.0
        L = scipy.linalg.cholesky(S, lower=True, check_finite=False)
        G = scipy.linalg.solve_triangular(L, W.T, lower=True, check_finite=False)  # (m, d)
        self._A_inv = self._A_inv - G.T @ G
        self._logdet += 2.0 * float(np.sum(np.log(np.diag(L))))

    def _after_incremental(self, k: int) -> None:
        self._since_refactor += k
        if self._since_refactor >= self.refactor_every:
            self.refactor()

    # ------------------------------------------------------------------ factorization
    def _factorize(self) -> bool:
        """Cholesky of A; sets A_inv and logdet. Returns False when A is singular."""
        scale = float(np.max(np.diag(self._A), initial=0.0))
        if scale <= 0.0:
            return False
        try:
            cho = scipy.linalg.cho_factor(self._A, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            return False
        piv = np.diag(cho[0]) ** 2
        if not np.all(np.isfinite(piv)) or float(piv.min()) <= 0.0:
            return False
        if self.ridge == 0.0 and float(piv.min()) <= _SINGULAR_RTOL * self.d * scale:
            return False
        inv = scipy.linalg.cho_solve(cho, np.eye(self.d), check_finite=False)
        self._A_inv = 0.5 * (inv + inv.T)
        self._logdet = float(np.sum(np.log(piv)))
        self._since_refactor = 0
        self._theta = None
        return True

    def refactor(self) -> None:
        """Recompute :math:`A^{-1}` and :math:`\\log\\det A` from A by Cholesky.

        Called automatically every ``refactor_every`` incremental rank-one updates and
        after each :meth:`update_many` with at least ``d`` rows. Does nothing while A is
        singular (the next accessor tries again).
        """
        if self._A_inv is None:
            if self._dirty:
                self._dirty = False
                self._factorize()
            return
        # A only grows in the Loewner order, so once invertible it stays invertible; if
        # the factorization fails numerically, the incrementally updated inverse is kept.
        self._factorize()

    def _require_inverse(self) -> NDArray[np.float64]:
        if self._A_inv is None and self._dirty:
            self._dirty = False
            self._factorize()
        if self._A_inv is None:
            raise StateError(
                f"The design matrix is singular: pull arms spanning R^{self.d} first "
                f"(or use ridge > 0). {self._n_updates} updates so far."
            )
        return self._A_inv

    # ------------------------------------------------------------------ accessors
    @property
    def is_invertible(self) -> bool:
        """Whether A is (numerically) invertible; see the class Notes."""
        try:
            self._require_inverse()
        except StateError:
            return False
        return True

    @property
    def A(self) -> NDArray[np.float64]:
        """The design matrix A, array of shape (d, d) (read-only view)."""
        return _readonly(self._A)

    @property
    def b(self) -> NDArray[np.float64]:
        """The response vector :math:`b = \\sum_i x_i s_i`, shape (d,) (read-only view)."""
        return _readonly(self._b)

    @property
    def A_inv(self) -> NDArray[np.float64]:
        """:math:`A^{-1}`, array of shape (d, d) (read-only view).

        Raises
        ------
        StateError
            If A is singular.
        """
        return _readonly(self._require_inverse())

    @property
    def theta(self) -> NDArray[np.float64]:
        """The estimate :math:`\\hat\\theta = A^{-1} b`, shape (d,) (cached until the next
        update; read-only).

        Raises
        ------
        StateError
            If A is singular.
        """
        if self._theta is None:
            self._theta = self._require_inverse() @ self._b
            self._theta.flags.writeable = False
        return self._theta

    @property
    def n_updates(self) -> int:
        """Number of rank-one terms added (calls of :meth:`update`, rows of
        :meth:`update_many`; zero counts excluded)."""
        return self._n_updates

    @property
    def total_count(self) -> int:
        """Total number of pulls :math:`\\sum_i c_i`."""
        return self._total_count

    def norm_sq(self, x: ArrayLike) -> float:
        """:math:`\\|x\\|^2_{A^{-1}} = x^\\top A^{-1} x` for one vector ``x`` of shape (d,)."""
        xv = self._check_x(x)
        return float(xv @ self._require_inverse() @ xv)

    def norms_sq(self, X: ArrayLike) -> NDArray[np.float64]:
        """Row-wise :math:`\\|x_j\\|^2_{A^{-1}}` for ``X`` of shape (m, d); returns shape (m,)."""
        Xa = self._check_X(X)
        A_inv = self._require_inverse()
        return np.einsum("ij,ij->i", Xa @ A_inv, Xa)

    def _means_and_norms(self, X: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``X theta_hat`` and the row-wise ``||x||_{A^{-1}}`` of a float64 matrix ``X`` of
        shape (m, d), without argument checks (hot loops; see :meth:`norms_sq`)."""
        G = X @ self._require_inverse()
        return X @ self.theta, np.sqrt(np.maximum(np.einsum("ij,ij->i", G, X), 0.0))

    def logdet(self) -> float:
        """:math:`\\log\\det A`, tracked through the updates
        (:math:`\\log\\det(A + c x x^\\top) = \\log\\det A + \\log(1 + c\\, x^\\top A^{-1} x)`).

        Raises
        ------
        StateError
            If A is singular (its log-determinant is :math:`-\\infty`).
        """
        self._require_inverse()
        assert self._logdet is not None
        return self._logdet

    # ------------------------------------------------------------------ save / resume
    def state_dict(self) -> dict[str, Any]:
        """The full state as JSON scalars and numpy arrays (see :mod:`combex._state`).

        The incrementally updated inverse is saved as is, so a resumed object continues
        bit for bit.
        """
        return {
            "kind": _OWNER,
            "d": self.d,
            "ridge": self.ridge,
            "refactor_every": self.refactor_every,
            "A": self._A.copy(),
            "b": self._b.copy(),
            "A_inv": None if self._A_inv is None else self._A_inv.copy(),
            "logdet": self._logdet,
            "n_updates": self._n_updates,
            "total_count": self._total_count,
            "since_refactor": self._since_refactor,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "LeastSquares":
        """Rebuild an object saved by :meth:`state_dict`.

        Raises
        ------
        StateError
            If ``state`` is not a LeastSquares state or its arrays have wrong shapes.
        """
        if not isinstance(state, dict) or state.get("kind") != _OWNER:
            raise StateError("The state is not a LeastSquares state.")
        missing = [k for k in _STATE_KEYS if k not in state]
        if missing:
            raise StateError(f"The LeastSquares state lacks the keys {missing}.")
        try:
            obj = cls(state["d"], ridge=state["ridge"], refactor_every=state["refactor_every"])
        except InvalidParameterError as exc:
            raise StateError(f"The LeastSquares state has bad settings: {exc}") from None
        d = obj.d
        A = np.asarray(state["A"], dtype=np.float64)
        b = np.asarray(state["b"], dtype=np.float64)
        A_inv = None if state["A_inv"] is None else np.asarray(state["A_inv"], dtype=np.float64)
        if A.shape != (d, d) or b.shape != (d,) or (A_inv is not None and A_inv.shape != (d, d)):
            raise StateError(f"The LeastSquares state has arrays of wrong shapes for d={d}.")
        for key, arr in (("A", A), ("b", b), ("A_inv", A_inv)):
            if arr is not None and not np.all(np.isfinite(arr)):
                raise StateError(f"The LeastSquares state has non-finite entries in the field {key!r}.")
        for key in ("n_updates", "total_count", "since_refactor"):
            v = state[key]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise StateError(f"The field {key!r} of the LeastSquares state must be a nonnegative "
                                 f"integer. Got {v!r} instead.")
        if (A_inv is None) != (state["logdet"] is None):
            raise StateError("The LeastSquares state has an inverse without log-determinant or vice versa.")
        obj._A = A.copy()
        obj._b = b.copy()
        obj._A_inv = None if A_inv is None else A_inv.copy()
        obj._logdet = None if state["logdet"] is None else float(state["logdet"])
        obj._n_updates = int(state["n_updates"])
        obj._total_count = int(state["total_count"])
        obj._since_refactor = int(state["since_refactor"])
        obj._dirty = obj._A_inv is None and obj._n_updates > 0
        obj._theta = None
        return obj

    def __repr__(self) -> str:
        return (
            f"LeastSquares(d={self.d}, ridge={self.ridge!r}, n_updates={self._n_updates}, "
            f"total_count={self._total_count})"
        )
