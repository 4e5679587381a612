"""Linear best-arm identification instances of Xu, Honda & Sugiyama (2018), Section 7.

* :func:`soare` -- Section 7.1.1 (the instance of Soare et al. 2014): arms ``e_1, ..., e_d``
  and ``x_{d+1} = (cos 0.01, sin 0.01, 0, ..., 0)``, ``theta = (2, 0, ..., 0)``, N(0, 1) noise.
* :func:`canonical` -- Section 7.1.2: arms ``e_1, ..., e_d``, ``theta = (gap, 0, ..., 0)``.
* :func:`diabetes_linear`, :func:`wine_linear` -- Section 7.2 / Appendix A recipe on real
  feature sets: theta* fitted by ridge regression (lambda = 0.01) of +-1 outcomes, arms drawn
  from the data rows with every gap ``Delta_i >= 0.05``, rewards +1 with probability
  ``(1 + x^T theta*) / 2`` and -1 otherwise.

Every builder returns a :class:`LinearInstance`, a :class:`LinearBandit` whose problem
declares the bound ``S = ||theta||_2`` that LinGapE assumes known (Section 2 of the paper:
"we assume that parameters R and S are known to the agent") in ``problem.info["S"]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, check_int, check_rng
from ..exceptions import InvalidParameterError
from ._base import Problem
from ..datasets import load_diabetes, load_wine_quality
from ._linear import LinearBandit

__all__ = ["LinearInstance", "soare", "canonical", "diabetes_linear", "wine_linear", "real_linear"]

#: Minimum gap of the real-data instances (Appendix A: "Delta_i >= 0.05 for all arms i").
MIN_GAP = 0.05
#: Ridge parameter of the fit of theta* (Appendix A: "the regularize term is set as 0.01").
FIT_RIDGE = 0.01


class LinearInstance(LinearBandit):
    """A :class:`LinearBandit` whose problem carries ``info = {"S": S, "name": name}``.

    ``S`` is the a-priori bound on ``||theta||_2`` of the paper's model (known to the agent,
    like the noise scale R); by default ``||theta||_2``.
    """

    def __init__(self, features: Any, theta: Any, *, S: float | None = None, name: str = "", **kwargs: Any) -> None:
        super().__init__(features, theta, **kwargs)
        self.S = float(np.linalg.norm(self._theta)) if S is None else check_float(S, "S", owner="LinearInstance", low=0.0)
        self.name = name

    @property
    def problem(self) -> Problem:
        base = super().problem
        return Problem(
            n_arms=base.n_arms, noise=base.noise, arm_type=base.arm_type, features=base.features,
            info={"S": self.S, "name": self.name},
        )


def soare(d: int = 5, *, rng: Any = None) -> LinearInstance:
    """Section 7.1.1: ``K = d + 1`` arms, the canonical basis plus a near-copy of e_1.

    ``x_i = e_i`` (i <= d), ``x_{d+1} = (cos 0.01, sin 0.01, 0, ..., 0)``,
    ``theta = (2, 0, ..., 0)``, Gaussian N(0, 1) noise. The best arm is 0 (``e_1``, mean 2);
    arm d (0-based) has mean ``2 cos 0.01``, a gap of about 1e-4.

    Examples
    --------
    >>> env = soare(3, rng=0)
    >>> env.features.shape, env.best()
    ((4, 3), 0)
    """
    d = check_int(d, "d", owner="soare", low=2)
    x = np.vstack([np.eye(d), np.zeros(d)])
    x[d, 0], x[d, 1] = np.cos(0.01), np.sin(0.01)
    theta = np.zeros(d)
    theta[0] = 2.0
    return LinearInstance(x, theta, noise="gaussian", sigma=1.0, rng=rng, name=f"soare(d={d})")


def canonical(d: int = 5, gap: float = 0.1, *, rng: Any = None) -> LinearInstance:
    """Section 7.1.2: ``K = d`` arms ``e_1, ..., e_d`` and ``theta = (gap, 0, ..., 0)``.

    Arm 0 beats every other arm by ``gap``; N(0, 1) noise. A multi-armed bandit in linear
    form, where the uniform (XY-static) allocation is nearly optimal.
    """
    d = check_int(d, "d", owner="canonical", low=2)
    gap = check_float(gap, "gap", owner="canonical", low=0.0, closed="neither")
    theta = np.zeros(d)
    theta[0] = gap
    return LinearInstance(np.eye(d), theta, noise="gaussian", sigma=1.0, rng=rng, name=f"canonical(d={d}, gap={gap})")


# ---------------------------------------------------------------------- real data
def _standardize(x: NDArray[np.float64]) -> NDArray[np.float64]:
    sd = x.std(axis=0)
    sd[sd == 0] = 1.0
    return (x - x.mean(axis=0)) / sd


def _fit_theta(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Ridge regression (lambda = 0.01) of the +-1 outcomes, scaled so |x^T theta| <= 1
    on every row (the paper observed it held on its data; here it is enforced by shrinking
    theta, which keeps the order of the arms)."""
    d = x.shape[1]
    theta = np.linalg.solve(x.T @ x + FIT_RIDGE * np.eye(d), x.T @ y)
    m = float(np.max(np.abs(x @ theta)))
    if m > 1.0:
        theta = theta / m
    return theta


def _load_diabetes(path: Any = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Diabetes features and +-1 outcomes (+1 when the progression exceeds its median)."""
    data = load_diabetes(data_home=path)
    return data.data, np.where(data.target > np.median(data.target), 1.0, -1.0)


def _load_wine(color: str, path: Any = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wine features and +-1 outcomes (+1 for quality >= 6)."""
    data = load_wine_quality(color, data_home=path)
    return data.data, np.where(data.target >= 6, 1.0, -1.0)


def real_linear(
    x_raw: Any, y: Any, n_arms: int, *, rng: Any = None, noise_rng: Any = None, name: str = "real"
) -> LinearInstance:
    """Appendix A recipe on a feature table ``x_raw`` with +-1 outcomes ``y``.

    Features are the standardized columns plus an intercept (d = columns + 1); theta* is
    the ridge fit (:func:`_fit_theta`). ``n_arms`` distinct rows are drawn uniformly; the
    best of them is kept and every drawn row with ``0 < Delta_i < 0.05`` is replaced by a
    fresh row whose gap is at least 0.05, so that ``Delta_i >= 0.05`` for every arm i.

    Parameters
    ----------
    x_raw : array of shape (N, p)
    y : array of shape (N,)
        Outcomes in {-1, +1}.
    n_arms : int
        K, at least p + 1 (so the arms span R^d) and at most N.
    rng : None, int, SeedSequence or Generator
        Randomness of the arm draw.
    noise_rng : optional
        Generator of the environment's noise (default: spawned from ``rng``).
    """
    gen = check_rng(rng)
    x = np.hstack([_standardize(np.asarray(x_raw, dtype=np.float64)), np.ones((len(y), 1))])
    n_rows, d = x.shape
    n_arms = check_int(n_arms, "n_arms", owner=name, low=d, high=n_rows)
    theta = _fit_theta(x, np.asarray(y, dtype=np.float64))
    mu = x @ theta
    order = gen.permutation(n_rows)
    chosen = order[:n_arms]
    best = chosen[np.argmax(mu[chosen])]
    ok = (mu[chosen] <= mu[best] - MIN_GAP) | (chosen == best)
    keep = list(chosen[ok])
    pool = [r for r in order[n_arms:] if mu[r] <= mu[best] - MIN_GAP]
    while len(keep) < n_arms and pool:
        keep.append(pool.pop(0))
    if len(keep) < n_arms:
        raise InvalidParameterError(
            f"{name}: only {len(keep)} rows have a gap >= {MIN_GAP} to the best drawn row; "
            f"n_arms={n_arms} is too large."
        )
    feats = x[np.asarray(keep)]
    if np.linalg.matrix_rank(feats) < d:  # pragma: no cover - continuous features
        raise InvalidParameterError(f"{name}: the drawn arms do not span R^{d}; draw again with another rng.")
    nrng = noise_rng if noise_rng is not None else gen.spawn(1)[0]
    return LinearInstance(feats, theta, noise="pm1", rng=nrng, name=f"{name}(n_arms={n_arms})")


def diabetes_linear(n_arms: int = 20, *, rng: Any = None, data_dir: Any = None) -> LinearInstance:
    """Section 7.2 recipe on the diabetes data (442 patients, 10 features; shipped in
    combex, :func:`combex.datasets.load_diabetes`).

    Outcome +1 when the disease progression exceeds its median, else -1; d = 11 (10
    standardized features and an intercept).
    """
    x, y = _load_diabetes(data_dir)
    return real_linear(x, y, n_arms, rng=rng, name="diabetes_linear")


def wine_linear(n_arms: int = 20, *, rng: Any = None, color: str = "red", data_dir: Any = None) -> LinearInstance:
    """Section 7.2 recipe on the UCI wine-quality data (shipped in combex,
    :func:`combex.datasets.load_wine_quality`).

    Outcome +1 for quality >= 6, else -1; d = 12 (11 standardized physicochemical features
    and an intercept).
    """
    color = check_choice(color, "color", ("red", "white"), owner="wine_linear")
    x, y = _load_wine(color, data_dir)
    return real_linear(x, y, n_arms, rng=rng, name=f"wine_linear[{color}]")
