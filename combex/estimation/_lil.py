"""The finite-time law-of-the-iterated-logarithm (LIL) confidence radius.

Lemma 2.1 of Jiang, Li & Qiao (2017) (a restatement of Lemma 3 of Jamieson et al. 2014):
let :math:`X_1, X_2, \\dots` be i.i.d. centred :math:`\\sigma`-sub-Gaussian variables. For
every :math:`\\epsilon \\in (0, 1)` and :math:`\\omega \\in (0, \\log(1+\\epsilon)/e)`, with
probability at least :math:`1 - c_\\epsilon \\omega^{1+\\epsilon}`,

.. math::

    \\frac1t \\sum_{s=1}^t X_s \\le U(t, \\omega) \\quad \\text{for all } t \\ge 1,

    U(t, \\omega) = (1 + \\sqrt{\\epsilon})
        \\sqrt{\\frac{2 \\sigma^2 (1 + \\epsilon)}{t}
               \\log\\Big[\\frac{\\log((1 + \\epsilon) t)}{\\omega}\\Big]},
    \\qquad
    c_\\epsilon = \\frac{2 + \\epsilon}{\\epsilon}
        \\Big[\\frac{1}{\\log(1 + \\epsilon)}\\Big]^{1 + \\epsilon}.

The paper writes the lemma's confidence constant :math:`\\delta`; combex keeps ``delta`` for
the error probability a solver guarantees and calls the lemma's constant ``lil_delta`` (the
LIL solvers of :mod:`combex.solvers.semi_bandit` derive it from their ``delta``) or, as the
argument of :math:`U`, ``omega`` (``lil_delta``, ``lil_delta / N``, ``lil_delta / (2K)``...).

Section 5 of the same paper modifies the radius to
:math:`\\log[\\log((1+\\epsilon) t + 2) / \\omega]` "in order to avoid negative numbers inside
the log"; that ``+ 2`` (the ``plus`` argument here) is the default of every function in this
module. It only enlarges the radius, so the lemma's guarantee still holds.

The bound is one-sided; the best-K algorithms only need one side per arm for correctness
(an arm of the optimal set must not look too low, any other arm must not look too high), so
their guarantees (Theorems 3.1, 4.1 of the paper) use :math:`c_\\epsilon\\omega^{1+\\epsilon}`
per arm.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_float, param_error
from ..exceptions import InvalidParameterError

__all__ = [
    "lil_c_epsilon",
    "lil_omega_max",
    "check_lil_lemma",
    "lil_radius",
    "lil_ucb_index",
    "LILRadius",
]

_OWNER = "lil_radius"


def lil_c_epsilon(epsilon: float) -> float:
    """The constant :math:`c_\\epsilon = \\frac{2+\\epsilon}{\\epsilon}
    [1/\\log(1+\\epsilon)]^{1+\\epsilon}` of Lemma 2.1.

    Parameters
    ----------
    epsilon : float in (0, 1)

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``epsilon`` is not in the open interval (0, 1) (the lemma's range; at
        ``epsilon = 0`` the constant is infinite).

    Examples
    --------
    >>> round(lil_c_epsilon(0.5), 4)
    19.366
    """
    eps = check_float(epsilon, "epsilon", owner="lil_c_epsilon", low=0.0, high=1.0, closed="neither")
    return (2.0 + eps) / eps * (1.0 / math.log1p(eps)) ** (1.0 + eps)


def lil_omega_max(epsilon: float) -> float:
    """The upper end :math:`\\log(1+\\epsilon)/e` of the confidence range of Lemma 2.1
    (each ``omega`` given to :func:`lil_radius` must be below it for the lemma to apply)."""
    eps = check_float(epsilon, "epsilon", owner="lil_omega_max", low=0.0, high=1.0, closed="neither")
    return math.log1p(eps) / math.e


def check_lil_lemma(epsilon: float, omega: float, *, name: str = "omega", owner: str | None = None) -> None:
    """Check that ``(epsilon, omega)`` lies in the range of Lemma 2.1:
    ``epsilon`` in (0, 1) and ``omega`` in (0, log(1 + epsilon) / e).

    Raises
    ------
    InvalidParameterError
        Naming the argument, the value and the admissible range.
    """
    eps = check_float(epsilon, "epsilon", owner=owner, low=0.0, high=1.0, closed="neither")
    top = math.log1p(eps) / math.e
    w = float(omega)
    if not (0.0 < w < top):
        raise param_error(
            name, owner, f"a float in the range (0, log(1 + epsilon)/e) = (0, {top!r}) for Lemma 2.1 "
            f"with epsilon={eps!r}", w
        )


def _check_common(epsilon: Any, sigma: Any, plus: Any, owner: str) -> tuple[float, float, float]:
    eps = check_float(epsilon, "epsilon", owner=owner, low=0.0, high=1.0, closed="left")
    sig = check_float(sigma, "sigma", owner=owner, low=0.0, closed="neither")
    p = check_float(plus, "plus", owner=owner, low=0.0)
    return eps, sig, p


def _check_t(t: ArrayLike, owner: str) -> NDArray[np.float64]:
    try:
        ta = np.asarray(t, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error("t", owner, "a real number or array with entries >= 1", t) from None
    if not np.all(np.isfinite(ta)) or np.any(ta < 1.0):
        bad = ta[~(np.isfinite(ta) & (ta >= 1.0))].reshape(-1)[0]
        raise param_error("t", owner, "a real number or array with entries >= 1 (sample counts)", float(bad))
    return ta


class LILRadius:
    """:math:`U(t, \\omega)` of Lemma 2.1 with the ``+plus`` modification of Section 5, with
    its constants precomputed for repeated evaluation in a solver's inner loop.

    Parameters
    ----------
    omega : float in (0, 1)
        The confidence argument (e.g. ``delta / N``).
    epsilon : float in [0, 1)
        ``epsilon = 0`` is the "heuristic" radius of Section 5 (no lemma behind it).
    sigma : float > 0
        Sub-Gaussian scale of one observation.
    plus : float >= 0, default 2.0
        The constant added inside the inner logarithm (2 in Section 5; 0 gives Lemma 2.1
        verbatim, defined only when ``log((1+epsilon) t) > omega``).

    Examples
    --------
    >>> U = LILRadius(0.1, epsilon=0.0, sigma=1.0)
    >>> round(float(U(1)), 6)
    2.189353
    """

    def __init__(self, omega: float, *, epsilon: float = 0.0, sigma: float = 1.0, plus: float = 2.0) -> None:
        owner = "LILRadius"
        self.epsilon, self.sigma, self.plus = _check_common(epsilon, sigma, plus, owner)
        self.omega = check_float(omega, "omega", owner=owner, low=0.0, high=1.0, closed="neither")
        self._scale = (1.0 + math.sqrt(self.epsilon)) * math.sqrt(2.0 * self.sigma**2 * (1.0 + self.epsilon))
        self._log_omega = math.log(self.omega)
        self._growth = 1.0 + self.epsilon
        if self.plus == 0.0:
            # the smallest t (t = 1) gives the smallest inner value; it must exceed omega
            if math.log(self._growth) <= self.omega:
                raise InvalidParameterError(
                    f"U(t, omega) of Lemma 2.1 with plus=0 is undefined at t=1 for epsilon="
                    f"{self.epsilon!r}, omega={self.omega!r} (log((1+epsilon) t) <= omega); use "
                    f"plus=2 (Section 5) or a smaller omega."
                )

    def __call__(self, t: ArrayLike) -> NDArray[np.float64]:
        """Vectorized :math:`U(t, \\omega)` for counts ``t >= 1`` (no validation of ``t``:
        the solvers' hot path; use :func:`lil_radius` for checked input)."""
        ta = np.asarray(t, dtype=np.float64)
        inner = np.log(np.log(self._growth * ta + self.plus)) - self._log_omega
        return self._scale * np.sqrt(inner / ta)

    def scalar(self, t: float) -> float:
        """:math:`U(t, \\omega)` for one count (plain floats, fast)."""
        return self._scale * math.sqrt((math.log(math.log(self._growth * t + self.plus)) - self._log_omega) / t)

    def __repr__(self) -> str:
        return f"LILRadius(omega={self.omega!r}, epsilon={self.epsilon!r}, sigma={self.sigma!r}, plus={self.plus!r})"


def lil_radius(
    t: ArrayLike,
    omega: float,
    *,
    epsilon: float,
    sigma: float = 1.0,
    plus: float = 2.0,
) -> NDArray[np.float64]:
    """The LIL confidence radius :math:`U(t, \\omega)` of Lemma 2.1, vectorized over ``t``.

    .. math::

        U(t, \\omega) = (1 + \\sqrt{\\epsilon})
            \\sqrt{\\frac{2 \\sigma^2 (1 + \\epsilon)}{t}
                   \\log\\Big[\\frac{\\log((1 + \\epsilon) t + \\text{plus})}{\\omega}\\Big]}

    with ``plus = 2`` as modified in Section 5 of Jiang et al. (2017).

    Parameters
    ----------
    t : float or array
        Sample counts, each >= 1.
    omega : float in (0, 1)
        Confidence argument (``delta``, ``delta / N``, ``delta / (2K)``...).
    epsilon : float in [0, 1)
        The lemma's epsilon (0 for the heuristic radius).
    sigma : float > 0
        Sub-Gaussian scale of one observation (0.5 for Gaussian rewards of variance 1/4).
    plus : float >= 0, default 2.0

    Returns
    -------
    array of the shape of ``t`` (a 0-d array for scalar ``t``)

    Raises
    ------
    InvalidParameterError
        For ``t < 1``, ``omega`` outside (0, 1), ``epsilon`` outside [0, 1),
        ``sigma <= 0``, ``plus < 0``, or ``plus = 0`` where the radius is undefined.

    Notes
    -----
    :math:`U` is decreasing in ``t`` for ``t >= 1`` (for ``plus = 2``) and decreasing in
    ``omega``. Lemma 2.1 applies only for ``epsilon`` in (0, 1) and ``omega`` below
    ``log(1 + epsilon)/e``; see :func:`check_lil_lemma`.

    Examples
    --------
    >>> float(lil_radius(1, 0.1, epsilon=0.0).round(6))
    2.189353
    >>> lil_radius([1, 10, 100], 0.01, epsilon=0.01, sigma=0.5).round(4)
    array([1.6951, 0.5807, 0.1937])
    """
    eps, sig, p = _check_common(epsilon, sigma, plus, _OWNER)
    ta = _check_t(t, _OWNER)
    w = check_float(omega, "omega", owner=_OWNER, low=0.0, high=1.0, closed="neither")
    inner_log = np.log((1.0 + eps) * ta + p)
    if np.any(inner_log <= w):
        bad = float(ta[inner_log <= w].reshape(-1)[0])
        raise InvalidParameterError(
            f"U(t, omega) is undefined at t={bad!r} for epsilon={eps!r}, omega={w!r}, plus={p!r} "
            f"(log((1+epsilon) t + plus) <= omega); use plus=2 (Section 5)."
        )
    return (1.0 + math.sqrt(eps)) * np.sqrt(2.0 * sig**2 * (1.0 + eps) / ta * np.log(inner_log / w))


def lil_ucb_index(
    means: ArrayLike,
    counts: ArrayLike,
    *,
    lil_delta: float | None = None,
    epsilon: float,
    beta: float,
    sigma: float = 1.0,
    plus: float = 2.0,
    delta: float | None = None,
) -> NDArray[np.float64]:
    """The lil'UCB index of Jamieson, Malloy, Nowak & Bubeck (2014), Algorithm 1:

    .. math::

        \\hat\\mu_{i, T_i} + (1 + \\beta)(1 + \\sqrt{\\epsilon})
        \\sqrt{\\frac{2 \\sigma^2 (1 + \\epsilon)}{T_i}
               \\log\\Big[\\frac{\\log((1 + \\epsilon) T_i + \\text{plus})}{\\delta_L}\\Big]}
        = \\hat\\mu_{i, T_i} + (1 + \\beta)\\, U(T_i, \\delta_L),

    with :math:`\\delta_L` = ``lil_delta``, Lemma 2.1's confidence constant (the paper's
    delta; not the error probability lil'UCB guarantees, which is
    ``4 sqrt(c_eps lil_delta) + 4 c_eps lil_delta`` by Theorem 2 of that paper), and the
    ``+2`` of Section 5 of Jiang et al. (2017) by default.

    Parameters
    ----------
    means : array of shape (n,)
        Empirical means.
    counts : array of shape (n,)
        Sample counts, each >= 1.
    lil_delta : float in (0, 1)
        Lemma 2.1's confidence constant (required).
    epsilon : float in [0, 1)
    beta : float >= 0
    sigma : float > 0
    plus : float >= 0
    delta : float in (0, 1), optional
        Deprecated alias of ``lil_delta``.

    Returns
    -------
    array of shape (n,)

    Examples
    --------
    >>> lil_ucb_index([0.0, 0.5], [1, 4], lil_delta=0.1, epsilon=0.0, beta=0.0).round(4)
    array([2.1894, 1.7012])
    """
    owner = "lil_ucb_index"
    if delta is not None:
        warnings.warn(
            "The 'delta' parameter of lil_ucb_index is deprecated; use 'lil_delta' (Lemma 2.1's constant).",
            DeprecationWarning,
            stacklevel=2,
        )
        if lil_delta is not None:
            raise InvalidParameterError(
                f"The 'delta' parameter of {owner} is a deprecated alias of 'lil_delta'; give only 'lil_delta'. Got "
                f"lil_delta={lil_delta!r} and delta={delta!r} instead."
            )
        lil_delta = delta
    if lil_delta is None:
        raise InvalidParameterError(f"The 'lil_delta' parameter of {owner} is required. Got None instead.")
    b = check_float(beta, "beta", owner=owner, low=0.0)
    mu = np.asarray(means, dtype=np.float64)
    t = np.asarray(counts)
    if mu.shape != t.shape or mu.ndim != 1:
        raise InvalidParameterError(
            f"The 'means' and 'counts' parameters of {owner} must be 1-d arrays of one shape. "
            f"Got shapes {mu.shape} and {t.shape} instead."
        )
    if not np.all(np.isfinite(mu)):
        raise InvalidParameterError(f"The 'means' parameter of {owner} must have finite entries.")
    return mu + (1.0 + b) * lil_radius(t, lil_delta, epsilon=epsilon, sigma=sigma, plus=plus)
