"""0-1 quadratic maximization (confidence-ellipsoid maximization) with certificates.

The stopping rules of the full-bandit algorithms (SAQM, SA-FOA; Kuroki et al., Section 3
and Algorithms 2-3) need the 0-1 quadratic program

    QP:  maximize  x^T W x   subject to  sum(x) = k,  x in {0, 1}^n,

with ``W = A^{-1}`` (confidence-ellipsoid maximization, CEM: ``max ||chi_M||_{A^{-1}}`` is
``sqrt`` of QP) or with the indefinite ``B_t`` of SA-FOA. :class:`QuadraticMaximization`
implements Algorithm 1 (reduction to densest k-subgraph with any pluggable DkS oracle) and
returns a :class:`QuadraticCertificate` carrying both the worst-case ratio of Theorem 1 and
a per-call certified ratio ``value / upper_bound`` from :func:`upper_bound_qp`.
:func:`solve_qp_exact` is the exact yardstick.

Examples
--------
>>> import numpy as np
>>> from combex.oracles.quadratic import QuadraticMaximization
>>> W = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.2], [0.0, -0.2, 1.5]])
>>> mask, cert = QuadraticMaximization("peeling").maximize(W, 2)
>>> mask.tolist(), round(cert.value, 6), cert.upper_bound
([True, False, True], 3.5, 4.0)
>>> cert.worst_case_ratio <= cert.certified_ratio <= 1.0
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_bool, check_choice, check_float, check_int, check_matrix, param_error
from ..exceptions import InvalidParameterError, OracleError
from ._dks import (
    DKS_ORACLES,
    DkSOracle,
    ExactDkS,
    FeigePelegKortsarz,
    GreedyPeeling,
    _cpsat_qp,
    _enumerate_qp,
    _enumeration_affordable,
    get_dks_oracle,
    subgraph_weight,
)

__all__ = [
    "QuadraticCertificate",
    "QuadraticMaximization",
    "upper_bound_qp",
    "solve_qp_exact",
    "qp_value",
    "dks_graph",
    "swap_local_search",
    "DkSOracle",
    "GreedyPeeling",
    "FeigePelegKortsarz",
    "ExactDkS",
    "DKS_ORACLES",
    "get_dks_oracle",
    "subgraph_weight",
]

# Safety margin on computed eigenvalues (backward error of a symmetric eigensolver is a
# small multiple of n * eps * ||W||_2); added to every spectral upper bound.
_EIG_MARGIN = 8.0


# --------------------------------------------------------------------------- helpers
def _check_qp(W: Any, k: Any, owner: str, name: str = "W") -> tuple[NDArray[np.float64], int]:
    fast = isinstance(W, np.ndarray) and W.dtype == np.float64 and W.ndim == 2
    A = W if fast else check_matrix(W, name, owner=owner)
    if A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a non-empty square matrix. "
            f"Got an array of shape {A.shape} instead."
        )
    n = A.shape[0]
    A = check_matrix(A, name, owner=owner, symmetric=True)
    A = 0.5 * (A + A.T)
    k = check_int(k, "k", owner=owner, low=1, high=n)
    return A, k


def _check_spectrum(spectrum: Any, owner: str) -> tuple[float, float] | None:
    if spectrum is None:
        return None
    try:
        lo, hi = spectrum
    except (TypeError, ValueError):
        raise param_error("spectrum", owner, "None or a pair (lambda_min_lower, lambda_max_upper)", spectrum) from None
    lo = check_float(lo, "spectrum[0]", owner=owner)
    hi = check_float(hi, "spectrum[1]", owner=owner, low=lo)
    return lo, hi


def _topsum(v: NDArray[np.float64], m: int) -> float:
    """Sum of the ``m`` largest entries of a 1-d array (0 for m = 0)."""
    if m <= 0:
        return 0.0
    if m >= v.size:
        return float(v.sum())
    return float(np.partition(v, v.size - m)[v.size - m:].sum())


def qp_value(W: NDArray[np.float64], mask: NDArray[np.bool_]) -> float:
    """``x^T W x`` for the indicator ``x`` of ``mask`` (sum of the ``W`` block on the set)."""
    idx = np.flatnonzero(mask)
    return float(W[np.ix_(idx, idx)].sum())


def dks_graph(W: Any) -> NDArray[np.float64]:
    """The edge weights of Algorithm 1 lines 1-3: ``w~_ij = w_ij + w_ii + w_jj`` for
    ``i != j`` on the complete graph; the diagonal is set to 0 (no self-loops).

    For positive semidefinite ``W`` every ``w~_ij >= 0`` (Lemma 4: ``w_ij >= -(w_ii +
    w_jj)/2``).
    """
    A, _ = _check_qp(W, 1, "dks_graph")
    return _dks_graph(A)


def _dks_graph(A: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`dks_graph` of an already validated symmetric matrix."""
    d = np.diag(A).copy()
    Wt = A + d[:, None] + d[None, :]
    np.fill_diagonal(Wt, 0.0)
    return Wt


def _lambda_max_rank_one(
    lam: NDArray[np.float64], u2: NDArray[np.float64], c: NDArray[np.float64], iters: int = 12
) -> NDArray[np.float64]:
    """Upper estimates of ``lambda_max(diag(lam) - c u u^T)`` for a vector of shifts ``c``.

    ``lam`` ascending, ``u2 = u**2``. The largest eigenvalue ``mu`` solves the secular
    equation ``g(mu) = 1 - c sum_i u2_i / (lam_i - mu) = 0``: for ``c > 0`` it lies in
    ``[lam_{n-2}, lam_{n-1}]`` (interlacing) where ``g`` decreases; for ``c < 0`` it lies in
    ``[lam_{n-1}, lam_{n-1} + |c| sum(u2)]`` where ``g`` increases. Bisection keeps the
    upper end ``hi`` of a bracket with the root below it, and returns ``hi`` (never an
    underestimate, up to rounding in ``g``); ``iters`` halvings leave ``hi`` within
    ``2^-iters`` of the initial bracket above the root. Used by
    :func:`_shifted_spectral_bound` only as the fallback when its verification fails
    (with 40 halvings).
    """
    top = lam[-1]
    second = lam[-2] if lam.size > 1 else lam[-1]
    pos = c > 0
    lo = np.where(pos, second, top)
    hi = np.where(pos, top, top + np.abs(c) * u2.sum() + abs(top) * 1e-12 + 1e-300)
    zero = c == 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(iters):
            mid = 0.5 * (lo + hi)
            g = 1.0 - c * (u2[None, :] / (lam[None, :] - mid[:, None])).sum(axis=1)
            # c > 0: g decreasing, root above mid iff g(mid) > 0.
            # c < 0: g increasing, root above mid iff g(mid) < 0.
            above = np.where(pos, g > 0, g < 0)
            above &= np.isfinite(g)
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
    return np.where(zero, top, hi)


_T48 = np.linspace(0.0, 1.0, 48)
_T32 = np.linspace(0.0, 1.0, 32)
_T33 = np.linspace(0.0, 1.0, 33)[1:-1]


def _geom(lo: float, hi: float, t: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.geomspace(lo, hi, t.size)`` for a fixed ``t = linspace(0, 1, m)`` (cheaper)."""
    a = math.log(lo)
    return np.exp(a + (math.log(hi) - a) * t)


def _secular_h(lam: NDArray[np.float64], u2: NDArray[np.float64], mu: NDArray[np.float64]) -> NDArray[np.float64]:
    """``h(mu) = sum_i u2_i / (lam_i - mu)`` for a vector of ``mu`` (the secular function
    of a rank-one update: ``mu`` is an eigenvalue of ``diag(lam) - c u u^T`` iff
    ``c h(mu) = 1``). Call under ``np.errstate(divide="ignore", ...)``."""
    return (u2[None, :] / (lam[None, :] - mu[:, None])).sum(axis=1)


def _shifted_spectral_bound(
    lam: NDArray[np.float64], Q: NDArray[np.float64], k: int, hint: float | None = None
) -> tuple[float, float]:
    """``min_c k * lambda_max(W - c J) + c k^2``; returns (bound, c). See
    :func:`upper_bound_qp`.

    Parametrized by the eigenvalue instead of the shift: with ``W = Q diag(lam) Q^T`` and
    ``u = Q^T 1``, ``mu`` is the largest eigenvalue of ``W - c J`` exactly when
    ``c = 1 / h(mu)``, ``h(mu) = sum_i u_i^2 / (lam_i - mu)`` (the secular equation of the
    rank-one update), with ``mu > lam_max`` for ``c < 0`` and ``lam_{n-2} < mu < lam_max``
    (where ``h > 0``) for ``c > 0``. So every trial ``mu`` gives an exact pair
    ``(c, lambda_max)`` and the objective ``F(mu) = k mu + k^2 / h(mu)`` costs one vector
    operation, with no root finding: geometric grids in the distance of ``mu`` to
    ``lam_max`` (both sides) and to ``lam_{n-2}`` (one array operation), then two zooming passes around the
    grid minimum (``F`` is unimodal: ``f`` is convex in ``c`` and ``mu(c)`` is monotone).
    The chosen ``c`` is then *verified*: one evaluation of the secular function at
    ``mu + tau`` (``tau = 1e-9`` of the spectrum's scale) shows that ``lambda_max(W - cJ)
    <= mu + tau``; if it does not (rounding, a degenerate spectrum), that ``c``'s
    ``lambda_max`` is bracketed by bisection (:func:`_lambda_max_rank_one`). Any ``c``
    gives a valid bound; only the verified ``lambda_max`` enters it.

    ``hint`` is accepted for compatibility and ignored: the search does not depend on
    the previous check (the bound is the same with or without it, so a resumed run makes
    the same decisions as an uninterrupted one).
    """
    n = lam.size
    u2 = Q.sum(axis=0) ** 2  # (Q^T 1)^2
    top = float(lam[-1])
    second = float(lam[-2])
    spread = max(top - float(lam[0]), 0.0)
    if spread == 0.0:
        return k * top, 0.0
    scale = max(abs(top), spread)
    s = float(u2.sum())
    c_lo = -spread / (n - k) if n > k else -spread
    tiny = 1e-13 * scale
    # c < 0: mu = top + d, d up to past |c_lo| s (the largest eigenvalue for c = c_lo).
    mus = [top + _geom(tiny, max(abs(c_lo) * s * 1.5, 10.0 * tiny), _T48)]
    gap_top = top - second
    pos_ok = gap_top > 1e-12 * scale and u2[-1] > 1e-14 * s
    if pos_ok:  # c > 0: mu in (second, top) where h(mu) > 0; fine near both poles
        dpos = _geom(tiny, gap_top * (1 - 1e-9), _T32)
        mus += [top - dpos, second + dpos]
    mu = np.sort(np.concatenate(mus))
    best_f, best_mu = k * top, top  # c = 0
    kk = float(k * k)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(3):
            h = _secular_h(lam, u2, mu)
            F = k * mu + kk / h
            F[~(np.isfinite(F) & ((mu > top) == (h < 0.0)))] = np.inf
            j = int(np.argmin(F))
            if F[j] < best_f:
                best_f, best_mu = float(F[j]), float(mu[j])
                a = mu[j - 1] if j > 0 else (best_mu - tiny)
                b = mu[j + 1] if j + 1 < mu.size else (best_mu + tiny)
            else:  # c = 0 (mu = top) is the best so far: zoom on top
                i = int(np.searchsorted(mu, top))
                a = mu[i - 1] if i > 0 else top - tiny
                b = mu[i] if i < mu.size else top + tiny
            mu = a + (b - a) * _T33
        if best_mu == top:
            return k * top, 0.0
        one = np.array([best_mu])
        c = 1.0 / float(_secular_h(lam, u2, one)[0])
        # verify: lambda_max(diag(lam) - c u u^T) <= mu_up
        mu_up = best_mu + 1e-9 * scale
        g = 1.0 - c * float(_secular_h(lam, u2, one + 1e-9 * scale)[0])
    if c < 0.0:
        verified = mu_up > top and g >= 0.0  # g increasing above top: root <= mu_up
    else:
        verified = pos_ok and second < mu_up < top and g <= 0.0  # g decreasing on (second, top)
    if not verified:
        mu_up = float(_lambda_max_rank_one(lam, u2, np.array([c]), iters=40)[0])
    return k * mu_up + c * kk, c


# ---------------------------------------------------------------------- upper bound
def upper_bound_qp(
    W: Any,
    k: int,
    *,
    spectrum: tuple[float, float] | None = None,
    return_all: bool = False,
) -> float | dict[str, float]:
    """A cheap valid upper bound on ``max_{|S| = k} x_S^T W x_S`` for symmetric ``W``.

    The minimum of the following bounds, each valid for every symmetric ``W`` (write
    ``q(S) = x_S^T W x_S = sum_{i in S} w_ii + 2 sum_{i<j in S} w_ij``):

    ``"rows"``
        ``sum of the k largest r_i`` with ``r_i = w_ii + (sum of the k-1 largest
        off-diagonal entries of row i)``. *Proof*: ``q(S) = sum_{i in S} (w_ii +
        sum_{j in S, j != i} w_ij)``; the inner sum has ``k-1`` off-diagonal entries of row
        ``i``, so the bracket is at most ``r_i``, and a sum of ``k`` of the ``r_i`` is at
        most the sum of the ``k`` largest.
    ``"pairs"``
        ``(sum of the k largest w_ii) + 2 (sum of the C(k,2) largest w_ij, i < j)``.
        *Proof*: ``S`` contributes exactly ``k`` diagonal entries and ``C(k, 2)`` pairs.
    ``"spectral"``
        ``k * lambda_max(W)``. *Proof*: Rayleigh, ``x^T W x <= lambda_max ||x||^2`` and
        ``||x_S||^2 = k``.
    ``"shifted_spectral"``
        ``min_c k * lambda_max(W - c J) + c k^2`` (``J`` the all-ones matrix). *Proof*:
        ``x_S^T J x_S = k^2``, so ``q(S) = x_S^T (W - cJ) x_S + c k^2`` for every real
        ``c``; apply the Rayleigh bound. Useful for CEM where ``A^{-1}`` is close to
        ``a I - b J``. The minimum over ``c`` is searched over the eigenvalue instead:
        from the eigendecomposition ``W = Q diag(lam) Q^T`` and the secular equation of
        the rank-one update, ``mu`` is ``lambda_max(W - cJ)`` exactly when ``c = 1 /
        sum_i (Q^T 1)_i^2 / (lam_i - mu)``, so each trial ``mu`` is an exact pair; the
        chosen ``c``'s ``lambda_max`` is then verified (one secular-function evaluation,
        bisection if that fails). Any ``c`` gives a valid bound.

    Both spectral bounds include a margin ``8 n eps max|lambda|`` for eigensolver error.
    For ``k = n`` the only feasible value ``1^T W 1`` is returned.

    Parameters
    ----------
    W : array of shape (n, n)
        Symmetric, finite.
    k : int
        Subset size, ``1 <= k <= n``.
    spectrum : (float, float), optional
        Known bounds ``(lambda_min_lower, lambda_max_upper)`` on the spectrum of ``W``
        (e.g. from ``A`` when ``W = A^{-1}``). When given, no eigendecomposition is done:
        ``"spectral"`` uses ``lambda_max_upper`` and ``"shifted_spectral"`` is skipped.
        The bound is only as valid as these values.
    return_all : bool, default=False
        Return a dict of the individual bounds (and ``"min"``) instead of the minimum.

    Returns
    -------
    float or dict

    Raises
    ------
    InvalidParameterError
        If ``W`` is not a finite symmetric square matrix or ``k`` is out of range.
    """
    A, k = _check_qp(W, k, "upper_bound_qp")
    spec = _check_spectrum(spectrum, "upper_bound_qp")
    return_all = check_bool(return_all, "return_all", owner="upper_bound_qp")
    bounds = _upper_bounds(A, k, spec, None)
    bounds.pop("_c", None)
    return bounds if return_all else bounds["min"]


_TRIU: dict[int, tuple[NDArray[np.intp], NDArray[np.intp]]] = {}


def _triu(n: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """``np.triu_indices(n, 1)``, cached per ``n`` (read-only arrays)."""
    iu = _TRIU.get(n)
    if iu is None:
        iu = np.triu_indices(n, 1)
        for a in iu:
            a.setflags(write=False)
        if len(_TRIU) < 64:
            _TRIU[n] = iu
    return iu


def _upper_bounds(
    A: NDArray[np.float64],
    k: int,
    spec: tuple[float, float] | None,
    eig: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
    shift_hint: float | None = None,
) -> dict[str, float]:
    n = A.shape[0]
    if k == n:
        v = float(A.sum())
        return {"exact": v, "min": v}
    d = np.diag(A)
    off = A.copy()
    np.fill_diagonal(off, -np.inf)
    if k > 1:
        m = k - 1
        rows_top = np.partition(off, n - m, axis=1)[:, n - m:].sum(axis=1)
    else:
        rows_top = np.zeros(n)
    out: dict[str, float] = {}
    out["rows"] = _topsum(d + rows_top, k)
    iu = _triu(n)
    out["pairs"] = _topsum(d, k) + 2.0 * _topsum(A[iu], k * (k - 1) // 2)
    if spec is not None:
        out["spectral"] = float(k * spec[1])
    else:
        lam, Q = eig if eig is not None else np.linalg.eigh(A)
        margin = _EIG_MARGIN * n * np.finfo(float).eps * max(float(np.abs(lam).max()), 1e-300)
        out["spectral"] = float(k * (float(lam[-1]) + margin))
        if n > 1:
            f, c = _shifted_spectral_bound(lam, Q, k, shift_hint)
            out["shifted_spectral"] = float(f + k * margin)
            out["_c"] = c
    c = out.pop("_c", math.nan)
    out["min"] = min(out.values())
    out["_c"] = c
    return out


# ------------------------------------------------------------------- certificate
@dataclass(frozen=True)
class QuadraticCertificate:
    """What :meth:`QuadraticMaximization.maximize` guarantees about its answer.

    Attributes
    ----------
    value : float
        ``x^T W x`` of the returned mask.
    worst_case_ratio : float
        Theorem 1: ``lambda_min(W) / lambda_max(W) * alpha_dks / (k - 1)`` for positive
        definite ``W`` (1 when the instance was solved exactly: ``k = 1`` or ``k = n``);
        0 when it does not apply (see ``worst_case_reason``); NaN when not computed.
    worst_case_reason : str
        Which rule produced ``worst_case_ratio``.
    upper_bound : float
        A valid upper bound on ``max_{|S|=k} x^T W x`` (:func:`upper_bound_qp`).
    certified_ratio : float
        ``value / upper_bound`` when ``value >= 0`` and ``upper_bound > 0`` (a ratio the
        returned set provably achieves on this instance); 1 when ``value >= upper_bound``
        (proven optimal); NaN otherwise (use :attr:`gap`).
    dks_oracle : str
        Name of the DkS oracle used.
    alpha_dks : float
        The oracle's worst-case DkS ratio ``alpha(n, k)``.
    lambda_min, lambda_max : float
        Extreme eigenvalues of ``W`` used (or the ``spectrum`` bounds given); NaN if not
        computed.
    k : int
        Subset size.
    shift : float
        Constant added to every DkS edge weight so that all are non-negative (0 for
        positive semidefinite ``W``; see :class:`QuadraticMaximization`).
    spectral_shift : float
        The ``c`` of the ``"shifted_spectral"`` bound (NaN when not computed).
    """

    value: float
    worst_case_ratio: float
    worst_case_reason: str
    upper_bound: float
    certified_ratio: float
    dks_oracle: str
    alpha_dks: float
    lambda_min: float
    lambda_max: float
    k: int
    shift: float = 0.0
    spectral_shift: float = math.nan

    @property
    def gap(self) -> float:
        """Additive certificate ``upper_bound - value >= OPT - value`` (valid for any sign)."""
        return self.upper_bound - self.value

    @property
    def ratio(self) -> float:
        """The best proven ratio: ``max(worst_case_ratio, certified_ratio)`` (NaN-aware)."""
        vals = [v for v in (self.worst_case_ratio, self.certified_ratio) if not math.isnan(v)]
        return max(vals) if vals else math.nan


# ------------------------------------------------------------------ the algorithm
class QuadraticMaximization:
    """Algorithm 1 (Quadratic Maximization) of Kuroki et al. with a pluggable DkS oracle.

    Given symmetric ``W`` and ``k``, build the complete graph with edge weights
    ``w~_ij = w_ij + w_ii + w_jj`` (Algorithm 1 lines 1-3, :func:`dks_graph`), call the
    DkS oracle on it (line 4) and return its k-set with a :class:`QuadraticCertificate`.

    Parameters
    ----------
    dks : str or DkS oracle, default="peeling"
        ``"peeling"`` (:class:`GreedyPeeling`, ``O(n^2)``), ``"fpk"``
        (:class:`FeigePelegKortsarz`, ``O(n^omega)``), ``"exact"`` (:class:`ExactDkS`), or
        any object with ``name``, ``solve(Wt, k)`` and ``alpha(n, k)``.
    certify : bool, default=True
        Compute the certificate's ratios and upper bound (one ``O(n^3)`` symmetric
        eigendecomposition, about 20 ms at n = 500, unless ``spectrum`` is given). When
        False only ``value`` is filled and the ratio fields are NaN.
    refine : {None, "swap"}, default=None
        ``None`` is Algorithm 1 exactly. ``"swap"`` (an addition, not in the paper)
        improves the DkS answer by best-improvement 1-swap local search on ``x^T W x``
        (:func:`swap_local_search`); the value never decreases, so Theorem 1 and the
        certificate remain valid.

    Notes
    -----
    *Positive definite W (Theorem 1).* Lemma 4 gives ``w~ >= 0``, so ``G~`` is a DkS
    instance, and the returned set has ``x^T W x >= lambda_min/lambda_max *
    alpha_DkS/(k-1) * OPT``. Remark: the paper's Lemma 5 counts each off-diagonal pair
    once, whereas ``x^T W x`` counts it twice; with ``x^T W x`` Lemma 5 can fail for
    ``k = 2`` (``w~(S) >= x^T W x / 2`` is what holds in general, and ``w~(S) >= x^T W x``
    for ``k >= 3`` and PSD ``W`` because ``sum_{i<j} |w_ij| <= (k-1)/2 sum_i w_ii``). The
    Theorem 1 ratio stays valid regardless: every k-set satisfies ``k lambda_min <=
    x^T W x <= k lambda_max``, so *any* set achieves ``lambda_min / lambda_max``, which is
    at least the Theorem 1 ratio. Since ``upper_bound <= k lambda_max``, the certified
    ratio is always at least ``lambda_min / lambda_max`` as well.

    *Symmetric W that is not positive semidefinite* (SA-FOA's ``B_t``, Algorithm 3): some
    ``w~_ij`` may be negative. We add the constant ``s = max(0, -min_{i != j} w~_ij)`` to
    every edge weight: every k-set's DkS weight grows by the same ``s k(k-1)/2``, so the
    DkS argmax is unchanged (equivalently, ``W + (s/3) J`` adds ``(s/3) k^2`` to every
    k-set's QP value). Theorem 1 does not apply then (``worst_case_ratio = 0``); the
    certified ratio / ``gap`` from the upper bound still do. Greedy peeling's choices are
    invariant under the shift (all degrees move by the same amount at every step).

    *k = 1* (the paper assumes ``k >= 2``): DkS is degenerate (every set has weight 0), so
    the exact answer, the largest diagonal entry, is returned. *k = n*: the only set.

    References
    ----------
    Y. Kuroki, L. Xu, A. Miyauchi, J. Honda, M. Sugiyama. Polynomial-time algorithms for
    multiple-arm identification with full-bandit feedback. Neural Computation, 2020.
    """

    def __init__(
        self, dks: str | DkSOracle = "peeling", *, certify: bool = True, refine: str | None = None
    ) -> None:
        self.dks = get_dks_oracle(dks, owner="QuadraticMaximization")
        self.certify = check_bool(certify, "certify", owner="QuadraticMaximization")
        if refine is not None:
            refine = check_choice(refine, "refine", ("swap",), owner="QuadraticMaximization")
        self.refine = refine

    def __repr__(self) -> str:
        return (
            f"QuadraticMaximization(dks={self.dks!r}, certify={self.certify!r}, "
            f"refine={self.refine!r})"
        )

    def maximize(
        self,
        W: Any,
        k: int,
        *,
        spectrum: tuple[float, float] | None = None,
        require_pd: bool = False,
        shift_hint: float | None = None,
    ) -> tuple[NDArray[np.bool_], QuadraticCertificate]:
        """Approximately maximize ``x^T W x`` over k-subsets (Algorithm 1).

        Parameters
        ----------
        W : array of shape (n, n)
            Symmetric finite matrix (positive definite for Theorem 1).
        k : int
            Subset size, ``1 <= k <= n``.
        spectrum : (float, float), optional
            Known ``(lambda_min_lower, lambda_max_upper)`` of ``W`` (e.g. ``(1/lambda_max(A),
            1/lambda_min(A))`` for ``W = A^{-1}``); skips the eigendecomposition. The
            certificate is only as valid as these values.
        require_pd : bool, default=False
            Raise if ``W`` is not positive definite (smallest eigenvalue, or
            ``spectrum[0]`` when given, not above 0). By default any symmetric ``W`` is
            accepted (SA-FOA's ``B_t``; see Notes).
        shift_hint : float, optional
            Accepted for compatibility and ignored: the shift ``c`` of the
            ``"shifted_spectral"`` upper bound (:func:`upper_bound_qp`) is found
            without a starting point, so the bound does not depend on it.

        Returns
        -------
        mask : bool array of shape (n,)
            The k-subset found.
        certificate : QuadraticCertificate

        Raises
        ------
        InvalidParameterError
            If ``W`` is not a finite symmetric square matrix, ``k`` is not in ``[1, n]``,
            or ``require_pd`` is set and ``W`` is not positive definite.
        OracleError
            If the DkS oracle returns something other than a k-subset, or (exact oracle)
            does not prove optimality in its time limit.
        """
        owner = "QuadraticMaximization"
        A, k = _check_qp(W, k, owner)
        spec = _check_spectrum(spectrum, owner)
        require_pd = check_bool(require_pd, "require_pd", owner=owner)
        return self._maximize_checked(A, k, spec, require_pd, shift_hint)

    def _maximize_valid(self, W: NDArray[np.float64], k: int) -> tuple[NDArray[np.bool_], QuadraticCertificate]:
        """:meth:`maximize` for a caller that guarantees a finite, symmetric float64 ``W``
        and ``1 <= k <= n`` (SAQM's ``A_t^{-1}``): the same computation without the input
        checks (symmetrized as :meth:`maximize` does, so the results are identical)."""
        return self._maximize_checked(0.5 * (W + W.T), k, None, False, None)

    def _maximize_checked(
        self, A: NDArray[np.float64], k: int, spec: tuple[float, float] | None, require_pd: bool,
        shift_hint: float | None,
    ) -> tuple[NDArray[np.bool_], QuadraticCertificate]:
        owner = "QuadraticMaximization"
        n = A.shape[0]
        eig = None
        if require_pd:
            if spec is None:
                eig = np.linalg.eigh(A)
            lmin_pd = spec[0] if spec is not None else float(eig[0][0])  # type: ignore[index]
            if not lmin_pd > 0.0:
                raise InvalidParameterError(
                    f"The 'W' parameter of {owner} must be positive definite (require_pd=True). "
                    f"Got a matrix with smallest eigenvalue {lmin_pd!r} instead."
                )
        shift = 0.0
        if k == 1:
            mask = np.zeros(n, dtype=bool)
            mask[int(np.argmax(np.diag(A)))] = True
            alpha, exact_reason = 1.0, "k = 1: solved exactly (largest diagonal entry)"
        elif k == n:
            mask = np.ones(n, dtype=bool)
            alpha, exact_reason = 1.0, "k = n: the only feasible set"
        else:
            Wt = _dks_graph(A)
            off_min = float(Wt[~np.eye(n, dtype=bool)].min())
            if off_min < 0.0:
                shift = -off_min
                Wt += shift
                np.fill_diagonal(Wt, 0.0)
            # Wt is symmetric with a zero diagonal and (after the shift) non-negative: our
            # oracles skip re-validating it; a user-supplied oracle gets the public solve().
            solve = getattr(self.dks, "_solve", None) if isinstance(self.dks, DkSOracle) else None
            raw = solve(Wt, k) if solve is not None else self.dks.solve(Wt, k)
            mask = self._check_answer(raw, n, k)
            alpha, exact_reason = float(self.dks.alpha(n, k)), ""
            if self.refine == "swap":
                mask = swap_local_search(A, mask)
        value = qp_value(A, mask)
        name = str(getattr(self.dks, "name", type(self.dks).__name__))
        nan = math.nan
        if not self.certify:
            return mask, QuadraticCertificate(
                value, nan, "certify=False", nan, nan, name, alpha, nan, nan, k, shift
            )
        if spec is not None:
            lmin, lmax = spec
        else:
            eig = np.linalg.eigh(A) if eig is None else eig
            lmin, lmax = float(eig[0][0]), float(eig[0][-1])
        if exact_reason:
            ratio, reason = 1.0, exact_reason
        elif lmin > 0.0:
            ratio = lmin / lmax * alpha / (k - 1)
            reason = (
                f"Theorem 1: lambda_min/lambda_max * alpha_DkS/(k-1) = {lmin:.6g}/{lmax:.6g} "
                f"* {alpha:.6g}/{k - 1}"
            )
        else:
            ratio = 0.0
            reason = (
                f"W is not positive definite (lambda_min = {lmin:.6g}): Theorem 1 does not "
                "apply; use certified_ratio / gap"
            )
        ubs = _upper_bounds(A, k, spec, eig, None if shift_hint is None else float(shift_hint))
        ub, c_used = ubs["min"], ubs.get("_c", math.nan)
        ub = max(ub, value) if exact_reason else ub
        if value >= ub:
            cert_ratio = 1.0  # proven optimal (gap 0), whatever the sign
        else:
            cert_ratio = value / ub if (value >= 0.0 and ub > 0.0) else nan
        return mask, QuadraticCertificate(
            value, ratio, reason, ub, cert_ratio, name, alpha, lmin, lmax, k, shift, c_used
        )

    def maximize_norm(
        self,
        A_inv: Any,
        k: int,
        *,
        spectrum: tuple[float, float] | None = None,
        return_certificate: bool = False,
    ) -> tuple[NDArray[np.bool_], float] | tuple[NDArray[np.bool_], float, QuadraticCertificate]:
        """Confidence-ellipsoid maximization: approximately ``max_M ||chi_M||_{A^{-1}}``.

        Runs :meth:`maximize` on ``A_inv`` and returns ``(mask, sqrt(value))`` (plus the
        QP certificate when ``return_certificate``). A ratio ``r`` for the QP is a ratio
        ``sqrt(r)`` for CEM (Section 4: "any alpha-approximation algorithm for QP is a
        sqrt(alpha)-approximation algorithm for CEM").

        Raises
        ------
        InvalidParameterError
            As :meth:`maximize`, and if ``x^T A_inv x`` is negative (``A_inv`` not PSD).
        """
        return_certificate = check_bool(return_certificate, "return_certificate", owner="QuadraticMaximization")
        mask, cert = self.maximize(A_inv, k, spectrum=spectrum)
        if cert.value < 0.0:
            raise InvalidParameterError(
                "The 'A_inv' parameter of QuadraticMaximization.maximize_norm must be positive "
                f"semidefinite. Got x^T A_inv x = {cert.value!r} < 0 instead."
            )
        norm = math.sqrt(cert.value)
        return (mask, norm, cert) if return_certificate else (mask, norm)

    def _check_answer(self, raw: Any, n: int, k: int) -> NDArray[np.bool_]:
        name = getattr(self.dks, "name", type(self.dks).__name__)
        try:
            mask = np.asarray(raw[0])
        except (TypeError, IndexError, KeyError):
            raise OracleError(
                f"DkS oracle {name!r} must return (mask, value). Got {type(raw).__name__} instead."
            ) from None
        if mask.shape != (n,) or not (mask.dtype == np.bool_ or np.all((mask == 0) | (mask == 1))):
            raise OracleError(
                f"DkS oracle {name!r} must return a 0/1 mask of shape ({n},). Got an array of "
                f"shape {mask.shape} and dtype {mask.dtype} instead."
            )
        mask = mask.astype(bool)
        if int(mask.sum()) != k:
            raise OracleError(
                f"DkS oracle {name!r} must return a set of exactly k={k} vertices. Got "
                f"{int(mask.sum())} instead."
            )
        return mask


def swap_local_search(
    W: NDArray[np.float64], mask: NDArray[np.bool_], *, max_swaps: int | None = None
) -> NDArray[np.bool_]:
    """Best-improvement 1-swap local search for ``max x^T W x`` with ``|S| = k`` fixed.

    Swapping ``i`` in ``S`` for ``j`` outside changes the value by
    ``Delta_ij = w_ii + w_jj - 2 g_i + 2 g_j - 2 w_ij`` with ``g = W x``; all
    ``k (n - k)`` gains are scored at once and the best strictly improving swap (gain above
    ``1e-12`` times the scale of ``W``) is applied, ``g`` updated by ``W[j] - W[i]``, until
    none is left or ``max_swaps`` (default ``4 n``) swaps were made. The value never
    decreases. ``W`` must be symmetric (not checked: internal helper, public for tests).
    """
    mask = np.asarray(mask, dtype=bool).copy()
    n = W.shape[0]
    d = np.diag(W)
    g = W[:, mask].sum(axis=1)
    tol = 1e-12 * max(float(np.abs(W).max(initial=0.0)), 1e-300)
    limit = 4 * n if max_swaps is None else max_swaps
    for _ in range(limit):
        inside, outside = np.flatnonzero(mask), np.flatnonzero(~mask)
        if inside.size == 0 or outside.size == 0:
            break
        gain = (d[inside] - 2.0 * g[inside])[:, None] + (d[outside] + 2.0 * g[outside])[None, :]
        gain -= 2.0 * W[np.ix_(inside, outside)]
        flat = int(np.argmax(gain))
        a, b = divmod(flat, outside.size)
        if gain[a, b] <= tol:
            break
        i, j = int(inside[a]), int(outside[b])
        mask[i], mask[j] = False, True
        g += W[j] - W[i]
    return mask


# -------------------------------------------------------------------------- exact
def solve_qp_exact(
    W: Any,
    k: int,
    *,
    time_limit: float = 60.0,
    max_enumeration: int = 200_000_000,
    num_workers: int = 1,
    precision: float = 1e-9,
) -> tuple[NDArray[np.bool_], float]:
    """Exact ``max_{|S| = k} x_S^T W x_S`` for symmetric ``W`` (the yardstick).

    Enumerates all k-subsets when affordable (see :class:`ExactDkS` ``max_enumeration``;
    vectorized meet-in-the-middle for ``n <= 32``), else solves the standard linearization
    with CP-SAT (``y_ij = x_i x_j`` enforced by ``y_ij <= x_i, x_j`` for ``w_ij > 0`` and
    ``y_ij >= x_i + x_j - 1`` for ``w_ij < 0``; coefficients ``w_ii`` and ``2 w_ij`` rounded
    to multiples of ``precision * max|coefficient|``, so the CP-SAT answer is optimal up to
    an additive ``(C(k,2) + k) * precision * max|coefficient|``). The returned value is
    recomputed from ``W``.

    Returns
    -------
    mask : bool array of shape (n,)
    value : float

    Raises
    ------
    InvalidParameterError
        On invalid ``W`` or ``k``.
    OracleError
        If CP-SAT does not prove optimality within ``time_limit`` seconds.
    """
    owner = "solve_qp_exact"
    A, k = _check_qp(W, k, owner)
    time_limit = check_float(time_limit, "time_limit", owner=owner, low=0.0, closed="neither")
    max_enumeration = check_int(max_enumeration, "max_enumeration", owner=owner, low=1)
    num_workers = check_int(num_workers, "num_workers", owner=owner, low=1)
    precision = check_float(precision, "precision", owner=owner, low=0.0, high=1.0, closed="right")
    n = A.shape[0]
    if _enumeration_affordable(n, k, max_enumeration):
        mask, _ = _enumerate_qp(A, k)
        return mask, qp_value(A, mask)
    C = 2.0 * A
    np.fill_diagonal(C, 0.0)
    mask, status, _ = _cpsat_qp(
        C, np.diag(A).copy(), k, time_limit=time_limit, num_workers=num_workers, precision=precision
    )
    if status != "OPTIMAL":
        raise OracleError(
            f"solve_qp_exact: CP-SAT did not prove optimality within time_limit={time_limit!r} s "
            f"(status {status}, n={n}, k={k}). Raise time_limit."
        )
    return mask, qp_value(A, mask)
