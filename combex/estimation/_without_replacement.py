"""Sample sizes and radii for sampling WITHOUT replacement from a finite list.

The multi-armed bandit with bounded pulls (MAB-BP) of Liu, Wu and Mozafari (AAAI 2019,
"A Bandit Approach to Maximum Inner Product Search") gives each arm a finite list of
``N`` rewards in ``[a, b]``; a pull draws one entry without replacement. Their Lemma 1
(proved as Lemma 3 of the appendix from Corollary 2.5 of Bardenet and Maillard, 2015)
says that the mean of ``m`` draws is within ``epsilon`` of the list mean (one-sided) with
probability at least ``1 - delta`` as soon as

    m = m(u) = min{ (u + 1) / (1 + u/N),  (u + u/N) / (1 + u/N) },
    u = log(1/delta) (b - a)^2 / (2 epsilon^2).          (eq. (4) and (6))

``m(u) < N`` for every finite ``u >= 0`` (and ``m(u) -> N`` as ``epsilon -> 0``), which
is why BoundedME never pulls an arm more than ``N`` times (Corollary 2).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import check_float, check_int, check_probability, param_error

__all__ = [
    "without_replacement_sample_size",
    "without_replacement_pulls",
    "without_replacement_u",
    "serfling_radius",
]


def without_replacement_u(epsilon: float, delta: float, value_range: float = 1.0) -> float:
    """The ``u`` of Lemma 1: ``log(1/delta) (b - a)^2 / (2 epsilon^2)``.

    Parameters
    ----------
    epsilon : float
        Deviation of the sample mean, > 0 (same unit as the rewards).
    delta : float
        Error probability in (0, 1).
    value_range : float, default 1.0
        ``b - a``, the width of the interval holding the rewards, > 0.

    Examples
    --------
    >>> round(without_replacement_u(0.1, math.exp(-1)), 12)
    50.0
    """
    epsilon = check_float(epsilon, "epsilon", owner="without_replacement_u", low=0.0, closed="neither")
    delta = check_probability(delta, "delta", owner="without_replacement_u")
    value_range = check_float(value_range, "value_range", owner="without_replacement_u", low=0.0, closed="neither")
    return math.log(1.0 / delta) * value_range**2 / (2.0 * epsilon**2)


def without_replacement_sample_size(u: Any, list_size: int) -> Any:
    """``m(u)`` of Lemma 1 / eq. (6) of the BoundedME paper (real-valued, vectorized).

    Parameters
    ----------
    u : float or array of floats
        ``log(1/delta) (b - a)^2 / (2 epsilon^2)`` (see :func:`without_replacement_u`),
        ``>= 0``; ``inf`` is allowed and gives ``N``.
    list_size : int
        ``N``, the size of the finite list, ``>= 1``.

    Returns
    -------
    float or array of floats
        ``min{(u + 1) / (1 + u/N), (u + u/N) / (1 + u/N)}``, in ``[0, N]``.

    Notes
    -----
    The first branch is the relaxed root of the quadratic (14)-(15) of the appendix, the
    second solves (13). The value is real; the number of pulls is its ceiling
    (:func:`without_replacement_pulls`), which never exceeds ``N``.

    Examples
    --------
    With ``N = 100`` and ``u = 50``: ``(51 / 1.5, 50.5 / 1.5) = (34.0, 33.67)``.

    >>> round(float(without_replacement_sample_size(50.0, 100)), 6)
    33.666667
    >>> float(without_replacement_sample_size(float("inf"), 100))
    100.0
    """
    n = check_int(list_size, "list_size", owner="without_replacement_sample_size", low=1)
    uu = np.asarray(u, dtype=np.float64)
    if np.any(np.isnan(uu)) or np.any(uu < 0):
        raise param_error("u", "without_replacement_sample_size", "a float (or array) in the range [0, inf]", u)
    with np.errstate(invalid="ignore", over="ignore"):
        denom = 1.0 + uu / n
        first = (uu + 1.0) / denom
        second = (uu + uu / n) / denom
        m = np.minimum(first, second)
    m = np.where(np.isinf(uu), float(n), m)
    m = np.minimum(m, float(n))  # guards rounding for huge finite u (limit is N exactly)
    return float(m) if m.ndim == 0 else m


def without_replacement_pulls(u: Any, list_size: int) -> Any:
    """The integer number of pulls ``ceil(m(u))`` (at most ``N``; vectorized).

    A tiny relative tolerance (1e-12) absorbs floating error before the ceiling, so a
    value like ``33.000000000000004`` counts as 33.

    Examples
    --------
    >>> int(without_replacement_pulls(50.0, 100))
    34
    """
    m = np.asarray(without_replacement_sample_size(u, list_size), dtype=np.float64)
    out = np.ceil(m * (1.0 - 1e-12)).astype(np.int64)
    out = np.minimum(out, int(list_size))
    return int(out) if out.ndim == 0 else out


def serfling_radius(m: Any, list_size: int, delta: float, value_range: float = 1.0) -> Any:
    """One-sided radius of Corollary 1 (Bardenet and Maillard's Corollary 2.5).

    ``(b - a) sqrt(rho_m log(1/delta) / (2 m))`` with
    ``rho_m = min{1 - (m - 1)/N, (1 - m/N)(1 + 1/m)}``; it is 0 at ``m = N``.

    Parameters
    ----------
    m : int or array of ints
        Number of draws, in ``[1, N]``.
    list_size : int
        ``N``.
    delta : float
        Error probability in (0, 1).
    value_range : float
        ``b - a``.

    Examples
    --------
    >>> float(serfling_radius(100, 100, 0.05))
    0.0
    """
    n = check_int(list_size, "list_size", owner="serfling_radius", low=1)
    delta = check_probability(delta, "delta", owner="serfling_radius")
    value_range = check_float(value_range, "value_range", owner="serfling_radius", low=0.0)
    mm = np.asarray(m, dtype=np.float64)
    if np.any(mm < 1) or np.any(mm > n) or np.any(mm != np.floor(mm)):
        raise param_error("m", "serfling_radius", f"an int (or array of ints) in the range [1, {n}]", m)
    rho = np.minimum(1.0 - (mm - 1.0) / n, (1.0 - mm / n) * (1.0 + 1.0 / mm))
    r = value_range * np.sqrt(np.maximum(rho, 0.0) * math.log(1.0 / delta) / (2.0 * mm))
    return float(r) if r.ndim == 0 else r
