"""BoundedME: median elimination for finite reward lists (MAB-BP) -- the algorithm's one home.

Liu, Wu and Mozafari, "A Bandit Approach to Maximum Inner Product Search", AAAI 2019,
Algorithm 1 (top-K version). Arm ``i`` owns a finite list of ``N`` rewards in ``[a, b]``
drawn without replacement **in a uniformly random order** (the sampling model of MAB-BP
and the assumption of Lemma 1; a list read in a fixed order voids the guarantee). In round
``l`` every surviving arm is pulled up to

    t_l = m( (b - a)^2 * 2 / eps_l^2 * log( 2 (|S_l| - K) / (delta_l (floor((|S_l| - K)/2) + 1)) ) )

times in total (line 7; ``m`` is eq. (6), :func:`~combex.estimation._without_replacement.
without_replacement_sample_size`), then the ``ceil((|S_l| - K)/2)`` arms with the smallest
empirical means are removed (lines 9-10), with ``eps_1 = eps/4``, ``delta_1 = delta/2``,
``eps_{l+1} = 3/4 eps_l``, ``delta_{l+1} = delta_l / 2`` (lines 4, 11). It stops when
``K`` arms remain. Theorem 1: the K returned arms are epsilon-optimal (the K-th best true
mean among them is within epsilon of the K-th best overall) with probability >= 1 - delta;
Corollary 2: no arm is pulled more than ``N`` times. Lemma 1 is stated for
``0 < epsilon < 1`` on rewards in ``[0, 1]``, i.e. ``epsilon < b - a`` in reward units: a
larger ``epsilon`` makes the statement empty (no two list means differ by ``b - a`` or
more), so callers report whether their ``epsilon`` is *informative*.

Choices where the paper is ambiguous (tested in ``tests/test_bounded_me.py``):

* the log term of line 7 uses ``ceil((|S_l|-K)/2) + 1`` in the algorithm box but
  ``floor((|S_l|-K)/2) + 1`` in the proof of Lemma 4 and in eq. (21); we use the
  **floor** of the proof, which is what the guarantee needs (and asks for at least as
  many samples);
* the integer number of pulls is ``ceil(m(u))`` (at most ``N``), and ``t_l`` is made
  non-decreasing (``t_l = max(t_l, t_{l-1})``) so a round never asks for negative pulls;
* ties in the empirical means are broken at random (the algorithm's generator).
* ``epsilon`` is in the units of the rewards (the paper's rewards lie in [0, 1]); the
  reward width ``b - a`` enters ``u`` as in Lemma 1.

This module holds the schedule and the direct loop (:func:`bounded_me`), used by
:func:`combex.mips.mips_top_k` and by the ask / tell solver ``"bounded-me"``
(:class:`combex.solvers.mips.BoundedME`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from .._validation import check_float, check_int, check_probability, check_rng
from ..estimation import without_replacement_pulls
from ..exceptions import InvalidParameterError
from ._kernels import remove_lowest

__all__ = ["BoundedMERound", "bounded_me_schedule", "bounded_me", "BoundedMEOutcome"]


@dataclass(frozen=True)
class BoundedMERound:
    """One round ``l`` of Algorithm 1: ``n_arms = |S_l|``, cumulative pulls ``t``
    (``t_l``), ``epsilon`` (``eps_l``), ``delta`` (``delta_l``), ``n_removed``
    (``ceil((|S_l| - K)/2)``)."""

    n_arms: int
    t: int
    epsilon: float
    delta: float
    n_removed: int


def bounded_me_schedule(
    n_arms: int,
    k: int,
    list_size: int,
    epsilon: float,
    delta: float,
    *,
    value_range: float = 1.0,
) -> list[BoundedMERound]:
    """The fixed schedule of Algorithm 1 (lines 4-11).

    Parameters
    ----------
    n_arms : int
        ``n = |A|``.
    k : int
        ``K``, in ``[1, n]``.
    list_size : int
        ``N``, the length of every reward list.
    epsilon : float
        Target suboptimality, > 0 (reward units).
    delta : float
        Error probability in (0, 1).
    value_range : float, default 1.0
        ``b - a``, the width of the reward interval, > 0.

    Returns
    -------
    list of BoundedMERound
        Empty when ``k == n_arms``.

    Examples
    --------
    >>> [r.n_arms for r in bounded_me_schedule(10, 2, 1000, 0.5, 0.1)]
    [10, 6, 4, 3]
    """
    owner = "BoundedME"
    n = check_int(n_arms, "n_arms", owner=owner, low=1)
    k = check_int(k, "k", owner=owner, low=1, high=n)
    big_n = check_int(list_size, "list_size", owner=owner, low=1)
    epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0, closed="neither")
    delta = check_probability(delta, "delta", owner=owner)
    value_range = check_float(value_range, "value_range", owner=owner, low=0.0, closed="neither")
    return list(_schedule(n, k, big_n, epsilon, delta, value_range))


@functools.lru_cache(maxsize=256)
def _schedule(
    n: int, k: int, big_n: int, epsilon: float, delta: float, value_range: float
) -> tuple[BoundedMERound, ...]:
    """:func:`bounded_me_schedule` on checked arguments (cached: repeated queries of one
    size share it)."""
    rounds: list[BoundedMERound] = []
    size, eps_l, delta_l, t_prev = n, epsilon / 4.0, delta / 2.0, 0
    while size > k:
        excess = size - k
        log_term = math.log(2.0 * excess / (delta_l * (excess // 2 + 1)))
        u = value_range**2 * 2.0 / eps_l**2 * log_term
        t = max(int(without_replacement_pulls(u, big_n)), t_prev)
        n_removed = (excess + 1) // 2
        rounds.append(BoundedMERound(size, t, eps_l, delta_l, n_removed))
        size -= n_removed
        eps_l *= 0.75
        delta_l /= 2.0
        t_prev = t
    return tuple(rounds)


def _remove_lowest(
    means: NDArray[np.float64], active: NDArray[np.intp], n_remove: int, rng: np.random.Generator,
    compiled: bool = False,
) -> NDArray[np.intp]:
    """Survivors of ``active`` (sorted) after removing the ``n_remove`` smallest
    ``means[active]``, ties at the threshold broken at random; linear time.

    ``compiled``: try the numba version first (about 2 us instead of 8-17 us for a
    round of :func:`bounded_me`; identical survivors and random draws, since it defers to
    this code whenever a random tie-break is needed). Needs finite ``means``."""
    if n_remove <= 0:
        return active
    if compiled and active.size >= 32 and means.dtype == np.float64 and active.dtype == np.intp:
        out = remove_lowest(means, active, n_remove)
        if out is not None:
            return out
    m = means[active]
    kth = np.partition(m, n_remove - 1)[n_remove - 1]
    drop = m < kth
    at = np.flatnonzero(m == kth)
    need = n_remove - int(np.count_nonzero(drop))
    drop[at if need >= at.size else rng.choice(at, size=need, replace=False)] = True
    return active[~drop]


# ---------------------------------------------------------------------- direct function
@dataclass(frozen=True)
class BoundedMEOutcome:
    """Result of :func:`bounded_me`: the K arms (sorted by empirical mean, best first),
    their empirical means, per-arm pulls, total pulls and the schedule used."""

    arms: NDArray[np.intp]
    means: NDArray[np.float64]
    pulls: NDArray[np.int64]
    samples: int
    schedule: list[BoundedMERound]


def bounded_me(
    pull: Callable[[NDArray[np.intp], int, int], NDArray[np.float64]],
    n_arms: int,
    k: int,
    list_size: int,
    *,
    epsilon: float,
    delta: float,
    value_range: float = 1.0,
    rng: Any = None,
    _compiled: bool = False,
) -> BoundedMEOutcome:
    """Run Algorithm 1 directly (no ask / tell), as fast as the ``pull`` callback allows.

    Parameters
    ----------
    pull : callable ``pull(arms, start, stop) -> sums``
        Sum of the rewards at positions ``start..stop-1`` of each arm's (random) draw
        order, for the int array ``arms``. Draw orders must be fixed for the whole run
        (sampling without replacement); e.g. for MIPS with a shared random permutation of
        the coordinates, ``sum(V[arms][:, perm[start:stop]] * q[perm[start:stop]])``.
    n_arms, k, list_size, epsilon, delta, value_range
        As in :func:`bounded_me_schedule`.
    rng : None, int, SeedSequence or Generator
        Breaks ties.

    Returns
    -------
    BoundedMEOutcome

    Examples
    --------
    >>> lists = np.array([[0, 1, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]], dtype=float)
    >>> out = bounded_me(lambda a, s, e: lists[a, s:e].sum(axis=1), 3, 1, 4,
    ...                  epsilon=0.1, delta=0.1, rng=0)
    >>> out.arms.tolist(), int(out.pulls.max()) <= 4
    ([2], True)
    """
    rng = check_rng(rng)
    schedule = bounded_me_schedule(n_arms, k, list_size, epsilon, delta, value_range=value_range)
    sums = np.zeros(n_arms, dtype=np.float64)
    pulls = np.zeros(n_arms, dtype=np.int64)
    active = np.arange(n_arms, dtype=np.intp)
    t_prev = 0
    for rnd in schedule:
        if rnd.t > t_prev:
            s = np.asarray(pull(active, t_prev, rnd.t), dtype=np.float64)
            # one reduction: a finite float64 sum of finite values (an overflow to inf of
            # finite values falls through to the elementwise test)
            if s.shape != (active.size,) or (not math.isfinite(float(s.sum())) and not np.all(np.isfinite(s))):
                raise InvalidParameterError(
                    "The 'pull' callback of bounded_me must return finite sums of shape "
                    f"({active.size},)."
                )
            sums[active] += s
            pulls[active] = rnd.t
        t_prev = rnd.t
        # Every surviving arm has t_l pulls: ranking the sums ranks the empirical means.
        active = _remove_lowest(sums, active, rnd.n_removed, rng, compiled=_compiled)
    means = np.divide(sums, pulls, out=np.zeros_like(sums), where=pulls > 0)
    order = np.argsort(-means[active], kind="stable")
    arms = active[order]
    return BoundedMEOutcome(arms, means[arms], pulls, int(pulls.sum()), schedule)
