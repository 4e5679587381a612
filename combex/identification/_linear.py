"""The characteristic time T*(theta) of linear best-arm identification.

For a linear bandit with features ``x_1, ..., x_K`` (spanning R^d), parameter ``theta``,
best arm ``a*`` and gaps ``Delta_i = (x* - x_i)^T theta``, every delta-correct algorithm
under Gaussian noise of variance ``sigma^2`` satisfies (Soare et al. 2014; Fiez et al.
2019; Degenne et al. 2020)::

    E[tau] >= T*(theta) log(1 / (2.4 delta)),

    T*(theta)^{-1} = max_{p in simplex} min_{i != a*} Delta_i^2 / (2 sigma^2 ||x* - x_i||^2_{A(p)^{-1}}),

with ``A(p) = sum_k p_k x_k x_k^T``. Equivalently ``T*(theta) = 2 sigma^2 min_p max_{i != a*}
||y_i||^2_{A(p)^{-1}}`` with the scaled directions ``y_i = (x* - x_i) / Delta_i``: the
value of the XY-oracle design of eq. (18) of Xu et al. (2018), times ``2 sigma^2``.

Every linear result of :mod:`combex.solvers.linear` reports
``samples / (T*(theta) log(1/delta))`` (``Result.info["lower_bound_ratio"]``), with
:func:`lower_bound_model_note` saying when the noise is not Gaussian (T* is then that of
the Gaussian model at the sub-Gaussian scale).
"""

from __future__ import annotations

import math

import warnings
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._blas import blas_threads
from .._validation import check_float, check_probability, check_weights
from ..allocations import xy_optimal_design
from ..allocations._design import _check_candidates
from ..exceptions import AllocationError, ConvergenceWarning, InvalidParameterError

__all__ = ["LowerBound", "characteristic_time", "linear_lower_bound", "check_features", "lower_bound_model_note"]


def check_features(features: Any, *, owner: str | None = None, name: str = "features") -> NDArray[np.float64]:
    """Validate a feature matrix: finite, shape (K, d) with K >= 2, rows spanning R^d.

    Raises
    ------
    InvalidParameterError
        Features missing, not 2-d, with fewer than two rows, non-finite, or not spanning
        R^d (theta is then not identifiable); the rank test is the one of
        :func:`combex.allocations.xy_optimal_design`.
    """
    who = f" of {owner}" if owner else ""
    if features is None:
        raise InvalidParameterError(
            f"The {name!r} parameter{who} must be an array of shape (n_arms, d); the problem "
            f"has no features (is it a linear problem?)."
        )
    x = _check_candidates(features, owner or "check_features", name=name)
    if x.shape[0] < 2:
        raise InvalidParameterError(
            f"The {name!r} parameter{who} must have at least two rows (arms). Got an array of "
            f"shape {x.shape} instead."
        )
    return x


#: ``method="auto"`` of :func:`characteristic_time`: the interior-point method of
#: :mod:`combex.allocations._interior_point` (certified relative gap :data:`YARDSTICK_TOL`,
#: at most :data:`IP_YARDSTICK_STEPS` Newton steps) up to :data:`IP_YARDSTICK_ARMS` arms
#: (one dense (K + 2)-square solve per step; measured on one core: 0.05 s at K = 40,
#: d = 20, 0.15 s at K = 100, d = 50, 0.4 s at 252 teams, 0.5 s at 330, 1.8 s at 495, where
#: cvxpy takes over 140 s at K = 40, d = 20); beyond,
#: or if it fails, Frank-Wolfe with at most :data:`FW_YARDSTICK_ITERATIONS` iterations (and
#: its certified lower bound). cvxpy only on request (``method="cvxpy"``).
IP_YARDSTICK_ARMS = 400
IP_YARDSTICK_STEPS = 500
YARDSTICK_TOL = 1e-6
FW_YARDSTICK_ITERATIONS = 30
#: RAGE's per-round designs (:func:`_design`, ``method="auto"``): one conic solve up to this
#: size ``n_y (d + 1)^2``, Frank-Wolfe capped at :data:`FW_YARDSTICK_ITERATIONS` beyond.
CVXPY_YARDSTICK_SIZE = 40_000


def _design(x: NDArray[np.float64], y: NDArray[np.float64], method: str, tol: float | None = None, *,
            yardstick: bool = False) -> Any:
    """:func:`xy_optimal_design`. With ``method="auto"``: for :func:`characteristic_time`
    (``yardstick=True``) the interior-point method up to :data:`IP_YARDSTICK_ARMS` arms; for
    RAGE's rounds cvxpy up to :data:`CVXPY_YARDSTICK_SIZE` (an "optimal_inaccurate" solve is
    accepted silently). A failed solve or a larger problem goes to Frank-Wolfe capped at
    :data:`FW_YARDSTICK_ITERATIONS` iterations (each one a HiGHS LP over the arms: 80 ms at
    252 teams; unconverged, :func:`_design_value` uses its certified lower bound)."""
    opts: dict[str, Any] = {} if tol is None else {"tol": tol}
    if yardstick and tol is None and method in ("auto", "interior-point"):
        opts = {"tol": YARDSTICK_TOL}
    if method != "auto":
        steps = {"max_iter": IP_YARDSTICK_STEPS} if method == "interior-point" else {}
        return xy_optimal_design(x, y, method=method, **steps, **opts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        try:
            if yardstick and x.shape[0] <= IP_YARDSTICK_ARMS:
                return xy_optimal_design(x, y, method="interior-point", max_iter=IP_YARDSTICK_STEPS, **opts)
            if not yardstick and y.shape[0] * (x.shape[1] + 1) ** 2 <= CVXPY_YARDSTICK_SIZE:
                return xy_optimal_design(x, y, method="cvxpy")
        except (AllocationError, np.linalg.LinAlgError):
            pass
        return xy_optimal_design(x, y, method="frank-wolfe", max_iter=FW_YARDSTICK_ITERATIONS,
                                 **({} if tol is None else {"tol": tol}))


def _design_value(des: Any) -> tuple[float, float, bool]:
    """``(value, lower, exact)``: the design's value (an upper bound of the optimum), its
    certified lower bound ``value - gap`` (NaN when the solver gives none: cvxpy), and whether
    the solver met its tolerance. Callers use ``lower`` when not exact, so that T* is never
    over-estimated and ``samples / (T* log(1/delta))`` never looks better than it is."""
    value = float(des.value)
    lower = float("nan") if des.gap is None else max(value - float(des.gap), 0.0)
    exact = bool(des.converged) or des.gap is None
    return value, lower, exact


@dataclass(frozen=True)
class LowerBound:
    """T*(theta) and its optimal allocation.

    Attributes
    ----------
    T_star : float
        The characteristic time ``2 sigma^2 min_p max_i ||x* - x_i||^2_{A(p)^{-1}} / Delta_i^2``.
    allocation : array of shape (K,)
        The optimal proportions p* (the XY-oracle allocation, eq. (18)).
    best : int
        a*, the best arm.
    gaps : array of shape (K,)
        ``Delta_i`` (0 for the best arm).
    exact : bool
        False when the design solver stopped early and ``T_star`` is its certified lower
        bound ``T_lo`` (the ratio ``samples / (T* log(1/delta))`` is then an upper bound).
        True when the solver met its tolerance; ``T_star`` is then ``T_hi``, the value of
        ``allocation``, within the solver's tolerance above the true T*.
    T_lo, T_hi : float
        The certified bracket ``T_lo <= T* <= T_hi``: ``T_hi`` is ``2 sigma^2`` times the
        design value of ``allocation`` (any allocation bounds T* from above), ``T_lo`` the
        solver's certified lower bound (duality gap of the interior-point or Frank-Wolfe
        method); ``T_lo`` is NaN for cvxpy, which gives no certificate.
    """

    T_star: float
    allocation: NDArray[np.float64]
    best: int
    gaps: NDArray[np.float64]
    exact: bool = True
    T_lo: float = float("nan")
    T_hi: float = float("nan")

    @property
    def gap(self) -> float:
        """The certified relative gap ``(T_hi - T_lo) / T_hi`` (NaN without a certificate)."""
        return (self.T_hi - self.T_lo) / self.T_hi if self.T_hi > 0 and math.isfinite(self.T_hi) else float("nan")

    def samples_bound(self, delta: float) -> float:
        """``T* log(1/delta)``: the normalizer of the reported ratio."""
        return self.T_star * float(np.log(1.0 / delta))


#: Most epsilon-good answers :func:`characteristic_time` solves a design for (one each).
MAX_EPSILON_ANSWERS = 8


def characteristic_time(
    features: Any, theta: Any, *, sigma: float = 1.0, epsilon: float = 0.0, method: str = "auto",
    tol: float | None = None,
) -> LowerBound:
    """The characteristic time T*(theta) of linear best-arm identification (epsilon = 0) or
    of epsilon-good identification (epsilon > 0).

    For epsilon > 0 several answers are correct, and the lower bound of Degenne & Koolen
    (NeurIPS 2019, "Pure exploration with multiple correct answers", Theorem 1) is
    ``T*_eps = min_{i eps-good} T_eps(i)`` with ``1 / T_eps(i) = max_w inf_{lambda: i not
    eps-good} sum_k w_k (x_k^T (theta - lambda))^2 / (2 sigma^2)``; for the Gaussian linear
    model the infimum over the half-space ``lambda^T (x_j - x_i) > eps`` is ``(Delta_ij +
    eps)^2 / (2 sigma^2 ||x_i - x_j||^2_{A(w)^{-1}})`` (``Delta_ij = theta^T (x_i - x_j)``),
    so ``T_eps(i) = 2 sigma^2 min_w max_j ||y_ij||^2_{A(w)^{-1}}`` over the scaled
    directions ``y_ij = (x_i - x_j) / (Delta_ij + eps)``: one XY design per eps-good answer
    (at most :data:`MAX_EPSILON_ANSWERS`, 8), infinite for an answer exactly eps below another.
    ``T*_eps <= T*_0``: a run at epsilon > 0 measured against ``T*_0`` would look closer to
    the bound than it is.

    Parameters
    ----------
    features : array of shape (K, d)
        Arm features spanning R^d.
    theta : array of shape (d,)
        The true parameter; the best arm must be unique when epsilon = 0.
    sigma : float, default 1.0
        Noise scale (Gaussian standard deviation); T* scales as sigma^2.
    epsilon : float, default 0.0
        Answers within epsilon of the best are correct.
    method : {"auto", "interior-point", "cvxpy", "frank-wolfe"}
        Solver of the minimax design, passed to
        :func:`combex.allocations.xy_optimal_design` (the XY design over the scaled
        directions ``y_i = (x* - x_i) / Delta_i``). ``"auto"``: the interior-point method
        (certified relative gap ``tol``, default :data:`YARDSTICK_TOL` = 1e-6) up to
        :data:`IP_YARDSTICK_ARMS` arms, else (or if it fails) Frank-Wolfe capped at
        :data:`FW_YARDSTICK_ITERATIONS` iterations; cvxpy only when asked for.
    tol : float in (0, 1), optional
        The solver's tolerance (interior-point, Frank-Wolfe: certified relative gap);
        default 1e-6 for ``"auto"`` and ``"interior-point"``, the solver's own otherwise.

    Results are cached per instance (features, theta, sigma, epsilon, method, tol; the
    :data:`CACHE_SIZE` most recent): repeated runs on one instance share one solve. Each call
    returns its own copy.

    Returns
    -------
    LowerBound

    Raises
    ------
    InvalidParameterError
        Bad shapes, rank-deficient features, a best arm that is not unique at epsilon = 0
        (T* is then infinite; the error names the tied arms), or more than
        :data:`MAX_EPSILON_ANSWERS` epsilon-good answers.

    Examples
    --------
    Two orthogonal arms with gap 1: ``T* = 2 * (1/p1 + 1/p2) = 8`` at ``p = (1/2, 1/2)``.

    >>> lb = characteristic_time([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0])
    >>> round(lb.T_star, 4)
    8.0
    """
    x = check_features(features, owner="characteristic_time")
    th = check_weights(theta, x.shape[1], "theta", owner="characteristic_time")
    sigma = check_float(sigma, "sigma", owner="characteristic_time", low=0.0, closed="neither")
    epsilon = check_float(epsilon, "epsilon", owner="characteristic_time", low=0.0)
    if tol is not None:
        tol = check_float(tol, "tol", owner="characteristic_time", low=0.0, high=1.0, closed="neither")
    x = np.ascontiguousarray(x, dtype=np.float64)
    th = np.ascontiguousarray(th, dtype=np.float64)
    key = (x.shape, x.tobytes(), th.tobytes(), float(sigma), float(epsilon), str(method), tol)
    hit = _CACHE.get(key)
    if hit is None:
        with blas_threads():
            hit = _characteristic_time(x, th, sigma, epsilon, method, tol)
        _CACHE[key] = hit
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return replace(hit, allocation=hit.allocation.copy(), gaps=hit.gaps.copy())


#: How many instances :func:`characteristic_time` keeps (least recently used dropped first).
CACHE_SIZE = 64
_CACHE: "OrderedDict[tuple[Any, ...], LowerBound]" = OrderedDict()


def _characteristic_time(x: NDArray[np.float64], th: NDArray[np.float64], sigma: float, epsilon: float,
                         method: str, tol: float | None) -> LowerBound:
    """:func:`characteristic_time` on checked arrays, uncached."""
    mu = x @ th
    best = int(np.argmax(mu))
    gaps = mu[best] - mu
    scale = max(1.0, float(np.max(np.abs(mu))))
    if epsilon > 0.0:
        return _epsilon_characteristic_time(x, mu, gaps, scale, sigma, epsilon, method, tol)
    others = np.flatnonzero(np.any(x != x[best], axis=1))  # copies of the best row are the same answer
    tied = others[gaps[others] <= 1e-12 * scale]
    if tied.size:
        raise InvalidParameterError(
            f"characteristic_time needs a unique best arm; arms {[best] + tied.tolist()} tie "
            f"at mean {float(mu[best])!r} (T* is infinite)."
        )
    y = (x[best] - x[others]) / gaps[others, None]
    # Normalize the directions (the value scales as ys^2) for the conic solver's sake:
    # tiny gaps (soare: 1e-4) give direction norms of 1e4.
    ys = float(np.max(np.linalg.norm(y, axis=1)))
    des = _design(x, y / ys, method, tol, yardstick=True)
    value, lower, exact = _design_value(des)
    c = 2.0 * sigma**2 * ys * ys
    return LowerBound(
        T_star=c * (value if exact else lower),
        allocation=np.array(des.weights),
        best=best,
        gaps=gaps,
        exact=exact,
        T_lo=c * lower,
        T_hi=c * value,
    )


def _epsilon_characteristic_time(x: NDArray[np.float64], mu: NDArray[np.float64], gaps: NDArray[np.float64],
                                 scale: float, sigma: float, epsilon: float, method: str,
                                 tol: float | None) -> LowerBound:
    """``T*_eps = min_i T_eps(i)`` over the eps-good answers (see :func:`characteristic_time`)."""
    good = np.flatnonzero(gaps <= epsilon)
    _, first = np.unique(x[good], axis=0, return_index=True)  # copies of a row are one answer
    good = np.sort(good[first])
    if good.size > MAX_EPSILON_ANSWERS:
        raise InvalidParameterError(
            f"characteristic_time: {good.size} arms are epsilon-good at epsilon={epsilon!r}, more than "
            f"MAX_EPSILON_ANSWERS={MAX_EPSILON_ANSWERS} (one design each); T*_eps is not computed."
        )
    best_T, best_i, best_w = math.inf, int(good[0]), np.full(x.shape[0], 1.0 / x.shape[0])
    all_exact, T_lo, T_hi = True, math.inf, math.inf
    for i in good.tolist():
        others = np.flatnonzero(np.any(x != x[i], axis=1))
        margin = mu[i] - mu[others] + epsilon
        if np.any(margin <= 1e-12 * scale):
            continue  # some arm is exactly epsilon better: i is correct but T_eps(i) is infinite
        y = (x[i] - x[others]) / margin[:, None]
        ys = float(np.max(np.linalg.norm(y, axis=1)))
        des = _design(x, y / ys, method, tol, yardstick=True)
        value, lower, exact = _design_value(des)
        all_exact &= exact
        c = 2.0 * sigma**2 * ys * ys
        T = c * (value if exact else lower)
        T_lo = float("nan") if math.isnan(lower) or math.isnan(T_lo) else min(T_lo, c * lower)  # NaN: no certificate
        T_hi = min(T_hi, c * value)
        if T < best_T:
            best_T, best_i, best_w = T, i, np.array(des.weights)
    return LowerBound(T_star=best_T, allocation=best_w, best=best_i, gaps=gaps, exact=all_exact,
                      T_lo=T_lo, T_hi=T_hi)


def linear_lower_bound(features: Any, theta: Any, delta: float, *, sigma: float = 1.0) -> dict[str, float]:
    """``{"T_star", "lower_bound_samples", "lower_bound_ratio_denominator"}`` for a result.

    ``lower_bound_samples = T* log(1/delta)``; a result's ``lower_bound_ratio`` is its
    sample count divided by it. Returns NaN entries when the best arm is not unique.
    """
    delta = check_probability(delta, "delta", owner="linear_lower_bound")
    try:
        lb = characteristic_time(features, theta, sigma=sigma)
    except InvalidParameterError as exc:
        if "unique best arm" in str(exc):
            return {"T_star": float("inf"), "lower_bound_samples": float("inf")}
        raise
    return {"T_star": lb.T_star, "lower_bound_samples": lb.samples_bound(delta)}


def _lower_bound_info(features: Any, theta: Any, sigma: float, delta: float, samples: int,
                      epsilon: float = 0.0) -> dict[str, Any]:
    """``T_star`` (``T*_eps`` of :func:`characteristic_time` at the run's epsilon, cached
    per instance there), ``lower_bound_samples`` and ``lower_bound_ratio``; NaN ratio where
    T* is infinite or not computed."""
    try:
        lb = characteristic_time(features, theta, sigma=sigma, epsilon=epsilon)
        t_star, exact = lb.T_star, lb.exact
    except InvalidParameterError:
        t_star, exact = float("inf"), True  # tied best arms (or too many eps-good answers): no finite bound
    denom = t_star * math.log(1.0 / delta)
    out = {
        "T_star": t_star,
        "lower_bound_samples": denom,
        "lower_bound_ratio": samples / denom if np.isfinite(denom) and denom > 0 else float("nan"),
    }
    if exact is False:
        out["lower_bound_ratio_kind"] = ("certified upper bound of the ratio (T* from a design solver stopped "
                                         "early: its certified lower bound)")
    return out


def lower_bound_model_note(env: Any, sigma: float) -> dict[str, Any]:
    """``{"lower_bound_model": ...}`` when the environment's noise is not Gaussian: the linear
    T* is that of the Gaussian model with the sub-Gaussian scale the GLR assumes (the
    hardest instance of that model with these means, so the yardstick of an algorithm
    correct on all of it); the instance's own T* for bounded rewards can be smaller, and the
    ratio against it larger. ``{}`` for Gaussian noise."""
    noise = getattr(env, "noise", None) or getattr(getattr(env, "problem", None), "noise", None)
    kind = getattr(noise, "kind", "gaussian")
    if kind == "gaussian":
        return {}
    return {"lower_bound_model": (f"T* of the Gaussian model with sigma = {sigma:g}, the sub-Gaussian scale of this "
                                  f"{kind} noise: the hardest instance of that model with these means; the instance's "
                                  "own T* can be smaller, and the ratio against it larger")}
