"""Estimation: least squares with count-weighted rank-one updates and confidence radii.

* :class:`LeastSquares` keeps :math:`A`, :math:`b`, :math:`A^{-1}`, :math:`\\log\\det A`
  and :math:`\\hat\\theta = A^{-1}b` current under (count-weighted) pulls.
* Radii: :func:`static_radius` (Proposition 1, fixed designs), :func:`self_normalized_radius`
  (eq. (3) of the LinGapE paper, adaptive designs), :func:`independent_radius` /
  :func:`independent_widths` (Lemma 1 of the full-bandit paper, ICB), :func:`lucb_radius`
  (LUCB1), with :func:`log_binomial` for :math:`\\log K` of huge hypothesis sets.
"""

from ._least_squares import LeastSquares
from ._radii import (
    STATIC_CONSTANTS,
    independent_radius,
    independent_widths,
    log_binomial,
    lucb_radius,
    self_normalized_radius,
    static_radius,
)
from ._lil import LILRadius, check_lil_lemma, lil_c_epsilon, lil_omega_max, lil_radius, lil_ucb_index
from ._without_replacement import (
    serfling_radius,
    without_replacement_pulls,
    without_replacement_sample_size,
    without_replacement_u,
)

__all__ = [
    "LeastSquares",
    "static_radius",
    "STATIC_CONSTANTS",
    "self_normalized_radius",
    "independent_radius",
    "independent_widths",
    "lucb_radius",
    "log_binomial",
    "lil_radius",
    "lil_ucb_index",
    "lil_c_epsilon",
    "lil_omega_max",
    "check_lil_lemma",
    "LILRadius",
    "without_replacement_sample_size",
    "without_replacement_pulls",
    "without_replacement_u",
    "serfling_radius",
]
