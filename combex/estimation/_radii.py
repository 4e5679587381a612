"""Confidence radii used by the solvers.

Every function returns the scalar factor of a confidence bound in the notation of the paper
it comes from; callers multiply by the matrix norm (``||x||_{A^{-1}}``) or use the radius
directly (per-arm bounds). Arguments that vary along a run (``t``, ``u``, ``logdet_A``)
may be numpy arrays: the result then has their broadcast shape; with scalar arguments the
result is a Python float.

Papers: "full-bandit" is /papers/cpe-full-bandit-saqm-safoa-icb.txt (Kuroki et al.),
"LinGapE" is /papers/lingape-linear-pure-exploration.txt (Xu et al.); LUCB1 is from
``reference/baselines.md`` (Kalyanakrishnan et al., 2012).
"""

from __future__ import annotations

import math
from typing import Any, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from .._validation import check_choice, check_float, check_int, check_probability, param_error
from ..exceptions import InvalidParameterError

__all__ = [
    "log_binomial",
    "static_radius",
    "self_normalized_radius",
    "independent_radius",
    "independent_widths",
    "lucb_radius",
]

FloatOrArray = Union[float, NDArray[np.float64]]

#: c' = 6 / pi^2 of Proposition 1 (full-bandit paper) and Lemma 1 (its Appendix A).
C_PRIME = 6.0 / math.pi**2
#: The constants :func:`static_radius` offers: the printed ones, or the sub-Gaussian tail's.
STATIC_CONSTANTS = ("proposition-1", "sub-gaussian")
#: c' of Lemma 1 (ICB) corrected so that the union bound over t >= 1 and the n base arms
#: sums to delta: 2 sum_t 1/(c' t^2) = 1 needs c' = 2 * pi^2 / 6 = pi^2 / 3 (see
#: :func:`independent_radius`).
ICB_C_PRIME = math.pi**2 / 3.0
#: k1 = 5/4 of LUCB1.
K1_LUCB = 5.0 / 4.0


def _check_real(
    value: Any,
    name: str,
    owner: str,
    *,
    low: float | None = None,
    closed_low: bool = True,
) -> FloatOrArray:
    """A finite real scalar (returned as float) or array (returned as float64 array),
    every entry >= low (or > low when ``closed_low`` is False)."""
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        return check_float(value, name, owner=owner, low=low, closed="both" if closed_low else "neither")
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error(name, owner, "a real number or an array of real numbers", value) from None
    bad = ~np.isfinite(a)
    if low is not None:
        with np.errstate(invalid="ignore"):
            bad |= (a < low) if closed_low else (a <= low)
    if np.any(bad):
        lo = "-inf" if low is None else repr(float(low))
        bracket = "[" if closed_low and low is not None else "("
        i = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), a.shape)
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must have entries in the range {bracket}{lo}, inf). "
            f"Got {float(a[i])!r} at index {tuple(int(j) for j in i)} instead."
        )
    return a


def _out(x: Any) -> FloatOrArray:
    if np.ndim(x) == 0:
        return float(x)
    return np.asarray(x, dtype=np.float64)


def log_binomial(n: int, k: int) -> float:
    """Natural logarithm of the binomial coefficient :math:`\\binom{n}{k}`.

    Used for :math:`\\log K` when the hypotheses are the :math:`K = \\binom{n}{k}`
    super-arms of size k (for instance :math:`\\binom{111}{10}` in the crowdsourcing
    experiments), which overflow any float.

    Parameters
    ----------
    n : int
        Ground-set size, ``n >= 0``.
    k : int
        Subset size, ``0 <= k <= n``.

    Returns
    -------
    float
        :math:`\\log\\Gamma(n+1) - \\log\\Gamma(k+1) - \\log\\Gamma(n-k+1)`.

    Raises
    ------
    InvalidParameterError
        If ``n`` is not a non-negative int or ``k`` not an int in ``[0, n]``.

    Examples
    --------
    >>> round(log_binomial(5, 2), 12) == round(math.log(10), 12)
    True
    """
    n = check_int(n, "n", owner="log_binomial", low=0)
    k = check_int(k, "k", owner="log_binomial", low=0, high=n)
    if k == 0 or k == n:
        return 0.0
    return float(gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1))


def static_radius(
    t: ArrayLike, delta: float, *, sigma: float, log_n_hypotheses: float, constant: str = "proposition-1"
) -> FloatOrArray:
    """:math:`C_t` of Proposition 1 (Soare et al. 2014; full-bandit paper, Proposition 1).

    For a fixed (non-adaptive) sequence of arms and noise bounded in
    :math:`[-\\sigma, \\sigma]`, with probability at least :math:`1 - \\delta`,
    :math:`|x^\\top\\theta - x^\\top\\hat\\theta_t| \\le C_t \\|x\\|_{A_t^{-1}}` for all
    :math:`t \\ge 1` and all x, where

    .. math::

        C_t = c\\sqrt{\\log(c'\\, t^2 K / \\delta)}, \\qquad c = 2\\sqrt{2}\\,\\sigma,
        \\qquad c' = 6/\\pi^2.

    This is eq. (2) of the LinGapE paper,
    :math:`2\\sigma\\sqrt{2\\log(6 t^2 K / (\\delta\\pi^2))}`, written differently. In the
    full-bandit setting (super-arms of size k, base-arm noise R) the paper uses
    :math:`\\sigma = kR`.

    ``constant="sub-gaussian"`` gives the same guarantee with the constant of the
    sub-Gaussian tail instead of the printed one:

    .. math::

        C_t = \\sigma\\sqrt{2\\log(\\pi^2 t^2 K / (3\\delta))}.

    Proof: for a fixed sequence, :math:`x^\\top(\\hat\\theta_t - \\theta) = \\sum_{s \\le t}
    (x^\\top A_t^{-1} x_s)\\,\\eta_s` is a sum of independent terms; noise in
    :math:`[-\\sigma, \\sigma]` is :math:`\\sigma`-sub-Gaussian (Hoeffding's lemma), as is
    :math:`N(0, \\sigma^2)`, and the weights' squares sum to :math:`\\|x\\|^2_{A_t^{-1}}`, so
    :math:`P(|x^\\top(\\hat\\theta_t - \\theta)| > \\|x\\|_{A_t^{-1}}\\sigma\\sqrt{2\\log(2/\\delta')})
    \\le \\delta'`; a union over the K hypotheses and over t with
    :math:`\\delta' = 6\\delta / (\\pi^2 t^2 K)` (:math:`\\sum_t 6/(\\pi^2 t^2) = 1`) gives the
    formula. The printed :math:`C_t^2 = 8\\sigma^2\\log(6 t^2 K/(\\pi^2\\delta))` is about four
    times this one (at t = 10^5, K = 30, delta = 0.05: 8 x 28.9 = 231 against
    2 x 30.6 = 61, 3.8x), so a fixed design needs about 3.8x fewer samples to stop with it.
    The printed :math:`c' = 6/\\pi^2` is the inverse of the union's :math:`\\pi^2/6`; the
    factor 8 covers it (the printed radius is the larger one whenever
    :math:`t^2 K/\\delta \\ge 3`).

    Parameters
    ----------
    t : float or array-like
        Number of samples so far, :math:`t \\ge 1`.
    delta : float
        Confidence level in (0, 1).
    sigma : float
        Noise bound (or sub-Gaussian scale) :math:`\\sigma > 0`.
    log_n_hypotheses : float
        :math:`\\log K \\ge 0`, the log of the number of arms / super-arms the bound is
        union-bounded over (see :func:`log_binomial`; K may be astronomically large).
    constant : {"proposition-1", "sub-gaussian"}, default "proposition-1"
        The printed constants, or the sub-Gaussian tail's (above).

    Returns
    -------
    float or ndarray
        :math:`C_t`, with the shape of ``t``.

    Raises
    ------
    InvalidParameterError
        If ``t < 1``, ``delta`` is outside (0, 1), ``sigma <= 0`` or
        ``log_n_hypotheses < 0`` (or any of them is not finite).

    Notes
    -----
    The constants are the paper's. When :math:`c' t^2 K / \\delta < 1` (possible only for
    K = 1, t = 1 and :math:`\\delta > 6/\\pi^2`) the logarithm is negative; the radius is
    then defined as 0 (the logarithm is floored at 0), which is the only case where a
    floor applies.

    Examples
    --------
    >>> round(static_radius(10, 0.05, sigma=1.0, log_n_hypotheses=math.log(20)), 6)
    8.988408
    """
    owner = "static_radius"
    tt = _check_real(t, "t", owner, low=1.0)
    delta = check_probability(delta, "delta", owner=owner)
    sigma = check_float(sigma, "sigma", owner=owner, low=0.0, closed="right")
    log_k = check_float(log_n_hypotheses, "log_n_hypotheses", owner=owner, low=0.0)
    constant = check_choice(constant, "constant", STATIC_CONSTANTS, owner=owner)
    if constant == "sub-gaussian":
        log_arg = math.log(math.pi**2 / 3.0) + 2.0 * np.log(tt) + log_k - math.log(delta)
        c = math.sqrt(2.0) * sigma
    else:
        log_arg = math.log(C_PRIME) + 2.0 * np.log(tt) + log_k - math.log(delta)
        c = 2.0 * math.sqrt(2.0) * sigma
    return _out(c * np.sqrt(np.maximum(log_arg, 0.0)))


def self_normalized_radius(
    logdet_A: ArrayLike,
    d: int,
    delta: float,
    *,
    R: float,
    ridge: float,
    S: float,
    log_union_size: float = 0.0,
) -> FloatOrArray:
    """:math:`C_t` of eq. (3) of the LinGapE paper (Abbasi-Yadkori et al. 2011, Theorem 2).

    For conditionally R-sub-Gaussian noise, :math:`\\|\\theta\\|_2 \\le S` and arms chosen
    from past observations only, with probability at least :math:`1 - \\delta`,
    :math:`|x^\\top(\\hat\\theta^\\lambda_t - \\theta)| \\le \\|x\\|_{(A^\\lambda_t)^{-1}} C_t`
    for all t, where :math:`A^\\lambda_t = \\lambda I + \\sum_s x_{a_s} x_{a_s}^\\top` and

    .. math::

        C_t = R\\sqrt{2\\log\\frac{\\det(A^\\lambda_t)^{1/2}\\det(\\lambda I)^{-1/2}}{\\delta}}
              + \\lambda^{1/2} S
            = R\\sqrt{\\log\\det A^\\lambda_t - d\\log\\lambda + 2\\log(1/\\delta)}
              + \\lambda^{1/2} S.

    Parameters
    ----------
    logdet_A : float or array-like
        :math:`\\log\\det A^\\lambda_t` (see :meth:`LeastSquares.logdet`); at least
        :math:`d \\log\\lambda` since :math:`A^\\lambda_t \\succeq \\lambda I`.
    d : int
        Dimension, ``d >= 1``.
    delta : float
        Confidence level in (0, 1).
    R : float
        Sub-Gaussian scale of the noise, ``R > 0``.
    ridge : float
        Regularization :math:`\\lambda > 0`.
    S : float
        Bound on :math:`\\|\\theta\\|_2`, ``S >= 0``.
    log_union_size : float, default=0.0
        Optional :math:`\\log N \\ge 0` to replace :math:`\\delta` by
        :math:`\\delta / N` (a union bound). The default is eq. (3) as printed; the
        LinGapE analysis (Theorem 2, Lemma 5) uses :math:`N = K^2`, i.e.
        ``log_union_size = 2 log K``.

    Returns
    -------
    float or ndarray
        :math:`C_t`, with the shape of ``logdet_A``.

    Raises
    ------
    InvalidParameterError
        If ``d < 1``, ``delta`` is outside (0, 1), ``R <= 0``, ``ridge <= 0``, ``S < 0``,
        ``log_union_size < 0``, or ``logdet_A`` is not finite or below
        :math:`d\\log\\lambda` (beyond a relative rounding tolerance of 1e-9).

    Examples
    --------
    >>> round(self_normalized_radius(0.0, 2, 0.1, R=1.0, ridge=1.0, S=0.0), 6)
    2.145966
    """
    owner = "self_normalized_radius"
    d = check_int(d, "d", owner=owner, low=1)
    delta = check_probability(delta, "delta", owner=owner)
    R = check_float(R, "R", owner=owner, low=0.0, closed="right")
    ridge = check_float(ridge, "ridge", owner=owner, low=0.0, closed="right")
    S = check_float(S, "S", owner=owner, low=0.0)
    log_n = check_float(log_union_size, "log_union_size", owner=owner, low=0.0)
    ld = _check_real(logdet_A, "logdet_A", owner)
    floor = d * math.log(ridge)
    tol = 1e-9 * max(1.0, abs(floor))
    if np.any(np.asarray(ld) < floor - tol):
        worst = float(np.min(ld))
        raise InvalidParameterError(
            f"The 'logdet_A' parameter of {owner} must be at least d*log(ridge) = {floor!r} "
            f"(A_t >= ridge*I). Got {worst!r} instead."
        )
    # Rounding guard only: logdet_A - d log(ridge) >= -tol and 2 log(1/delta) > 0.
    arg = np.maximum(np.asarray(ld) - floor + 2.0 * (log_n - math.log(delta)), 0.0)
    return _out(R * np.sqrt(arg) + math.sqrt(ridge) * S)


def independent_radius(t: ArrayLike, delta: float, *, sigma: float, n_arms: int) -> FloatOrArray:
    """:math:`C_t` of Lemma 1 (independent confidence bound, ICB; full-bandit paper,
    Appendix A, Algorithm 4).

    For a fixed sequence of super-arms and noise bounded in :math:`[-\\sigma,\\sigma]`,
    with probability at least :math:`1-\\delta`,

    .. math::

        |x^\\top\\theta - x^\\top\\hat\\theta_t| \\le C_t \\sum_{i=1}^n |x_i|
        \\sqrt{A_t^{-1}(i, i)}, \\qquad C_t = \\sigma\\sqrt{2\\log(c'\\, t^2 n / \\delta)},
        \\quad c' = \\pi^2/3,

    for all :math:`x \\in \\{-1, 0, 1\\}^n`, n the number of base arms. The per-arm
    widths :math:`C_t\\sqrt{A_t^{-1}(i,i)}` are :func:`independent_widths`; ICB's
    problem P1 maximizes :math:`\\hat\\theta_t(M) + \\sum_i |\\chi_M(i) -
    \\chi_{\\hat M^*_t}(i)|\\, C_t\\sqrt{A_t^{-1}(i,i)}`.

    Parameters
    ----------
    t : float or array-like
        Round (number of samples so far), :math:`t \\ge 1`.
    delta : float
        Confidence level in (0, 1).
    sigma : float
        Noise bound :math:`\\sigma > 0` (of a super-arm's reward).
    n_arms : int
        Number n of base arms (the dimension), ``n_arms >= 1``.

    Returns
    -------
    float or ndarray
        :math:`C_t`, with the shape of ``t``.

    Raises
    ------
    InvalidParameterError
        If ``t < 1``, ``delta`` is outside (0, 1), ``sigma <= 0`` or ``n_arms < 1``.

    Notes
    -----
    **Erratum (Lemma 1 as printed).** The paper takes :math:`c' = 6/\\pi^2` and states the
    bound "with probability at least :math:`1-\\delta`" for all :math:`t \\ge 1`. Per base
    arm i and round t, :math:`\\hat\\theta_t(i) - \\theta(i)` is
    :math:`\\sigma^2 A_t^{-1}(i,i)`-sub-Gaussian (fixed design, noise in
    :math:`[-\\sigma, \\sigma]`), so the two-sided tail at :math:`C_t\\sqrt{A_t^{-1}(i,i)}`
    is :math:`2\\exp(-C_t^2/(2\\sigma^2)) = 2\\delta/(c' t^2 n)`. The union over the n arms
    and all :math:`t \\ge 1` is :math:`(2\\delta/c')\\sum_t t^{-2} = (2\\delta/c')\\,\\pi^2/6`:
    with :math:`c' = 6/\\pi^2` that is :math:`2\\pi^4\\delta/36 \\approx 5.41\\,\\delta`, not
    :math:`\\delta`. The smallest constant giving :math:`\\delta` is
    :math:`c' = \\pi^2/3 \\approx 3.290` (``ICB_C_PRIME``), which this function uses:
    :math:`C_t^2` grows by :math:`2\\sigma^2\\log(\\pi^4/18) \\approx 3.38\\,\\sigma^2`
    (the factor :math:`\\pi^4/18 \\approx 5.41` inside the logarithm). The logarithm is floored at 0 when :math:`c' t^2 n/\\delta < 1`
    (never, since :math:`\\pi^2/3 > 1`).

    Examples
    --------
    >>> round(independent_radius(10, 0.05, sigma=1.0, n_arms=20), 6)
    4.855406
    """
    owner = "independent_radius"
    tt = _check_real(t, "t", owner, low=1.0)
    delta = check_probability(delta, "delta", owner=owner)
    sigma = check_float(sigma, "sigma", owner=owner, low=0.0, closed="right")
    n = check_int(n_arms, "n_arms", owner=owner, low=1)
    log_arg = math.log(ICB_C_PRIME) + 2.0 * np.log(tt) + math.log(n) - math.log(delta)
    return _out(sigma * np.sqrt(2.0 * np.maximum(log_arg, 0.0)))


def independent_widths(a_inv_diag: ArrayLike, t: float, delta: float, *, sigma: float) -> NDArray[np.float64]:
    """Per-arm widths :math:`C_t\\sqrt{A_t^{-1}(i,i)}` of Lemma 1 (ICB), n = ``len(a_inv_diag)``.

    Parameters
    ----------
    a_inv_diag : array-like of shape (n,)
        Diagonal of :math:`A_t^{-1}` (non-negative).
    t : float
        Round, :math:`t \\ge 1`.
    delta : float
        Confidence level in (0, 1).
    sigma : float
        Noise bound :math:`\\sigma > 0`.

    Returns
    -------
    ndarray of shape (n,)
        ``independent_radius(t, delta, sigma=sigma, n_arms=n) * sqrt(a_inv_diag)``; the
        confidence width of :math:`x^\\top\\hat\\theta_t` is ``widths @ abs(x)``.

    Raises
    ------
    InvalidParameterError
        If ``a_inv_diag`` is not a 1-d array with finite non-negative entries, or on the
        errors of :func:`independent_radius`.
    """
    owner = "independent_widths"
    diag = _check_real(a_inv_diag, "a_inv_diag", owner, low=0.0)
    if np.ndim(diag) != 1 or np.size(diag) == 0:
        raise param_error("a_inv_diag", owner, "a non-empty 1-d array", np.asarray(a_inv_diag))
    t = check_float(t, "t", owner=owner, low=1.0)
    c_t = independent_radius(t, delta, sigma=sigma, n_arms=int(np.size(diag)))
    return float(c_t) * np.sqrt(np.asarray(diag))


def lucb_radius(u: ArrayLike, t: ArrayLike, n: int, delta: float, *, sigma: float = 0.5) -> FloatOrArray:
    """LUCB1 confidence radius :math:`\\beta(u, t)` (Kalyanakrishnan et al. 2012), scaled
    for :math:`\\sigma`-sub-Gaussian rewards.

    For rewards in [0, 1] LUCB1 uses

    .. math::

        \\beta(u, t) = \\sqrt{\\frac{\\ln(k_1 N t^4 / \\delta)}{2u}}, \\qquad k_1 = 5/4,

    with u the number of pulls of the arm, t the round and N the number of arms. Rewards
    in [0, 1] are 1/2-sub-Gaussian (Hoeffding), so this is the case ``sigma = 1/2``; for
    :math:`\\sigma`-sub-Gaussian rewards the radius is multiplied by :math:`2\\sigma`:

    .. math::

        \\beta_\\sigma(u, t) = 2\\sigma\\beta(u, t)
        = \\sigma\\sqrt{\\frac{2\\ln(k_1 N t^4/\\delta)}{u}}.

    Parameters
    ----------
    u : float or array-like
        Pull counts :math:`u = T_i(t) > 0` (one per arm when an array).
    t : float or array-like
        Round, :math:`t \\ge 1`.
    n : int
        Number of arms N, ``n >= 1``.
    delta : float
        Confidence level in (0, 1).
    sigma : float, default=0.5
        Sub-Gaussian scale, ``sigma > 0``; the default is the [0, 1]-reward form.

    Returns
    -------
    float or ndarray
        :math:`\\beta_\\sigma(u, t)`, with the broadcast shape of ``u`` and ``t``.

    Raises
    ------
    InvalidParameterError
        If ``u <= 0``, ``t < 1``, ``n < 1``, ``delta`` is outside (0, 1) or ``sigma <= 0``.

    Examples
    --------
    >>> round(lucb_radius(4, 10, 5, 0.1), 6)
    1.291584
    """
    owner = "lucb_radius"
    uu = _check_real(u, "u", owner, low=0.0, closed_low=False)
    tt = _check_real(t, "t", owner, low=1.0)
    n = check_int(n, "n", owner=owner, low=1)
    delta = check_probability(delta, "delta", owner=owner)
    sigma = check_float(sigma, "sigma", owner=owner, low=0.0, closed="right")
    log_arg = math.log(K1_LUCB * n) + 4.0 * np.log(tt) - math.log(delta)
    return _out(2.0 * sigma * np.sqrt(log_arg / (2.0 * np.asarray(uu))))
