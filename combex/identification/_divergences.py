"""The reward models of independent arms as objects: the divergence ``d(mu, x)`` of one arm
and the GLR of one pair, for every query.

A GLR stopping or sampling rule on independent arms needs two things from the reward model
(Garivier & Kaufmann 2016, section 3; Kaufmann & Koolen 2021, section 4): the cost
``N_a d(mu_a, lambda_a)`` of moving arm ``a``'s mean to ``lambda_a``, and the closed form (or
the one-dimensional minimisation) of the pair GLR

    Z_ij = inf_{lambda_j >= lambda_i + eps} N_i d(mu_i, lambda_i) + N_j d(mu_j, lambda_j),

with the alternative's ``lambda_i = x`` (then ``lambda_j = x + eps``). By the envelope
theorem ``dZ_ij / dN_i = d(mu_i, x)`` and ``dZ_ij / dN_j = d(mu_j, x + eps)``: the gradients
of the sampling rules. Each divergence gives both:

* :class:`GaussianDivergence` (known scale ``sigma``): ``d = (mu - x)^2 / (2 sigma^2)``,
  ``Z_ij = (mu_i - mu_j + eps)_+^2 / (2 sigma^2 (1/N_i + 1/N_j))``;
* :class:`BernoulliDivergence`: the Bernoulli KL, the pair's ``x`` by bisection
  (:func:`~combex.identification.pair_glr`);
* :class:`UnknownVarianceDivergence`: ``d = log(1 + (mu - x)^2 / var) / 2`` with the arm's
  empirical variance ``var`` (:func:`~combex.identification.pair_glr_unknown_variance`).

:func:`make_divergence` builds one from its name (``"gaussian"``, ``"bernoulli"``,
``"unknown-variance"``). The GLR solvers hold one (``GLRExploration.model``) and switch it
to the unknown-variance model when the data reject a declared scale.

Examples
--------
>>> import numpy as np
>>> from combex.identification import make_divergence
>>> g = make_divergence("gaussian", sigma=1.0)
>>> z, x = g.pair(np.array([1.0]), np.array([0.0]), np.array([4.0]), np.array([4.0]))
>>> float(z[0]), float(x[0]), float(g.d(1.0, x[0]))
(1.0, 0.5, 0.125)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._jit import compiled
from .._validation import check_choice, check_float
from ..exceptions import InvalidParameterError
from ..estimation._glr import kl_bernoulli, pair_glr
from ..estimation._glr_unknown_variance import kl_gaussian_unknown_variance, pair_glr_unknown_variance

__all__ = ["Divergence", "GaussianDivergence", "BernoulliDivergence", "UnknownVarianceDivergence",
           "make_divergence", "DIVERGENCE_NAMES"]

#: The names :func:`make_divergence` accepts.
DIVERGENCE_NAMES = ("gaussian", "bernoulli", "unknown-variance")

Pair = tuple[NDArray[np.float64], NDArray[np.float64]]


class Divergence(ABC):
    """A reward model of independent arms (base class): :meth:`d` and :meth:`pair`.

    ``var`` arguments are the arms' empirical variances, read by the unknown-variance model
    only."""

    name: str = ""

    @abstractmethod
    def d(self, mu: Any, x: Any, var: Any = None) -> Any:
        """The divergence ``d(mu, x)`` of one arm from mean ``mu`` to ``x`` (vectorized)."""

    @abstractmethod
    def pair(self, mu_i: Any, mu_j: Any, n_i: Any, n_j: Any, epsilon: float = 0.0,
             var_i: Any = None, var_j: Any = None) -> Pair:
        """``(Z, x)``: the GLR of "arm i is epsilon-good against arm j" at weights ``n_i``,
        ``n_j`` (counts or proportions) and the alternative's ``lambda_i = x``
        (vectorized over pairs)."""

    def pair_at(self, mu: Any, w: Any, I: Any, J: Any, epsilon: float = 0.0) -> Pair:
        """:meth:`pair` of the pairs ``(I[k], J[k])`` of arms with means ``mu`` and weights
        ``w`` (known-scale models; the same values as ``pair(mu[I], mu[J], w[I], w[J],
        epsilon)``, which a model may compute without the four gathered arrays)."""
        return self.pair(mu[I], mu[J], w[I], w[J], epsilon)

    def gradients(self, mu_i: Any, mu_j: Any, x: Any, epsilon: float = 0.0,
                  var_i: Any = None, var_j: Any = None) -> tuple[Any, Any]:
        """``(dZ/dn_i, dZ/dn_j) = (d(mu_i, x), d(mu_j, x + eps))`` at the pair's alternative
        ``x`` (the envelope theorem)."""
        return self.d(mu_i, x, var_i), self.d(mu_j, x + epsilon, var_j)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class GaussianDivergence(Divergence):
    """Gaussian rewards of known scale ``sigma``."""

    name = "gaussian"

    def __init__(self, sigma: float = 1.0) -> None:
        self.sigma = check_float(sigma, "sigma", owner="GaussianDivergence", low=0.0, closed="neither")

    def d(self, mu: Any, x: Any, var: Any = None) -> Any:
        return (mu - x) ** 2 / (2.0 * self.sigma * self.sigma)

    def gradients(self, mu_i: Any, mu_j: Any, x: Any, epsilon: float = 0.0,
                  var_i: Any = None, var_j: Any = None) -> tuple[Any, Any]:
        s2 = 2.0 * self.sigma * self.sigma
        return (mu_i - x) ** 2 / s2, (mu_j - x - epsilon) ** 2 / s2

    def pair(self, mu_i: Any, mu_j: Any, n_i: Any, n_j: Any, epsilon: float = 0.0,
             var_i: Any = None, var_j: Any = None) -> Pair:
        # pair_glr's closed form, inlined (the same operations): this runs at every sample
        gap = mu_i - mu_j + epsilon
        x = (n_i * mu_i + n_j * (mu_j - epsilon)) / (n_i + n_j)
        z = np.where(gap > 0, gap * gap / (2.0 * self.sigma * self.sigma * (1.0 / n_i + 1.0 / n_j)), 0.0)
        return z, x

    def pair_at(self, mu: Any, w: Any, I: Any, J: Any, epsilon: float = 0.0) -> Pair:
        """:meth:`pair` of the pairs ``(I[k], J[k])``, in one compiled loop when numba is
        installed (the ``mips`` extra) and the arrays are float64 / intp: the same
        operations in the same order, so the same values as numpy's, without the gathered
        arrays and the dozen numpy calls (a GLR check and a sampling step call it at every
        sample)."""
        kernel = _gaussian_pair_kernel()
        if (kernel is None or type(mu) is not np.ndarray or type(w) is not np.ndarray
                or mu.dtype != np.float64 or w.dtype != np.float64 or I.dtype != np.intp or J.dtype != np.intp):
            return super().pair_at(mu, w, I, J, epsilon)
        z = np.empty(I.shape[0])
        x = np.empty(I.shape[0])
        kernel(mu, w, I, J, float(epsilon), 2.0 * self.sigma * self.sigma, z, x)
        return z, x

    def __repr__(self) -> str:
        return f"GaussianDivergence(sigma={self.sigma!r})"


def _gaussian_pairs(mu: Any, w: Any, I: Any, J: Any, epsilon: float, s2: float, z: Any, x: Any) -> None:
    """:meth:`GaussianDivergence.pair`'s arithmetic, pair by pair (compiled by numba;
    ``s2 = 2 sigma^2``, computed as numpy does: ``(2.0 * sigma) * sigma``)."""
    for k in range(I.shape[0]):
        mi = mu[I[k]]
        mj = mu[J[k]]
        ni = w[I[k]]
        nj = w[J[k]]
        gap = mi - mj + epsilon
        x[k] = (ni * mi + nj * (mj - epsilon)) / (ni + nj)
        z[k] = gap * gap / (s2 * (1.0 / ni + 1.0 / nj)) if gap > 0 else 0.0


def _gaussian_pair_kernel() -> Any:
    """The numba-compiled :func:`_gaussian_pairs` (compiled once a process or loaded from
    numba's cache; fastmath off, IEEE division by zero as numpy's), or None without numba."""
    return compiled(_gaussian_pairs, error_model="numpy")


class BernoulliDivergence(Divergence):
    """Bernoulli rewards: the KL divergence of Bernoulli distributions."""

    name = "bernoulli"

    def d(self, mu: Any, x: Any, var: Any = None) -> Any:
        return kl_bernoulli(mu, x)

    def pair(self, mu_i: Any, mu_j: Any, n_i: Any, n_j: Any, epsilon: float = 0.0,
             var_i: Any = None, var_j: Any = None) -> Pair:
        return pair_glr(mu_i, mu_j, n_i, n_j, epsilon=epsilon, divergence="bernoulli")


class UnknownVarianceDivergence(Divergence):
    """Gaussian rewards of unknown variances: the cost of the closest Gaussian of any
    variance, with each arm's empirical variance ``var``."""

    name = "unknown-variance"

    def d(self, mu: Any, x: Any, var: Any = None) -> Any:
        return kl_gaussian_unknown_variance(mu, x, var)

    def pair(self, mu_i: Any, mu_j: Any, n_i: Any, n_j: Any, epsilon: float = 0.0,
             var_i: Any = None, var_j: Any = None) -> Pair:
        return pair_glr_unknown_variance(mu_i, mu_j, n_i, n_j, var_i, var_j, epsilon=epsilon)


def make_divergence(name: str, *, sigma: float | None = None) -> Divergence:
    """The divergence named ``name`` (``sigma``: the Gaussian scale, required for
    ``"gaussian"``)."""
    name = check_choice(name, "name", DIVERGENCE_NAMES, owner="make_divergence")
    if name == "gaussian":
        if sigma is None:
            raise InvalidParameterError("The 'sigma' parameter of make_divergence is required for 'gaussian'. Got None.")
        return GaussianDivergence(sigma)
    return BernoulliDivergence() if name == "bernoulli" else UnknownVarianceDivergence()
