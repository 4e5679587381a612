"""Linear bandit environment: arms are the rows of a feature matrix."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, check_matrix, check_weights
from ..exceptions import InvalidParameterError
from ._base import ArmType, Environment, NoiseModel

__all__ = ["LinearBandit"]

_LINEAR_NOISES = ("gaussian", "pm1")
# Round-off allowed on |x^T theta| <= 1 for the +-1 rewards.
_PM1_TOL = 1e-12


class LinearBandit(Environment):
    """Linear bandit: pulling arm ``i`` (row ``x_i`` of ``features``) returns a reward of
    mean ``x_i^T theta``.

    The sum of ``c`` rewards is drawn in one step:

    * ``"gaussian"``: reward ``x^T theta + N(0, sigma^2)``; the sum is
      ``N(c x^T theta, c sigma^2)``.
    * ``"pm1"``: reward ``+1`` with probability ``(1 + x^T theta) / 2`` and ``-1``
      otherwise (mean ``x^T theta``; requires ``|x^T theta| <= 1`` for every arm); the sum
      is ``2 Binomial(c, (1 + x^T theta) / 2) - c``.

    Parameters
    ----------
    features : array of shape (n_arms, d)
        The arm features (exposed as the read-only attribute :attr:`features`, which
        :attr:`Environment.problem` hands to solvers).
    theta : array of shape (d,)
        The unknown parameter.
    noise : {"gaussian", "pm1"}, default "gaussian"
    sigma : float, optional
        Gaussian standard deviation (default 1.0); must not be given with ``"pm1"``.
    rng : None, int, SeedSequence or Generator
        Generator of the noise.

    Notes
    -----
    ``noise`` (the :class:`NoiseModel`) is ``("gaussian", sigma, None)`` or
    ``("pm1", 1.0, 2.0)``: a +-1 reward has range length 2, hence is 1-sub-Gaussian
    (Hoeffding's lemma), and its noise ``Y - x^T theta`` lies in ``[-2, 2]`` whatever
    theta (the a-priori bound, which reveals nothing about theta). For ``"pm1"``,
    ``|x^T theta|`` may exceed 1 by at most 1e-12 (round-off); the success probability is
    then clipped to [0, 1]. Larger values raise.

    Examples
    --------
    >>> env = LinearBandit([[1.0, 0.0], [0.0, 1.0]], [0.5, 0.2], rng=0)
    >>> env.means()
    array([0.5, 0.2])
    """

    arm_type: ArmType = "index"

    def __init__(
        self,
        features: Any,
        theta: Any,
        *,
        noise: str = "gaussian",
        sigma: Any = None,
        rng: Any = None,
    ) -> None:
        super().__init__(rng=rng)
        owner = type(self).__name__
        x = check_matrix(features, "features", owner=owner).copy()
        if x.shape[0] == 0 or x.shape[1] == 0:
            raise InvalidParameterError(
                f"The 'features' parameter of {owner} must have at least one row and one "
                f"column. Got an array of shape {x.shape} instead."
            )
        self._theta = check_weights(theta, x.shape[1], "theta", owner=owner).copy()
        x.setflags(write=False)
        self.features: NDArray[np.float64] = x
        self.n_arms = int(x.shape[0])
        self.dim = int(x.shape[1])
        self._means = x @ self._theta
        self.noise_kind = check_choice(noise, "noise", _LINEAR_NOISES, owner=owner)
        if self.noise_kind == "pm1":
            if sigma is not None:
                raise InvalidParameterError(
                    f"The 'sigma' parameter of {owner} must be None with noise='pm1' (+-1 "
                    f"rewards have a fixed scale). Got {sigma!r} instead."
                )
            bad = np.abs(self._means) > 1.0 + _PM1_TOL
            if np.any(bad):
                i = int(np.flatnonzero(bad)[0])
                raise InvalidParameterError(
                    f"{owner} with noise='pm1' needs |x^T theta| <= 1 for every arm (the reward "
                    f"is +1 with probability (1 + x^T theta) / 2). Got x^T theta = "
                    f"{float(self._means[i])!r} for arm {i}."
                )
            self._p_plus = np.clip((1.0 + self._means) / 2.0, 0.0, 1.0)
            self.sigma: float | None = None
            self.noise = NoiseModel(kind="pm1", sigma=1.0, bound=2.0)
        else:
            s = 1.0 if sigma is None else check_float(sigma, "sigma", owner=owner, low=0.0, closed="neither")
            self.sigma = s
            self.noise = NoiseModel(kind="gaussian", sigma=s, bound=None)

    @property
    def sequential_draws(self) -> bool:  # type: ignore[override]
        """True: a batch draws its rewards entry by entry from the generator (one normal,
        or one binomial, per entry), so ``m`` single pulls in one call are ``m`` successive
        pulls (subclasses that redefine the draws are not assumed to keep this)."""
        return type(self)._pull_many is LinearBandit._pull_many

    @property
    def theta(self) -> NDArray[np.float64]:
        """The true parameter (a copy)."""
        return self._theta.copy()

    def means(self) -> NDArray[np.float64]:
        """``features @ theta`` (shape (n_arms,))."""
        return self._means.copy()

    def _pull_many(self, arms: NDArray[Any], counts: NDArray[np.int64]) -> NDArray[np.float64]:
        if self.noise_kind == "pm1":
            if arms.shape[0] == 1:  # the same draw as the array call, without its overhead
                c1 = int(counts[0])
                b1 = int(self.rng.binomial(c1, float(self._p_plus[arms[0]])))
                return np.array([float(b1 - (c1 - b1))])
            b = self.rng.binomial(counts, self._p_plus[arms])
            return (b - (counts - b)).astype(np.float64)
        if arms.shape[0] == 1:  # one arm (adaptive solvers): the same draw and arithmetic in scalars
            c1 = float(counts[0])
            z1 = self.rng.standard_normal()
            return np.array([c1 * self._means[arms[0]] + float(self.sigma) * math.sqrt(c1) * z1])
        c = counts.astype(np.float64)
        z = self.rng.standard_normal(len(arms))
        return c * self._means[arms] + float(self.sigma) * np.sqrt(c) * z

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "features": self.features.tolist(),
            "theta": self._theta.tolist(),
            "noise": self.noise_kind,
        }
        if self.sigma is not None:
            out["sigma"] = self.sigma
        return out
