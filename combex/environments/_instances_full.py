"""Full-bandit instances of Kuroki et al. (the ``kuroki-synthetic``, ``topk-gaussian`` and
``crowd`` names of the CLI)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import _reject_complex, check_float, check_int, check_rng
from ..exceptions import InvalidParameterError
from ._crowd import CrowdQuiz
from ._simulated import FullBandit

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
    return CrowdQuiz(dataset, k=k, data_dir=data_dir, rng=rng)


#: The lab case's hidden worker qualities (contributions to a session's score in [0, 100]):
#: the best team of 4 scores 74, the second best 72.
LAB_QUALITIES = (14.0, 9.0, 20.0, 12.0, 17.0, 8.0, 19.0, 11.0, 15.0, 10.0, 18.0, 13.0)
#: Names of the lab case's workers (the order of :data:`LAB_QUALITIES`).
LAB_WORKERS = ("Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea")


def lab_teams(n: int = 12, k: int = 4, noise_sd: float = 10.0, *, known_noise: bool = False,
              qualities: Any = None, rng: Any = None) -> Any:
    """``lab-teams``: the team-selection study combex exists for, simulated.

    ``n`` workers (default the 12 of :data:`LAB_WORKERS`), the best team of ``k``; one team
    per session, whose score is the sum of the members' qualities plus one session noise
    term ``N(0, noise_sd^2)`` shared by the members (``noise_level="observation"``). With the
    default qualities (:data:`LAB_QUALITIES`, contributions to a score in [0, 100]) the best
    team scores 74 and the second best 72. ``known_noise=False`` (default): the problem does
    not declare the noise level (``problem.noise.sigma`` is None), as in a real study.
    ``n`` other than 12 takes the first ``n`` qualities (``n <= 12``) unless ``qualities``
    is given.
    """
    if qualities is None:
        n = check_int(n, "n", owner="lab_teams", low=2, high=len(LAB_QUALITIES))
        qualities = LAB_QUALITIES[:n]
    q = np.asarray(qualities, dtype=np.float64)
    k = check_int(k, "k", owner="lab_teams", low=1, high=q.size - 1)
    env = FullBandit(q, k=k, noise="gaussian", sigma=noise_sd, noise_level="observation",
                     noise_known=known_noise, rng=rng)
    names = list(LAB_WORKERS[: q.size]) if q.size <= len(LAB_WORKERS) else [f"w{i + 1}" for i in range(q.size)]
    env.problem_info = {"reward_range": (0.0, 100.0), "name": "lab-teams", "labels": names}
    return env
