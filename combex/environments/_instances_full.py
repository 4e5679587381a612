"""Full-bandit instances of Kuroki et al. (the ``kuroki-synthetic``, ``topk-gaussian`` and
``crowd`` names of the CLI)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import _reject_complex, check_float, check_int, check_rng
from ..exceptions import InvalidParameterError

__all__ = ["kuroki_synthetic_means", "kuroki_synthetic", "topk_gaussian", "crowd"]


def kuroki_synthetic_means(n: int, k: int, gap: float, *, rng: Any = None) -> np.ndarray:
    """Expected rewards of the synthetic instances of Section 5 (Kuroki et al.).

    The top-k means are drawn uniformly from [0, 1]; with theta_min-k their minimum, the
    (k+1)-th mean is theta_min-k - gap and the remaining n - k - 1 means are uniform on
    [-1, theta_min-k - gap], "so that the expected reward of the best super-arm is larger
    than those of the rest of super-arms by at least Delta_min". The arms are then placed
    in a random order (the paper does not say; a random order keeps solvers from exploiting
    the index).
    """
    n = check_int(n, "n", owner="kuroki_synthetic", low=2)
    k = check_int(k, "k", owner="kuroki_synthetic", low=1, high=n - 1)
    gap = check_float(gap, "gap", owner="kuroki_synthetic", low=0.0, high=1.0, closed="right")
    g = check_rng(rng)
    top = g.uniform(0.0, 1.0, size=k)
    floor = top.min() - gap
    rest = g.uniform(-1.0, floor, size=n - k - 1) if n - k - 1 > 0 else np.empty(0)
    means = np.concatenate([top, [floor], rest])
    return means[g.permutation(n)]


def kuroki_synthetic(n: int = 10, k: int = 5, gap: float = 0.5, *, sigma: float = 1.0, rng: Any = None) -> Any:
    """``kuroki-synthetic``: top-k with full-bandit feedback, N(0, sigma^2) noise per arm
    (sigma = 1 in the paper), means from :func:`kuroki_synthetic_means`.

    ``rng`` seeds both the means and the noise: the means are drawn first, then the
    environment's noise continues the same generator, so ``kuroki_synthetic(..., rng=s)``
    twice gives the same means *and* the same run. (The CLI's runner reseeds the noise with
    the second generator of :func:`combex.experiments.run_generators`; call
    ``env.reset(run_generators(seed, i)[1])`` to replay its run ``i`` in Python.) The means
    lie in [-1, 1] by construction, which the problem reports as
    ``info["reward_range"] = (-1, 1)`` (solvers that need a norm bound derive it from it).
    """
    from ._simulated import FullBandit

    g = check_rng(rng)
    means = kuroki_synthetic_means(n, k, gap, rng=g)
    env = FullBandit(means, k=k, noise="gaussian", sigma=sigma, rng=g)
    env.problem_info = {"reward_range": (-1.0, 1.0), "name": "kuroki-synthetic"}
    return env


def topk_gaussian(means: Any = (1.0, 0.8, 0.6, 0.4, 0.2, 0.0), k: int = 2, sigma: float = 1.0, *, rng: Any = None) -> Any:
    """``topk-gaussian``: top-k with full-bandit feedback from given means; ``rng`` seeds
    the noise (same ``rng``, same run). The problem carries ``info["S"] = ||means||_2``
    (the norm bound the linear model of Xu et al. assumes known, as for the linear
    instances)."""
    from ._simulated import FullBandit

    _reject_complex(means, "means", "topk-gaussian")
    mu = np.asarray(means, dtype=float)
    if mu.ndim != 1 or mu.size < 2:
        raise InvalidParameterError(
            f"The 'means' parameter of topk_gaussian must be a list of at least 2 numbers. Got {means!r} instead."
        )
    env = FullBandit(mu, k=k, noise="gaussian", sigma=sigma, rng=rng)
    env.problem_info = {"S": float(np.linalg.norm(mu)), "name": "topk-gaussian"}
    return env


def crowd(dataset: str = "ITMANAGE", k: int = 10, data_dir: Any = None, *, rng: Any = None) -> Any:
    """``crowd``: team selection on the Li et al. (2017) quiz data; a pull of a team draws a
    uniformly random question and observes how many members answered it correctly.
    ``rng`` seeds the question draws (same ``rng``, same run)."""
    from ._crowd import CrowdQuiz

    return CrowdQuiz(dataset, k=k, data_dir=data_dir, rng=rng)
