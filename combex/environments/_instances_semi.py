"""Best-K instances of Jiang, Li & Qiao (2017), Section 5 (semi-bandit / multi-armed).

All instances have Gaussian rewards with variance 1/4 (``sigma = 0.5``), as in the paper.
Arms are indexed in decreasing order of their means: arm ``i`` (0-based) has mean
:math:`\\mu_{[i+1]}`. The algorithms are permutation-equivariant (up to measure-zero ties of
continuous empirical means), so the order does not favour any of them.

* ``jiang_1sparse(N, K)``: :math:`\\mu_{[1]} = \\dots = \\mu_{[K]} = 1/2`,
  :math:`\\mu_{[K+1]} = \\dots = \\mu_{[N]} = 0` (Section 5.1; with ``K = 1`` the 1-sparse
  instance of Section 5.2).
* ``jiang_exponential(N, K, alpha)``: for :math:`i \\le K`,
  :math:`\\mu_{[i]} = \\frac{N-K}{N} + \\frac KN \\big(\\frac{K-i}{K}\\big)^\\alpha`; for
  :math:`i > K`, :math:`\\mu_{[i]} = \\frac{N-K}{N} - \\frac{N-K}{N}
  \\big(\\frac{i-K}{N-K}\\big)^\\alpha` (Section 5.1, ``alpha = 0.3``).
* ``lil_exponential(N, alpha)``: :math:`\\mu_{[1]} = 1`,
  :math:`\\mu_{[i]} = 1 - ((i-1)/N)^\\alpha` for :math:`i > 1` (Section 5.2, from
  Jamieson et al. 2014; ``alpha`` in {0.3, 0.6}).

The builders return a :class:`BestKGaussianArms`: a :class:`GaussianArms` that scores
K-sets (``best()`` is the bool mask of the K best arms, ``is_correct`` accepts a mask).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_float, check_int, check_mask
from ..exceptions import InvalidParameterError
from ._simulated import GaussianArms

__all__ = [
    "BestKGaussianArms",
    "jiang_1sparse_means",
    "jiang_exponential_means",
    "lil_exponential_means",
    "jiang_1sparse",
    "jiang_exponential",
    "lil_exponential",
]

#: Standard deviation of one reward in every experiment of Section 5 (variance 1/4).
PAPER_SIGMA = 0.5


def _check_nk(N: Any, K: Any, owner: str) -> tuple[int, int]:
    n = check_int(N, "N", owner=owner, low=2)
    k = check_int(K, "K", owner=owner, low=1, high=n - 1)
    return n, k


def jiang_1sparse_means(N: int, K: int) -> NDArray[np.float64]:
    """Means of the "1-sparse" instance: K arms at 1/2, N - K arms at 0 (decreasing order).

    Examples
    --------
    >>> jiang_1sparse_means(4, 1)
    array([0.5, 0. , 0. , 0. ])
    """
    n, k = _check_nk(N, K, "jiang_1sparse")
    mu = np.zeros(n)
    mu[:k] = 0.5
    return mu


def jiang_exponential_means(N: int, K: int, alpha: float = 0.3) -> NDArray[np.float64]:
    """Means of the "alpha-Exponential" Best-K instance of Section 5.1 (decreasing order).

    Examples
    --------
    >>> jiang_exponential_means(4, 2, 1.0)
    array([0.75, 0.5 , 0.25, 0.  ])
    """
    owner = "jiang_exponential"
    n, k = _check_nk(N, K, owner)
    a = check_float(alpha, "alpha", owner=owner, low=0.0, closed="neither")
    i = np.arange(1, n + 1, dtype=np.float64)
    top = (n - k) / n + (k / n) * ((k - i[:k]) / k) ** a
    bottom = (n - k) / n - ((n - k) / n) * ((i[k:] - k) / (n - k)) ** a
    return np.concatenate([top, bottom])


def lil_exponential_means(N: int, alpha: float = 0.3) -> NDArray[np.float64]:
    """Means of the "lil-Exponential" Best-1 instance of Jamieson et al. (2014), Section 5.2
    of Jiang et al.: 1, then ``1 - ((i-1)/N)^alpha`` for ``i = 2..N``.

    Examples
    --------
    >>> lil_exponential_means(4, 1.0)
    array([1.  , 0.75, 0.5 , 0.25])
    """
    owner = "lil_exponential"
    n = check_int(N, "N", owner=owner, low=2)
    a = check_float(alpha, "alpha", owner=owner, low=0.0, closed="neither")
    i = np.arange(1, n + 1, dtype=np.float64)
    mu = 1.0 - ((i - 1.0) / n) ** a
    mu[0] = 1.0
    return mu


class BestKGaussianArms(GaussianArms):
    """Gaussian arms whose answer is the set of the K arms with the largest means.

    A :class:`GaussianArms` (index arms, same pulls and noise) whose :meth:`best` is the bool
    mask of a best K-set and whose :meth:`value` / :meth:`is_correct` accept a K-set mask
    (its total mean) as well as an arm index (``K = 1``).

    Parameters
    ----------
    means : array of shape (N,)
    K : int in [1, N - 1]
    sigma : float, default 0.5
    rng : None, int, SeedSequence or Generator
    """

    def __init__(self, means: Any, K: int, *, sigma: Any = PAPER_SIGMA, rng: Any = None) -> None:
        super().__init__(means, sigma=sigma, rng=rng)
        self.K = check_int(K, "K", owner=type(self).__name__, low=1, high=self.n_arms - 1)

    def best(self) -> NDArray[np.bool_]:
        """Bool mask of the K arms with the largest means (ties by lower index)."""
        order = np.argsort(-self._means, kind="stable")
        m = np.zeros(self.n_arms, dtype=bool)
        m[order[: self.K]] = True
        return m

    def value(self, arm: Any) -> float:
        """Total mean of a K-set mask, or the mean of one arm index."""
        if np.ndim(arm) == 0:
            return super().value(arm)
        m = check_mask(arm, self.n_arms, "arm", owner=type(self).__name__)
        if int(m.sum()) != self.K:
            raise InvalidParameterError(
                f"The 'arm' parameter of {type(self).__name__} must be a mask of exactly K={self.K} "
                f"arms. Got a mask of {int(m.sum())} arms instead."
            )
        return float(self._means[m].sum())

    def params(self) -> dict[str, Any]:
        out = super().params()
        out["K"] = self.K
        return out


def jiang_1sparse(N: int = 100, K: int = 2, *, sigma: float = PAPER_SIGMA, rng: Any = None) -> BestKGaussianArms:
    """The "1-sparse" instance (Section 5.1; ``K = 1`` for Section 5.2) as an environment.

    Examples
    --------
    >>> env = jiang_1sparse(5, 2, rng=0)
    >>> env.best().tolist(), env.noise.sigma
    ([True, True, False, False, False], 0.5)
    """
    return BestKGaussianArms(jiang_1sparse_means(N, K), K, sigma=sigma, rng=rng)


def jiang_exponential(
    N: int = 100, K: int = 2, alpha: float = 0.3, *, sigma: float = PAPER_SIGMA, rng: Any = None
) -> BestKGaussianArms:
    """The "alpha-Exponential" Best-K instance of Section 5.1 as an environment."""
    return BestKGaussianArms(jiang_exponential_means(N, K, alpha), K, sigma=sigma, rng=rng)


def lil_exponential(N: int = 100, alpha: float = 0.3, *, sigma: float = PAPER_SIGMA, rng: Any = None) -> BestKGaussianArms:
    """The "lil-Exponential" Best-1 instance of Section 5.2 as an environment (K = 1)."""
    return BestKGaussianArms(lil_exponential_means(N, alpha), 1, sigma=sigma, rng=rng)
