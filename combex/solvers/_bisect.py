"""Bisection on a monotone predicate: the one search behind ``delta_achieved`` (the smallest
level at which a valid stopping rule holds) and the certified class statistic (the largest
GLR value a certificate guarantees)."""

from __future__ import annotations

import math
from typing import Callable

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
