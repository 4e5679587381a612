"""Searches on a GLR stopping rule: bisection on a monotone predicate, the one search behind
``delta_achieved`` (the smallest level at which a valid stopping rule holds) and the
certified class statistic (the largest GLR value a certificate guarantees); and the
fixed point behind ``evaluations_left`` (:func:`samples_left`)."""

from __future__ import annotations

import math
from typing import Any, Callable

#: ``log x`` of the smallest level :func:`stopping_level` looks at (exp(-690) ~ 1e-300).
LOG_LEVEL_FLOOR = -690.0


def monotone_boundary(holds: Callable[[float], bool], good: float, bad: float, *, atol: float = 0.0,
                      rtol: float = 0.0, max_iter: int = 40) -> tuple[float, float]:
    """Narrow ``[good, bad]`` (either order) around the boundary of a monotone predicate.

    ``holds(good)`` is true and ``holds(bad)`` false (or unknown) on entry and stay so for the
    returned pair; each step halves the interval at its midpoint. Stops after ``max_iter``
    steps or once ``|bad - good| <= max(atol, rtol * max(|bad|, 1e-12))``.
    """
    for _ in range(max_iter):
        mid = 0.5 * (good + bad)
        if holds(mid):
            good = mid
        else:
            bad = mid
        if abs(bad - good) <= max(atol, rtol * max(abs(bad), 1e-12)):
            break
    return good, bad


def stopping_level(would_stop: Callable[[float], bool], *, atol: float, max_iter: int,
                   guess: float | None = None) -> float:
    """The smallest level ``x`` in ``(0, 1]`` with ``would_stop(x)``, up to a factor
    ``exp(atol)``, from above: bisection on ``log x`` (1 when the rule does not hold even at
    ``x = 1``; ``exp(LOG_LEVEL_FLOOR)`` when it holds there already). ``would_stop`` must be
    monotone: holding at ``x`` whenever it holds at a smaller level.

    ``guess`` (a ``log x``, e.g. ``log delta - margin`` for a threshold linear in
    ``log(1 / delta)``) is tried first: when the rule holds just above it and fails ``atol``
    below, that bracket is the answer (two calls instead of about twenty); otherwise it only
    narrows the bisection's bracket. The answer is the bracket's upper end either way."""
    if not would_stop(1.0):
        return 1.0
    good, bad = 0.0, LOG_LEVEL_FLOOR
    up = min(guess + 0.5 * atol, 0.0) if guess is not None and math.isfinite(guess) else LOG_LEVEL_FLOOR
    if up > LOG_LEVEL_FLOOR + atol:
        if would_stop(math.exp(up)):
            if not would_stop(math.exp(up - atol)):
                return math.exp(up)
            good = up - atol
        else:
            bad = up
    if bad == LOG_LEVEL_FLOOR and would_stop(math.exp(LOG_LEVEL_FLOOR)):
        return math.exp(LOG_LEVEL_FLOOR)
    good, _ = monotone_boundary(lambda y: would_stop(math.exp(y)), good, bad, atol=atol, max_iter=max_iter)
    return math.exp(good)


#: :func:`samples_left` extrapolates only once the statistic is at least this fraction of
#: its threshold.
LEFT_MIN_PROGRESS = 0.05


def samples_left(z: float, beta: float, t: float, slope: float = 1.0, *,
                 since: tuple[float, float] | None = None,
                 min_progress: float = LEFT_MIN_PROGRESS) -> float | None:
    """An *estimate* of the samples a GLR rule still needs. None while ``z`` is below
    ``min_progress`` (default :data:`LEFT_MIN_PROGRESS`) of ``beta``: so early the rate is
    mostly noise.

    With ``since = (t_h, r_h)``, the ratio ``z / beta`` at an earlier time ``t_h`` (about
    ``t / 2``: :meth:`ProgressTrace.at_half`): the ratio keeps growing at its rate since
    then, ``(1 - z / beta) / rate``. This follows what moves the statistic against its
    threshold lately (a threshold that stays flat while the noise bound tightens, a
    statistic that grows faster once the leader settles). Without it, or when the ratio
    has not grown since then: ``t' - t`` with ``t' z / t = beta + slope log(t' / t)`` -- the
    statistic grows linearly at its rate since the start and the threshold like ``slope log
    t`` (1 for the index pairs, ``d / 2`` for the linear mixture).

    Measured on simulated lab studies (12 workers, teams of 4, noise 10, unknown to the
    study; ``benchmarks/studies_evaluations_left.py``), estimate / sessions actually left
    once the statistic is at least 5% of its threshold, the median of each group of readings
    (5-10%, 10-20%, 20-50%, 50-100% of the threshold) and the extremes: the guide's lab
    (delta 0.1, epsilon 5, ten studies of 496-707 sessions, read every 25, more than 50
    left) 1.34-2.27, extremes 0.51 and 18.4, where the rate since the start gave 2.71-7.32
    (1.32 to 11.3); two long studies (delta 0.05, epsilon 0, 7,998 and 6,226 sessions, more
    than 1,000 left) 0.57-0.99, extremes 0.19 and 4.1 (rate since the start 1.09-3.18, 0.44
    to 3.9). Below 5% the rate since the start was off by up to 600,000 times.
    """
    if not (math.isfinite(z) and z > 0 and math.isfinite(beta) and beta > 0) or z < min_progress * beta:
        return None
    if since is not None and since[0] < t:
        rate = (z / beta - since[1]) / (t - since[0])
        if rate > 0 and math.isfinite(rate):
            return float(max((1.0 - z / beta) / rate, 0.0))
    tp = t
    for _ in range(8):
        tp = max(t, t * (beta + slope * math.log(tp / t)) / z)
    return float(max(tp - t, 0.0))


class ProgressTrace:
    """The ratio ``statistic / threshold`` of a GLR rule at its checks, thinned
    geometrically (a point is kept when the samples grew by 5% since the last one kept:
    about 20 log(t) points), for the rate of :func:`samples_left` over the last half of a
    run. Saved with the exploration's state (:meth:`state`, :meth:`load`)."""

    GROWTH = 1.05

    def __init__(self) -> None:
        self.t: list[float] = []
        self.r: list[float] = []

    def record(self, t: float, z: float, beta: float) -> None:
        """The check after ``t`` samples: statistic ``z`` against threshold ``beta``."""
        if not (math.isfinite(z) and math.isfinite(beta) and beta > 0):
            return
        if not self.t or t >= self.GROWTH * self.t[-1]:
            self.t.append(float(t))
            self.r.append(float(z / beta))

    def at_half(self, t: float) -> tuple[float, float] | None:
        """``(t_h, ratio)`` of the last point kept at or before ``t / 2`` (None when there is
        none from ``t / 4`` on)."""
        best = None
        for th, r in zip(self.t, self.r):
            if th > t / 2.0:
                break
            best = (th, r)
        return best if best is not None and best[0] >= t / 4.0 else None

    def state(self) -> list[list[float]]:
        return [list(self.t), list(self.r)]

    def load(self, st: Any) -> None:
        """From :meth:`state` (None, as in states saved without it: empty)."""
        self.t, self.r = ([float(v) for v in st[0]], [float(v) for v in st[1]]) if st else ([], [])
